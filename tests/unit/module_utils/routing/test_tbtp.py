# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tree-based turn prohibition (plugins/module_utils/routing/tbtp.py)."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing, tbtp)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError, turns)

from routing_checks import channel_loads
from routing_checks import gen as generated
from segment_fabrics import build, explicit, fabric_specs, turn_graph_is_acyclic


def tree_turns(topology, tree_links, down=()):
    """Turns whose two channels are both on tree links."""
    ins, outs = turns(topology, down)
    return {(a, b) for a, b in zip(ins.tolist(), outs.tolist())
            if a >> 1 in tree_links and b >> 1 in tree_links}


def path_with_heavy_leaves():
    """v1 - c1 - ... - c10 - v2, v1 also linked to c2..c5 and v2 to c6..c9:
    with the path as the spanning tree, the leaves are the high-degree
    switches, so prohibiting every turn around them (plain TP on the tree)
    costs more than rule B."""
    names = ["v1"] + ["c%d" % i for i in range(1, 11)] + ["v2"]
    pairs = list(zip(names, names[1:]))
    pairs += [("v1", c) for c in ("c2", "c3", "c4", "c5")]
    pairs += [("v2", c) for c in ("c6", "c7", "c8", "c9")]
    return explicit(names, pairs), list(range(len(names) - 1))


def test_tbtp_is_registered_and_deadlock_free_on_a_torus():
    topology = generated(kind="torus", dims=[4, 4])
    routing = compute_routing(topology, "tbtp")
    assert routing.engine == tbtp.NAME == "tbtp"
    report = verify_routing(routing)
    assert report["ok"], report


def test_tree_turns_are_never_prohibited_so_8021d_forwarding_stays_legal():
    topology = generated(kind="random", switches=24, degree=4, seed=3)
    result = tbtp.turn_prohibition(topology)
    assert len(result.tree_links) == len(topology.switches) - 1
    tree = nx.Graph([(topology.links[i].a.switch, topology.links[i].b.switch)
                     for i in result.tree_links])
    assert nx.is_tree(tree) and set(tree) == set(topology.switches)
    assert not tree_turns(topology, result.tree_links) & result.prohibited
    assert result.root == "sw0"


def test_default_tree_is_the_8021d_tree_from_the_lowest_id():
    # Ring of 4: BFS from sw0 reaches sw1 and sw3 directly; sw2 hangs on the
    # lower-id neighbour sw1, so the link sw2-sw3 is the one cross link.
    topology = explicit(["sw0", "sw1", "sw2", "sw3"],
                        [("sw0", "sw1"), ("sw1", "sw2"), ("sw2", "sw3"), ("sw3", "sw0")])
    assert tbtp.turn_prohibition(topology).tree_links == {0, 1, 3}
    assert tbtp.turn_prohibition(topology, root="sw2").tree_links == {0, 1, 2}


def test_rule_b_is_chosen_where_it_prohibits_fewer_turns():
    topology, path = path_with_heavy_leaves()
    result = tbtp.turn_prohibition(topology, tree=path)
    rules = {switch: rule for switch, rule, _count in result.order}
    assert rules["v1"] == "B"
    assert result.prohibited_fraction <= 0.5
    only_around = tbtp.turn_prohibition(topology, tree=path, rule="around")
    assert len(result.prohibited) < len(only_around.prohibited)
    for options in ({"tree": path}, {"tree": path, "rule": "starting"}, {}):
        assert verify_routing(tbtp.route(topology, **options))["ok"], options


def test_every_step_accounts_for_the_turns_it_prohibits():
    topology = generated(kind="complete", switches=5, links_per_pair=2)
    result = tbtp.turn_prohibition(topology, rule="starting")
    assert sum(count for _s, _r, count in result.order) == len(result.prohibited)
    assert [switch for switch, _r, _c in result.order] != []
    assert sorted(s for s, _r, _c in result.order) == sorted(topology.switches)


def test_tbtp_beats_updown_on_the_8x8_mesh():
    # TBTP avoids up*/down*'s hot spot around the root (segment paper §1.1).
    topology = generated(kind="mesh", dims=[8, 8])
    tbtp_load = max(channel_loads(tbtp.route(topology)).values())
    assert tbtp_load < max(channel_loads(compute_routing(topology, "updown")).values())


def test_links_down_are_avoided_and_disconnection_names_the_switches():
    topology = generated(kind="mesh", dims=[3, 3])
    result = tbtp.turn_prohibition(topology, down=["sw0:2"])
    down_link = topology.link("sw0:2").index
    assert down_link not in result.tree_links
    assert all(a >> 1 != down_link and b >> 1 != down_link for a, b in result.prohibited)
    with pytest.raises(RoutingError, match=r"tbtp: switch sw0 cannot be reached from sw1"):
        tbtp.route(topology, down=[0, 1], root="sw1")
    with pytest.raises(RoutingError, match=r"switches sw2, sw5, sw8 cannot be reached"):
        tbtp.route(topology, down=["sw1:3", "sw4:4", "sw7:4"])


@pytest.mark.parametrize("options, message", [
    ({"root": "nope"}, r"option root='nope' is not a switch"),
    ({"rule": "sideways"}, r"option rule='sideways' is not one of auto, around, starting"),
    ({"order": "random"}, r"option order='random' is not one of fewest, deepest"),
    ({"colour": 1}, r"unknown option 'colour'"),
    ({"tree": [0, 1]}, r"2 links do not span 9 switches"),
    ({"tree": [0, 1, 3, 5]}, r"link sw3:3--sw4:3 closes a cycle"),
    ({"tree": ["sw9:1"]}, r"option tree: .*sw9:1"),
])
def test_bad_options_are_named(options, message):
    topology = generated(kind="mesh", dims=[3, 3])
    with pytest.raises(RoutingError, match=message):
        tbtp.route(topology, **options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=fabric_specs(), data=st.data())
def test_property_acyclic_connected_and_at_most_half_the_turns(spec, data):
    """Over every generator kind, random faults and random down links, with
    the 802.1D tree or a random spanning tree: the turn graph is acyclic,
    every pair is routed, tree turns stay allowed, and at most 1/2 of the
    turns are prohibited (the paper's bound, for any graph and tree)."""
    topology = build(spec)
    usable = [link.index for link in topology.links]
    down = data.draw(st.lists(st.sampled_from(usable), max_size=3, unique=True)) if usable else []
    graph = topology.switch_graph(down)
    event("kind %s" % spec["kind"])
    if not nx.is_connected(graph):
        event("disconnected by down links")
        with pytest.raises(RoutingError, match=r"cannot be reached from sw0"):
            tbtp.route(topology, down=down)
        return
    options = {}
    if data.draw(st.booleans()):
        rng = random.Random(data.draw(st.integers(0, 1000)))
        weighted = nx.Graph()
        for a, b, key in graph.edges(keys=True):
            weight = rng.random()
            if not weighted.has_edge(a, b) or weight < weighted[a][b]["weight"]:
                weighted.add_edge(a, b, weight=weight, key=key)
        weighted.add_nodes_from(graph)
        options["tree"] = [d["key"] for _a, _b, d in
                           nx.minimum_spanning_edges(weighted, data=True)]
    options["rule"] = data.draw(st.sampled_from(["auto", "auto", "around", "starting"]))
    result = tbtp.turn_prohibition(topology, down=down, **options)
    if options["rule"] == "auto":
        assert len(result.prohibited) <= result.total_turns / 2
    assert not tree_turns(topology, result.tree_links, down) & result.prohibited
    assert turn_graph_is_acyclic(topology, result.prohibited, down)
    report = verify_routing(tbtp.route(topology, down=down, **options))
    assert report["ok"], report
