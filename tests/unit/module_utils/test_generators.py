"""Generated topologies: counts of the switch-tagged paper's Table 11,
structure, determinism and generator errors."""

import collections

import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


def gen(**spec):
    return topology_from_data({"generate": spec})


def average_switches_per_path(topo):
    """Table 11's Avg.H: switches on a shortest path, averaged over every
    ordered host pair including a host with itself (which crosses one)."""
    dist = dict(nx.all_pairs_shortest_path_length(topo.switch_graph()))
    hosts = list(topo.hosts.values())
    total = sum(dist[a.switch][b.switch] + 1 for a in hosts for b in hosts)
    return total / len(hosts) ** 2


# Table 11 of the switch-tagged paper: topology, #sw, #links, Avg.H (16 hosts each).
TABLE_11 = [
    ({"kind": "mesh", "dims": [4, 2], "hosts_per_switch": 2}, 8, 10, 2.75),
    ({"kind": "torus", "dims": [4, 2], "hosts_per_switch": 2}, 8, 12, 2.50),
    ({"kind": "myri_clos", "dims": [4, 4], "hosts_per_switch": 2}, 8, 16, 2.25),
    ({"kind": "m_tree", "dims": [4, 4]}, 16, 15, 4.81),
    ({"kind": "mesh", "dims": [4, 4]}, 16, 24, 3.50),
    ({"kind": "torus", "dims": [4, 4]}, 16, 32, 3.00),
    ({"kind": "fat_tree", "u": 2, "d": 4, "r": 2, "hosts_per_switch": 2}, 14, 24, 3.75),
]


@pytest.mark.parametrize("spec, switches, links, avg_h", TABLE_11,
                         ids=[row[0]["kind"] + "-" + "x".join(map(str, row[0].get("dims", [])))
                              for row in TABLE_11])
def test_table_11_counts_and_average_path(spec, switches, links, avg_h):
    topo = gen(**spec)
    assert len(topo.switches) == switches
    assert len(topo.links) == links
    assert len(topo.hosts) == 16
    assert average_switches_per_path(topo) == pytest.approx(avg_h, abs=0.005)


@pytest.mark.parametrize("dims", [[3], [5, 3], [2, 3, 4], [3, 3, 3, 2]])
@pytest.mark.parametrize("per_pair", [1, 2, 3])
def test_k_ary_n_cube_counts_any_dimension(dims, per_pair):
    n = 1
    for k in dims:
        n *= k
    mesh_links = sum(n // k * (k - 1) for k in dims)
    torus_links = sum(n // k * (k if k > 2 else 1) for k in dims)
    mesh = gen(kind="mesh", dims=dims, links_per_neighbor=per_pair)
    torus = gen(kind="torus", dims=dims, links_per_neighbor=per_pair)
    assert (len(mesh.switches), len(mesh.links)) == (n, mesh_links * per_pair)
    assert (len(torus.switches), len(torus.links)) == (n, torus_links * per_pair)
    # every link joins switches one step apart in exactly one dimension (mod k on a torus)
    for topo, wrap in ((mesh, False), (torus, True)):
        for link in topo.links:
            a = topo.switches[link.a.switch].coords
            b = topo.switches[link.b.switch].coords
            steps = [(y - x) % k if wrap else abs(y - x) for x, y, k in zip(a, b, dims)]
            moved = [s for s in steps if s]
            assert len(moved) == 1 and (moved[0] == 1 or (wrap and moved[0] == dims[steps.index(moved[0])] - 1))


def test_torus_shape_coords_and_switch_ids():
    topo = gen(kind="torus", dims=[4, 3])
    assert topo.shape == {"kind": "torus", "dims": (4, 3)}
    # id = x + 4 * y: dimension 0 varies fastest
    assert topo.switches["sw5"].coords == (1, 1)
    assert topo.switches["sw11"].coords == (3, 2)
    degree = collections.Counter()
    for link in topo.links:
        degree[link.a.switch] += 1
        degree[link.b.switch] += 1
    assert set(degree.values()) == {4}


def test_generated_names_ports_and_macs_are_deterministic():
    first = gen(kind="random", switches=12, degree=3, seed=7, hosts_per_switch=2)
    again = gen(kind="random", switches=12, degree=3, seed=7, hosts_per_switch=2)
    assert first.to_data() == again.to_data()
    other = gen(kind="random", switches=12, degree=3, seed=8, hosts_per_switch=2)
    assert other.to_data()["links"] != first.to_data()["links"]
    hosts = first.to_data()["hosts"]
    assert list(hosts)[:3] == ["node00", "node01", "node02"]
    assert hosts["node00"] == {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01"}
    assert hosts["node03"] == {"switch": "sw1", "port": "2", "mac": "02:00:00:00:00:04"}
    # inter-switch ports follow the host ports
    for link in first.links:
        assert int(link.a.port) > 2 and int(link.b.port) > 2


def test_mesh_ports_sequence_on_a_switch():
    topo = gen(kind="mesh", dims=[3, 3], hosts_per_switch=1)
    assert topo.used_ports("sw4") == ["1", "2", "3", "4", "5"]


def test_fat_tree_structure_and_up_paths():
    u, d, r = 2, 4, 3
    topo = gen(kind="fat_tree", u=u, d=d, r=r)
    levels = collections.Counter(sw.level for sw in topo.switches.values())
    leaves = levels[0]
    assert leaves == d * (d // u) ** (r - 1)
    graph = topo.switch_graph()
    for sw in topo.switches.values():
        up = [n for n in graph.neighbors(sw.name) if topo.switches[n].level == sw.level + 1]
        down = [n for n in graph.neighbors(sw.name) if topo.switches[n].level == sw.level - 1]
        if sw.level < r:
            assert len(up) == u
        if sw.level > 0:
            assert len(down) == d
    # every leaf reaches the top over u^r distinct up paths (Table 3: u^r fixed VLANs)
    leaf = next(sw.name for sw in topo.switches.values() if sw.level == 0)

    def up_paths(name):
        sw = topo.switches[name]
        if sw.level == r:
            return 1
        return sum(up_paths(n) for n in graph.neighbors(name)
                   if topo.switches[n].level == sw.level + 1)
    assert up_paths(leaf) == u ** r
    assert all(topo.switches[h.switch].level == 0 for h in topo.hosts.values())


def test_complete_tree_and_random_shapes():
    complete = gen(kind="complete", switches=5, links_per_pair=2)
    assert len(complete.links) == 2 * 10
    assert all(complete.graph.number_of_edges(a, b) == 2
               for a in complete.switches for b in complete.switches if a < b)
    tree = gen(kind="tree", fanout=3, depth=2, width=6)
    assert len(tree.switches) == 1 + 3 + 9 and len(tree.links) == 12 * 6
    assert nx.is_tree(nx.Graph(tree.switch_graph()))
    rand = gen(kind="random", switches=32, degree=4, seed=3)
    degrees = dict(rand.switch_graph().degree())
    assert set(degrees.values()) == {4}
    assert nx.is_connected(rand.switch_graph())
    odd = gen(kind="random", switches=9, degree=3, seed=1)
    assert sorted(dict(odd.switch_graph().degree()).values()) == [2] + [3] * 8


def test_m_tree_is_the_dimension_order_tree_from_its_root():
    topo = gen(kind="m_tree", dims=[4, 4], root=[1, 2])
    graph = nx.Graph(topo.switch_graph())
    assert nx.is_tree(graph)
    by_coords = {sw.coords: sw.name for sw in topo.switches.values()}
    root = by_coords[(1, 2)]
    for sw in topo.switches.values():
        path = nx.shortest_path(graph, root, sw.name)
        coords = [topo.switches[name].coords for name in path]
        # x moves first (along the root's row), then y: dimension order
        changes = [0 if a[0] != b[0] else 1 for a, b in zip(coords, coords[1:])]
        assert changes == sorted(changes)


def test_faults_remove_links_but_keep_the_fabric_connected():
    full = gen(kind="mesh", dims=[8, 8])
    faulty = gen(kind="mesh", dims=[8, 8], faults=0.05, seed=1)
    assert len(full.links) - len(faulty.links) == round(0.05 * 112)
    assert nx.is_connected(faulty.switch_graph())
    fewer = gen(kind="torus", dims=[4, 4], faults=3, seed=2)
    assert len(fewer.links) == 29


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "hypercube"}, "generate.kind: unknown generator kind 'hypercube' (known: mesh, torus"),
    ({"kind": "mesh", "dims": [4, 1]}, "generate.dims: bad dimensions [4, 1]"),
    ({"kind": "mesh", "dims": []}, "generate.dims: bad dimensions []"),
    ({"kind": "torus", "dims": "4x4"}, "generate.dims: bad dimensions '4x4'"),
    ({"kind": "mesh", "dims": [1000, 1000]}, "generate.dims: [1000, 1000] would make 1000000 switches, more than the 4096"),
    ({"kind": "mesh", "dims": [4, 4], "links_per_neighbor": 0},
     "generate.links_per_neighbor: must be a whole number from 1 to 16, got 0"),
    ({"kind": "mesh", "dims": [4, 4], "degree": 3}, "generate.degree: not a field of kind mesh"),
    ({"kind": "fat_tree", "u": 3, "d": 4, "r": 2}, "generate.d: d (4) must be a multiple of u (3)"),
    ({"kind": "fat_tree", "u": 5, "d": 4}, "generate.u: u (5 up links) must not exceed d"),
    ({"kind": "random", "switches": 4, "degree": 4}, "generate.degree: 4 switches allow a degree of at most 3"),
    ({"kind": "random", "switches": 10, "degree": 1}, "no connected random graph"),
    ({"kind": "tree", "fanout": 2, "depth": 2, "faults": 1},
     "generate.faults: only 0 links can be removed without disconnecting"),
    ({"kind": "m_tree", "dims": [4, 4], "root": [4, 0]}, "generate.root: must be coordinates inside"),
    ({"kind": "myri_clos", "dims": [2, 2, 2]}, "generate.dims: myri_clos takes two column sizes"),
    ({"kind": "complete", "switches": 1}, "generate.switches: must be a whole number at least 2"),
])
def test_generator_errors_name_the_field(spec, expected):
    with pytest.raises(TopologyError) as info:
        topology_from_data({"generate": spec}, "gen.yml")
    assert str(info.value).startswith("gen.yml: ")
    assert expected in str(info.value)


def test_generate_must_be_a_mapping():
    with pytest.raises(TopologyError, match="generate: must be a mapping"):
        topology_from_data({"generate": "torus"})


def test_switch_defaults_apply_to_generated_switches():
    topo = topology_from_data({"generate": {"kind": "mesh", "dims": [2, 2]},
                               "switch_defaults": {"platform": "dell_os6", "ports": 24,
                                                   "power_profile": "pc6224"}})
    assert {(sw.platform, sw.ports, sw.power_profile) for sw in topo.switches.values()} == {
        ("dell_os6", 24, "pc6224")}
    with pytest.raises(TopologyError, match="port 4 is beyond switch sw0's 3 ports"):
        topology_from_data({"generate": {"kind": "mesh", "dims": [2, 2], "hosts_per_switch": 2},
                            "switch_defaults": {"ports": 3}})


def test_levels_count_up_from_the_leaves_in_both_tree_kinds():
    tree = gen(kind="tree", fanout=2, depth=3)
    assert tree.switches["sw0"].level == 3
    graph = tree.switch_graph()
    for sw in tree.switches.values():
        children = [n for n in graph.neighbors(sw.name) if tree.switches[n].level == sw.level - 1]
        assert len(children) == (2 if sw.level > 0 else 0)
    fat = gen(kind="fat_tree", u=2, d=4, r=2)
    assert {sw.level for sw in fat.switches.values()} == {0, 1, 2}
