"""Fabrics and strategies shared by test_segment.py and test_tbtp.py (not a test file)."""

import networkx as nx
from hypothesis import strategies as st
from routing_checks import allowed_turn_graph

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


def build(spec):
    """The fabric of a drawn spec; when the generator cannot make it (too
    many faults for a sparse fabric, no connected random 2-regular graph),
    the same spec without faults, then with degree 3."""
    try:
        return topology_from_data({"generate": spec})
    except TopologyError:
        spec = {key: value for key, value in spec.items() if key != "faults"}
    try:
        return topology_from_data({"generate": spec})
    except TopologyError:
        return topology_from_data({"generate": dict(spec, degree=3)})


def explicit(names, pairs, down=()):
    """An explicit fabric: switches ``names`` (in id order), one link per
    pair in ``pairs`` (link id = position), ports numbered per switch;
    links whose index is in ``down`` have state down."""
    port = {name: 0 for name in names}
    links = []
    for index, (a, b) in enumerate(pairs):
        port[a] += 1
        port[b] += 1
        links.append({"a": "%s:%d" % (a, port[a]), "b": "%s:%d" % (b, port[b]),
                      "state": "down" if index in down else "up"})
    return topology_from_data({"switches": {name: {} for name in names}, "links": links})


def turn_graph_is_acyclic(topology, prohibited, down=()):
    return nx.is_directed_acyclic_graph(allowed_turn_graph(topology, prohibited, down))


@st.composite
def fabric_specs(draw, max_random=40):
    """A small generator spec of any kind, sometimes with random faults."""
    # Irregular fabrics and tori carry the most cycles: drawn more often.
    kind = draw(st.sampled_from(["mesh", "torus", "torus", "fat_tree", "myri_clos", "complete",
                                 "tree", "m_tree", "random", "random", "random"]))
    if kind in ("mesh", "torus"):
        spec = {"dims": draw(st.lists(st.integers(2, 5), min_size=1, max_size=2)),
                "links_per_neighbor": draw(st.integers(1, 2))}
    elif kind == "fat_tree":
        u, d, r = draw(st.sampled_from([(2, 4, 1), (2, 4, 2), (1, 3, 2), (2, 2, 2), (3, 3, 1)]))
        spec = {"u": u, "d": d, "r": r, "links_per_neighbor": draw(st.integers(1, 2))}
    elif kind == "myri_clos":
        spec = {"dims": [draw(st.integers(1, 4)), draw(st.integers(1, 4))],
                "links_per_neighbor": draw(st.integers(1, 2))}
    elif kind == "complete":
        spec = {"switches": draw(st.integers(2, 6)), "links_per_pair": draw(st.integers(1, 3))}
    elif kind == "tree":
        spec = {"fanout": draw(st.integers(1, 3)), "depth": draw(st.integers(0, 3)),
                "width": draw(st.integers(1, 2))}
    elif kind == "m_tree":
        spec = {"dims": [draw(st.integers(2, 4)), draw(st.integers(2, 4))]}
    else:
        switches = draw(st.integers(4, max_random))
        spec = {"switches": switches, "degree": draw(st.integers(2, min(4, switches - 1))),
                "seed": draw(st.integers(0, 10000))}
    spec["kind"] = kind
    if kind not in ("tree", "m_tree") and draw(st.booleans()):
        spec["faults"] = draw(st.sampled_from([0.05, 0.1, 0.2]))
        spec["seed"] = draw(st.integers(0, 10000))
    return spec
