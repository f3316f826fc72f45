"""Routing metrics: traffic patterns, channel loads, hops, stretch, LP bound.

Path sets are built here from networkx shortest paths or by hand (dimension
order on meshes), so the metrics are tested without any routing engine;
expected numbers are derived by hand in the comments.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.metrics import (
    MetricsError,
    TrafficPatternError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


# ------------------------------------------------------------------ helpers
def fabric(edges, hosts=None, states=None):
    """An explicit topology from switch-name pairs; ports are numbered in
    order of use. ``hosts``: {host: switch}. ``states``: {link index: "down"}."""
    next_port = {}
    switches = {}

    def port(sw):
        switches.setdefault(sw, {})
        next_port[sw] = next_port.get(sw, 0) + 1
        return "%s:%d" % (sw, next_port[sw])

    host_entries = {}
    for number, (name, sw) in enumerate((hosts or {}).items()):
        host_entries[name] = {"switch": sw, "port": port(sw).split(":")[1],
                              "mac": "02:00:00:00:01:%02x" % (number + 1)}
    links = []
    for index, (a, b) in enumerate(edges):
        link = {"a": port(a), "b": port(b)}
        if states and index in states:
            link["state"] = states[index]
        links.append(link)
    return topology_from_data({"switches": switches, "links": links, "hosts": host_entries})


def generated(**spec):
    return topology_from_data({"generate": spec})


def channel_path(topology, switches):
    """Channel ids along a switch sequence (first parallel channel)."""
    result = []
    for here, there in zip(switches, switches[1:]):
        result.append(next(ch.id for ch in topology.out_channels(here) if ch.dst == there))
    return result


def shortest_paths(topology, down=()):
    """A concrete minimal path set from networkx (one shortest path per pair)."""
    graph = topology.switch_graph(down)
    paths = {}
    for src, targets in nx.all_pairs_shortest_path(graph):
        for dst, switches in targets.items():
            if src != dst:
                paths[(src, dst)] = channel_path(topology, switches)
    return paths


def dimension_order_paths(topology):
    """XY routing on a mesh: correct dimension 0 first, then dimension 1."""
    at = {sw.coords: name for name, sw in topology.switches.items()}
    paths = {}
    for src, dst in itertools.permutations(topology.switch_names(), 2):
        here = list(topology.switches[src].coords)
        goal = topology.switches[dst].coords
        walk = [src]
        for dim in range(len(goal)):
            while here[dim] != goal[dim]:
                here[dim] += 1 if goal[dim] > here[dim] else -1
                walk.append(at[tuple(here)])
        paths[(src, dst)] = channel_path(topology, walk)
    return paths


def load_of(topology, loads, src, dst):
    return [loads[ch.id] for ch in topology.out_channels(src) if ch.dst == dst]


LINE = [("a", "b"), ("b", "c")]
RING = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
STAR = [("hub", "x"), ("hub", "y"), ("hub", "z")]


# ------------------------------------------------------------ hand cases
def test_line_of_three_loads_hops_stretch_and_bound():
    topo = fabric(LINE)
    traffic = metrics.uniform(topo)
    paths = shortest_paths(topo)
    loads = metrics.channel_loads(topo, paths, traffic)
    # a->b carries a->b and a->c; b->c carries b->c and a->c; same backwards.
    assert loads.tolist() == [2, 2, 2, 2]
    assert metrics.max_channel_load(topo, paths, traffic) == 2
    # hops 1, 2, 1 in each direction: 8 / 6.
    assert metrics.average_hops(topo, paths, traffic) == pytest.approx(4 / 3)
    assert metrics.stretch(topo, paths, traffic) == {"average": 1.0, "max": 1.0}
    # A tree has one path per pair, so the best multipath routing is the same.
    assert metrics.lp_lower_bound(topo, traffic) == pytest.approx(2)


def test_ring_of_four_clockwise_detour_is_worse_than_the_bound():
    topo = fabric(RING)
    traffic = metrics.uniform(topo)
    ring = ["a", "b", "c", "d"]
    # Neighbours go direct; opposite switches always go clockwise.
    paths = {}
    for i, src in enumerate(ring):
        for step in (1, 2, 3):
            walk = [ring[(i + k) % 4] for k in range(step + 1)] if step < 3 else \
                [src, ring[(i - 1) % 4]]
            paths[(src, walk[-1])] = channel_path(topo, walk)
    loads = metrics.channel_loads(topo, paths, traffic)
    # A clockwise channel carries its neighbour pair and two opposite pairs,
    # an anticlockwise one only its neighbour pair.
    for i, src in enumerate(ring):
        assert load_of(topo, loads, src, ring[(i + 1) % 4]) == [3]
        assert load_of(topo, loads, src, ring[(i - 1) % 4]) == [1]
    assert metrics.max_channel_load(topo, paths, traffic) == 3
    assert metrics.average_hops(topo, paths, traffic) == pytest.approx(4 / 3)
    # Splitting the opposite pairs half/half gives 2 on every channel, and
    # 16 channel-hops over 8 channels cannot do better.
    assert metrics.lp_lower_bound(topo, traffic) == pytest.approx(2)


def test_ring_stretch_of_a_long_way_round():
    topo = fabric(RING)
    paths = shortest_paths(topo)
    paths[("a", "b")] = channel_path(topo, ["a", "d", "c", "b"])
    result = metrics.stretch(topo, paths, metrics.uniform(topo))
    # 12 pairs: one at 3/1, eleven at 1.
    assert result["max"] == pytest.approx(3)
    assert result["average"] == pytest.approx((11 + 3) / 12)
    assert metrics.stretch(topo, paths) == result  # every pair of the path set


def test_star_every_channel_carries_three():
    topo = fabric(STAR)
    traffic = metrics.uniform(topo)
    paths = shortest_paths(topo)
    loads = metrics.channel_loads(topo, paths, traffic)
    # A leaf sends to the hub and two leaves, and receives from three.
    assert loads.tolist() == [3] * 6
    # 6 hub-leaf pairs of 1 hop, 6 leaf-leaf pairs of 2 hops: 18 / 12.
    assert metrics.average_hops(topo, paths, traffic) == pytest.approx(1.5)
    assert metrics.lp_lower_bound(topo, traffic) == pytest.approx(3)


def test_hosts_are_counted_and_same_switch_pairs_never_cross():
    topo = fabric(LINE, hosts={"h1": "a", "h2": "a", "h3": "b"})
    traffic = metrics.uniform(topo)
    names = topo.switch_names()
    expected = np.zeros((3, 3))
    expected[names.index("a"), names.index("b")] = 2  # h1, h2 -> h3
    expected[names.index("b"), names.index("a")] = 2
    assert np.array_equal(traffic, expected)
    loads = metrics.channel_loads(topo, shortest_paths(topo), traffic)
    assert load_of(topo, loads, "a", "b") == [2]
    assert load_of(topo, loads, "b", "c") == [0]


def test_mesh_4x4_dimension_order_reaches_the_bound():
    topo = generated(kind="mesh", dims=[4, 4])
    traffic = metrics.uniform(topo)
    paths = dimension_order_paths(topo)
    # Bisection: 8 x 8 pairs cross the 4 channels of the middle cut one way,
    # so at least 16; XY routing puts exactly 16 on the middle row channels.
    assert metrics.max_channel_load(topo, paths, traffic) == 16
    assert metrics.lp_lower_bound(topo, traffic) == pytest.approx(16)
    assert metrics.stretch(topo, paths, traffic)["max"] == 1.0


def test_mesh_8x8_uniform_bound_is_the_bisection_bound():
    topo = generated(kind="mesh", dims=[8, 8])
    traffic = metrics.uniform(topo)
    # 32 x 32 pairs over 8 channels of the middle cut: 128 (the bisection bound);
    # dimension order attains it, so the LP optimum is exactly 128.
    assert metrics.max_channel_load(topo, dimension_order_paths(topo), traffic) == 128
    assert metrics.lp_lower_bound(topo, traffic) == pytest.approx(128)


def test_torus_4x4_bound_and_parallel_links():
    single = generated(kind="torus", dims=[4, 4])
    double = generated(kind="torus", dims=[4, 4], links_per_neighbor=2)
    # Total shortest distance 16 * 32 = 512 channel-hops over 64 channels
    # gives >= 8; dimension order with the 2-hop ring pairs split half/half
    # puts exactly 8 on every channel. Twice the links halve it.
    assert metrics.lp_lower_bound(single, metrics.uniform(single)) == pytest.approx(8)
    assert metrics.lp_lower_bound(double, metrics.uniform(double)) == pytest.approx(4)


def test_down_links_change_the_bound_and_the_stretch():
    topo = fabric(RING)
    traffic = metrics.uniform(topo)
    # Without d--a the ring is the line a-b-c-d: 2 x 2 pairs over b->c.
    assert metrics.lp_lower_bound(topo, traffic, down=[3]) == pytest.approx(4)
    file_down = fabric(RING, states={3: "down"})
    assert metrics.lp_lower_bound(file_down, metrics.uniform(file_down)) == pytest.approx(4)
    paths = shortest_paths(topo, down=[3])
    # a -> d now takes 3 hops, shortest over the line is also 3.
    assert metrics.stretch(topo, paths, traffic, down=[3])["max"] == 1.0
    assert metrics.stretch(topo, paths, traffic)["max"] == 3.0


# --------------------------------------------------- bounds on random graphs
@settings(max_examples=12, deadline=None)
@given(switches=st.integers(6, 14), seed=st.integers(0, 10_000))
def test_bound_lies_between_average_load_and_any_concrete_routing(switches, seed):
    topo = generated(kind="random", switches=switches, degree=3, seed=seed)
    traffic = metrics.uniform(topo)
    paths = shortest_paths(topo)
    bound = metrics.lp_lower_bound(topo, traffic)
    concrete = metrics.max_channel_load(topo, paths, traffic)
    distances = metrics.hop_distances(topo)
    # Any routing spreads at least the shortest channel-hops over the channels.
    average = float((traffic * distances).sum()) / len(topo.channels)
    assert average - 1e-6 <= bound <= concrete + 1e-6
    loads = metrics.channel_loads(topo, paths, traffic)
    # Every pair's traffic appears once per channel of its path.
    assert loads.sum() == pytest.approx(
        sum(traffic[topo.switches[s].index, topo.switches[t].index] * len(p)
            for (s, t), p in paths.items()))


def test_bound_is_below_shortest_paths_on_a_faulty_mesh():
    topo = generated(kind="mesh", dims=[6, 6], faults=0.1, seed=3)
    traffic = metrics.uniform(topo)
    assert metrics.lp_lower_bound(topo, traffic) <= \
        metrics.max_channel_load(topo, shortest_paths(topo), traffic) + 1e-6


# ---------------------------------------------------------------- patterns
def host_pairs(topo, traffic):
    """Nonzero entries as (src index, dst index) -> weight."""
    return {(int(s), int(t)): traffic[s, t] for s, t in zip(*np.nonzero(traffic))}


def test_bit_reversal_of_sixteen_hosts():
    topo = generated(kind="mesh", dims=[4, 4])  # host i on switch sw<i>
    pairs = host_pairs(topo, metrics.bit_reversal(topo))
    # 0001 -> 1000, 0011 -> 1100, 0101 -> 1010, 0111 -> 1110, ...
    assert pairs[(1, 8)] == 1 and pairs[(8, 1)] == 1
    assert pairs[(3, 12)] == 1 and pairs[(5, 10)] == 1 and pairs[(7, 14)] == 1
    assert pairs[(2, 4)] == 1 and pairs[(11, 13)] == 1
    # Palindromes 0000, 0110, 1001, 1111 send to themselves: nothing.
    assert len(pairs) == 12
    assert not any(src in (0, 6, 9, 15) for src, _dst in pairs)


def test_matrix_transpose_of_a_4x4_host_grid():
    topo = generated(kind="mesh", dims=[4, 4])
    pairs = host_pairs(topo, metrics.matrix_transpose(topo))
    # (x, y) = (i % 4, i // 4) -> (3 - y, 3 - x); on x + y = 3 -> (3 - x, 3 - y).
    assert pairs[(0, 15)] == 1   # (0,0) -> (3,3)
    assert pairs[(1, 11)] == 1   # (1,0) -> (3,2)
    assert pairs[(4, 14)] == 1   # (0,1) -> (2,3)
    assert pairs[(3, 12)] == 1   # (3,0) on the anti-diagonal -> (0,3)
    assert pairs[(6, 9)] == 1    # (2,1) -> (1,2)
    # A permutation that is its own inverse, every host sends.
    assert len(pairs) == 16
    assert all(pairs.get((t, s)) == 1 for s, t in pairs)


def test_patterns_map_hosts_to_their_switches():
    topo = generated(kind="mesh", dims=[2, 2], hosts_per_switch=4)  # 16 hosts, 4 per switch
    traffic = metrics.bit_reversal(topo)
    # Host i is on switch i // 4 = its top two bits; it sends to the host whose
    # top two bits are its low two bits reversed: same switch only for the
    # four palindromes (which send to themselves), so 12 units cross.
    assert traffic.sum() == 12
    assert np.trace(traffic) == 0
    assert metrics.uniform(topo).sum() == 16 * 15 - 4 * 4 * 3


def test_patterns_refuse_host_counts_they_do_not_apply_to():
    ring = fabric(RING + [("a", "e")])  # 5 switches, no hosts: one per switch
    with pytest.raises(TrafficPatternError, match="power-of-two number of hosts.*has 5"):
        metrics.bit_reversal(ring)
    eight = generated(kind="mesh", dims=[4, 2])
    with pytest.raises(TrafficPatternError, match="square number of hosts.*has 8"):
        metrics.matrix_transpose(eight)
    assert issubclass(TrafficPatternError, ValueError)
    assert issubclass(TrafficPatternError, EtherclusterError)


def test_random_permutation_is_a_seeded_permutation():
    topo = generated(kind="mesh", dims=[4, 4])
    first = metrics.random_permutation(topo, seed=7)
    assert np.array_equal(first, metrics.random_permutation(topo, seed=7))
    assert not np.array_equal(first, metrics.random_permutation(topo, seed=8))
    assert first.sum(axis=1).max() <= 1 and first.sum(axis=0).max() <= 1
    # Every host but the fixed points sends, so rows and columns agree.
    assert np.array_equal(first.sum(axis=1) > 0, first.sum(axis=0) > 0)
    with pytest.raises(MetricsError, match="seed"):
        metrics.random_permutation(topo, seed=-1)


def test_user_matrix_accepts_both_forms_and_sums_per_switch():
    topo = fabric(LINE, hosts={"h1": "a", "h2": "a", "h3": "c"})
    names = topo.switch_names()
    by_pair = metrics.user_matrix(topo, {("h1", "h3"): 100, ("h2", "h3"): 50,
                                         ("h1", "h2"): 999})
    nested = metrics.user_matrix(topo, {"h1": {"h3": 100, "h2": 999}, "h2": {"h3": 50}})
    assert np.array_equal(by_pair, nested)
    assert by_pair[names.index("a"), names.index("c")] == 150
    assert by_pair.sum() == 150  # h1 -> h2 stays on switch a


def test_user_matrix_uses_switch_names_without_hosts():
    topo = fabric(LINE)
    traffic = metrics.user_matrix(topo, {("a", "c"): 10})
    assert traffic[0, 2] == 10 and traffic.sum() == 10


@pytest.mark.parametrize("matrix, message", [
    ({("h1", "nosuch"): 5}, "unknown host 'nosuch'"),
    ({"ghost": {"h1": 5}}, "unknown host 'ghost'"),
    ({("h1", "h3"): -1}, r"h1 -> h3\]: the volume must be a number >= 0"),
    ({("h1", "h3"): "lots"}, "the volume must be a number"),
    ({("h1", "h3", "h2"): 1}, "not a \\(src_host, dst_host\\) pair"),
    ({"h1": 5}, "must map to {dst_host: bytes}"),
    ([("h1", "h3")], "must be a mapping"),
])
def test_user_matrix_errors_name_the_entry(matrix, message):
    topo = fabric(LINE, hosts={"h1": "a", "h3": "c"})
    with pytest.raises(MetricsError, match=message):
        metrics.user_matrix(topo, matrix)


# -------------------------------------------------------------- bad input
def test_metrics_refuse_bad_traffic_and_missing_paths():
    topo = fabric(LINE)
    paths = shortest_paths(topo)
    with pytest.raises(MetricsError, match=r"shape \(3, 3\)"):
        metrics.channel_loads(topo, paths, np.ones((2, 2)))
    with pytest.raises(MetricsError, match="finite volumes >= 0"):
        metrics.channel_loads(topo, paths, -metrics.uniform(topo))
    del paths[("c", "a")]
    with pytest.raises(MetricsError, match="no path from c to a"):
        metrics.average_hops(topo, paths, metrics.uniform(topo))
    with pytest.raises(MetricsError, match="unknown traffic pattern 'hotspot'"):
        metrics.traffic_pattern(topo, "hotspot")


def test_lp_bound_refuses_unreachable_pairs_and_huge_fabrics():
    topo = fabric(LINE)
    with pytest.raises(MetricsError, match="from a to b but no path"):
        metrics.lp_lower_bound(topo, metrics.uniform(topo), down=[0])
    big = generated(kind="random", switches=metrics.LP_MAX_SWITCHES + 2, degree=3, seed=1)
    with pytest.raises(MetricsError, match="130 switches; the LP is limited to 128"):
        metrics.lp_lower_bound(big, metrics.uniform(big))


def test_empty_traffic_gives_zero_everywhere():
    topo = fabric(LINE)
    zero = np.zeros((3, 3))
    paths = shortest_paths(topo)
    assert metrics.max_channel_load(topo, paths, zero) == 0
    assert metrics.average_hops(topo, paths, zero) == 0
    assert metrics.lp_lower_bound(topo, zero) == 0


# ------------------------------------------------------ report on engines
def test_routing_report_of_dimension_order_on_a_mesh():
    from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
        compute_routing,
    )

    topo = generated(kind="mesh", dims=[4, 4])
    report = metrics.routing_report(compute_routing(topo, "dor"), lp_bound=True)
    assert report["engine"] == "dor"
    assert report["max_channel_load"] == 16 == report["lp_bound"]
    assert report["ratio_to_lp_bound"] == 1.0
    # Mean Manhattan distance over the 240 ordered pairs: 640 / 240.
    assert report["average_hops"] == pytest.approx(8 / 3, abs=1e-6)
    assert report["stretch"] == {"average": 1.0, "max": 1.0}
    assert len(report["busiest_channels"]) == 5
    assert all(entry.endswith("= 16") and "->" in entry for entry in report["busiest_channels"])


def test_routing_report_judges_stp_against_the_whole_fabric():
    from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
        compute_routing,
    )

    topo = fabric(RING)
    routing = compute_routing(topo, "stp")
    report = metrics.routing_report(routing, traffic="uniform")
    # The tree drops one ring link, so some neighbour pair takes the 3-hop way
    # round: stretch is measured against the ring, not the tree.
    assert len(routing.blocked) == 1
    assert report["stretch"]["max"] == 3.0
    bit = metrics.routing_report(routing, traffic="bit_reversal")
    assert bit["max_channel_load"] <= report["max_channel_load"]
