"""Property: on any generated fabric (every generator kind, random seeds,
random faults and down links), every engine of this package either returns
a routing that connects all pairs, avoids the down links and has an acyclic
CDG, or raises RoutingError with a reason -- never anything else."""

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from routing_checks import assert_valid_path

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (
    compute_routing,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingError,
    down_set,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

ENGINES = ["dor", "west_first", "north_last", "negative_first", "updown", "stp"]

small_dims = st.lists(st.integers(2, 4), min_size=1, max_size=3)
specs = st.one_of(
    st.builds(lambda d, copies: {"kind": "mesh", "dims": d, "links_per_neighbor": copies},
              small_dims, st.integers(1, 2)),
    st.builds(lambda d, copies: {"kind": "torus", "dims": d, "links_per_neighbor": copies},
              st.lists(st.integers(2, 5), min_size=1, max_size=2), st.integers(1, 2)),
    st.builds(lambda u, r: {"kind": "fat_tree", "u": u, "d": 4, "r": r},
              st.sampled_from([1, 2, 4]), st.integers(1, 2)),
    st.builds(lambda a, b: {"kind": "myri_clos", "dims": [a, b]},
              st.integers(1, 3), st.integers(1, 3)),
    st.builds(lambda n, copies: {"kind": "complete", "switches": n, "links_per_pair": copies},
              st.integers(2, 6), st.integers(1, 2)),
    st.builds(lambda f, d, w: {"kind": "tree", "fanout": f, "depth": d, "width": w},
              st.integers(1, 3), st.integers(0, 2), st.integers(1, 2)),
    st.builds(lambda d: {"kind": "m_tree", "dims": d},
              st.lists(st.integers(2, 4), min_size=2, max_size=2)),
    st.builds(lambda n, g, s: {"kind": "random", "switches": n, "degree": g, "seed": s},
              st.integers(4, 20), st.integers(2, 4), st.integers(0, 10 ** 6)),
)


# Grids the grid engines can route, so they are exercised, not only refusing.
meshes_2d = st.builds(
    lambda x, y, copies: {"kind": "mesh", "dims": [x, y], "links_per_neighbor": copies},
    st.integers(2, 5), st.integers(2, 5), st.integers(1, 2))
tori_2_links = st.builds(lambda d: {"kind": "torus", "dims": d, "links_per_neighbor": 2},
                         st.lists(st.integers(2, 5), min_size=1, max_size=3))
FAVOURITES = {"dor": st.one_of(meshes_2d, tori_2_links), "west_first": meshes_2d,
              "north_last": meshes_2d, "negative_first": meshes_2d}


@st.composite
def fabrics(draw, engine):
    favourite = FAVOURITES.get(engine)
    use_favourite = favourite is not None and draw(st.integers(0, 2)) > 0
    spec = dict(draw(favourite if use_favourite else specs))
    spec["hosts_per_switch"] = draw(st.integers(0, 2))
    if draw(st.integers(0, 3)) == 0:
        spec["faults"] = draw(st.integers(1, 3))
        spec["seed"] = spec.get("seed", draw(st.integers(0, 1000)))
    try:
        topo = topology_from_data({"generate": spec})
    except TopologyError:
        assume(False)
    links = len(topo.links)
    down = draw(st.lists(st.integers(0, max(links - 1, 0)), max_size=min(links, 2), unique=True)) \
        if links else []
    return topo, down


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_engine_routes_correctly_or_refuses_with_a_reason(engine, data):
    topo, down = data.draw(fabrics(engine))
    try:
        routing = compute_routing(topo, engine, down=down)
    except RoutingError as exc:
        event("refused: %s" % str(exc).split(":")[1].split(";")[0].strip()[:40])
        assert str(exc).startswith(engine + ":")
        assert len(str(exc)) > len(engine) + 20
        return
    event("routed %s" % ("with down links" if down else "without down links"))
    report = verify_routing(routing)
    assert report["ok"], report
    avoided = down_set(topo, down)
    assert routing.down >= avoided
    for (src, dst), path in routing.paths().items():
        assert_valid_path(topo, path, src, dst, avoided)
