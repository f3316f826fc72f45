"""Turn-model engines (west_first, north_last, negative_first) on 2-D
meshes: forbidden turns never taken, minimal paths in a full mesh, acyclic
turn graphs, routing around down links or a clear refusal."""

import networkx as nx
import pytest
from routing_checks import allowed_turn_graph, assert_valid_path, gen

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    ENGINES,
    compute_routing,
    engine_function,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import turn_model
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
)

MODELS = ["west_first", "north_last", "negative_first"]
# Forbidden (in, out) direction pairs, written out here independently.
FORBIDDEN = {
    "west_first": {("N", "W"), ("S", "W")},
    "north_last": {("N", "E"), ("N", "W")},
    "negative_first": {("E", "S"), ("N", "W")},
}
REVERSALS = {("E", "W"), ("W", "E"), ("N", "S"), ("S", "N")}


def direction(topo, channel_id):
    ch = topo.channels[channel_id]
    (x0, y0), (x1, y1) = topo.switches[ch.src].coords, topo.switches[ch.dst].coords
    return {(1, 0): "E", (-1, 0): "W", (0, 1): "N", (0, -1): "S"}[(x1 - x0, y1 - y0)]


def manhattan(topo, a, b):
    (x0, y0), (x1, y1) = topo.switches[a].coords, topo.switches[b].coords
    return abs(x1 - x0) + abs(y1 - y0)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("spec", [{"dims": [4, 4]}, {"dims": [5, 3], "links_per_neighbor": 2}],
                         ids=["4x4", "5x3x2"])
def test_full_mesh_paths_are_minimal_and_obey_the_model(model, spec):
    topo = gen(kind="mesh", **spec)
    routing = compute_routing(topo, model)
    assert routing.engine == model
    assert verify_routing(routing)["ok"]
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst)
        assert len(path) == manhattan(topo, src, dst)
        turns = {(direction(topo, a), direction(topo, b)) for a, b in zip(path, path[1:])}
        assert not turns & (FORBIDDEN[model] | REVERSALS), (src, dst, turns)


@pytest.mark.parametrize("model", MODELS)
def test_model_turn_graph_is_acyclic_with_parallel_links(model):
    topo = gen(kind="mesh", dims=[4, 3], links_per_neighbor=2)
    prohibited, blocked = turn_model.prohibited_turns(topo, model)
    assert nx.is_directed_acyclic_graph(allowed_turn_graph(topo, prohibited.tolist(), blocked))


def test_models_route_differently():
    topo = gen(kind="mesh", dims=[4, 4])
    tables = [compute_routing(topo, model).tables() for model in MODELS]
    assert tables[0] != tables[1] != tables[2] != tables[0]


def test_north_last_routes_around_a_down_horizontal_link_above_the_bottom_row():
    """Switch-tagged paper §4.1: north-last avoids a deactivated x link."""
    topo = gen(kind="mesh", dims=[4, 4])
    row_of = {name: sw.coords[1] for name, sw in topo.switches.items()}
    horizontal = [link for link in topo.links if row_of[link.a.switch] == row_of[link.b.switch]]
    for link in horizontal:
        row = topo.switches[link.a.switch].coords[1]
        if row > 0:  # detour south, across, then north last
            routing = compute_routing(topo, "north_last", down=[link.index])
            assert verify_routing(routing)["ok"]
            for (src, dst), path in routing.paths().items():
                assert_valid_path(topo, path, src, dst, avoided={link.index})
        else:  # on the bottom row the detour would need a turn out of north
            with pytest.raises(RoutingError, match="north_last: no legal path .*north_last turn "
                                                   "model cannot connect"):
                compute_routing(topo, "north_last", down=[link.index])


def test_unreachable_pair_is_named():
    topo = gen(kind="mesh", dims=[2, 2])
    # sw1 -> sw0 needs a turn into west once the direct west link is down.
    with pytest.raises(RoutingError, match="west_first: no legal path from sw1 to sw0"):
        compute_routing(topo, "west_first", down=["sw1:2"])


def test_paths_stay_minimal_where_the_model_allows_with_faults():
    topo = gen(kind="mesh", dims=[5, 5], faults=3, seed=7)
    graph = topo.switch_graph()
    distance = dict(nx.all_pairs_shortest_path_length(graph))
    routing = compute_routing(topo, "negative_first")
    assert verify_routing(routing)["ok"]
    lengths = {pair: len(path) for pair, path in routing.paths().items()}
    assert all(lengths[(a, b)] >= distance[a][b] for a, b in lengths)
    assert sum(lengths[(a, b)] == distance[a][b] for a, b in lengths) > 0.9 * len(lengths)


@pytest.mark.parametrize("spec, words", [
    ({"kind": "torus", "dims": [4, 4]}, "needs a 2-D mesh, got a 2-D torus"),
    ({"kind": "mesh", "dims": [2, 2, 2]}, "needs a 2-D mesh, got a 3-D mesh"),
    ({"kind": "complete", "switches": 4}, "needs a mesh or torus"),
])
def test_other_fabrics_are_refused(spec, words):
    for model in MODELS:
        with pytest.raises(RoutingError, match=model + ": .*" + words):
            compute_routing(gen(**spec), model)


def test_registry_and_function_names():
    for model in MODELS:
        function = engine_function(model)
        assert function.NAME == model and ENGINES[model] == "turn_model:" + model
    with pytest.raises(RoutingError, match="unknown model 'east_first'"):
        turn_model.route(gen(kind="mesh", dims=[2, 2]), model="east_first")
