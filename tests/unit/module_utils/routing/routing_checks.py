"""Independent checks shared by the routing engine tests (not a test file)."""

import collections

import networkx as nx

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


def gen(**spec):
    return topology_from_data({"generate": spec})


def channel_loads(routing):
    """Ordered switch pairs per channel, counted from paths()."""
    return collections.Counter(c for path in routing.paths().values() for c in path)


def assert_valid_path(topology, path, src, dst, avoided=()):
    """Channels chain from src to dst, never over an avoided link, no U-turn."""
    at = src
    for i, channel_id in enumerate(path):
        channel = topology.channels[channel_id]
        assert channel.src == at, (src, dst, path)
        assert channel.link not in avoided, (src, dst, channel)
        if i:
            assert channel_id != path[i - 1] ^ 1, ("U-turn", src, dst, path)
        at = channel.dst
    assert at == dst, (src, dst, path)


def allowed_turn_graph(topology, prohibited, avoided=()):
    """Channels as nodes, every turn a frame may make (not prohibited, no
    U-turn, usable links only) as edges. Acyclic = every routing that only
    uses these turns is deadlock-free."""
    forbidden = {(int(a), int(b)) for a, b in prohibited}
    avoided = set(avoided) | topology.down_links()
    graph = nx.DiGraph()
    for switch in topology.switches:
        for into in topology.in_channels(switch, avoided):
            graph.add_node(into.id)
            for out in topology.out_channels(switch, avoided):
                if out.id != into.id ^ 1 and (into.id, out.id) not in forbidden:
                    graph.add_edge(into.id, out.id)
    return graph


def turns_of(routing):
    """Every consecutive (in, out) channel pair on the routing's paths."""
    result = set()
    for path in routing.paths().values():
        result.update(zip(path, path[1:]))
    return result
