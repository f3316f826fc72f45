"""ethercluster.routing.plan and the fabric settings: the topology file's
``fabric:`` block, the ``settings`` option and the task's own options, in
that order; the merged settings recorded in the intent (fabric.settings);
a malformed field refused naming it, with no intent written."""

import json
from pathlib import Path

import yaml

RING = yaml.safe_load((Path(__file__).resolve().parents[2] / "fixtures" / "lab" / "ring3_topology.yml").read_text())


def write(tmp_path, fabric):
    path = tmp_path / "ring.yml"
    path.write_text(yaml.safe_dump(dict(RING, fabric=fabric)), encoding="utf-8")
    return path


def test_the_files_block_is_planned_and_recorded(ansible_cli, tmp_path):
    path = write(tmp_path, {"routing": "updown", "engine_options": {"root": "sw1"},
                            "assignment": "fixed", "bank": "B"})
    out = tmp_path / "out"
    rc, result, stderr = ansible_cli.adhoc("ethercluster.routing.plan",
                                           {"topology": str(path), "out": str(out)}, cwd=tmp_path)
    assert rc == 0, (result, stderr)
    fabric = result["intent"]["fabric"]
    assert (fabric["routing"], fabric["assignment"], fabric["bank"]) == ("updown", "fixed", "B")
    assert fabric["engine_options"]["root"] == "sw1"
    assert fabric["settings"] == {"routing": "updown", "engine_options": {"root": "sw1"},
                                  "assignment": "fixed", "bank": "B", "vlan_range": None,
                                  "max_broadcast_copies": None, "broadcast": "contained",
                                  "mac_learning": "static", "traffic": "uniform"}
    assert result["settings_sources"]["routing"] == "topology"
    assert result["settings_sources"]["traffic"] == "default"
    assert json.loads((out / "intent.json").read_text())["fabric"]["settings"] == fabric["settings"]


def test_settings_beat_the_file_and_options_beat_settings(ansible_cli, tmp_path):
    path = write(tmp_path, {"routing": "updown", "assignment": "fixed", "bank": "B"})
    rc, result, stderr = ansible_cli.adhoc(
        "ethercluster.routing.plan",
        {"topology": str(path), "settings": {"bank": "A", "assignment": None, "routing": "stp"},
         "routing": "segment"}, cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["intent"]["fabric"]["settings"]["bank"] == "A"            # settings over the file
    assert result["intent"]["fabric"]["settings"]["assignment"] == "fixed"  # null: the file's
    assert result["intent"]["fabric"]["routing"] == "segment"               # the option over both
    assert result["settings_sources"] == {
        "routing": "options", "engine_options": "default", "assignment": "topology",
        "bank": "settings", "vlan_range": "default", "max_broadcast_copies": "default",
        "broadcast": "default", "mac_learning": "default", "traffic": "default"}


def test_a_bad_field_in_the_file_names_it_and_writes_no_intent(ansible_cli, tmp_path):
    good = write(tmp_path, {"routing": "updown"})
    out = tmp_path / "out"
    rc, result, stderr = ansible_cli.adhoc("ethercluster.routing.plan",
                                           {"topology": str(good), "out": str(out)}, cwd=tmp_path)
    assert rc == 0 and (out / "intent.json").exists()
    bad = write(tmp_path, {"routing": "updown", "vlan_range": [3000, 200]})
    rc, result, stderr = ansible_cli.adhoc("ethercluster.routing.plan",
                                           {"topology": str(bad), "out": str(out)}, cwd=tmp_path)
    assert rc != 0
    assert result["msg"].startswith("%s: fabric.vlan_range: must satisfy 1 <= first < last <= 4094" % bad)
    assert "renamed intent.json.stale" in result["msg"]
    assert not (out / "intent.json").exists() and (out / "intent.json.stale").exists()
    assert "fabric.vlan_range" in (out / "report.md").read_text()


def test_a_bad_settings_field_is_named(ansible_cli, tmp_path):
    path = write(tmp_path, {})
    rc, result, stderr = ansible_cli.adhoc("ethercluster.routing.plan",
                                           {"topology": str(path), "settings": {"engine": "dor"}},
                                           cwd=tmp_path)
    assert rc != 0
    assert result["msg"].startswith("settings.engine: unknown field (known: routing, engine_options")


def test_topology_data_carries_its_block_too(ansible_cli, tmp_path):
    rc, result, stderr = ansible_cli.adhoc(
        "ethercluster.routing.plan",
        {"topology_data": dict(RING, fabric={"assignment": "fixed", "routing": "updown"})},
        cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["intent"]["fabric"]["assignment"] == "fixed"
    rc, result, stderr = ansible_cli.adhoc(
        "ethercluster.routing.plan", {"topology_data": dict(RING, fabric={"bank": "C"})}, cwd=tmp_path)
    assert rc != 0 and result["msg"].startswith("topology_data: fabric.bank: must be one of A, B, got 'C'")
