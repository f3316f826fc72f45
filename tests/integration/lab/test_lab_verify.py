"""The on-the-wire verification (lab/wire.py, behind ethercluster.routing.lab_verify)
on a real lab: the ring of fixtures/lab/ with its hand-written intent passes
every check, and each check fails, naming hosts, switches and ports, when
the wire does something else: frames off the planned path, a cut link, STP
on, a broadcast storm, TCP broken by the veth checksum quirk.
"""

import copy

import pytest
import yaml
from lab_helpers import FIXTURES

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan, runner, wire
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.expect import (
    verification_plan,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from lab_ssh import Session  # the OpenSSH client, for tests without a playbook
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

pytestmark = pytest.mark.lab

LAB = "pytest-verify"
QUIRK_LAB = "pytest-verify-tcp"


def push(layout, switch, config):
    """Read, compare and write one switch, as ovs_switch does."""
    paths = plan.lab_paths(layout)
    desired = ovs.render(config, switch)
    with Session(switch, layout["switches"][switch]["mgmt_address"],
                 key_filename=paths["client_key"], known_hosts=paths["known_hosts"]) as session:
        current = ovs.parse_state(session.run(ovs.read_script(), "read"))
        changes = ovs.compare(current, desired, switch)
        if changes.changed:
            session.run(ovs.write_script(changes, desired, current), "write")


def push_all(layout, intent):
    for switch, config in intent["switches"].items():
        push(layout, switch, config)


@pytest.fixture(scope="module")
def ring(lab_machine):
    topology = load_topology(FIXTURES / "ring3_topology.yml")
    layout = lab_layout(topology, name=LAB, mgmt_network="198.18.0.0/28",
                        host_network="10.45.0.0/16")
    runner.lab_down(layout["state_root"], LAB)  # left by an interrupted run
    assert runner.lab_up(layout)["outcome"] == "created"
    intent = yaml.safe_load((FIXTURES / "ring3_intent.yml").read_text())
    push_all(layout, intent)
    yield {"layout": layout, "intent": intent,
           "expected": verification_plan(intent, bursts=3, tcp_bytes=2 << 20)}
    runner.lab_down(layout["state_root"], LAB)


def test_a_correct_push_passes_every_check(ring):
    result = wire.verify(ring["layout"], ring["expected"])
    failed = [check for check in result["checks"] if not check["ok"]]
    assert failed == []
    assert result["passed"] is True
    assert [check["name"] for check in result["checks"]] == list(wire.ALL_CHECKS)
    assert set(result["timings"]) == {"stp_off", "broadcast", "planned_paths", "ping", "tcp"}


def test_frames_off_the_planned_path_are_named(ring):
    """The intent sends h0a -> h2 over sw1; expecting the direct sw0-sw2
    link instead must fail on exactly those ports."""
    wrong = [{"src": "h0a", "dst": "h2", "path": [
        {"switch": "sw0", "in_port": "1", "out_port": "3"},
        {"switch": "sw2", "in_port": "3", "out_port": "1"}]}]
    result = wire.check_bursts(ring["layout"], wrong, count=200)
    assert result["ok"] is False
    problems = "\n".join(result["problems"])
    assert "sw0:3 sent 0 (on the planned path" in problems
    assert "sw2:3 received 0 (on the planned path" in problems
    assert "sw0:2 sent" in problems and "sw1:2 received" in problems
    assert "off the planned path" in problems
    assert all("burst h0a -> h2 (200 frames" in problem for problem in result["problems"])


def test_a_cut_link_shows_as_the_pairs_that_cannot_ping(ring):
    layout, intent = ring["layout"], ring["intent"]
    cut = copy.deepcopy(intent["switches"]["sw0"])
    cut["ports"]["3"]["admin"] = "down"  # sw0:3 carries everything from sw2 to sw0
    push(layout, "sw0", cut)
    try:
        result = wire.check_ping(layout)
    finally:
        push(layout, "sw0", intent["switches"]["sw0"])
    assert result["ok"] is False
    address = {name: host["address"] for name, host in layout["hosts"].items()}
    assert "h2 (%s) cannot ping h0a (%s)" % (address["h2"], address["h0a"]) in result["problems"]
    assert "h0b (%s) cannot ping h2 (%s)" % (address["h0b"], address["h2"]) in result["problems"]
    assert not any("h1" in problem for problem in result["problems"])
    assert wire.check_ping(layout)["ok"] is True


def test_stp_on_a_switch_is_named(ring):
    layout = ring["layout"]
    env = plan.ovs_env(layout["switches"]["sw1"]["dir"])
    set_stp = ["ovs-vsctl", "set", "Bridge", "br0"]
    assert wire._run(set_stp + ["stp_enable=true"], env=env).returncode == 0
    try:
        result = wire.check_stp(layout, ring["expected"]["stp"])
    finally:
        assert wire._run(set_stp + ["stp_enable=false"], env=env).returncode == 0
    assert result["ok"] is False and result["problems"] == ["sw1: STP is on"]
    assert wire.check_stp(layout, ring["expected"]["stp"])["ok"] is True


def test_a_broadcast_storm_is_caught_and_named(ring):
    """Every port of every switch an untagged member of one VLAN: a
    broadcast circles the ring for ever. The broadcast check sees too many
    copies, the storm check names the ports that keep counting."""
    layout, intent = ring["layout"], ring["intent"]
    looped = copy.deepcopy(intent)
    for switch in looped["switches"].values():
        switch["vlans"], switch["static_macs"] = [10], []
        for port in switch["ports"].values():
            port.update(pvid=10, untagged=[10], tagged=[])
    push_all(layout, looped)
    try:
        broadcast, storm = wire.check_broadcast(
            layout, {"h0a": ring["expected"]["broadcast"]["h0a"]}, collect_s=0.5,
            storm_window_s=0.5)
    finally:
        push_all(layout, intent)
    assert broadcast["ok"] is False
    assert any(problem.startswith("broadcast from h0a: h1 received") for problem in
               broadcast["problems"])
    assert storm["ok"] is False
    assert storm["problems"][0].startswith("frames still move after the broadcasts")
    assert any(problem.startswith("sw1:2 moved") for problem in storm["problems"])
    # the intent pushed again replaces the looping flows: the storm is over
    broadcast, storm = wire.check_broadcast(layout, ring["expected"]["broadcast"],
                                            storm_window_s=1.0)
    assert broadcast["ok"] and storm["ok"], broadcast["problems"] + storm["problems"]


def test_tcp_fails_when_the_checksum_quirk_is_not_handled(lab_machine):
    """Without userspace TSO and with tx offload on the hosts' veths, ping
    works and TCP does not (docs/lab.md); the check says so."""
    topology = topology_from_data({
        "name": "quirk", "switches": {"sw0": {}, "sw1": {}},
        "links": [{"a": "sw0:2", "b": "sw1:2"}],
        "hosts": {"h0": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:01:01"},
                  "h1": {"switch": "sw1", "port": "1", "mac": "02:00:00:00:01:02"}}})
    layout = lab_layout(topology, name=QUIRK_LAB, mgmt_network="198.18.0.16/28",
                        host_network="10.46.0.0/16", userspace_tso=False,
                        host_tx_offload=True)
    runner.lab_down(layout["state_root"], QUIRK_LAB)
    runner.lab_up(layout)
    try:
        intent = {"switches": {switch: {
            "vlans": [10], "static_macs": [
                {"mac": "02:00:00:00:01:01", "vlan": 10, "port": "1" if switch == "sw0" else "2"},
                {"mac": "02:00:00:00:01:02", "vlan": 10, "port": "2" if switch == "sw0" else "1"}],
            "ports": {"1": {"pvid": 10, "untagged": [10]}, "2": {"pvid": 10, "untagged": [10]}}}
            for switch in ("sw0", "sw1")}}
        push_all(layout, intent)
        assert wire.check_ping(layout)["ok"] is True
        result = wire.check_tcp(layout, "h1", "h0", size=1 << 20, timeout=3)
    finally:
        runner.lab_down(layout["state_root"], QUIRK_LAB)
    assert result["ok"] is False
    assert len(result["problems"]) == 1
    assert result["problems"][0].startswith("TCP h1 (10.46.0.2) -> h0 (10.46.0.1), 1048576 bytes: ")
    assert "veth checksum quirk" in result["problems"][0]
