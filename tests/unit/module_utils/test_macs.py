# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static MAC tables and the self-learning plan (switch-tagged paper §3.3)."""

from __future__ import annotations

import ipaddress
import itertools

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import build_intent
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.macs import (
    MacError,
    learned_entry_counts,
    self_learning_plan,
    static_mac_table,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import (
    fixed_assignment,
    renamed_assignment,
)


def setup(assignment="renamed", engine="dor", spec=None):
    spec = spec or dict(kind="mesh", dims=[3, 3], hosts_per_switch=2)
    topology = topology_from_data({"generate": spec})
    routing = compute_routing(topology, engine)
    build = fixed_assignment if assignment == "fixed" else renamed_assignment
    return topology, routing, build(routing)


def expected_entries(topology, routing, assignment):
    """(switch, mac, vlan) -> port, straight from the definition: for every
    host pair, the VLAN the frame is in at each switch of its path (fixed:
    the source host's PVID all the way; renamed: the PVID of the port it
    came in on) and the port it leaves on."""
    expected = {}
    for src, dst in itertools.permutations(topology.hosts.values(), 2):
        at, in_port = src.switch, src.port
        source_vid = assignment.switches[src.switch]["ports"][src.port]["pvid"]

        def vid():
            if assignment.kind == "fixed":
                return source_vid
            return assignment.switches[at]["ports"][in_port]["pvid"]

        for c in routing.path(src.switch, dst.switch):
            ch = topology.channels[c]
            expected[(at, dst.mac, vid())] = ch.src_port
            at, in_port = ch.dst, ch.dst_port
        expected[(at, dst.mac, vid())] = dst.port
    return expected


@pytest.mark.parametrize("kind", ["fixed", "renamed"])
def test_static_entries_are_exactly_the_states_frames_reach(kind):
    topology, routing, assignment = setup(kind)
    table = static_mac_table(topology, routing, assignment)
    got = {(switch, e["mac"], e["vlan"]): e["port"] for switch, entries in table.items()
           for e in entries}
    assert sum(len(entries) for entries in table.values()) == len(got)   # no duplicates
    assert got == expected_entries(topology, routing, assignment)


def test_entries_are_ordered_by_vlan_then_host_switch_then_mac():
    topology, routing, assignment = setup(
        "renamed", "segment", dict(kind="random", switches=8, degree=3, hosts_per_switch=3))
    table = static_mac_table(topology, routing, assignment)
    index = {name: sw.index for name, sw in topology.switches.items()}
    switch_of = {host.mac: host.switch for host in topology.hosts.values()}
    for entries in table.values():
        keys = [(e["vlan"], index[switch_of[e["mac"]]], e["mac"]) for e in entries]
        assert keys == sorted(keys)


def test_a_switch_without_hosts_holds_only_transit_entries():
    topology, routing, assignment = setup(
        "renamed", "updown", dict(kind="fat_tree", u=2, d=4, r=1, hosts_per_switch=2))
    table = static_mac_table(topology, routing, assignment)
    for name, sw in topology.switches.items():
        ports = {p for p, cfg in assignment.switches[name]["ports"].items()}
        assert {e["port"] for e in table[name]} <= ports
        if sw.level:       # spines: every entry points at a leaf port
            assert all(topology.channel_from(name, e["port"]) is not None for e in table[name])


def test_an_assignment_of_another_routing_is_refused():
    topology, routing, assignment = setup("renamed")
    other = compute_routing(topology, "updown")
    with pytest.raises(MacError, match="made for another routing"):
        static_mac_table(topology, other, assignment)
    assert static_mac_table(topology, None, assignment)


# ------------------------------------------------------------ self-learning
def test_self_learning_needs_the_fixed_assignment():
    topology, _routing, assignment = setup("renamed")
    with pytest.raises(MacError, match="only with the fixed VLAN assignment"):
        self_learning_plan(topology, assignment)


def test_self_learning_plan_gives_each_host_an_interface_and_address_per_vlan():
    topology, _routing, assignment = setup("fixed")
    learning = self_learning_plan(topology, assignment, network="10.99.0.0/16", aging_time=300)
    assert learning["repeat_every_s"] == 150 and learning["aging_time_s"] == 300
    subnets = {v["vlan"]: ipaddress.ip_network(v["subnet"]) for v in learning["vlans"]}
    assert sorted(subnets) == assignment.vlan_ids
    nets = list(subnets.values())
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))
    addresses = set()
    for name, host in learning["hosts"].items():
        assert [i["vlan"] for i in host["interfaces"]] == assignment.vlan_ids
        for interface in host["interfaces"]:
            address = ipaddress.ip_interface(interface["address"])
            assert address.network == subnets[interface["vlan"]]
            assert interface["device"] == "eth0.%d" % interface["vlan"]
            addresses.add(address.ip)
        assert len(host["pings"]) == len(assignment.vlan_ids)
        assert any("type vlan id %d" % assignment.vlan_ids[0] in c for c in host["commands"])
    assert len(addresses) == len(topology.hosts) * len(assignment.vlan_ids)


@pytest.mark.parametrize("network, words", [
    ("10.0.0.0/30", "too small"), ("fe80::/64", "not an IPv4"), ("10.0.0.1/8", "host bits"),
])
def test_self_learning_network_problems_are_named(network, words):
    topology, _routing, assignment = setup("fixed")
    with pytest.raises(MacError, match="mac_learning.network") as info:
        self_learning_plan(topology, assignment, network=network)
    assert words in str(info.value)


def test_self_learning_aging_time_must_be_whole_seconds():
    topology, _routing, assignment = setup("fixed")
    with pytest.raises(MacError, match="aging_time"):
        self_learning_plan(topology, assignment, aging_time=-1)
    assert self_learning_plan(topology, assignment, aging_time=0)["repeat_every_s"] == 0


@pytest.mark.parametrize("spec, engine", [
    (dict(kind="mesh", dims=[3, 3], hosts_per_switch=2), "dor"),
    (dict(kind="random", switches=8, degree=3, seed=2), "stp"),
])
def test_after_the_pings_learned_entries_route_every_pair_along_its_path(spec, engine):
    """§3.3 steps 1-3 played on the simulator: no static entry at all; each
    host broadcasts once from its interface in each VLAN (a tagged frame);
    afterwards every unicast goes along the planned path without flooding,
    by learned entries only."""
    topology, routing, assignment = setup("fixed", engine, spec)
    learning = self_learning_plan(topology, assignment)
    intent = build_intent(topology, routing, assignment, learning=learning)
    assert all(not entry["static_macs"] for entry in intent["switches"].values())
    fabric = Dot1qFabric(intent, learning=True)
    for name, host in learning["hosts"].items():
        for interface in host["interfaces"]:
            trace = fabric.send(name, "broadcast", vlan_tag=interface["vlan"])
            assert not trace["storm"]
    counts = learned_entry_counts(topology, assignment)
    for switch in topology.switches:
        held = sum(1 for key in fabric.learned if key[0] == switch)
        assert held == counts[switch]
    for src, dst in itertools.permutations(sorted(topology.hosts), 2):
        trace = fabric.send(src, dst)
        assert trace["received"] and trace["untagged"] and not trace["flooded"]
        taken = [topology.channel_from(h["switch"], h["out_port"]).id for h in trace["path"][:-1]]
        assert taken == routing.path(topology.hosts[src].switch, topology.hosts[dst].switch)
