"""Dimension-order routing: exact DOR paths on meshes and tori, the
dateline scheme over two parallel links proven acyclic on the turn graph,
refusals (one link per torus pair, down links, no shape)."""

import networkx as nx
import pytest
from routing_checks import allowed_turn_graph, assert_valid_path, channel_loads, gen

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import dor
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

GRIDS = [
    {"kind": "mesh", "dims": [4, 4]},
    {"kind": "mesh", "dims": [5, 3], "links_per_neighbor": 2},
    {"kind": "mesh", "dims": [3, 2, 3]},
    {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2},
    {"kind": "torus", "dims": [5, 3], "links_per_neighbor": 2},
    {"kind": "torus", "dims": [3, 4, 2], "links_per_neighbor": 2},
    {"kind": "torus", "dims": [6], "links_per_neighbor": 3},
    {"kind": "torus", "dims": [2, 2]},  # rings of two: no wrap link, one link is enough
]


def ring_offset(a, b, k, torus):
    """Signed hops from a to b the shortest way round (either sign at k/2)."""
    delta = b - a
    if torus and k > 2:
        delta %= k
        if delta > k - delta:
            delta -= k
    return delta


def assert_dimension_order(topo, path, src, dst):
    kind, dims = topo.shape["kind"], topo.shape["dims"]
    coords = [topo.switches[src].coords] + [topo.switches[topo.channels[c].dst].coords
                                            for c in path]
    moves = []
    for a, b in zip(coords, coords[1:]):
        changed = [i for i in range(len(dims)) if a[i] != b[i]]
        assert len(changed) == 1, (src, dst, coords)
        i = changed[0]
        step = ring_offset(a[i], b[i], dims[i], kind == "torus")
        assert abs(step) == 1
        moves.append((i, step))
    dims_crossed = [i for i, _step in moves]
    assert dims_crossed == sorted(dims_crossed), (src, dst, coords)
    for i, k in enumerate(dims):
        steps = [s for d, s in moves if d == i]
        assert len(set(steps)) <= 1, ("direction changed", src, dst, coords)
        need = ring_offset(coords[0][i], coords[-1][i], k, kind == "torus")
        assert len(steps) == abs(need), ("not minimal", src, dst, coords)


@pytest.mark.parametrize("spec", GRIDS, ids=lambda s: "%s%s" % (s["kind"], s["dims"]))
def test_dor_paths_are_exactly_dimension_order_and_deadlock_free(spec):
    topo = gen(**spec)
    routing = compute_routing(topo, "dor")
    report = verify_routing(routing)
    assert report["ok"], report
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst)
        assert_dimension_order(topo, path, src, dst)


@pytest.mark.parametrize("spec", GRIDS, ids=lambda s: "%s%s" % (s["kind"], s["dims"]))
def test_dor_turn_graph_is_acyclic(spec):
    """The proof: the graph of *every* turn DOR allows (not only the ones
    used) has no cycle, so no DOR routing over it can deadlock."""
    topo = gen(**spec)
    prohibited, blocked = dor.prohibited_turns(topo)
    graph = allowed_turn_graph(topo, prohibited.tolist(), blocked)
    assert nx.is_directed_acyclic_graph(graph)
    # ... and the dateline restrictions are needed: without them a torus ring cycles.
    if spec["kind"] == "torus" and max(spec["dims"]) > 2:
        grid = dor.Grid(topo, "dor")
        within_dim = [(a, b) for a, b in prohibited.tolist()
                      if grid.dim[a] == grid.dim[b] and grid.sign[a] == grid.sign[b]]
        assert within_dim
        kept = set(map(tuple, prohibited.tolist())) - set(within_dim)
        assert not nx.is_directed_acyclic_graph(allowed_turn_graph(topo, kept, blocked))


def test_torus_uses_both_parallel_links_and_the_dateline_classes():
    topo = gen(kind="torus", dims=[4, 4], links_per_neighbor=2)
    loads = channel_loads(compute_routing(topo, "dor"))
    assert all(loads[c] > 0 for c in range(len(topo.channels)))
    unbalanced = channel_loads(compute_routing(topo, "dor", balance=False))
    assert max(loads.values()) < max(unbalanced.values())


def test_mesh_dor_reaches_the_bisection_bound():
    """k x k mesh, one host per switch: DOR's busiest channel carries
    k/2 * k/2 * k pairs, which is the bisection bound."""
    k = 6
    loads = channel_loads(compute_routing(gen(kind="mesh", dims=[k, k]), "dor"))
    assert max(loads.values()) == k ** 3 // 4


def test_torus_with_one_link_per_pair_is_refused():
    with pytest.raises(RoutingError) as info:
        compute_routing(gen(kind="torus", dims=[4, 4]), "dor")
    message = str(info.value)
    for words in ("dor:", "one link per neighbour pair", "virtual channels", "updown",
                  "segment", "links_per_neighbor: 2"):
        assert words in message


def test_a_down_link_is_refused_by_name_when_no_parallel_link_remains():
    topo = gen(kind="mesh", dims=[3, 3])
    link = topo.links[4]
    with pytest.raises(RoutingError, match="link %s .* is down .*north_last.*segment"
                       % link.name):
        compute_routing(topo, "dor", down=[link.index])


def test_a_down_copy_of_a_parallel_pair_is_avoided_on_a_mesh():
    topo = gen(kind="mesh", dims=[3, 3], links_per_neighbor=2)
    routing = compute_routing(topo, "dor", down=[0, 5])
    assert verify_routing(routing)["ok"]
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst, avoided={0, 5})
        assert_dimension_order(topo, path, src, dst)


def test_a_down_copy_on_a_torus_ring_is_refused_by_name():
    topo = gen(kind="torus", dims=[4, 4], links_per_neighbor=2)
    with pytest.raises(RoutingError, match="link %s .* is down; DOR on a torus needs two"
                       % topo.links[0].name):
        compute_routing(topo, "dor", down=[0])


def test_missing_neighbour_link_and_missing_shape_are_refused():
    faulty = gen(kind="mesh", dims=[3, 3], faults=1, seed=1)
    with pytest.raises(RoutingError, match="no link between sw\\d and sw\\d"):
        compute_routing(faulty, "dor")
    with pytest.raises(RoutingError, match="needs a mesh or torus"):
        compute_routing(gen(kind="random", switches=8, degree=3), "dor")


def test_links_that_are_not_grid_neighbours_are_left_unused():
    data = gen(kind="mesh", dims=[3, 3]).to_data()
    data["links"].append({"a": "sw0:20", "b": "sw8:20"})  # a diagonal shortcut
    data["switches"]["sw0"]["ports"] = data["switches"]["sw8"]["ports"] = 24
    topo = topology_from_data(data)
    routing = compute_routing(topo, "dor")
    diagonal = len(topo.links) - 1
    assert routing.blocked == {diagonal} and diagonal in routing.down
    assert verify_routing(routing)["ok"]
    for (src, dst), path in routing.paths().items():
        assert_dimension_order(topo, path, src, dst)
