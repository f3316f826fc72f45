# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Segment-based routing (plugins/module_utils/routing/segment.py), checked
against the rules of the segment-based routing paper §2.1/§2.2."""

from __future__ import annotations

import itertools
import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from routing_checks import channel_loads
from routing_checks import gen as generated
from segment_fabrics import build, explicit, fabric_specs, turn_graph_is_acyclic

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing, segment)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError, down_set)

FAST = {"restarts": 1, "refine": 0}


# ------------------------------------------------------------ independent checks
def link_ends(topology, link):
    return topology.links[link].a.switch, topology.links[link].b.switch


def path_of(segment_):
    """Switches along a starting/regular segment, ends included."""
    inner = segment_.switches[1:] if segment_.kind == "starting" else segment_.switches
    return [segment_.ends[0], *inner, segment_.ends[1]]


def shortest_closure(topology, visited, remaining):
    """Length of the shortest path from a visited switch through unvisited
    ones back to a visited one, over the links in ``remaining`` (networkx,
    visited switches contracted into one node)."""
    graph = nx.MultiGraph()
    hub = ("visited",)
    for link in remaining:
        a, b = (hub if end in visited else end for end in link_ends(topology, link))
        assert not (a == hub and b == hub), "a link between visited switches was left"
        graph.add_edge(a, b, key=link)
    best = math.inf
    if hub not in graph:
        return best
    for _hub, first, key in list(graph.edges(hub, keys=True)):
        graph.remove_edge(hub, first, key)
        try:
            best = min(best, nx.shortest_path_length(graph, first, hub) + 1)
        except nx.NetworkXNoPath:
            pass
        graph.add_edge(hub, first, key=key)
    return best


def check_segmentation(topology, seg, down=()):
    """Every rule of §2.1/§2.2 the segmentation must obey."""
    names = topology.switch_names()
    avoided = down_set(topology, down)
    up = {link.index for link in topology.links if link.index not in avoided}
    assert seg.down == avoided

    # Every up link is in exactly one segment or is a bridge link.
    owner = {}
    for item in seg.segments:
        for link in item.links:
            assert link not in owner, ("link in two segments", link)
            owner[link] = item.index
    for bridge in seg.bridge_links:
        assert bridge.link not in owner
        owner[bridge.link] = "bridge"
        assert set(link_ends(topology, bridge.link)) == {bridge.terminal, bridge.far}
    assert set(owner) == up
    bridges = {b.link for b in seg.bridge_links}
    # Bridge links lie on no cycle, segment links do.
    graph = topology.switch_graph(avoided)
    for link in up:
        a, b = link_ends(topology, link)
        parallel = graph.number_of_edges(a, b) > 1
        graph.remove_edge(a, b, key=link)
        on_cycle = nx.has_path(graph, a, b)
        graph.add_edge(a, b, key=link)
        assert on_cycle == (link not in bridges), link
        assert parallel <= on_cycle
    assert set(seg.terminal_switches) == {b.terminal for b in seg.bridge_links}

    # Every switch is in exactly one segment, or has bridge links only.
    switch_owner = {}
    for item in seg.segments:
        for switch in item.switches:
            assert switch not in switch_owner
            switch_owner[switch] = item.index
    for switch in names:
        if switch not in switch_owner:
            here = [c.link for c in topology.out_channels(switch, avoided)]
            assert all(link in bridges for link in here), switch

    # The first segment starts at the lowest-id switch (when it is on a cycle).
    if any(c.link not in bridges for c in topology.out_channels(names[0], avoided)):
        assert seg.subnets[0].start == names[0]
        assert seg.segments[0].kind == "starting" and seg.segments[0].ends == (names[0],) * 2

    # Subnets: contiguous runs of segments, a starting one first; each starts
    # at the switch a bridge led to (but the first); shortest segments.
    assert [i for net in seg.subnets for i in net.segments] == list(range(len(seg.segments)))
    for net in seg.subnets:
        if net.start == names[0]:
            assert net.via_bridge is None and net.index == 0
        else:
            assert net.via_bridge in bridges
            assert net.start in link_ends(topology, net.via_bridge)
        visited = {net.start}
        links_in_net = [link for i in net.segments for link in seg.segments[i].links]
        seen_links = {}
        for position, i in enumerate(net.segments):
            item = seg.segments[i]
            assert item.subnet == net.index
            assert item.kind == ("starting" if position == 0 else item.kind)
            assert item.kind in ("starting", "regular", "unitary")
            if item.kind == "unitary":
                assert item.switches == () and len(item.links) == 1
                assert set(item.ends) == set(link_ends(topology, item.links[0]))
                assert set(item.ends) <= visited
            else:
                assert set(item.ends) <= visited
                assert not set(path_of(item)[1:-1]) & visited
                if item.kind == "starting":
                    assert item.ends == (net.start, net.start) and item.switches[0] == net.start
                assert len(item.switches) >= 1 and len(item.links) == len(path_of(item)) - 1
                path = path_of(item)
                for k, link in enumerate(item.links):
                    assert set(link_ends(topology, link)) == {path[k], path[k + 1]}
                # §2.2: as short as possible at the time it was made.
                remaining = links_in_net[sum(len(seg.segments[j].links)
                                             for j in net.segments[:position]):]
                assert len(item.links) == shortest_closure(topology, visited, remaining)
                visited.update(path)
            check_restriction(topology, seg, item, net, seen_links)
            for link in item.links:
                for end in link_ends(topology, link):
                    seen_links.setdefault(end, []).append(link)
        assert set(net.switches) == visited


def check_restriction(topology, seg, item, net, seen_links):
    restriction = seg.restrictions[item.index]
    assert restriction.segment == item.index
    turns = restriction.turns(topology)
    at = restriction.switch
    for into, out in turns:
        assert topology.channels[into].dst == at and topology.channels[out].src == at
    if item.kind == "unitary":
        assert restriction.link == item.links[0] and at in item.ends
        older = list(seen_links.get(at, []))
        if at == net.start and net.via_bridge is not None:
            older.append(net.via_bridge)
        assert sorted(restriction.against) == sorted(older)
        return
    # One bidirectional turn restriction, at a switch of the segment (never
    # the starting switch of a starting segment), between its two links there.
    assert at in (item.switches[1:] if item.kind == "starting" else item.switches)
    path = path_of(item)
    k = path.index(at, 1)
    assert {restriction.link, *restriction.against} == {item.links[k - 1], item.links[k]}
    assert len(restriction.against) == 1 and len(turns) == 2
    (in1, out1), (in2, out2) = turns
    assert in1 ^ 1 == out2 and in2 ^ 1 == out1  # the same turn, both directions


def uniform_max_load(routing):
    return max(channel_loads(routing).values())


# ----------------------------------------------------------------- the paper
def paper_figure_2():
    """A fabric like the segment-based paper's Fig. 2(a): subnet 1 holds the
    starting segment {A, B, C} (links 1-3), S2 {D, E} (links 4-6) and S3
    {F, G} (links 7-9), although S2 could have been {D, E, F, G} over links
    4, 5, 7, 8, 9; bridge link 10 leads to subnet 2, a cycle {H, I, O}.
    Link ids here are the paper's minus one."""
    pairs = [("A", "B"), ("B", "C"), ("C", "A"), ("A", "D"), ("D", "E"), ("E", "B"),
             ("E", "F"), ("F", "G"), ("G", "C"), ("C", "H"), ("H", "I"), ("I", "O"),
             ("O", "H")]
    return explicit(["A", "B", "C", "D", "E", "F", "G", "H", "I", "O"], pairs)


def test_paper_figure_2_segmentation():
    topology = paper_figure_2()
    seg = segment.segmentation(topology)
    check_segmentation(topology, seg)
    shape = [(s.kind, s.subnet, set(s.switches), set(s.links)) for s in seg.segments]
    assert shape == [
        ("starting", 0, {"A", "B", "C"}, {0, 1, 2}),
        ("regular", 0, {"D", "E"}, {3, 4, 5}),   # the shorter choice, not D-E-F-G
        ("regular", 0, {"F", "G"}, {6, 7, 8}),
        ("starting", 1, {"H", "I", "O"}, {10, 11, 12}),
    ]
    assert [(b.link, b.terminal, b.far) for b in seg.bridge_links] == [(9, "C", "H")]
    assert seg.terminal_switches == ("C",)
    assert [(n.start, n.via_bridge) for n in seg.subnets] == [("A", None), ("H", 9)]
    assert seg.restrictions[0].switch in ("B", "C")
    assert seg.restrictions[3].switch in ("I", "O")
    routing = segment.route(topology)
    assert verify_routing(routing)["ok"]
    json.dumps(routing.segmentation.to_data())


def test_unitary_segment_blocks_one_side_against_older_links():
    # K4: triangle sw0-sw1-sw2 first, then sw3 joins two of them; the last
    # link has both ends visited and can only be unitary.
    topology = generated(kind="complete", switches=4)
    seg = segment.segmentation(topology)
    check_segmentation(topology, seg)
    assert [s.kind for s in seg.segments] == ["starting", "regular", "unitary"]
    unitary = seg.restrictions[2]
    assert len(unitary.against) == 2 and len(unitary.turns(topology)) == 4
    assert verify_routing(segment.route(topology))["ok"]


def test_parallel_links_form_segments_that_need_breaking():
    topology = explicit(["sw0", "sw1"], [("sw0", "sw1")] * 3)
    seg = segment.segmentation(topology)
    check_segmentation(topology, seg)
    assert [(s.kind, s.links) for s in seg.segments] == [("starting", (0, 1)),
                                                         ("unitary", (2,))]
    assert seg.restrictions[0].switch == "sw1"  # not the starting switch
    report = verify_routing(segment.route(topology))
    assert report["ok"], report
    torus = generated(kind="torus", dims=[4, 4], links_per_neighbor=2)
    check_segmentation(torus, segment.segmentation(torus))


def test_trees_are_all_bridge_links_and_need_no_restriction():
    topology = generated(kind="tree", fanout=2, depth=2)
    seg = segment.segmentation(topology)
    check_segmentation(topology, seg)
    assert seg.segments == () and seg.subnets == () and seg.restrictions == ()
    assert len(seg.bridge_links) == len(topology.links)
    assert seg.terminal_switches == ("sw0", "sw1", "sw2")
    assert verify_routing(segment.route(topology))["ok"]


def test_a_leaf_start_switch_hands_over_to_a_new_subnet():
    # sw0 hangs off a ring: it is terminal, the ring is subnet 0 from sw1.
    topology = explicit(["sw0", "sw1", "sw2", "sw3"],
                        [("sw0", "sw1"), ("sw1", "sw2"), ("sw2", "sw3"), ("sw3", "sw1")])
    seg = segment.segmentation(topology)
    check_segmentation(topology, seg)
    assert [(n.start, n.via_bridge) for n in seg.subnets] == [("sw1", 0)]
    assert seg.terminal_switches == ("sw0",)


def test_links_down_are_ignored_in_the_file_and_on_request():
    topology = explicit(["sw0", "sw1", "sw2", "sw3"],
                        [("sw0", "sw1"), ("sw1", "sw2"), ("sw2", "sw3"), ("sw3", "sw0"),
                         ("sw0", "sw2")], down={4})
    seg = segment.segmentation(topology, down=["sw0:1"])
    check_segmentation(topology, seg, down=["sw0:1"])
    assert seg.down == {0, 4} and seg.segments == ()
    routing = segment.route(topology, down=[0])
    assert verify_routing(routing)["ok"] and routing.down == {0, 4}


def test_disconnected_fabric_names_the_unreachable_switches():
    topology = generated(kind="mesh", dims=[3, 3])
    cut = ["sw1:3", "sw4:4", "sw7:4"]  # the links into column x = 2
    with pytest.raises(RoutingError, match=r"^segment: switches sw2, sw5, sw8 cannot be "
                                           r"reached from sw0 over links that are up"):
        segment.route(topology, down=cut)
    with pytest.raises(RoutingError, match=r"switches sw2, sw5, sw8 cannot be reached"):
        segment.segmentation(topology, down=cut)


@pytest.mark.parametrize("options, message", [
    ({"placement": "clever"}, r"placement='clever' is not one of balanced, random"),
    ({"seed": "x"}, r"option seed must be a whole number"),
    ({"restarts": 0}, r"option restarts must be a whole number >= 1"),
    ({"refine": -1}, r"option refine must be a whole number >= 0"),
    ({"colour": 1}, r"unknown option 'colour'"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(RoutingError, match=message):
        segment.route(generated(kind="mesh", dims=[2, 2]), **options)


def test_same_seed_same_routing():
    topology = generated(kind="random", switches=20, degree=4, seed=5)
    first = segment.route(topology, seed=3, placement="random")
    again = segment.route(topology, seed=3, placement="random")
    assert first.segmentation == again.segmentation
    assert (first.next_hop == again.next_hop).all()
    seeds = {segment.route(topology, seed=s, placement="random", **FAST).segmentation.restrictions
             for s in range(6)}
    assert len(seeds) > 1  # the seed does drive the random placement


def test_channel_loads_match_the_paths():
    routing = segment.route(generated(kind="torus", dims=[4, 3]), **FAST)
    counted = channel_loads(routing)
    assert {c: n for c, n in enumerate(segment.channel_loads(routing)) if n} == dict(counted)


def test_turn_traffic_is_the_shortest_path_share_through_each_turn():
    pairs = [("a", "b"), ("b", "c"), ("a", "d"), ("b", "e"), ("c", "f"), ("d", "e"),
             ("e", "f"), ("d", "g"), ("g", "h"), ("h", "e"), ("c", "h")]
    names = sorted({n for p in pairs for n in p})
    topology = explicit(names, pairs)
    graph = nx.Graph(pairs)
    expected = {}
    for s, t in itertools.permutations(names, 2):
        paths = list(nx.all_shortest_paths(graph, s, t))
        for path in paths:
            for turn in zip(path, path[1:], path[2:]):
                expected[turn] = expected.get(turn, 0.0) + 1.0 / len(paths)
    fabric = segment._Graph(topology, frozenset())
    index = {name: i for i, name in enumerate(fabric.names)}
    triples = [(a, w, b) for w in names for a in graph[w] for b in graph[w] if a != b]
    got = segment.turn_traffic(fabric, np.array([[index[x] for x in t] for t in triples]))
    for triple, value in zip(triples, got.tolist()):
        assert value == pytest.approx(expected.get(triple, 0.0)), triple


def test_turn_traffic_in_blocks_and_from_sampled_sources(monkeypatch):
    topology = generated(kind="torus", dims=[6, 5])
    fabric = segment._Graph(topology, frozenset())
    triples = np.array([(a, w, b) for w in range(fabric.n)
                        for _l1, a in fabric.adj[w] for _l2, b in fabric.adj[w] if a != b])
    whole = segment.turn_traffic(fabric, triples)
    monkeypatch.setattr(segment, "TRAFFIC_BLOCK_CELLS", 7 * len(triples))
    assert segment.turn_traffic(fabric, triples) == pytest.approx(whole)
    # A torus looks the same from every switch, so a sample of sources
    # gives the exact total: every pair crosses (hops - 1) turns.
    hops = dict(nx.all_pairs_shortest_path_length(topology.switch_graph()))
    exact = sum(max(0, d - 1) for row in hops.values() for d in row.values())
    assert whole.sum() == pytest.approx(exact)
    assert segment.turn_traffic(fabric, triples, max_sources=7).sum() == pytest.approx(exact)


def test_loads_can_count_host_pairs():
    topology = generated(kind="fat_tree", u=2, d=4, r=1)  # hosts on the 4 leaves only
    routing = segment.route(topology, **FAST)
    pairs = segment.channel_loads(routing)
    hosts = segment.channel_loads(routing, hosts=True)
    leaves = {h.switch for h in topology.hosts.values()}
    expected = [0] * len(topology.channels)
    for (src, dst), path in routing.paths().items():
        if src in leaves and dst in leaves:
            for channel in path:
                expected[channel] += 1
    assert list(hosts) == expected and pairs.sum() > hosts.sum()


def test_the_search_never_does_worse_than_the_first_segmentation():
    for spec in ({"kind": "torus", "dims": [5, 4]}, {"kind": "random", "switches": 24,
                                                     "degree": 4, "seed": 2}):
        topology = generated(**spec)
        plain = channel_loads(segment.route(topology, **FAST))
        searched = channel_loads(segment.route(topology, restarts=4, refine=10))
        assert max(searched.values()) <= max(plain.values())


@pytest.mark.parametrize("spec", [
    {"kind": "torus", "dims": [5, 4]},
    {"kind": "random", "switches": 24, "degree": 4, "seed": 2},
    {"kind": "mesh", "dims": [5, 5], "links_per_neighbor": 2},
], ids=["torus5x4", "random24", "mesh-parallel"])
def test_batched_search_routes_as_one_candidate_at_a_time(spec, monkeypatch):
    """Restarts and local moves routed side by side choose exactly what
    routing every candidate alone (and trying moves one by one) chooses."""
    topology = generated(**spec)
    batched = segment.route(topology, seed=2, restarts=5, refine=8)
    monkeypatch.setattr(segment, "BATCH_CELLS", 1)   # one candidate per select_paths_many
    monkeypatch.setattr(segment, "REFINE_BATCH", 1)  # moves tried one by one
    single = segment.route(topology, seed=2, restarts=5, refine=8)
    assert single.segmentation == batched.segmentation
    assert (single.next_hop == batched.next_hop).all()


@pytest.mark.parametrize("spec", [
    {"kind": "mesh", "dims": [8, 8]},
    {"kind": "torus", "dims": [8, 8]},
    {"kind": "random", "switches": 16, "degree": 4, "seed": 1},
    {"kind": "random", "switches": 32, "degree": 4, "seed": 1},
], ids=["mesh8x8", "torus8x8", "random16", "random32"])
def test_max_channel_load_is_at_most_updown(spec):
    """Uniform all-to-all, ordered switch pairs per channel (OpenSM's metric):
    SR with balanced placement against up*/down* (segment paper §3)."""
    topology = generated(**spec)
    routing = segment.route(topology)
    assert verify_routing(routing)["ok"]
    assert uniform_max_load(routing) <= uniform_max_load(compute_routing(topology, "updown"))


# ------------------------------------------------------------------ property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=fabric_specs(), data=st.data())
def test_property_segments_follow_the_rules_and_routing_is_deadlock_free(spec, data):
    """Every generator kind, random faults, random down links, both
    placements, random seeds: the segmentation obeys §2.1/§2.2, the turn
    graph left by the restrictions is acyclic, and every pair is routed."""
    topology = build(spec)
    event("kind %s" % spec["kind"])
    down = data.draw(st.lists(st.sampled_from(range(len(topology.links))), max_size=3,
                              unique=True)) if topology.links else []
    options = {"seed": data.draw(st.integers(0, 2 ** 16)),
               "placement": data.draw(st.sampled_from(["balanced", "random"])),
               "restarts": data.draw(st.integers(1, 2)), "refine": data.draw(st.integers(0, 2))}
    if not nx.is_connected(topology.switch_graph(down)):
        event("disconnected by down links")
        with pytest.raises(RoutingError, match=r"cannot be reached from sw0"):
            segment.route(topology, down=down, **options)
        return
    routing = segment.route(topology, down=down, **options)
    seg = routing.segmentation
    check_segmentation(topology, seg, down)
    prohibited = seg.prohibited(topology)
    assert turn_graph_is_acyclic(topology, prohibited, seg.down)
    report = verify_routing(routing)
    assert report["ok"], report
    used = {(a, b) for path in routing.paths().values() for a, b in zip(path, path[1:])}
    assert not used & set(prohibited)
    canonical = segment.segmentation(topology, down=down, seed=options["seed"],
                                     placement=options["placement"])
    check_segmentation(topology, canonical, down)
