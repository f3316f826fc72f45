"""STP baseline: only the links of a BFS spanning tree carry traffic, paths
are the tree paths, the tree is the 802.1D-like one (lowest parent id,
then lowest link), down links avoided."""

import networkx as nx
import pytest
from routing_checks import assert_valid_path, gen

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
    down_set,
)

SPECS = [
    {"kind": "mesh", "dims": [4, 4], "links_per_neighbor": 2},
    {"kind": "torus", "dims": [4, 5]},
    {"kind": "fat_tree", "u": 2, "d": 4, "r": 2},
    {"kind": "complete", "switches": 5},
    {"kind": "random", "switches": 20, "degree": 4, "seed": 4},
    {"kind": "random", "switches": 20, "degree": 3, "seed": 8, "faults": 3},
]


def used_links(routing):
    return {routing.topology.channels[c].link for p in routing.paths().values() for c in p}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s["kind"])
def test_paths_follow_one_bfs_spanning_tree(spec):
    topo = gen(**spec)
    routing = compute_routing(topo, "stp")
    assert verify_routing(routing)["ok"]
    links = used_links(routing)
    tree = nx.Graph()
    tree.add_nodes_from(topo.switch_names())
    tree.add_edges_from((topo.links[i].a.switch, topo.links[i].b.switch) for i in links)
    assert len(links) == len(topo.switches) - 1 and nx.is_tree(tree)
    assert routing.blocked == set(range(len(topo.links))) - links
    root = routing.options["root"]
    assert nx.single_source_shortest_path_length(tree, root) == \
        nx.single_source_shortest_path_length(topo.switch_graph(), root)  # a BFS tree
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst)
        on_tree = [src] + [topo.channels[c].dst for c in path]
        assert on_tree == nx.shortest_path(tree, src, dst)


def test_parent_is_the_lowest_id_then_the_lowest_link():
    topo = gen(kind="mesh", dims=[3, 3], links_per_neighbor=2)
    routing = compute_routing(topo, "stp", root="sw4")
    links = used_links(routing)
    # sw0 has two neighbours one level nearer sw4 (sw1 and sw3): it keeps sw1,
    # over the lower-numbered of the two parallel links.
    to_sw1 = sorted(link.index for link in topo.links
                    if {link.a.switch, link.b.switch} == {"sw0", "sw1"})
    to_sw3 = [link.index for link in topo.links
              if {link.a.switch, link.b.switch} == {"sw0", "sw3"}]
    assert to_sw1[0] in links and to_sw1[1] not in links
    assert not links & set(to_sw3)


def test_default_root_matches_updown():
    topo = gen(kind="random", switches=16, degree=3, seed=6)
    assert compute_routing(topo, "stp").options["root"] == \
        compute_routing(topo, "updown").options["root"]


def test_down_links_are_avoided():
    topo = gen(kind="torus", dims=[3, 3])
    tree_links = used_links(compute_routing(topo, "stp"))
    down = sorted(tree_links)[:2]
    routing = compute_routing(topo, "stp", down=down)
    avoided = down_set(topo, down)
    assert verify_routing(routing)["ok"] and not used_links(routing) & avoided
    assert routing.down >= avoided | routing.blocked


def test_bad_root_and_options_are_refused():
    topo = gen(kind="mesh", dims=[2, 2])
    with pytest.raises(RoutingError, match="stp: option root='x' is not a switch"):
        compute_routing(topo, "stp", root="x")
    with pytest.raises(RoutingError, match="stp: unknown option 'balance'"):
        compute_routing(topo, "stp", balance=True)
