"""cdg: the channel dependency graph of a routing and its verification
report (cycle, connectivity, down links, U-turns, consistency)."""

import json

import networkx as nx
import numpy as np
import pytest
from routing_checks import gen

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import (
    assert_deadlock_free,
    channel_dependency_graph,
    first_cycle,
    verify_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
    RoutingFunction,
)


def hand_routing(topology, paths, down=()):
    """A RoutingFunction built straight from ``{(src, dst): [channels]}``."""
    names = topology.switch_names()
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    table = np.full((n + len(topology.channels), n), -1, dtype=np.int32)
    for (src, dst), path in paths.items():
        states = [index[src]] + [n + c for c in path[:-1]]
        for state, channel in zip(states, path):
            table[state, index[dst]] = channel
    return RoutingFunction(topology, "hand", table, down=down)


def ring_paths(topology, clockwise=True):
    """Every pair of a ring routed one way round: the textbook deadlock."""
    names = topology.switch_names()
    k = len(names)
    step = {}
    for i, name in enumerate(names):
        target = names[(i + (1 if clockwise else -1)) % k]
        step[name] = next(ch.id for ch in topology.out_channels(name) if ch.dst == target)
    paths = {}
    for i, src in enumerate(names):
        for j, dst in enumerate(names):
            if i != j:
                at, path = src, []
                while at != dst:
                    path.append(step[at])
                    at = topology.channels[step[at]].dst
                paths[(src, dst)] = path
    return paths


@pytest.fixture(scope="module")
def ring():
    return gen(kind="torus", dims=[5])


def test_one_way_ring_is_cyclic_and_the_cycle_is_reported(ring):
    routing = hand_routing(ring, ring_paths(ring))
    report = verify_routing(routing)
    assert not report["acyclic"] and not report["ok"]
    assert report["connected"] and report["consistent"]
    cycle = report["cycle"]
    assert cycle[0] == cycle[-1] and len(cycle) == 6  # the five clockwise channels
    by_name = {str(ch): ch for ch in ring.channels}
    for a, b in zip(cycle, cycle[1:]):
        assert by_name[a].dst == by_name[b].src  # consecutive channels chain up
    with pytest.raises(RoutingError, match=r"hand: the routing can deadlock: .*sw\d:\d->sw\d:\d"):
        assert_deadlock_free(routing)


def test_cdg_edges_are_exactly_consecutive_channels_of_paths(ring):
    for routing in (hand_routing(ring, ring_paths(ring)),
                    compute_routing(gen(kind="random", switches=12, degree=3, seed=2), "updown")):
        expected = {(a, b) for path in routing.paths().values() for a, b in zip(path, path[1:])}
        graph = channel_dependency_graph(routing)
        assert set(graph.edges()) == expected
        used = {c for path in routing.paths().values() for c in path}
        assert set(graph.nodes()) == used
        assert graph.nodes[min(used)]["name"] == str(routing.topology.channels[min(used)])


def test_a_good_routing_passes_every_check():
    routing = compute_routing(gen(kind="fat_tree", u=2, d=4, r=2), "updown")
    report = assert_deadlock_free(routing)
    assert report["ok"] and report["acyclic"] and report["connected"] and report["consistent"]
    assert report["cycle"] == [] and report["u_turns"] == [] and report["down_links_used"] == []
    assert report["pairs"] == 14 * 13
    assert report["max_path_length"] == max(len(p) for p in routing.paths().values())
    json.dumps(report)
    assert nx.is_directed_acyclic_graph(channel_dependency_graph(routing))


def test_dead_ends_and_loops_are_unreachable_pairs(ring):
    paths = ring_paths(ring)
    broken = hand_routing(ring, {pair: p for pair, p in paths.items() if pair != ("sw0", "sw2")})
    report = verify_routing(broken)
    assert not report["connected"] and report["unreachable_count"] == 1
    assert report["unreachable"][0][:2] == ["sw0", "sw2"]
    looping = hand_routing(ring, paths)
    n = len(ring.switches)
    into_sw0, sw0_to_sw1 = paths[("sw4", "sw0")][0], paths[("sw0", "sw1")][0]
    # frames for sw0 arriving at sw0 go round again instead of being delivered
    looping.next_hop[n + into_sw0, 0] = sw0_to_sw1
    looping.next_hop[n + sw0_to_sw1, 0] = paths[("sw1", "sw0")][0]
    report = verify_routing(looping)
    assert not report["connected"]
    assert any("loops" in why for _src, _dst, why in report["unreachable"])


def test_u_turns_and_down_links_are_reported():
    line = gen(kind="mesh", dims=[3, 2])
    # sw0 -> sw1 -> sw0 -> sw3 is a U-turn detour (legal hops, wasteful and cyclic-prone)
    out0 = {ch.dst: ch.id for ch in line.out_channels("sw0")}
    out1 = {ch.dst: ch.id for ch in line.out_channels("sw1")}
    good = compute_routing(line, "dor")
    paths = good.paths()
    paths[("sw0", "sw3")] = [out0["sw1"], out1["sw0"], out0["sw3"]]
    # path from sw0 to sw3 revisits sw0: its table state differs (came in from sw1)
    report = verify_routing(hand_routing(line, paths))
    assert report["u_turns"] == ["%s -> %s" % (line.channels[out0["sw1"]],
                                               line.channels[out1["sw0"]])]
    assert not report["ok"]
    used_link = line.channels[paths[("sw0", "sw1")][0]].link
    report = verify_routing(hand_routing(line, good.paths(), down={used_link}))
    assert report["down_links_used"] == [line.links[used_link].name] and not report["ok"]


def test_entries_naming_a_foreign_channel_are_inconsistent(ring):
    routing = hand_routing(ring, ring_paths(ring))
    routing.next_hop[0, 2] = routing.next_hop[1, 2]  # a channel that leaves sw1, not sw0
    report = verify_routing(routing)
    assert not report["consistent"] and report["inconsistent"] == [["sw0", "sw2"]]


def test_first_cycle_finds_a_cycle_only_when_there_is_one():
    graph = nx.DiGraph([(1, 2), (2, 3), (3, 4), (10, 11), (11, 10)])
    assert first_cycle(graph) == [10, 11, 10]
    assert first_cycle(nx.DiGraph([(1, 2), (2, 3), (1, 3)])) == []
