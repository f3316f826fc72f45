# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The IEEE 802.1Q simulator on hand-written intents (each rule of
docs/intent.md's semantics), and the end-to-end test: for every generator kind,
every engine that accepts it and both assignments, the planned intent --
read by the simulator alone -- delivers every host pair untagged along the
planned path and every broadcast to every host, and every flood dies out."""

from __future__ import annotations

import copy
import itertools

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import (
    Dot1qError,
    Dot1qFabric,
    simulate_8021q,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import PlanError, plan
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    ENGINES,
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

MAC = {"h1": "02:00:00:00:00:01", "h2": "02:00:00:00:00:02", "h3": "02:00:00:00:00:03"}


def port(pvid, untagged=(), tagged=(), admin="up"):
    return {"pvid": pvid, "untagged": list(untagged), "tagged": list(tagged), "admin": admin}


def two_switches():
    """A -- B over A:10/B:10 (tagged VLAN 20); h1 on A:1 and h3 on A:2 in
    VLAN 20 (untagged), h2 on B:1. Static entries route h1 <-> h2."""
    return {
        "schema": "ethercluster.routing/intent/v1",
        "links": [{"a": "A:10", "b": "B:10", "state": "up", "speed_mbps": 1000}],
        "hosts": {"h1": {"mac": MAC["h1"], "switch": "A", "port": "1"},
                  "h2": {"mac": MAC["h2"], "switch": "B", "port": "1"},
                  "h3": {"mac": MAC["h3"], "switch": "A", "port": "2"}},
        "switches": {
            "A": {"vlans": [20, 30],
                  "ports": {"1": port(20, [20, 30]), "2": port(20, [20]),
                            "10": port(20, tagged=[20])},
                  "static_macs": [{"mac": MAC["h2"], "vlan": 20, "port": "10"},
                                  {"mac": MAC["h1"], "vlan": 20, "port": "1"}]},
            "B": {"vlans": [20],
                  "ports": {"1": port(20, [20]), "10": port(20, tagged=[20])},
                  "static_macs": [{"mac": MAC["h2"], "vlan": 20, "port": "1"},
                                  {"mac": MAC["h1"], "vlan": 20, "port": "10"}]},
        },
    }


# ------------------------------------------------------------ 802.1Q rules
def test_untagged_frame_takes_the_pvid_is_tagged_between_switches_and_untagged_at_the_host():
    trace = simulate_8021q(two_switches(), "h1", "h2")
    assert trace["received"] and trace["untagged"] and not trace["flooded"]
    assert [(hop["switch"], hop["in_port"], hop["vlan"], hop["out_port"], hop["tag"])
            for hop in trace["path"]] == [("A", "1", 20, "10", 20), ("B", "10", 20, "1", None)]
    assert set(trace["delivered"]) == {"h2"}


def test_tagged_frame_of_a_vlan_the_port_is_not_in_is_dropped_by_ingress_filtering():
    trace = simulate_8021q(two_switches(), "h3", "h2", vlan_tag=30)
    assert not trace["received"]
    assert "ingress filtering" in trace["dropped"][0]["reason"]
    # h1's port is an untagged member of 30: a frame tagged 30 is accepted
    # there, but A has no entry for h2 in 30 and floods to 30's members
    trace = simulate_8021q(two_switches(), "h1", "h2", vlan_tag=30)
    assert trace["flooded"] and not trace["received"]


def test_unknown_destination_floods_to_every_member_but_the_input_port():
    intent = two_switches()
    intent["switches"]["A"]["static_macs"] = []
    trace = simulate_8021q(intent, "h1", "h2")
    assert trace["flooded"] and trace["received"]
    assert set(trace["delivered"]) == {"h2", "h3"}      # h3 shares VLAN 20 on A
    assert "h1" not in trace["delivered"]


def test_an_entry_pointing_back_to_the_input_port_is_filtered():
    intent = two_switches()
    intent["switches"]["A"]["static_macs"][0]["port"] = "1"
    trace = simulate_8021q(intent, "h1", "h2")
    assert not trace["received"] and "back to the input port" in trace["dropped"][0]["reason"]


def test_an_entry_naming_a_non_member_port_drops_the_frame():
    intent = two_switches()
    intent["switches"]["B"]["static_macs"][0]["port"] = "7"
    trace = simulate_8021q(intent, "h1", "h2")
    assert not trace["received"] and "no member" in trace["dropped"][0]["reason"]


def test_admin_down_port_and_down_link_carry_nothing():
    intent = two_switches()
    intent["switches"]["B"]["ports"]["10"]["admin"] = "down"
    trace = simulate_8021q(intent, "h1", "h2")
    assert not trace["received"] and "admin down" in trace["dropped"][0]["reason"]
    intent = two_switches()
    intent["links"][0]["state"] = "down"
    assert not simulate_8021q(intent, "h1", "h2")["received"]


def test_a_vlan_the_switch_does_not_hold_drops_the_frame():
    intent = two_switches()
    intent["switches"]["B"]["vlans"] = []
    trace = simulate_8021q(intent, "h1", "h2")
    assert "does not hold VLAN 20" in trace["dropped"][0]["reason"]


def test_untagged_egress_on_a_link_is_reclassified_by_the_next_pvid():
    intent = two_switches()
    intent["switches"]["A"]["ports"]["10"] = port(20, untagged=[20])
    intent["switches"]["B"]["ports"]["10"] = port(40, untagged=[40])
    intent["switches"]["B"]["ports"]["1"] = port(20, untagged=[20, 40])
    intent["switches"]["B"]["vlans"] = [20, 40]
    intent["switches"]["B"]["static_macs"] = [{"mac": MAC["h2"], "vlan": 40, "port": "1"}]
    trace = simulate_8021q(intent, "h1", "h2")
    assert trace["received"] and trace["untagged"]
    assert [hop["vlan"] for hop in trace["path"]] == [20, 40]
    assert trace["path"][0]["tag"] is None


def test_tagged_delivery_is_reported():
    intent = two_switches()
    intent["switches"]["B"]["ports"]["1"] = port(20, tagged=[20])
    trace = simulate_8021q(intent, "h1", "h2")
    assert trace["received"] and not trace["untagged"]
    assert trace["delivered"]["h2"] == {"copies": 1, "tagged": True, "vlans": [20]}


def triangle(untagged_everywhere=True):
    """A, B, C in a triangle, every port in VLAN 10: a loop without STP."""
    links = [("A:10", "B:10"), ("B:11", "C:10"), ("C:11", "A:11")]
    switches = {name: {"vlans": [10], "ports": {"1": port(10, [10])}, "static_macs": []}
                for name in "ABC"}
    for a, b in links:
        for end in (a, b):
            sw, p = end.split(":")
            switches[sw]["ports"][p] = port(10, [10] if untagged_everywhere else [], [] if
                                            untagged_everywhere else [10])
    return {"links": [{"a": a, "b": b, "state": "up"} for a, b in links],
            "hosts": {"h%d" % i: {"mac": "02:00:00:00:01:0%d" % i, "switch": sw, "port": "1"}
                      for i, sw in enumerate("ABC")},
            "switches": switches}


@pytest.mark.parametrize("untagged", [True, False])
def test_a_loop_in_one_vlan_storms(untagged):
    fabric = Dot1qFabric(triangle(untagged))
    trace = fabric.send("h0", "broadcast")
    assert trace["storm"] and trace["cycle"]
    assert all(record["copies"] is None for record in trace["delivered"].values())
    assert fabric.storm_cycle()


def test_broadcast_on_a_tree_reaches_everyone_once_and_dies_out():
    intent = triangle()
    del intent["links"][2]      # C -- A removed: a line A - B - C
    fabric = Dot1qFabric(intent)
    trace = fabric.send("h0", "broadcast")
    assert not trace["storm"]
    assert {h: r["copies"] for h, r in trace["delivered"].items()} == {"h1": 1, "h2": 1}
    assert fabric.storm_cycle() == []


def test_learning_replaces_flooding_once_the_source_is_known():
    intent = two_switches()
    for entry in intent["switches"].values():
        entry["static_macs"] = []
    fabric = Dot1qFabric(intent, learning=True)
    first = fabric.send("h2", "h1")
    assert first["flooded"] and first["received"]
    back = fabric.send("h1", "h2")
    assert back["received"] and back["learned_used"] and not back["flooded"]
    fabric.forget()
    assert fabric.send("h1", "h2")["flooded"]


def test_unknown_hosts_are_clear_errors():
    with pytest.raises(Dot1qError, match="unknown source host 'nobody'"):
        simulate_8021q(two_switches(), "nobody", "h1")
    with pytest.raises(Dot1qError, match="unknown destination 'nobody'"):
        simulate_8021q(two_switches(), "h1", "nobody")
    with pytest.raises(Dot1qError, match="switches"):
        Dot1qFabric({"links": []})
    assert issubclass(Dot1qError, EtherclusterError)


# --------------------------------------------------------------- end to end
GENERATORS = [
    ("mesh", dict(kind="mesh", dims=[4, 4], hosts_per_switch=2)),
    ("mesh_faults", dict(kind="mesh", dims=[3, 4], faults=2, seed=3)),
    ("torus2", dict(kind="torus", dims=[4, 3], links_per_neighbor=2, hosts_per_switch=2)),
    ("torus1", dict(kind="torus", dims=[4, 3])),
    ("fat_tree", dict(kind="fat_tree", u=2, d=4, r=1, hosts_per_switch=2)),
    ("myri_clos", dict(kind="myri_clos", dims=[2, 3])),
    ("complete", dict(kind="complete", switches=4, links_per_pair=2)),
    ("tree", dict(kind="tree", fanout=2, depth=2)),
    ("m_tree", dict(kind="m_tree", dims=[3, 3])),
    ("random", dict(kind="random", switches=8, degree=3, seed=1)),
]


def not_a_tree(routing, source):
    """Independently: some switch is entered over two channels by the
    paths from ``source`` to the other endpoint switches."""
    topology = routing.topology
    entered = {}
    endpoints = [name for name in topology.switch_names() if topology.hosts_on(name)]
    for dst in endpoints:
        if dst == source:
            continue
        for c in routing.path(source, dst):
            ch = topology.channels[c]
            if entered.setdefault(ch.dst, c) != c or ch.dst == source:
                return True
    return False


def e2e_cases():
    for label, spec in GENERATORS:
        topology = topology_from_data({"generate": spec})
        for engine in sorted(ENGINES):
            try:
                compute_routing(topology, engine)
            except EtherclusterError:
                continue      # the engine does not accept this fabric
            for kind in ("fixed", "renamed"):
                yield pytest.param(spec, engine, kind, id="%s-%s-%s" % (label, engine, kind))


@pytest.mark.parametrize("spec, engine, kind", list(e2e_cases()))
def test_end_to_end_8021q_delivery_from_the_intent_alone(spec, engine, kind):
    topology = topology_from_data({"generate": spec})
    try:
        result = plan(topology, engine=engine, assignment=kind)
    except PlanError as exc:
        # the only acceptable refusal: fixed, for paths that are not trees
        failed = {check["name"]: check for check in exc.checks}
        assert kind == "fixed" and set(failed) == {"vlan_assignment"}, exc.checks
        source = failed["vlan_assignment"]["switch"]
        assert not_a_tree(exc.plan.routing, source)
        return  # a correct refusal, checked above: nothing is delivered by it
    routing = result.routing
    intent = copy.deepcopy(result.intent)      # the simulator sees plain data only
    fabric = Dot1qFabric(intent)
    hosts = sorted(intent["hosts"])
    for src, dst in itertools.permutations(hosts, 2):
        trace = fabric.send(src, dst)
        assert trace["received"] and trace["untagged"], (src, dst, trace["dropped"])
        assert not trace["flooded"] and not trace["storm"]
        assert set(trace["delivered"]) == {dst} and trace["delivered"][dst]["copies"] == 1
        taken = [topology.channel_from(hop["switch"], hop["out_port"]).id
                 for hop in trace["path"]
                 if topology.channel_from(hop["switch"], hop["out_port"]) is not None]
        s, t = intent["hosts"][src]["switch"], intent["hosts"][dst]["switch"]
        assert taken == routing.path(s, t), (src, dst)
    for src in hosts:
        trace = fabric.send(src, "broadcast")
        assert not trace["storm"], trace["cycle"]
        assert set(trace["delivered"]) >= set(hosts) - {src}
        assert all(record["copies"] >= 1 and not record["tagged"]
                   for record in trace["delivered"].values())
