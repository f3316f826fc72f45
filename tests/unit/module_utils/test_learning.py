"""mac_learning self executed (switch-tagged VLAN paper §3.3): the node side
(assign/learning.py: the VLAN interfaces' iproute2 commands and diff, the
tagged gratuitous ARP), the expectations of the learned check
(lab/expect.py: exactly what static_mac_table installs) and the check
itself (lab/wire.py, on canned ovs-ofctl output)."""

from __future__ import annotations

import json
import struct

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.assign import learning
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.learning import LearningError
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.macs import static_mac_table
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import fixed_assignment
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import expect, wire
from ansible_collections.ethercluster.routing.plugins.module_utils.report.markdown import (
    render_report,
    report_context,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing

MESH = {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 1}


def self_intent(spec=None, engine="dor"):
    return plan(topology_from_data({"generate": spec or MESH}), engine=engine, assignment="fixed",
                mac_learning="self").intent


VLANS = [{"vlan": 100, "device": "eth0.100", "address": "10.254.0.1/28", "broadcast": "10.254.0.15"},
         {"vlan": 101, "device": "eth0.101", "address": "10.254.0.17/28", "broadcast": "10.254.0.31"}]


def ip_json(*links):
    return json.dumps([{"ifname": "eth0", "flags": ["UP"], "addr_info": []}] + list(links))


def vlan_link(device, vlan, addresses=(), up=True, parent="eth0"):
    return {"ifname": device, "link": parent, "flags": ["UP"] if up else [],
            "linkinfo": {"info_kind": "vlan", "info_data": {"protocol": "802.1Q", "id": vlan}},
            "addr_info": [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1])}
                          for a in addresses]}


# ---------------------------------------------------------------- the host's part of the plan
def test_a_hosts_vlans_come_from_the_intent_with_their_broadcasts():
    vlans = learning.learning_vlans(self_intent()["mac_learning"], "node00")
    assert [entry["vlan"] for entry in vlans] == [100, 101, 102]
    assert vlans[0] == {"vlan": 100, "device": "eth0.100", "address": "10.254.0.1/28",
                        "broadcast": "10.254.0.15"}
    with pytest.raises(LearningError, match="host nodeX is not in the intent's mac_learning.hosts"):
        learning.learning_vlans(self_intent()["mac_learning"], "nodeX")
    with pytest.raises(LearningError, match="host node00: the intent has no mac_learning: self block"):
        learning.learning_vlans(None, "node00")


@pytest.mark.parametrize("entry, message", [
    ({"vlan": 0, "device": "eth0.0", "address": "10.0.0.1/24"}, r"host n0 VLAN 0: a VLAN ID must be 1-4094"),
    ({"vlan": 5, "device": "a-name-longer-than-15", "address": "10.0.0.1/24"},
     r"host n0 VLAN 5: 'a-name-longer-than-15' is not a Linux interface name"),
    ({"vlan": 5, "device": "eth0.5", "address": "10.0.0.1/24", "broadcast": "10.0.0.254"},
     r"host n0 VLAN 5 interface eth0.5: 10.0.0.254 is not the broadcast address of 10.0.0.0/24"),
    ({"vlan": 5, "device": "eth0.5", "address": "nonsense"}, r"host n0 VLAN 5 interface eth0.5: "),
])
def test_bad_vlan_entries_are_refused_naming_host_vlan_and_interface(entry, message):
    with pytest.raises(LearningError, match=message):
        learning.check_vlans([entry], "n0")


def test_the_broadcast_defaults_to_the_subnets():
    assert learning.check_vlans([{"vlan": 7, "device": "eth0.7", "address": "10.1.2.3/16"}],
                                "n0")[0]["broadcast"] == "10.1.255.255"


# ---------------------------------------------------------------- vlan_interfaces
def test_a_bare_host_gets_every_interface_address_and_link_up():
    current = learning.parse_ip_json(ip_json())
    assert learning.interface_changes(current, VLANS, "eth0", "n0") == [
        "ip link add link eth0 name eth0.100 type vlan id 100",
        "ip address add 10.254.0.1/28 broadcast 10.254.0.15 dev eth0.100",
        "ip link set eth0.100 up",
        "ip link add link eth0 name eth0.101 type vlan id 101",
        "ip address add 10.254.0.17/28 broadcast 10.254.0.31 dev eth0.101",
        "ip link set eth0.101 up"]


def test_only_what_is_missing_is_done_and_a_second_run_does_nothing():
    current = learning.parse_ip_json(ip_json(vlan_link("eth0.100", 100, ["10.254.0.1/28"]),
                                             vlan_link("eth0.101", 101, [], up=False)))
    assert learning.interface_changes(current, VLANS, "eth0", "n0") == [
        "ip address add 10.254.0.17/28 broadcast 10.254.0.31 dev eth0.101", "ip link set eth0.101 up"]
    done = learning.parse_ip_json(ip_json(vlan_link("eth0.100", 100, ["10.254.0.1/28"]),
                                          vlan_link("eth0.101", 101, ["10.254.0.17/28"])))
    assert learning.interface_changes(done, VLANS, "eth0", "n0") == []


def test_absent_removes_the_interfaces_that_exist():
    current = learning.parse_ip_json(ip_json(vlan_link("eth0.101", 101, ["10.254.0.17/28"])))
    assert learning.interface_changes(current, VLANS, "eth0", "n0", "absent") == ["ip link delete eth0.101"]
    assert learning.interface_changes(learning.parse_ip_json(ip_json()), VLANS, "eth0", "n0", "absent") == []


def test_a_clashing_device_or_missing_parent_is_refused_by_name():
    clash = learning.parse_ip_json(ip_json(vlan_link("eth0.100", 7)))
    with pytest.raises(LearningError, match=r"host n0 VLAN 100: interface eth0.100 exists but is not "
                                            r"VLAN 100 on eth0 \(VLAN 7 on eth0\)"):
        learning.interface_changes(clash, VLANS, "eth0", "n0")
    with pytest.raises(LearningError, match="host n0: no interface eth1 to put the VLAN interfaces on"):
        learning.interface_changes(learning.parse_ip_json(ip_json()), VLANS, "eth1", "n0")


def test_the_diff_shows_the_commands_and_the_pings_are_broadcasts():
    diff = learning.changes_diff(["ip link set eth0.100 up"], "n0")
    assert diff["after"] == "ip link set eth0.100 up\n" and "n0" in diff["before_header"]
    assert learning.pings(VLANS[:1]) == [["ping", "-b", "-c", "1", "-W", "1", "-I", "eth0.100", "10.254.0.15"]]


# ---------------------------------------------------------------- tagged_frames
def test_the_tagged_gratuitous_arp_carries_the_vlan_mac_and_address():
    frame = learning.tagged_garp("02:00:00:00:00:0a", 101, "10.254.0.17/28")
    assert len(frame) == 64 and frame[:6] == b"\xff" * 6
    assert struct.unpack("!HH", frame[12:16]) == (0x8100, 101)
    assert learning.read_tagged_garp(frame) == ("02:00:00:00:00:0a", 101, "10.254.0.17")
    assert learning.read_tagged_garp(b"\x00" * 64) is None
    with pytest.raises(LearningError, match="VLAN 5: 'nonsense' is not a MAC address"):
        learning.tagged_garp("nonsense", 5, "10.0.0.1/24")


# ---------------------------------------------------------------- what the switches must learn
@pytest.mark.parametrize("spec, engine", [
    (MESH, "dor"),
    ({"kind": "mesh", "dims": [4, 4], "hosts_per_switch": 2}, "dor"),
    ({"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}, "stp"),
])
def test_expected_learned_is_exactly_the_static_plan(spec, engine):
    topology = topology_from_data({"generate": spec})
    routing = compute_routing(topology, engine)
    static = static_mac_table(topology, routing, fixed_assignment(routing))
    want = {name: sorted((e["mac"], e["vlan"], e["port"]) for e in entries) for name, entries in static.items()}
    got = expect.expected_learned(self_intent(spec, engine))
    assert {name: [tuple(entry) for entry in entries] for name, entries in got.items()} == want


def test_the_verification_plan_of_a_self_learning_intent_has_the_learned_check():
    intent = self_intent()
    assert all(sw["static_macs"] == [] for sw in intent["switches"].values())
    verification = expect.verification_plan(intent)
    assert sum(map(len, verification["learned"].values())) == 105
    assert wire.default_checks(verification)[0] == "learned"
    assert "learned" not in wire.default_checks({})


def test_the_report_says_how_often_the_learning_broadcasts_repeat():
    for aging_time, words in ((None, "in every VLAN (3 VLANs, learning addresses from 10.254.0.0/16; role "
                                     "node_learning: VLAN interfaces and ping -b, or tagged frames) once: "
                                     "no switch ages learned entries (MAC aging time 0)"),
                              (600, "every 300 s, before the shortest MAC aging time of the switches (600 s) "
                                    "runs out")):
        topology = topology_from_data({"generate": MESH})
        result = plan(topology, engine="dor", assignment="fixed", mac_learning="self", aging_time=aging_time)
        report = render_report(report_context(topology, {"routing": "dor", "mac_learning": "self"}, result))
        assert words in report


# ---------------------------------------------------------------- the learned check
DUMP = """OFPST_FLOW reply (OF1.3) (xid=0x6):
 cookie=0xec01, duration=53.4s, table=2, n_packets=3, n_bytes=238, priority=10,reg0=0x64/0xfff,dl_dst=02:00:00:00:00:08 actions=load:0x2->NXM_NX_REG1[0..15]
 cookie=0xec01, duration=53.4s, table=2, n_packets=0, n_bytes=0, priority=10,reg0=0x65/0xfff,dl_dst=02:00:00:00:00:08 actions=load:0x3->NXM_NX_REG1[0..15]
 cookie=0xec00, duration=60s, table=2, n_packets=0, n_bytes=0, priority=20,reg0=0x64,dl_dst=02:00:00:00:00:01 actions=set_field:0x1->reg1
 cookie=0xec00, duration=60s, table=2, n_packets=0, n_bytes=0, priority=0 actions=drop
"""


def test_the_forwarding_table_dump_is_read_into_learned_and_static_entries():
    assert wire.parse_fdb(DUMP) == {"learned": [("02:00:00:00:00:08", 100, "2"), ("02:00:00:00:00:08", 101, "3")],
                                    "static": [("02:00:00:00:00:01", 100, "1")]}


def test_learned_names_missing_and_misplaced_entries_and_static_ones(monkeypatch):
    monkeypatch.setattr(wire, "read_fdb", lambda layout: {"sw0": wire.parse_fdb(DUMP)})
    result = wire.check_learned({}, {"sw0": [["02:00:00:00:00:08", 100, "2"], ["02:00:00:00:00:08", 101, "2"],
                                             ["02:00:00:00:00:09", 100, "1"]]})
    assert not result["ok"]
    assert result["problems"] == [
        "sw0: holds 1 static entries (mac_learning self plans none), e.g. 02:00:00:00:00:01 in VLAN 100 on port 1",
        "sw0: learned 02:00:00:00:00:08 in VLAN 101 on port 3, the static plan has port 2",
        "sw0: has not learned 02:00:00:00:00:09 in VLAN 100 (the static plan: port 1)"]


def test_learned_passes_when_every_planned_entry_is_learned_and_counts_the_others(monkeypatch):
    monkeypatch.setattr(wire, "read_fdb", lambda layout: {"sw0": {"learned": wire.parse_fdb(DUMP)["learned"],
                                                                  "static": []}})
    result = wire.check_learned({}, {"sw0": [["02:00:00:00:00:08", 100, "2"]]})
    assert result["ok"], result
    assert "learned the 1 entries" in result["detail"] and "(1 more learned off the planned paths)" in result["detail"]


def test_verify_refuses_unknown_checks_and_learned_without_a_self_intent():
    with pytest.raises(wire.WireError, match="unknown check bogus"):
        wire.verify({"hosts": {}}, {"hosts": {}}, checks=["bogus"])
    with pytest.raises(wire.WireError, match="the learned check needs an intent planned with mac_learning: self"):
        wire.verify({"hosts": {}}, {"hosts": {}}, checks=["learned"])
