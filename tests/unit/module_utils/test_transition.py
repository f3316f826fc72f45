# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transition planner (make-before-break link off / on / speed change),
re-checked here independently of its own proof: every state the steps leave
the fabric in -- and, for each flip, the half-flipped switch (host ports in
the new bank, link ports still old) -- is read by the 802.1Q simulator
alone: every host pair delivered exactly once, untagged, by static entries,
no broadcast storm; the channel pairs of all those paths form one acyclic
dependency graph; the first and last states are what the fabric holds
with those links down (plan() with every link up; else the kept-turn-order
routing, the same a transition starting there computes);
the shut comes after the cleanup; the banks alternate."""

from __future__ import annotations

import itertools
import json

import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import (
    LinkSelectionProblem,
    greedy_selection,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import (
    TransitionError,
    _plan_from_routing,
    held_intent,
    kept_order_router,
    plan_transition,
)

CASES = {
    "torus4x4-segment-renamed": ({"kind": "torus", "dims": [4, 4]},
                                 {"engine": "segment", "assignment": "renamed", "broadcast": "bounded"}),
    "mesh4x4-dor-fixed": ({"kind": "mesh", "dims": [4, 4], "links_per_neighbor": 2},
                          {"engine": "dor", "assignment": "fixed",
                           "engine_options": {"balance": False}}),
    "ring6-updown-renamed": ({"kind": "torus", "dims": [6]},
                             {"engine": "updown", "assignment": "renamed", "broadcast": "bounded"}),
    # the balanced paths of a torus are no trees: the fixed assignment carries source trees
    # (what a fabric of switches without a flood tree, dell_os6 say, deploys)
    "torus4x4-segment-fixed-source-tree": ({"kind": "torus", "dims": [4, 4]},
                                           {"engine": "segment", "assignment": "fixed",
                                            "engine_options": {"paths": "source_tree"}}),
}
LINK = 3


def _topology(spec):
    return topology_from_data({"generate": spec})


def _hold_up(switches, link):
    """Plan entries with the ports of ``link`` admin up (before the shut)."""
    result = {}
    for name, entry in switches.items():
        entry = dict(entry)
        entry["ports"] = {port: (dict(config, admin="up") if "%s:%s" % (name, port)
                                 in (str(link.a), str(link.b)) else config)
                          for port, config in entry["ports"].items()}
        result[name] = entry
    return result


def _channel_pairs(topology, trace):
    channels = [topology.channel_from(hop["switch"], hop["out_port"]).id
                for hop in trace["path"]
                if (hop["switch"], hop["out_port"]) in _link_ports(topology)]
    return list(zip(channels, channels[1:]))


def _link_ports(topology):
    return {(ch.src, ch.src_port) for ch in topology.channels}


def _verify(topology, intent, dependencies):
    """Every host pair delivered once, untagged, by static entries; no storm."""
    fabric = Dot1qFabric(intent)
    for src, dst in itertools.permutations(sorted(intent["hosts"]), 2):
        trace = fabric.send(src, dst)
        assert trace["received"] and trace["untagged"], (src, dst, trace["dropped"])
        assert trace["delivered"][dst]["copies"] == 1, (src, dst)
        assert not trace["flooded"] and not trace["storm"], (src, dst)
        dependencies.add_edges_from(_channel_pairs(topology, trace))
    assert fabric.storm_cycle() == []


def _half_flipped(previous, current, switch):
    """``switch`` with its host ports' PVIDs from ``current`` and its link
    ports' PVIDs from ``previous`` (a push applied port by port)."""
    entry = dict(current["switches"][switch])
    before = previous["switches"][switch]["ports"]
    entry["ports"] = {port: (config if config.get("role") == "host"
                             else dict(config, pvid=before[port]["pvid"]))
                      for port, config in entry["ports"].items()}
    switches = dict(current["switches"])
    switches[switch] = entry
    return dict(current, switches=switches)


def _held(topology, down, bank, kwargs):
    """The switches' entries with the links ``down`` down: plan() when every
    link of the file is up (what deploy_routing.yml pushes); else the routing
    that keeps the base routing's turn order, which is also what a transition
    *starting* there computes as its ``before`` (the state read back from the
    switches must give the same plan, so it has to be deterministic)."""
    if not down:
        return plan(topology, bank=bank, **kwargs).intent["switches"]
    again = plan_transition(topology, "on", down[0], current_down=down, current_bank=bank,
                            **kwargs)
    return again.before["switches"]


def _check_transition(topology, transition, kwargs, down_before, down_after, link):
    steps = transition.steps
    json.dumps(transition.to_data())            # plain data for the executor
    assert [step["index"] for step in steps] == list(range(1, len(steps) + 1))
    # first and last states: what the fabric holds with those links down
    before = _held(topology, down_before, transition.banks[0], kwargs)
    assert transition.states[0]["intent"]["switches"] == before
    after = _held(topology, down_after, transition.banks[-1], kwargs)
    assert transition.states[-1]["intent"]["switches"] == after
    assert transition.after["switches"] == after
    for index in down_after:       # a down link carries no VLAN at either end
        down = topology.links[index]
        for end in (down.a, down.b):
            port = after[end.switch]["ports"][end.port]
            assert not port["untagged"] and not port["tagged"], end
    # banks alternate
    for first, second in zip(transition.banks, transition.banks[1:]):
        assert first != second
    # every state (the drain's own states excepted: injection stopped) delivers
    # every pair; all paths together are deadlock-free
    dependencies = nx.DiGraph()
    draining = False
    by_index = {state["step"]: state["intent"] for state in transition.states}
    previous = transition.states[0]["intent"]
    for state in transition.states:
        step = steps[state["step"] - 1] if state["step"] else None
        if step is not None and step["kind"] == "drain":
            draining = step.get("stop", False)
            if not draining:
                dependencies = nx.DiGraph()   # static reconfiguration: the fabric was empty
        if not draining:
            _verify(topology, state["intent"], dependencies)
            if step is not None and step["kind"] == "push" and len(step["switches"]) == 1:
                (switch,) = step["switches"]
                _verify(topology, _half_flipped(previous, state["intent"], switch), dependencies)
        previous = state["intent"]
    assert nx.is_directed_acyclic_graph(dependencies)
    assert transition.proof["acyclic"] is True
    assert by_index[0] is transition.states[0]["intent"]
    return steps


@pytest.mark.parametrize("case", sorted(CASES))
def test_off_on_speed_every_state_delivers(case):
    spec, kwargs = CASES[case]
    topology = _topology(spec)
    link = topology.links[LINK]

    off = plan_transition(topology, "off", str(link.a), **kwargs)
    steps = _check_transition(topology, off, kwargs, [], [LINK], link)
    cleanup = max(s["index"] for s in steps if s["kind"] == "push" and s["name"].startswith(
        "remove bank"))
    shut = [s for s in steps if s["name"].startswith("shut link")]
    assert len(shut) == 1 and shut[0]["index"] > cleanup
    assert shut[0]["index"] == len(steps)
    for end in (link.a, link.b):
        assert shut[0]["switches"][end.switch]["ports"][end.port]["admin"] == "down"
    # before the shut, the link's ports stay up in every state
    for state in off.states[:-1]:
        assert state["intent"]["switches"][link.a.switch]["ports"][link.a.port]["admin"] == "up"

    on = plan_transition(topology, "on", link.name, current_down=[LINK], **kwargs)
    steps = _check_transition(topology, on, kwargs, [LINK], [], link)
    carrier = [s for s in steps if s["kind"] == "wait_carrier"]
    assert len(carrier) == 1 and carrier[0]["up"] is True
    assert carrier[0]["link"] == {"a": str(link.a), "b": str(link.b)}
    first_push = next(s for s in steps if s["kind"] == "push")
    assert first_push["index"] < carrier[0]["index"]          # ports up before the wait
    assert set(first_push["switches"]) == {link.a.switch, link.b.switch}

    speed = plan_transition(topology, "speed", LINK, speed_mbps=100, **kwargs)
    assert speed.banks[0] == speed.banks[2] != speed.banks[1]
    slow = next(s for s in speed.steps if s["name"].startswith("set link"))
    carrier = next(s for s in speed.steps if s["kind"] == "wait_carrier")
    assert carrier["index"] == slow["index"] + 1
    for end in (link.a, link.b):
        assert slow["switches"][end.switch]["ports"][end.port]["speed_mbps"] == 100
    # the link carries nothing while its speed changes: the detour avoids it
    detour = speed.states[[s["step"] for s in speed.states].index(slow["index"]) - 1]["intent"]
    assert link.name in detour["fabric"]["down_links"] or all(
        not ports["untagged"] and not ports["tagged"]
        for ports in (detour["switches"][link.a.switch]["ports"][link.a.port],))
    fast_topology = topology_from_data({"generate": spec})
    assert speed.after["switches"][link.a.switch]["ports"][link.a.port]["speed_mbps"] == 100
    assert fast_topology.links[LINK].speed_mbps != 100
    text = speed.text()
    assert text.count("\n") >= len(speed.steps)
    assert "wait for carrier" in text and "set link" in text


def test_order_free_transition_has_no_drain_and_flips_every_switch():
    spec, kwargs = CASES["mesh4x4-dor-fixed"]
    topology = _topology(spec)
    transition = plan_transition(topology, "off", LINK, **kwargs)
    assert not transition.proof["drain"]
    assert sorted(transition.proof["flip_orders"][0]) == sorted(topology.switches)
    flips = [s for s in transition.steps if s["name"].startswith("flip ")]
    assert len(flips) == len(topology.switches)
    assert all(not s["parallel"] for s in flips)


def test_kept_turn_order_makes_torus_segment_transitions_lossless():
    """With the base routing's turn order kept (the default), old and new
    routings share one acyclic turn graph: no drain, no intermediate
    routing, and the routing without the link says how it was made."""
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    topology = _topology(spec)
    off = plan_transition(topology, "off", LINK, **kwargs)
    assert off.proof["order_free"] and not off.proof["drain"] and not off.proof["notes"]
    assert off.after["fabric"]["engine_options"]["kept_turn_order"] is True
    fresh = plan_transition(topology, "off", LINK, keep_turn_order=False, **kwargs)
    assert fresh.proof["drain"]      # segments recomputed from scratch: old + new cycle
    assert fresh.after["fabric"]["engine_options"].get("kept_turn_order") is None


def test_kept_order_without_a_path_falls_back_and_says_so():
    # link 0 (sw0--sw1): the segment routing's dependencies leave no forward detour
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    transition = plan_transition(_topology(spec), "off", 0, **kwargs)
    assert any("no routing without the link keeps the base routing's turn order" in note
               for note in transition.proof["notes"])
    # with the proof of why (test_transition_obstruction.py checks it)
    assert transition.proof["obstructions"][0]["pair"]


def test_drain_is_said_when_used():
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    transition = plan_transition(_topology(spec), "off", LINK, keep_turn_order=False, **kwargs)
    # planned afresh, segment's new segments close cycles with the old: drained
    assert transition.proof["drain"]
    drains = [s for s in transition.steps if s["kind"] == "drain"]
    assert drains and "LOST" in drains[0]["why"]
    assert transition.proof["notes"]


@pytest.mark.parametrize("call, match", [
    (lambda t: plan_transition(t, "off", "sw99:1"), "sw99"),
    (lambda t: plan_transition(t, "off", 3, current_down=[3]), "already down"),
    (lambda t: plan_transition(t, "on", 3), "already up"),
    (lambda t: plan_transition(t, "speed", 3, speed_mbps=0), "speed_mbps"),
    (lambda t: plan_transition(t, "jump", 3), "action"),
])
def test_refusals(call, match):
    topology = _topology({"kind": "torus", "dims": [4, 4]})
    with pytest.raises(TransitionError, match=match):
        call(topology)


def test_refuses_an_off_that_disconnects_or_has_no_routing():
    line = _topology({"kind": "mesh", "dims": [4]})
    with pytest.raises(TransitionError, match="disconnect"):
        plan_transition(line, "off", 0, engine="dor", assignment="fixed")
    mesh = _topology({"kind": "mesh", "dims": [4, 4]})
    with pytest.raises(TransitionError, match="no deadlock-free routing for link") as info:
        plan_transition(mesh, "off", 0, engine="dor", assignment="fixed")
    assert info.value.link == mesh.links[0].name
    assert isinstance(info.value, EtherclusterError)


@pytest.mark.parametrize("speed, message", [
    (None, "speed_mbps: missing: give the new speed"),
    ("fast", "speed_mbps: a whole number of Mb/s is needed, got 'fast'"),
    (True, "speed_mbps: a whole number of Mb/s is needed, got True"),
    (-100, "speed_mbps: a speed above 0 Mb/s is needed, got -100"),
    (0, "speed_mbps: a speed above 0 Mb/s is needed, got 0"),
    (7, "speed_mbps: 7 Mb/s is no Ethernet rate"),
    (123456, "speed_mbps: 123456 Mb/s is no Ethernet rate"),
])
def test_each_bad_speed_gets_its_own_message(speed, message):
    """OVS lists no speeds of its own (tc shapes any rate); the Ethernet
    rates still bound what a speed change may ask for."""
    topology = _topology({"kind": "torus", "dims": [4, 4]})
    with pytest.raises(TransitionError) as info:
        plan_transition(topology, "speed", 3, speed_mbps=speed)
    assert str(info.value).startswith(message)
    assert "for the speed change of link %s" % topology.links[3].name in str(info.value)


def test_refuses_a_speed_the_platform_cannot_set():
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4]},
                                   "switch_defaults": {"platform": "dell_os6"}})
    with pytest.raises(TransitionError, match="cannot set 123 Mb/s"):
        plan_transition(topology, "speed", 0, speed_mbps=123, engine="updown")


def test_kept_order_router_gives_the_routings_transitions_push():
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    topology = _topology(spec)
    route = kept_order_router(topology, kwargs["engine"])
    assert route([]).paths() == plan(topology, **kwargs).routing.paths()
    off = plan_transition(topology, "off", LINK, **kwargs)
    planned = _plan_from_routing(topology, route([LINK]), off.banks[-1], kwargs)
    assert planned.intent["switches"] == off.after["switches"]
    # link selection with that router weighs the routings transitions push, and
    # rejects links whose kept order has no routing (they would need a drain)
    problem = LinkSelectionProblem(topology, "uniform", kwargs["engine"], router=route)
    assert not problem.evaluate({0}).ok and "no legal path" in problem.evaluate({0}).reason
    assert problem.evaluate({LINK}).routing.paths() == route([LINK]).paths()
    result = greedy_selection(topology, "uniform", kwargs["engine"], problem=problem)
    assert result.links_off and 0 not in result.links_off


def test_held_intent_is_the_state_transitions_start_and_end_in():
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    topology = _topology(spec)
    off = plan_transition(topology, "off", LINK, **kwargs)
    assert held_intent(topology, down=[LINK], bank=off.banks[-1], **kwargs)["switches"] == \
        off.after["switches"]
    assert held_intent(topology, bank=off.banks[0], **kwargs)["switches"] == \
        off.before["switches"] == plan(topology, **kwargs).intent["switches"]
    with pytest.raises(TransitionError, match="sw99"):
        held_intent(topology, down=["sw99:1"], **kwargs)


def test_without_allow_drain_a_drain_transition_is_refused():
    spec, kwargs = CASES["torus4x4-segment-renamed"]
    with pytest.raises(TransitionError, match="drains are not allowed"):
        plan_transition(_topology(spec), "off", 0, allow_drain=False, **kwargs)


def test_fixed_source_tree_fabrics_switch_links_without_a_drain():
    # a 4x4 torus of switches without a flood tree (dell_os6) deploys fixed + source trees:
    # the transitions keep the turn order of those trees, so they stay order-free
    spec, kwargs = CASES["torus4x4-segment-fixed-source-tree"]
    topology = _topology(spec)
    off = plan_transition(topology, "off", "sw5:4", **kwargs)
    assert off.proof["drain"] is False and off.proof["order_free"] is True
    on = plan_transition(topology, "on", "sw5:4", current_down=["sw5:4"], **kwargs)
    assert on.proof["drain"] is False
    route = kept_order_router(topology, "segment", {"paths": "source_tree"})
    down = topology.link("sw5:4").index
    assert route([]).paths_form == route([down]).paths_form == "source_tree"
    assert all(down not in {topology.channels[channel].link for channel in path}
               for path in route([down]).paths().values())


def test_the_papers_paths_form_and_renamed_source_trees_are_refused_by_name():
    topology = _topology({"kind": "torus", "dims": [4, 4]})
    with pytest.raises(TransitionError, match="assignment fixed with paper paths"):
        plan_transition(topology, "off", "sw5:4", engine="segment", assignment="fixed",
                        engine_options={"paths": "paper"})
    with pytest.raises(TransitionError, match="assignment renamed with source_tree paths"):
        plan_transition(topology, "off", "sw5:4", engine="segment", assignment="renamed",
                        engine_options={"paths": "source_tree"})
