# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make-before-break re-deploy (power/redeploy.py), re-checked here with the
802.1Q simulator alone: the first state is what deploy_routing.yml pushed
for the old settings, the last what it pushes for the new ones (in the
other bank), every state in between delivers every host pair exactly once
without flooding, and the channel pairs of all those paths form one acyclic
dependency graph. A move the proof cannot make lossless is refused unless
a drain is allowed, and then the drain says so."""

from __future__ import annotations


import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power.redeploy import plan_redeploy
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_proof import TransitionError
from power_helpers import module_utils_test


def torus():
    return topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})


# the link transitions' independent check: every pair once, untagged, by static entries, no storm
CHECKS = module_utils_test("test_transition")
_delivers = CHECKS._verify


def test_updown_unbalanced_moves_order_free_and_every_state_delivers():
    topology = torus()
    old = {"engine": "updown"}
    new = {"engine": "updown", "engine_options": {"balance": False}}
    transition = plan_redeploy(topology, old, new, current_bank="A")
    assert transition.action == "redeploy"
    assert transition.banks == ["A", "B"]
    assert not transition.proof["drain"] and transition.proof["order_free"]
    assert transition.states[0]["intent"]["switches"] == plan(topology, bank="A", engine="updown", assignment="renamed").intent["switches"]
    assert transition.after["switches"] == plan(
        topology, bank="B", engine="updown", assignment="renamed", engine_options={"balance": False}).intent["switches"]
    assert transition.states[-1]["intent"]["switches"] == transition.after["switches"]
    kinds = [step["kind"] for step in transition.steps]
    assert "drain" not in kinds
    assert kinds.count("push") == 2 + len(topology.switches)   # install, 16 flips, remove
    dependencies = nx.DiGraph()
    for state in transition.states:
        _delivers(topology, state["intent"], dependencies)
    assert nx.is_directed_acyclic_graph(dependencies)
    # no link is touched: every port's admin state is as planned throughout
    for state in transition.states:
        for name, entry in state["intent"]["switches"].items():
            for port, config in entry["ports"].items():
                assert config.get("admin", "up") == "up", (name, port)


def test_another_root_needs_a_drain_refused_by_default_then_said():
    # up*/down* rooted elsewhere: no flip order and no bridge passes (the mixed paths flood)
    topology = torus()
    rerooted = {"engine": "updown", "engine_options": {"root": "sw5"}}
    with pytest.raises(TransitionError) as caught:
        plan_redeploy(topology, {"engine": "updown"}, rerooted)
    assert "only a drain" in str(caught.value) and "nothing planned" in str(caught.value)
    transition = plan_redeploy(topology, {"engine": "updown"}, rerooted, allow_drain=True)
    assert transition.proof["drain"]
    assert any("frames sent meanwhile are lost" in note for note in transition.proof["notes"])
    drains = [step for step in transition.steps if step["kind"] == "drain"]
    assert drains and "LOST" in drains[0]["why"]
    assert transition.after["switches"] == plan(topology, bank="B", engine="updown", assignment="renamed",
                                                engine_options={"root": "sw5"}).intent["switches"]


def test_other_engine_moves_through_a_bridge_without_a_drain():
    # updown and segment together close a dependency cycle: old -> bridge -> new (redeploy_bridge.py)
    topology = torus()
    transition = plan_redeploy(topology, {"engine": "updown"}, {"engine": "segment"}, current_bank="A")
    assert not transition.proof["drain"] and transition.proof["bridge"]["bank"] == "B"
    assert transition.banks == ["A", "B", "A"]
    assert "drain" not in [step["kind"] for step in transition.steps]
    assert transition.after["fabric"]["routing"] == "segment"
    assert transition.after["switches"] == plan(topology, bank="A", engine="segment",
                                                assignment="renamed").intent["switches"]


def test_links_down_both_routings_avoid_them():
    topology = torus()
    transition = plan_redeploy(topology, {"engine": "updown"}, {"engine": "updown", "engine_options": {"balance": False}},
                               current_bank="B", down=["sw2:4"])
    assert transition.banks == ["B", "A"]
    down = topology.link("sw2:4")
    for state in (transition.states[0], transition.states[-1]):
        for end in (down.a, down.b):
            port = state["intent"]["switches"][end.switch]["ports"][end.port]
            assert not port["untagged"] and not port["tagged"], end
    dependencies = nx.DiGraph()
    for state in transition.states:
        _delivers(topology, state["intent"], dependencies)
    assert nx.is_directed_acyclic_graph(dependencies)


@pytest.mark.parametrize("held, wanted, bank, words", [
    ({"engine": "updown"}, {"routing": "segment"}, "A", "wanted: a mapping with at least 'engine'"),
    ({"engine": "updown"}, {"engine": "segment"}, "C", "current_bank: must be A or B"),
    ({"engine": "updown", "mac_learning": "self"}, {"engine": "segment"}, "A", "held: mac_learning"),
    ({"engine": "nosuch"}, {"engine": "segment"}, "A", "the routing the switches hold"),
])
def test_bad_requests_are_refused_by_name(held, wanted, bank, words):
    with pytest.raises(TransitionError) as caught:
        plan_redeploy(torus(), held, wanted, current_bank=bank)
    assert words in str(caught.value)
