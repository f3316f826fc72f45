# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A re-deploy between routings that cannot coexist (power/redeploy.py,
power/redeploy_bridge.py): dor -> segment on a mesh (renamed assignment).

The obstruction, checked with the 802.1Q simulator alone: the walks of dor
and those of segment together close a dependency cycle, and every phase
from one to the other holds both, so no flip order exists (the planner
says so when no bridge is allowed). The move therefore goes dor -> bridge
-> segment, and is re-checked here apart from the proof: every state the
steps leave the fabric in, and every half-flipped switch, delivers every
host pair exactly once, untagged, by static entries, without a storm; the
channel pairs of all paths of each phase form an acyclic graph; between the
two phases the first bank is gone from every switch (drained for wait_s,
then removed), which is why the dependency graph may restart there -- the
two phases' graphs together do have a cycle."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power.redeploy import plan_redeploy
from ansible_collections.ethercluster.routing.plugins.module_utils.power.redeploy_bridge import (
    LEADS,
    compatible_turns,
    offered_turns,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_proof import TransitionError
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import turns
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import cdg
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from power_helpers import module_utils_test

# the link transitions' independent checks: every pair once, untagged, by static entries, no storm
CHECKS = module_utils_test("test_transition")

DOR = {"engine": "dor"}
SEGMENT = {"engine": "segment"}


def mesh(k):
    return topology_from_data({"generate": {"kind": "mesh", "dims": [k, k], "hosts_per_switch": 1}})


MESHES = {k: mesh(k) for k in (3, 4)}


def _walks(topology, intent):
    """The dependency edges of every host pair's path in ``intent`` (802.1Q simulator)."""
    graph = nx.DiGraph()
    CHECKS._verify(topology, intent, graph)
    return graph


def _held_vids(transition):
    """The VLAN IDs of the held routing (the bank the move starts in)."""
    vids = set()
    for entry in transition.states[0]["intent"]["switches"].values():
        vids.update(entry["vlans"])
    return vids


@pytest.fixture(scope="module", params=sorted(MESHES))
def moved(request):
    topology = MESHES[request.param]
    return topology, plan_redeploy(topology, DOR, SEGMENT, current_bank="A")


def test_dor_and_segment_walks_together_close_a_dependency_cycle():
    topology = MESHES[4]
    held = plan(topology, bank="A", engine="dor", assignment="renamed").intent
    wanted = plan(topology, bank="B", engine="segment", assignment="renamed").intent
    old, new = _walks(topology, held), _walks(topology, wanted)
    assert nx.is_directed_acyclic_graph(old) and nx.is_directed_acyclic_graph(new)
    assert not nx.is_directed_acyclic_graph(nx.compose(old, new))
    with pytest.raises(TransitionError) as caught:
        plan_redeploy(topology, DOR, SEGMENT, allow_intermediate=False)
    assert "no flip order exists" in str(caught.value) and "cycle" in str(caught.value)


def test_dor_to_segment_moves_through_a_bridge_without_a_drain(moved):
    topology, transition = moved
    assert not transition.proof["drain"] and transition.proof["order_free"]
    assert "drain" not in [step["kind"] for step in transition.steps]
    assert transition.banks == ["A", "B", "A"]
    assert transition.proof["bridge"]["lead"] in LEADS and transition.proof["bridge"]["bank"] == "B"
    assert len(transition.proof["flip_orders"]) == 2
    assert all(sorted(order) == sorted(topology.switches) for order in transition.proof["flip_orders"])
    held = plan(topology, bank="A", engine="dor", assignment="renamed").intent["switches"]
    wanted = plan(topology, bank="A", engine="segment", assignment="renamed").intent["switches"]
    assert transition.states[0]["intent"]["switches"] == held
    assert transition.states[-1]["intent"]["switches"] == wanted == transition.after["switches"]


def test_every_state_delivers_and_each_phase_is_deadlock_free(moved):
    topology, transition = moved
    bank_a = _held_vids(transition)
    phases, dependencies = [], nx.DiGraph()
    previous = transition.states[0]["intent"]
    for state in transition.states:
        step = transition.steps[state["step"] - 1] if state["step"] else None
        intent = state["intent"]
        CHECKS._verify(topology, intent, dependencies)
        if step is not None and step["kind"] == "push" and len(step["switches"]) == 1:
            (switch,) = step["switches"]
            CHECKS._verify(topology, CHECKS._half_flipped(previous, intent, switch), dependencies)
        if step is not None and step["name"].startswith("remove bank") and state is not transition.states[-1]:
            # the first phase ends: a wait let bank A's frames drain, and no switch holds bank A now
            assert transition.steps[state["step"] - 2]["kind"] == "wait"
            assert all(not set(entry["vlans"]) & bank_a for entry in intent["switches"].values())
            phases.append(dependencies)
            dependencies = nx.DiGraph()
            CHECKS._verify(topology, intent, dependencies)     # the bridge alone starts the next phase
        previous = intent
    phases.append(dependencies)
    assert len(phases) == 2
    assert all(nx.is_directed_acyclic_graph(graph) for graph in phases)
    # the restart is what makes it possible: both phases together close a cycle
    assert not nx.is_directed_acyclic_graph(nx.compose(*phases))


def test_the_bridge_turns_are_a_maximal_set_compatible_with_both_routings():
    topology = MESHES[4]
    old = cdg.channel_dependency_graph(plan(topology, bank="A", engine="dor", assignment="renamed").routing)
    new = cdg.channel_dependency_graph(plan(topology, bank="B", engine="segment", assignment="renamed").routing)
    first, second = turns(topology)
    every = list(zip(first.tolist(), second.tolist()))
    for lead in LEADS:
        offered = offered_turns(every, old, new, lead)
        assert sorted(offered) == sorted(every)
        kept = compatible_turns((old, new), offered)
        for graph in (old, new):
            assert nx.is_directed_acyclic_graph(nx.compose(graph, nx.DiGraph(kept)))
        for turn in set(every) - set(kept):
            assert any(not nx.is_directed_acyclic_graph(nx.compose(graph, nx.DiGraph(kept + [turn])))
                       for graph in (old, new)), turn
        # the turns both routings use are never refused
        assert {turn for turn in every if old.has_edge(*turn) and new.has_edge(*turn)} <= set(kept)


def test_the_bridge_state_is_neither_routing_and_coexists_with_both(moved):
    topology, transition = moved
    removal = next(state for state in transition.states[1:-1]
                   if transition.steps[state["step"] - 1]["name"].startswith("remove bank"))
    bridge = _walks(topology, removal["intent"])
    held = _walks(topology, transition.states[0]["intent"])
    wanted = _walks(topology, transition.states[-1]["intent"])
    assert set(bridge.edges()) not in (set(held.edges()), set(wanted.edges()))
    for graph in (held, wanted):
        assert nx.is_directed_acyclic_graph(nx.compose(bridge, graph))
    fabric = Dot1qFabric(removal["intent"])
    for src, dst in itertools.permutations(sorted(topology.hosts), 2):
        assert fabric.send(src, dst)["delivered"][dst]["copies"] == 1
