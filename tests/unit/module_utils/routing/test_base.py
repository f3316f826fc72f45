"""select_paths, RoutingFunction and down_set: shortest legal paths, turn
restrictions, load balancing over parallel links, table views, errors."""

import json

import networkx as nx
import numpy as np
import pytest
from routing_checks import assert_valid_path, channel_loads, gen, turns_of

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    ENGINES,
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
    RoutingFunction,
    down_set,
    select_paths,
    select_paths_many,
    turns,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import base
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


def line(count=3, hosts=None, down=()):
    """sw0 - sw1 - ... in a line, one host per switch unless ``hosts``."""
    switches = {"sw%d" % i: {} for i in range(count)}
    links = [{"a": "sw%d:%d" % (i, 11), "b": "sw%d:%d" % (i + 1, 12),
              "state": "down" if i in down else "up"} for i in range(count - 1)]
    hosts = hosts if hosts is not None else [1] * count
    host_entries, number = {}, 0
    for i, many in enumerate(hosts):
        for port in range(1, many + 1):
            number += 1
            host_entries["h%d" % number] = {"switch": "sw%d" % i, "port": str(port),
                                            "mac": "02:00:00:00:00:%02x" % number}
    return topology_from_data({"switches": switches, "links": links, "hosts": host_entries})


def dumbbell(copies=2):
    """sw0 and sw1 joined by ``copies`` parallel links; sw2, sw3 hang off
    sw0 and sw4, sw5 off sw1, so 9 switch pairs each way cross the middle."""
    links = [{"a": "sw0:%d" % (10 + i), "b": "sw1:%d" % (10 + i)} for i in range(copies)]
    links += [{"a": "sw0:2", "b": "sw2:2"}, {"a": "sw0:3", "b": "sw3:2"},
              {"a": "sw1:2", "b": "sw4:2"}, {"a": "sw1:3", "b": "sw5:2"}]
    return topology_from_data({"switches": {"sw%d" % i: {} for i in range(6)}, "links": links})


# ------------------------------------------------------------------ down_set
def test_down_set_accepts_indexes_ports_names_and_adds_file_down_links():
    topo = line(4, down=(2,))
    assert down_set(topo) == {2}
    assert down_set(topo, [0]) == {0, 2}
    assert down_set(topo, ["sw1:12"]) == {0, 2}
    assert down_set(topo, [topo.links[1].name]) == {1, 2}
    assert down_set(topo, topo.links[1]) == {1, 2}
    assert down_set(topo, np.array([1])) == {1, 2}
    assert down_set(topo, None) == {2}


@pytest.mark.parametrize("ref, named", [(7, "no link number 7"), ("sw9:1", "sw9:1"),
                                        ("sw0:1", "sw0:1")])
def test_down_set_rejects_unknown_links_by_name(ref, named):
    with pytest.raises(RoutingError, match=named) as info:
        down_set(line(3), [ref])
    assert isinstance(info.value, EtherclusterError)


# -------------------------------------------------------------- select_paths
def test_without_restrictions_every_path_is_a_shortest_one():
    topo = gen(kind="random", switches=20, degree=3, seed=4)
    routing = select_paths(topo, set(), "plain")
    distance = dict(nx.all_pairs_shortest_path_length(topo.switch_graph()))
    paths = routing.paths()
    assert len(paths) == 20 * 19
    for (src, dst), path in paths.items():
        assert_valid_path(topo, path, src, dst)
        assert len(path) == distance[src][dst]


def test_prohibited_turns_are_never_taken_and_paths_stay_shortest_legal():
    topo = gen(kind="mesh", dims=[3, 3])
    # Forbid every turn at the centre switch sw4: paths must go around it.
    centre = "sw4"
    prohibited = {(a.id, b.id) for a in topo.in_channels(centre) for b in topo.out_channels(centre)}
    routing = select_paths(topo, prohibited, "no-centre-turns")
    assert not turns_of(routing) & prohibited
    paths = routing.paths()
    for (src, dst), path in paths.items():
        assert_valid_path(topo, path, src, dst)
    # sw1 -> sw7 (straight through the centre) is now legal only around it.
    assert len(paths[("sw1", "sw7")]) == 4
    assert len(paths[("sw1", "sw4")]) == 1  # ending at the centre needs no turn there


def test_prohibited_turns_may_be_given_as_an_array():
    topo = gen(kind="mesh", dims=[3, 3])
    centre = "sw4"
    pairs = [(a.id, b.id) for a in topo.in_channels(centre) for b in topo.out_channels(centre)]
    as_set = select_paths(topo, set(pairs), "x")
    as_array = select_paths(topo, np.array(pairs), "x")
    assert np.array_equal(as_set.next_hop, as_array.next_hop)


def test_a_pair_without_legal_path_is_named():
    topo = line(3)
    into_sw1 = topo.channel_from("sw0", "11").id
    out_of_sw1 = topo.channel_from("sw1", "11").id
    with pytest.raises(RoutingError, match="myengine: no legal path from sw0 to sw2"):
        select_paths(topo, {(into_sw1, out_of_sw1)}, "myengine")


def test_down_links_are_avoided_and_a_cut_is_reported():
    topo = gen(kind="mesh", dims=[3, 3])
    routing = select_paths(topo, set(), "x", down=[0, "sw4:5"])
    avoided = down_set(topo, [0, "sw4:5"])
    assert routing.down == avoided
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst, avoided)
    with pytest.raises(RoutingError, match="no legal path"):
        select_paths(line(3), set(), "x", down=[1])


def test_file_down_links_are_avoided():
    topo = line(3, down=(1,))
    with pytest.raises(RoutingError, match="no legal path from sw[02] to sw[02]"):
        select_paths(topo, set(), "x")


def test_balancing_spreads_load_over_parallel_links():
    topo = dumbbell(copies=2)
    middle = [c for c in range(len(topo.channels)) if topo.channels[c].link in (0, 1)]
    balanced = channel_loads(select_paths(topo, set(), "x"))
    unbalanced = channel_loads(select_paths(topo, set(), "x", balance=False))
    # 9 pairs each way cross the middle: both links used, split 4 / 5 (frames
    # for one destination entering sw0 on different ports may part ways).
    assert sorted(balanced[c] for c in middle) == [4, 4, 5, 5]
    assert sorted(unbalanced[c] for c in middle) == [0, 0, 9, 9]


def test_balancing_uses_every_parallel_link_of_a_multi_link_torus():
    topo = gen(kind="torus", dims=[4, 4], links_per_neighbor=3)
    loads = channel_loads(select_paths(topo, set(), "x"))
    assert all(loads[c] > 0 for c in range(len(topo.channels)))
    assert max(loads.values()) <= 2 * min(loads.values())


def test_balancing_lowers_the_maximum_channel_load():
    topo = gen(kind="mesh", dims=[4, 4], links_per_neighbor=2)
    balanced = max(channel_loads(select_paths(topo, set(), "x")).values())
    unbalanced = max(channel_loads(select_paths(topo, set(), "x", balance=False)).values())
    assert balanced < unbalanced


def test_hosts_weight_the_balance():
    """Destinations count their hosts: behind the two parallel links
    sw0-sw1, sw1 has 8 hosts, sw2 and sw3 one each. The heavy destination
    gets a link to itself, the two light ones share the other (counting
    switches only, sw3 would tie and join sw1 on the lower link)."""
    hosts = {"h%d" % i: {"switch": "sw1", "port": str(i), "mac": "02:00:00:00:01:%02x" % i}
             for i in range(1, 9)}
    for number, switch in enumerate(("sw0", "sw2", "sw3")):
        hosts["x%d" % number] = {"switch": switch, "port": "1",
                                 "mac": "02:00:00:00:02:%02x" % (number + 1)}
    topo = topology_from_data({
        "switches": {"sw%d" % i: {} for i in range(4)},
        "links": [{"a": "sw0:10", "b": "sw1:10"}, {"a": "sw0:11", "b": "sw1:11"},
                  {"a": "sw1:12", "b": "sw2:10"}, {"a": "sw1:13", "b": "sw3:10"}],
        "hosts": hosts})
    routing = select_paths(topo, set(), "x")
    crossing = {dst: routing.path("sw0", dst)[0] for dst in ("sw1", "sw2", "sw3")}
    assert crossing["sw2"] == crossing["sw3"] != crossing["sw1"]


def candidate_turn_sets(topo, count, seed=0):
    """``count`` sets of prohibited turns that keep the fabric connected:
    nothing, then random samples of a tenth of the turns at one switch
    each (few enough that every pair keeps a legal path on these fabrics)."""
    rng = np.random.default_rng(seed)
    ins, outs = turns(topo)
    sets = [set()]
    for _unused in range(count - 1):
        picked = rng.choice(len(ins), size=max(1, len(ins) // 10), replace=False)
        sets.append({(int(ins[i]), int(outs[i])) for i in picked})
    return sets


@pytest.mark.parametrize("spec", [
    {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2, "hosts_per_switch": 2},
    {"kind": "mesh", "dims": [6, 6]},
    {"kind": "random", "switches": 40, "degree": 4, "seed": 3},
], ids=["torus-parallel", "mesh36", "random40"])
@pytest.mark.parametrize("balance", [True, 1, False])
def test_select_paths_many_routes_each_set_as_select_paths_alone(spec, balance, monkeypatch):
    """Sets routed side by side (a search's candidates) get exactly the
    tables each gets alone, with or without the distance and level caches."""
    topo = gen(**spec)
    sets = candidate_turn_sets(topo, 5)
    down = [1]
    alone = []
    for prohibited in sets:
        try:
            alone.append(select_paths(topo, prohibited, "x", down=down, balance=balance).next_hop)
        except RoutingError:
            alone.append(None)
    usable = [s for s, table in zip(sets, alone) if table is not None]
    expected = [table for table in alone if table is not None]
    assert len(usable) >= 3
    together = select_paths_many(topo, usable, "x", down=down, balance=balance)
    assert [r.next_hop.tolist() for r in together] == [t.tolist() for t in expected]
    assert all(r.down == frozenset({1}) for r in together)
    monkeypatch.setattr(base, "DISTANCE_CACHE_CELLS", 0)
    monkeypatch.setattr(base, "LEVEL_CACHE_CELLS", 0)
    uncached = select_paths_many(topo, usable, "x", down=down, balance=balance)
    assert [r.next_hop.tolist() for r in uncached] == [t.tolist() for t in expected]


def test_select_paths_many_names_a_set_without_a_legal_path():
    topo = line(3)
    into_sw1 = next(c.id for c in topo.channels if c.src == "sw0" and c.dst == "sw1")
    out_of_sw1 = next(c.id for c in topo.channels if c.src == "sw1" and c.dst == "sw2")
    with pytest.raises(RoutingError, match="no legal path from sw0 to sw2"):
        select_paths_many(topo, [set(), {(into_sw1, out_of_sw1)}], "myengine")
    assert select_paths_many(line(1), [set(), set()], "x")[1].next_hop.shape == (1, 1)


@pytest.mark.parametrize("balance", ["yes", -1, 99, 1.5])
def test_bad_balance_option_is_refused(balance):
    with pytest.raises(RoutingError, match="balance"):
        select_paths(line(3), set(), "x", balance=balance)


def test_single_switch_fabric_has_no_paths():
    topo = gen(kind="tree", fanout=2, depth=0)
    routing = select_paths(topo, set(), "x")
    assert routing.paths() == {}
    assert routing.next_hop.shape == (1, 1)


def test_turns_lists_every_non_u_turn_between_usable_channels():
    topo = gen(kind="mesh", dims=[3, 3], links_per_neighbor=2)
    ins, outs = turns(topo, down=[0])
    listed = set(zip(ins.tolist(), outs.tolist()))
    expected = {(a.id, b.id) for sw in topo.switches
                for a in topo.in_channels(sw, {0}) for b in topo.out_channels(sw, {0})
                if b.id != a.id ^ 1}
    assert listed == expected


# ----------------------------------------------------------- RoutingFunction
@pytest.fixture(scope="module")
def mesh_routing():
    return compute_routing(gen(kind="mesh", dims=[3, 4], links_per_neighbor=2,
                               hosts_per_switch=2), "updown")


def test_table_holds_exactly_the_states_paths_use(mesh_routing):
    routing = mesh_routing
    n = len(routing.switch_names)
    used = set()
    for (src, dst), path in routing.paths().items():
        t = routing.index[dst]
        states = [routing.index[src]] + [n + c for c in path[:-1]]
        for state, channel in zip(states, path):
            assert routing.next_hop[state, t] == channel
            used.add((state, t))
    entries = set(zip(*(a.tolist() for a in np.nonzero(routing.next_hop >= 0))))
    assert entries == used
    assert routing.next_hop.dtype == np.int32
    assert routing.next_hop.shape == (n + len(routing.topology.channels), n)


def test_next_channel_follows_the_table(mesh_routing):
    routing = mesh_routing
    path = routing.path("sw0", "sw11")
    assert routing.next_channel("sw0", None, "sw11") == path[0]
    here = routing.topology.channels[path[0]].dst
    assert routing.next_channel(here, path[0], "sw11") == path[1]
    last = routing.topology.channels[path[-1]]
    assert routing.next_channel(last.dst, path[-1], "sw11") is None
    assert routing.next_channel("sw0", None, "sw0") is None
    with pytest.raises(RoutingError, match="does not enter switch sw0"):
        routing.next_channel("sw0", path[0], "sw11")
    with pytest.raises(RoutingError, match="'nope' is not a switch"):
        routing.next_channel("nope", None, "sw1")
    with pytest.raises(RoutingError, match="'sw99' is not a switch"):
        routing.path("sw0", "sw99")
    assert routing.path("sw3", "sw3") == []


def test_tables_reproduce_every_path(mesh_routing):
    routing = mesh_routing
    topo = routing.topology
    tables = routing.tables()
    assert set(tables) == set(routing.switch_names)
    for (src, dst), path in routing.paths().items():
        at, port = src, "host"
        walked = []
        while at != dst:
            out_port = tables[at][port][dst]
            channel = topo.channel_from(at, out_port)
            walked.append(channel.id)
            at, port = channel.dst, channel.dst_port
        assert walked == path
    # no entry for a destination at the switch itself, none unused
    entries = sum(len(dests) for inputs in tables.values() for dests in inputs.values())
    assert entries == int((routing.next_hop >= 0).sum())


def test_to_data_is_json_and_carries_engine_options_and_tables(mesh_routing):
    data = json.loads(json.dumps(mesh_routing.to_data()))
    assert data["engine"] == "updown"
    assert data["options"]["root"] in mesh_routing.switch_names
    assert data["tables"] == mesh_routing.tables()
    assert data["down"] == [] and data["blocked"] == []


def test_broken_hand_made_tables_are_reported_by_path():
    topo = line(3)
    n, C = 3, len(topo.channels)
    table = np.full((n + C, n), -1, dtype=np.int32)
    first = topo.channel_from("sw0", "11").id
    table[0, 2] = first  # sw0 -> sw1, then nothing
    routing = RoutingFunction(topo, "hand", table)
    with pytest.raises(RoutingError, match="no route from sw0 to sw2: the table has no entry"):
        routing.path("sw0", "sw2")
    table[n + first, 2] = first ^ 1  # bounce back to sw0 ... and again: a loop
    table[n + (first ^ 1), 2] = first
    with pytest.raises(RoutingError, match="loops"):
        RoutingFunction(topo, "hand", table).path("sw0", "sw2")
    table[0, 2] = topo.channel_from("sw1", "11").id  # leaves sw1, not sw0
    with pytest.raises(RoutingError, match="does not leave the switch"):
        RoutingFunction(topo, "hand", table).path("sw0", "sw2")
    with pytest.raises(RoutingError, match="shape"):
        RoutingFunction(topo, "hand", table[:3])


# ------------------------------------------------------------------ registry
def test_registry_lists_every_engine_and_refuses_unknown_ones():
    assert set(ENGINES) == {"dor", "west_first", "north_last", "negative_first", "updown",
                            "tbtp", "stp", "segment"}
    with pytest.raises(RoutingError, match="unknown routing engine 'ospf'.*dor.*updown"):
        compute_routing(line(3), "ospf")


@pytest.mark.parametrize("engine", ["dor", "west_first", "north_last", "negative_first",
                                    "updown", "stp"])
def test_engines_record_their_name_and_refuse_unknown_options(engine):
    topo = gen(kind="mesh", dims=[3, 3])
    assert compute_routing(topo, engine).engine == engine
    with pytest.raises(RoutingError, match="%s: unknown option 'colour'" % engine):
        compute_routing(topo, engine, colour="blue")


def test_compute_routing_wants_a_topology():
    with pytest.raises(RoutingError, match="updown: expected a Topology .*got dict"):
        compute_routing({"generate": {"kind": "mesh", "dims": [2, 2]}}, "updown")
