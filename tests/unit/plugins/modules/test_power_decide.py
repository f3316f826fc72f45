"""power_decide through ansible (its action plugin), replaying a fabric state
and counter readings (state/readings) instead of reading switches: the
selector mode reports the watts and the busiest channel before and after, its
actions in order and what was vetoed; max_changes bounds the actions; check
mode lists them and writes no log; the threshold mode (the default) decides
as measure.power_decision does."""

import json

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
from ansible_collections.ethercluster.routing.plugins.module_utils.power import measure

MODULE = "ethercluster.routing.power_decide"


def fabric(tmp_path, spec):
    """A topology file generated from ``spec`` and its Topology."""
    path = tmp_path / "topology.yml"
    path.write_text("plugin: ethercluster.routing.topology\nname: t\ngenerate: %s\n" % json.dumps(spec))
    return path, load_topology(str(path))


def replay(topology, mb_per_s=1.0, seconds=10.0, down=()):
    """state and two readings: every host sent and received ``mb_per_s``."""
    def counters(scale):
        reading = {sw: {} for sw in topology.switches}
        for host in topology.hosts.values():
            reading[host.switch][str(host.port)] = {"rx_bytes": int(scale), "tx_bytes": int(scale)}
        for link in topology.links:
            for end in (link.a, link.b):
                reading[end.switch][str(end.port)] = {"rx_bytes": 0, "tx_bytes": 0}
        return reading
    state = {"links": [{"name": link.name, "admin": "down" if link.index in down else "up"}
                       for link in topology.links],
             "speeds": {link.name: link.speed_mbps for link in topology.links}, "bank": "A",
             "down_links": [topology.links[i].name for i in down]}
    return state, [{"at": 0.0, "counters": counters(0)},
                   {"at": seconds, "counters": counters(mb_per_s * 1e6 * seconds)}]


COMPLETE = {"kind": "complete", "switches": 4, "links_per_pair": 2, "hosts_per_switch": 1}


def test_selector_mode_in_check_mode_lists_every_action_and_logs_nothing(ansible_cli, tmp_path):
    path, topology = fabric(tmp_path, COMPLETE)
    state, readings = replay(topology)
    log = tmp_path / "power.jsonl"
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"topology": str(path), "mode": "selector", "state": state,
                                                    "readings": readings, "log": str(log)}, "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["mode"] == "selector" and result["changed"] is False and not log.exists()
    # 12 links, every pair twice: the selector keeps one of each pair on (uniform traffic)
    assert [a["action"] for a in result["actions"]] == ["off"] * 6
    assert len({a["link"] for a in result["actions"]}) == 6 and result["deferred"] == []
    assert result["watts_before"] == pytest.approx(93.6) and result["watts_after"] == pytest.approx(79.2)
    assert result["max_utilisation_after"] <= result["all_links_max_utilisation"] * (1 + 1e-9)
    assert result["max_load_before"] == pytest.approx(1e6 / 3)   # 1 MB/s spread over the 3 other switches
    assert result["log"][0] == ("greedy selector: all-links maximum utilisation 0.3%; busiest channel 0.3% -> "
                                "0.3% (333333 -> 333333 B/s); 93.6 W -> 79.2 W (14.4 W saved)")


def test_max_changes_bounds_the_actions_and_the_log_line_has_the_figures(ansible_cli, tmp_path):
    path, topology = fabric(tmp_path, COMPLETE)
    state, readings = replay(topology)
    log = tmp_path / "power.jsonl"
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"topology": str(path), "mode": "selector", "state": state,
                                                    "readings": readings, "max_changes": 2, "log": str(log)},
                                           cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert len(result["actions"]) == 2 and len(result["deferred"]) == 4
    assert result["watts_after"] == pytest.approx(93.6 - 2 * 2.4)
    entry = json.loads(log.read_text().splitlines()[-1])
    assert entry["mode"] == "selector" and entry["actions"] == result["actions"]
    assert entry["watts_before"] == result["watts_before"] and entry["watts_after"] == result["watts_after"]
    assert entry["max_utilisation_after"] == result["max_utilisation_after"]


def test_selector_mode_vetoes_an_off_only_a_drain_could_do(ansible_cli, tmp_path):
    path, topology = fabric(tmp_path, {"kind": "torus", "dims": [3, 3], "links_per_neighbor": 2,
                                       "hosts_per_switch": 1})
    state, readings = replay(topology)
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"topology": str(path), "mode": "selector", "state": state,
                                                    "readings": readings}, "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    drains = [v for v in result["vetoed"] if v["by"] == "transition"]
    assert [v["link"] for v in drains] == ["sw1:6"]
    assert drains[0]["reason"].startswith("no lossless transition") and "drain" in drains[0]["reason"]
    assert "sw1:6" not in [a["link"] for a in result["actions"]]
    assert any(line.startswith("vetoed off sw1:6 (transition): no lossless") for line in result["log"])


def test_threshold_mode_is_the_default_and_decides_as_before(ansible_cli, tmp_path):
    path, topology = fabric(tmp_path, COMPLETE)
    state, readings = replay(topology, mb_per_s=0.0)
    readings = [dict(readings[0], at=float(t)) for t in range(4)]
    args = {"topology": str(path), "state": state, "readings": readings}
    rc, result, stderr = ansible_cli.adhoc(MODULE, args, "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    expected = measure.power_decision(topology, state, readings, None,
                                      can_turn_off=measure.lossless_off(topology, "A", "segment"))
    assert result["mode"] == "threshold"
    assert result["actions"] == expected["actions"]
    # the drain veto's example frame may differ between processes (set order): compare up to it
    assert [line.split(" (")[0] for line in result["log"]] == [line.split(" (")[0] for line in expected["log"]]
    assert result["log"][1].startswith("keeping sw0:2--sw1:2 on: no lossless transition")
    assert len(result["actions"]) == 1                                  # thresholds.max_changes: 1
    rc, result, stderr = ansible_cli.adhoc(MODULE, dict(args, max_changes=3), "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert [a["action"] for a in result["actions"]] == ["off"] * 3


def test_state_without_readings_is_refused(ansible_cli, tmp_path):
    path, topology = fabric(tmp_path, COMPLETE)
    state, _readings = replay(topology)
    rc, result, _stderr = ansible_cli.adhoc(MODULE, {"topology": str(path), "state": state}, cwd=tmp_path)
    assert rc != 0 and result["msg"] == "state and readings go together (a replay), or neither"
