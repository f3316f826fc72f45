"""Source-tree paths (option ``paths: source_tree`` of every engine): the
paths from each source form a tree, every turn is one the engine allows,
the CDG stays acyclic, the fixed VLAN assignment carries them and a
broadcast crosses each tree link once."""

import networkx as nx
import numpy as np
import pytest
from routing_checks import assert_valid_path, gen

from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import (
    VlanError,
    fixed_assignment,
    renamed_assignment,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    SourceTreeRouting,
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import RoutingError
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.source_tree import source_port_loads
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing

CASES = [
    ("dor", {"kind": "mesh", "dims": [4, 4]}),
    ("dor", {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2}),
    ("west_first", {"kind": "mesh", "dims": [4, 5]}),
    ("negative_first", {"kind": "mesh", "dims": [3, 4]}),
    ("updown", {"kind": "fat_tree", "u": 2, "d": 4, "r": 2}),
    ("updown", {"kind": "random", "switches": 20, "degree": 4, "seed": 3}),
    ("tbtp", {"kind": "torus", "dims": [4, 4]}),
    ("tbtp", {"kind": "random", "switches": 24, "degree": 3, "seed": 2}),
    ("segment", {"kind": "torus", "dims": [4, 4]}),
    ("segment", {"kind": "random", "switches": 24, "degree": 4, "seed": 1}),
    ("stp", {"kind": "mesh", "dims": [3, 3]}),
]


def _tree_checks(routing, base):
    topology = routing.topology
    prohibited = set()
    C = len(topology.channels)
    for key in base.prohibited_keys.tolist():
        prohibited.add(divmod(key, C))
    paths = routing.paths()
    for source in topology.switch_names():
        entered = {}
        for (s, d), path in paths.items():
            if s != source:
                continue
            assert_valid_path(topology, path, s, d, routing.down)
            for first, second in zip(path, path[1:]):
                assert (first, second) not in prohibited, (s, d, path)
            for channel in path:
                entered.setdefault(topology.channels[channel].dst, set()).add(channel)
        # every switch entered over exactly one channel: a tree rooted at the source
        assert all(len(ways) == 1 for ways in entered.values()), source
        assert source not in entered
        assert len(entered) == len(topology.switches) - 1


@pytest.mark.parametrize("engine,spec", CASES, ids=str)
def test_paths_from_each_source_form_a_tree_of_legal_paths(engine, spec):
    topology = gen(**spec)
    base = compute_routing(topology, engine)
    routing = compute_routing(topology, engine, paths="source_tree")
    assert isinstance(routing, SourceTreeRouting)
    assert routing.options["paths"] == "source_tree"
    _tree_checks(routing, base)
    report = verify_routing(routing)
    assert report["acyclic"] and report["connected"] and report["consistent"]


def test_tree_path_matches_hop_by_hop_walk():
    topology = gen(kind="torus", dims=[4, 4])
    routing = compute_routing(topology, "segment", paths="source_tree")
    n = len(topology.switches)
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            path = routing.path(routing.switch_names[s], routing.switch_names[d])
            # the tree's depth is the path length, and the walk ends at d
            assert len(path) == routing.depth[s, d]
            assert topology.channels[path[-1]].dst == routing.switch_names[d]
    # a frame of another source in that state is no frame of this tree
    state = n + routing.entry[0, 5]
    assert routing.hop(np.array([0]), np.array([state]), np.array([5]))[0] == -1


def test_trees_balance_load_across_sources():
    """The second sweep reroutes against the others' load: the max
    channel load does not grow, and spreads below the unbalanced one."""
    topology = gen(kind="torus", dims=[6, 6], links_per_neighbor=2)

    def max_load(routing):
        loads = np.zeros(len(topology.channels))
        for path in routing.paths().values():
            loads[path] += 1
        return loads.max()

    for engine in ("updown", "dor"):
        balanced = compute_routing(topology, engine, paths="source_tree")
        first_only = compute_routing(topology, engine, paths="source_tree", balance=1)
        unbalanced = compute_routing(topology, engine, paths="source_tree", balance=False)
        assert max_load(balanced) <= max_load(first_only) < max_load(unbalanced), engine


def test_fixed_assignment_carries_source_trees_and_broadcasts_stay_on_a_tree():
    topology = gen(kind="random", switches=16, degree=4, seed=4, hosts_per_switch=1)
    with pytest.raises(VlanError, match="do not form a tree"):
        fixed_assignment(compute_routing(topology, "segment"))
    routing = compute_routing(topology, "segment", paths="source_tree")
    assignment = fixed_assignment(routing)
    for vid, tree in assignment.trees.items():
        graph = nx.MultiGraph()
        for index in tree["links"]:
            link = topology.links[index]
            graph.add_edge(link.a.switch, link.b.switch, key=index)
        assert nx.is_tree(graph), vid
        assert graph.number_of_nodes() == len(topology.switches)


def test_renamed_assignment_refuses_source_trees():
    topology = gen(kind="mesh", dims=[3, 3])
    routing = compute_routing(topology, "updown", paths="source_tree")
    with pytest.raises(VlanError, match="source"):
        renamed_assignment(routing)


def test_bad_paths_option_is_named():
    topology = gen(kind="mesh", dims=[3, 3])
    with pytest.raises(RoutingError, match="option paths must be one of per_destination, "
                                           "source_tree, paper, got 'trees'"):
        compute_routing(topology, "updown", paths="trees")
    with pytest.raises(RoutingError, match="depends on the source"):
        compute_routing(topology, "updown", paths="source_tree").next_channel("sw0", None, "sw1")


def test_source_port_loads_with_one_group_are_the_source_trees_loads():
    topology = gen(kind="random", switches=12, degree=3, seed=2, hosts_per_switch=3)
    base = compute_routing(topology, "tbtp")
    trees = compute_routing(topology, "tbtp", paths="source_tree")
    hosts = {name: len(topology.hosts_on(name)) for name in topology.switch_names()}
    expected = np.zeros(len(topology.channels))
    for (s, d), path in trees.paths().items():
        expected[path] += hosts[s] * hosts[d]
    assert np.allclose(source_port_loads(base, 1), expected)


def test_hosts_of_a_leaf_leave_by_different_spines_with_source_port_trees():
    """Fat tree (2, 4, 2), 4 hosts per leaf (the switch-tagged paper's
    Fig. 2): one tree per switch sends all of a leaf's hosts up one spine;
    two groups per leaf spread them and lower the busiest channel."""
    topology = gen(kind="fat_tree", u=2, d=4, r=2, hosts_per_switch=4)
    base = compute_routing(topology, "segment")
    per_switch = source_port_loads(base, 1)
    per_port = source_port_loads(base, 2)
    assert per_port.sum() == pytest.approx(per_switch.sum())   # same host pairs, same hop counts
    assert per_port.max() < per_switch.max()
    with pytest.raises(RoutingError, match="groups must be a whole number >= 1"):
        source_port_loads(base, 0)
