"""Up*/down*: no down->up turn on any path, acyclic turn graph, the root
(default = least eccentricity, ties to lowest id; or option root), down
links avoided, all links in use, clear errors."""

import networkx as nx
import pytest
from routing_checks import allowed_turn_graph, assert_valid_path, channel_loads, gen

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import updown
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
    down_set,
)

SPECS = [
    {"kind": "mesh", "dims": [4, 4]},
    {"kind": "torus", "dims": [4, 5]},
    {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2},
    {"kind": "fat_tree", "u": 2, "d": 4, "r": 2},
    {"kind": "myri_clos", "dims": [4, 4]},
    {"kind": "complete", "switches": 6, "links_per_pair": 2},
    {"kind": "tree", "fanout": 3, "depth": 2},
    {"kind": "random", "switches": 24, "degree": 4, "seed": 1},
    {"kind": "random", "switches": 24, "degree": 3, "seed": 2},
    {"kind": "random", "switches": 30, "degree": 4, "seed": 5, "faults": 6},
    {"kind": "torus", "dims": [5, 5], "faults": 0.1, "seed": 3},
]


def reference_levels(topo, root, down=()):
    """BFS levels over the links that are up, computed with networkx."""
    return nx.single_source_shortest_path_length(topo.switch_graph(down), root)


def is_up(topo, levels, channel_id):
    ch = topo.channels[channel_id]
    index = {name: i for i, name in enumerate(topo.switch_names())}
    return (levels[ch.dst], index[ch.dst]) < (levels[ch.src], index[ch.src])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: "%s-%s" % (s["kind"], s.get("seed", "")))
def test_updown_is_deadlock_free_connected_and_never_goes_down_then_up(spec):
    topo = gen(**spec)
    routing = compute_routing(topo, "updown")
    assert verify_routing(routing)["ok"]
    levels = reference_levels(topo, routing.options["root"])
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst)
        ups = [is_up(topo, levels, c) for c in path]
        assert ups == sorted(ups, reverse=True), (src, dst, ups)  # up* then down*


def test_turn_graph_is_acyclic_for_every_root():
    topo = gen(kind="random", switches=12, degree=4, seed=9)
    for root in topo.switch_names():
        _root, levels = updown.root_and_levels(topo, frozenset(), root)
        prohibited = updown.prohibited_turns(topo, levels, frozenset()).tolist()
        graph = allowed_turn_graph(topo, prohibited)
        assert nx.is_directed_acyclic_graph(graph), root


@pytest.mark.parametrize("spec", SPECS[:8], ids=lambda s: s["kind"])
def test_default_root_has_least_eccentricity_lowest_id_on_ties(spec):
    topo = gen(**spec)
    eccentricity = nx.eccentricity(topo.switch_graph())
    best = min(eccentricity.values())
    expected = next(name for name in topo.switch_names() if eccentricity[name] == best)
    assert compute_routing(topo, "updown").options["root"] == expected


def test_fat_tree_default_root_is_a_top_switch_and_paths_are_shortest():
    topo = gen(kind="fat_tree", u=2, d=4, r=2)
    routing = compute_routing(topo, "updown")
    root = routing.options["root"]
    assert topo.switches[root].level == 2
    distance = dict(nx.all_pairs_shortest_path_length(topo.switch_graph()))
    for (src, dst), path in routing.paths().items():
        assert len(path) == distance[src][dst]


def test_root_option_is_used_and_changes_the_routing():
    topo = gen(kind="mesh", dims=[4, 4])
    corner = compute_routing(topo, "updown", root="sw0")
    assert corner.options["root"] == "sw0"
    assert corner.tables() != compute_routing(topo, "updown").tables()
    levels = reference_levels(topo, "sw0")
    for (src, dst), path in corner.paths().items():
        ups = [is_up(topo, levels, c) for c in path]
        assert ups == sorted(ups, reverse=True)


@pytest.mark.parametrize("root", ["sw99", 3, ["sw0"]])
def test_bad_root_is_refused_by_name(root):
    with pytest.raises(RoutingError, match="updown: option root=.* is not a switch"):
        compute_routing(gen(kind="mesh", dims=[2, 2]), "updown", root=root)


def test_down_links_are_avoided_and_levels_follow_the_remaining_links():
    topo = gen(kind="mesh", dims=[4, 4])
    down = [0, 7, "sw5:4"]
    avoided = down_set(topo, down)
    routing = compute_routing(topo, "updown", down=down)
    assert routing.down == avoided and verify_routing(routing)["ok"]
    levels = reference_levels(topo, routing.options["root"], avoided)
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst, avoided)
        ups = [is_up(topo, levels, c) for c in path]
        assert ups == sorted(ups, reverse=True)


def test_down_links_that_cut_off_a_switch_are_refused():
    topo = gen(kind="mesh", dims=[3, 3])
    corner_links = [link.index for link in topo.links if "sw0" in (link.a.switch, link.b.switch)]
    with pytest.raises(RoutingError,
                       match=r"updown: the links that are up leave 1 switch \(sw0\) cut off"):
        compute_routing(topo, "updown", down=corner_links)


def test_every_link_carries_traffic_unlike_a_spanning_tree():
    topo = gen(kind="torus", dims=[4, 4], links_per_neighbor=2)
    loads = channel_loads(compute_routing(topo, "updown"))
    used_links = {topo.channels[c].link for c in loads}
    assert used_links == set(range(len(topo.links)))
