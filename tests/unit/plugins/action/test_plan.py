"""ethercluster.routing.plan (action plugin + module docs) and
playbooks/plan.yml, run for real through ``ansible-playbook`` and
``ansible localhost -m ...`` against the collection in this checkout.

What is checked against what: the intent in intent.json against the
topology it was planned from (every switch, link, host and used port,
the intent schema's fields) and against the task's returned intent; report.md
against the returned checks and metrics; fabric.svg as XML with one
drawing per link; idempotence across two separate processes (so hash
seeds cannot hide an unstable order); check mode and --diff; a rejected
input (bad topology, a failed check) writing no intent.
"""

import json
import os
import subprocess
import textwrap
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
PLAYBOOK = os.path.join(ROOT, "playbooks", "plan.yml")
DEFAULT_TOPOLOGY = os.path.join(ROOT, "inventories", "default", "topology.yml")
PLAN_TASK = "Plan routing, VLANs and static MACs; check everything; write the intent"
SVG = "{http://www.w3.org/2000/svg}"

MESH_WITH_TINY_MAC_TABLE = textwrap.dedent("""\
    name: tiny
    switches:
      sw0: {coords: [0, 0], mac_table_size: 2}
      sw1: {coords: [1, 0]}
      sw2: {coords: [0, 1]}
      sw3: {coords: [1, 1]}
    shape: {kind: mesh, dims: [2, 2]}
    links:
      - {a: "sw0:2", b: "sw1:2"}
      - {a: "sw0:3", b: "sw2:2"}
      - {a: "sw1:3", b: "sw3:2"}
      - {a: "sw2:3", b: "sw3:3"}
    hosts:
      n0: {switch: sw0, port: 1, mac: "02:00:00:00:00:01"}
      n1: {switch: sw1, port: 1, mac: "02:00:00:00:00:02"}
      n2: {switch: sw2, port: 1, mac: "02:00:00:00:00:03"}
      n3: {switch: sw3, port: 1, mac: "02:00:00:00:00:04"}
    """)


def playbook(ansible_cli, *args, cwd):
    """Run playbooks/plan.yml with the JSON callback; return (rc, the plan
    task's result, the whole output text)."""
    rc, tasks, text = ansible_cli.playbook_tasks(PLAYBOOK, *args, cwd=cwd)
    plan = next(task for task in tasks if task["task"]["name"].split(" : ", 1)[-1] == PLAN_TASK)  # "ROLE : task"
    return rc, plan["hosts"]["localhost"], text


def read_outputs(out):
    """Every output file by its path under ``out`` (configs/ included)."""
    return {str(path.relative_to(out)): path.read_text(encoding="utf-8")
            for path in sorted(out.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def first_run(ansible_cli, tmp_path_factory):
    """The default plan of the default topology into a fresh directory."""
    cwd = tmp_path_factory.mktemp("plan")
    out = cwd / "out" / "plan"
    rc, result, text = playbook(ansible_cli, "-e", "topology=" + DEFAULT_TOPOLOGY,
                                "-e", "routing=segment", "-e", "assignment=renamed",
                                "-e", "out=" + str(out), cwd=cwd)
    assert rc == 0, text
    return out, result, read_outputs(out)


def test_first_run_writes_the_outputs_and_every_switchs_config(first_run):
    out, result, files = first_run
    configs = ["configs/%s.flows" % name for name in load_topology(DEFAULT_TOPOLOGY).switches]
    assert sorted(files) == sorted(["fabric.svg", "intent.json", "report.md"] + configs)
    assert result["changed"] is True
    assert result["out"] == str(out)
    assert {name: entry["state"] for name, entry in result["files"].items()} == dict(
        {"intent.json": "created", "report.md": "created", "fabric.svg": "created"},
        **{name: "created" for name in configs})


def test_intent_json_follows_the_schema_and_the_topology(first_run):
    _out, result, files = first_run
    topology = load_topology(DEFAULT_TOPOLOGY)
    intent = json.loads(files["intent.json"])
    assert intent == result["intent"]
    assert intent["schema"] == "ethercluster.routing/intent/v1"
    assert intent["fabric"]["assignment"] == "renamed"
    assert intent["fabric"]["routing"] == "segment"
    ids = {vlan for entry in intent["switches"].values() for vlan in entry["vlans"]}
    assert intent["fabric"]["vlans_used"] == len(ids)
    assert {(link["a"], link["b"]) for link in intent["links"]} == {
        (str(link.a), str(link.b)) for link in topology.links}
    assert all(link["state"] in ("up", "down") and link["speed_mbps"] > 0
               for link in intent["links"])
    assert set(intent["hosts"]) == set(topology.hosts)
    for name, host in topology.hosts.items():
        assert intent["hosts"][name] == {**intent["hosts"][name], "mac": host.mac,
                                         "switch": host.switch, "port": host.port}
    assert set(intent["switches"]) == set(topology.switches)
    for name, entry in intent["switches"].items():
        assert entry["platform"] == topology.switches[name].platform
        assert entry["stp"] is False
        assert entry["vlans"] == sorted(entry["vlans"])
        assert set(entry["ports"]) == set(topology.used_ports(name))
        for port in entry["ports"].values():
            assert {"pvid", "untagged", "tagged", "admin", "speed_mbps"} <= set(port)
            assert port["pvid"] in entry["vlans"]
            assert set(port["untagged"]) | set(port["tagged"]) <= set(entry["vlans"])
        for static in entry["static_macs"]:
            assert static["port"] in entry["ports"] and static["vlan"] in entry["vlans"]


def test_report_holds_every_check_and_the_numbers(first_run):
    _out, result, files = first_run
    report = files["report.md"]
    assert result["checks"], "the plan ran no checks"
    assert all(check["ok"] for check in result["checks"])
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    for check in result["checks"]:
        assert any(row.startswith("| %s | pass |" % check["name"]) for row in rows), check
    assert "**Result: accepted.**" in report
    assert "| VLANs used | %d " % result["intent"]["fabric"]["vlans_used"] in report
    assert "| max channel load | %s " % result["metrics"]["max_channel_load"] in report
    assert "| average hops | %s" % round(result["metrics"]["average_hops"], 3) in report
    assert "| routing engine | `segment` |" in report
    assert "host limit" in report
    for name, entry in result["intent"]["switches"].items():
        assert any(row.startswith("| %s | %s | " % (name, entry["platform"])) for row in rows)


def test_picture_is_svg_with_every_link(first_run):
    _out, result, files = first_run
    root = ET.fromstring(files["fabric.svg"].encode("utf-8"))
    assert root.tag == SVG + "svg"
    links = root.find("%sg[@id='links']" % SVG)
    assert len(links.findall(SVG + "g")) == len(result["intent"]["links"])
    switches = root.find("%sg[@id='switches']" % SVG)
    assert len(switches.findall(SVG + "g")) == len(result["intent"]["switches"])


def test_second_run_changes_nothing(ansible_cli, first_run):
    out, _result, files = first_run
    mtimes = {name: os.stat(out / name).st_mtime_ns for name in files}
    rc, result, text = playbook(ansible_cli, "-e", "topology=" + DEFAULT_TOPOLOGY,
                                "-e", "routing=segment", "-e", "assignment=renamed",
                                "-e", "out=" + str(out), cwd=out.parent)
    assert rc == 0, text
    assert result["changed"] is False, result["files"]
    assert {entry["state"] for entry in result["files"].values()} == {"unchanged"}
    assert read_outputs(out) == files
    assert {name: os.stat(out / name).st_mtime_ns for name in files} == mtimes


def test_check_mode_writes_nothing(ansible_cli, tmp_path):
    out = tmp_path / "never"
    rc, result, text = playbook(ansible_cli, "-e", "out=" + str(out), "--check", cwd=tmp_path)
    assert rc == 0, text
    assert result["changed"] is True
    assert {entry["state"] for entry in result["files"].values()} == {"created"}
    assert not out.exists()


def test_check_diff_shows_the_intent_change_and_keeps_the_files(ansible_cli, first_run, tmp_path):
    out, _result, files = first_run
    env = ansible_cli.env()
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), PLAYBOOK, "--check", "--diff",
                           "-e", "routing=stp", "-e", "assignment=fixed", "-e", "out=" + str(out)],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--- before: %s" % (out / "intent.json") in proc.stdout
    assert '-    "assignment": "renamed"' in proc.stdout
    assert '+    "assignment": "fixed"' in proc.stdout
    assert "changed: [localhost]" in proc.stdout
    assert read_outputs(out) == files


def test_bad_topology_fails_cleanly_and_leaves_no_intent(ansible_cli, tmp_path):
    out = tmp_path / "plan"
    # a good plan first, so that there is an intent that would go stale
    rc, _result, text = playbook(ansible_cli, "-e", "out=" + str(out), cwd=tmp_path)
    assert rc == 0, text
    good_intent = (out / "intent.json").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text("switches: {sw0: {}, sw1: {}}\nlinks:\n  - {a: 'sw0:1', b: 'sw9:1'}\n")

    rc, result, text = playbook(ansible_cli, "-e", "topology=" + str(bad), "-e", "out=" + str(out),
                                cwd=tmp_path)

    assert rc != 0
    assert result["failed"] is True
    assert "links[0].b: unknown switch 'sw9'" in result["msg"]
    assert "intent.json.stale" in result["msg"]
    assert "Traceback" not in text
    assert not (out / "intent.json").exists()
    assert (out / "intent.json.stale").read_text() == good_intent
    assert not (out / "fabric.svg").exists()
    report = (out / "report.md").read_text()
    assert "REJECTED" in report and "unknown switch 'sw9'" in report

    # a missing topology file is a bad input too: the intent goes stale the same way
    os.replace(out / "intent.json.stale", out / "intent.json")
    rc, result, text = playbook(ansible_cli, "-e", "topology=missing.yml", "-e", "out=" + str(out),
                                cwd=tmp_path)
    assert rc != 0 and "topology: file 'missing.yml' not found" in result["msg"]
    assert "intent.json.stale" in result["msg"]
    assert not (out / "intent.json").exists()


def test_failed_check_names_the_switch_and_writes_no_intent(ansible_cli, tmp_path):
    topology = tmp_path / "tiny.yml"
    topology.write_text(MESH_WITH_TINY_MAC_TABLE)
    out = tmp_path / "plan"

    rc, result, text = playbook(ansible_cli, "-e", "topology=" + str(topology),
                                "-e", "routing=dor", "-e", "out=" + str(out), cwd=tmp_path)

    assert rc != 0, text
    assert "sw0" in result["msg"]
    assert "Traceback" not in text
    assert sorted(os.listdir(out)) == ["fabric.svg", "report.md"]
    report = (out / "report.md").read_text()
    failed = [row for row in report.splitlines() if "| **FAIL** | sw0 |" in row]
    assert failed, report


def test_module_with_data_and_no_out_returns_the_intent(ansible_cli, tmp_path):
    data = {"name": "lab", "generate": {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 2}}
    rc, result, stderr = ansible_cli.adhoc(
        "ethercluster.routing.plan",
        {"topology_data": data, "routing": "dor", "assignment": "fixed", "bank": "B"},
        cwd=tmp_path)
    assert rc == 0, stderr
    assert result["changed"] is False and "files" not in result
    topology = topology_from_data(data)
    intent = result["intent"]
    assert intent["fabric"]["assignment"] == "fixed" and intent["fabric"]["routing"] == "dor"
    assert set(intent["switches"]) == set(topology.switches)
    assert all(check["ok"] for check in result["checks"])
    assert {"max_channel_load", "average_hops"} <= set(result["metrics"])
    assert result["host_limit"]
    assert os.listdir(tmp_path) == []


def test_bad_arguments_are_named(ansible_cli, tmp_path):
    cases = [({"topology": DEFAULT_TOPOLOGY, "assignment": "sometimes"}, ["assignment", "sometimes"]),
             ({"topology": DEFAULT_TOPOLOGY, "routing": "fastest"}, ["fastest", "segment"]),
             ({"topology": "no/such/file.yml"}, ["no/such/file.yml"]),
             ({"topology": DEFAULT_TOPOLOGY, "topology_data": {"generate": {"kind": "mesh"}}},
              ["topology", "topology_data"])]
    tasks = [{"name": "case %d" % number, "ethercluster.routing.plan": args, "ignore_errors": True}
             for number, (args, _words) in enumerate(cases)]
    playbook_file = tmp_path / "bad_arguments.yml"
    playbook_file.write_text(json.dumps([{"name": "Bad arguments", "hosts": "localhost",
                                          "gather_facts": False, "tasks": tasks}]))
    env = ansible_cli.env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), str(playbook_file)],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    results = [task["hosts"]["localhost"] for task in json.loads(proc.stdout)["plays"][0]["tasks"]]
    assert len(results) == len(cases), proc.stdout + proc.stderr
    for (args, words), result in zip(cases, results):
        assert result.get("failed") is True, (args, result)
        for word in words:
            assert word in result["msg"], (word, result["msg"])
        assert "Traceback" not in result["msg"]
    assert os.listdir(tmp_path) == ["bad_arguments.yml"]
