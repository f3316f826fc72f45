"""Property test: no input makes topology loading raise anything but a
clean TopologyError (no Python traceback reaches a user)."""

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.generators import KINDS
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    Topology,
    load_topology,
    parse_yaml,
    topology_from_data,
)

VALID = {
    "name": "t",
    "switch_defaults": {"ports": 8},
    "switches": {"sw0": {"platform": "ovs"}, "sw1": {"max_vlans": 16}, "sw2": {}},
    "links": [{"a": "sw0:5", "b": "sw1:5"}, {"a": "sw1:6", "b": "sw2:5", "speed_mbps": 100},
              {"a": "sw2:6", "b": "sw0:6", "state": "down"}],
    "hosts": {"h0": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01"},
              "h1": {"switch": "sw2", "port": 2, "mac": "02:00:00:00:00:02", "ip": "192.0.2.2"}},
}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-5, max_value=70000),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["sw0", "sw1", "sw0:5", "sw1:5", "sw9:1", "sw0:0", "sw0:x", "02:00:00:00:00:01",
                     "ff:ff:ff:ff:ff:ff", "up", "down", "mesh", "torus", "1", "25", ":", "sw0:"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(st.text(max_size=6), scalars),
                                               children, max_size=4)),
    max_leaves=12,
)
FIELDS = ["name", "switch_defaults", "switches", "links", "hosts", "generate", "shape",
          "platform", "ports", "mac_table_size", "max_vlans", "mgmt_address", "coords",
          "a", "b", "speed_mbps", "state", "switch", "port", "mac", "ip", "kind", "dims",
          "u", "d", "r", "root", "degree", "seed", "faults", "hosts_per_switch",
          "links_per_neighbor", "links_per_pair", "fanout", "depth", "width"]


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, prefix + (index,))


def _mutate(data, path, value, delete):
    data = copy.deepcopy(data)
    if not path:
        return value
    target = data
    for step in path[:-1]:
        target = target[step]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


def _load_cleanly(data):
    try:
        result = topology_from_data(data, "prop.yml")
    except TopologyError as exc:
        assert str(exc).startswith("prop.yml: ")
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        return None
    assert isinstance(result, Topology)
    return result


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_explicit_topologies_never_crash(data):
    paths = list(_paths(VALID))
    path = data.draw(st.sampled_from(paths))
    delete = bool(path) and data.draw(st.booleans())
    value = data.draw(values)
    mutated = _mutate(VALID, path, value, delete)
    if data.draw(st.booleans()):
        extra_key = data.draw(st.sampled_from(FIELDS))
        if isinstance(mutated, dict):
            mutated[extra_key] = data.draw(values)
    _load_cleanly(mutated)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.one_of(st.sampled_from(KINDS), scalars),
       spec=st.dictionaries(st.sampled_from(FIELDS), st.one_of(
           st.integers(min_value=-2, max_value=12), st.lists(st.integers(-1, 6), max_size=4),
           st.floats(min_value=-1, max_value=1.5), scalars), max_size=5))
def test_generator_specs_never_crash(kind, spec):
    spec = dict(spec, kind=kind)
    topo = _load_cleanly({"generate": spec})
    if topo is not None:
        assert topo.switches and len(topo.channels) == 2 * len(topo.links)


@settings(max_examples=300, deadline=None)
@given(values)
def test_arbitrary_documents_never_crash(document):
    _load_cleanly(document)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_yaml_text_never_crashes(text):
    try:
        data = parse_yaml(text, "prop.yml")
    except TopologyError as exc:
        assert str(exc).startswith("prop.yml: not valid YAML")
        return
    _load_cleanly(data)


def test_yaml_text_of_a_valid_file_with_a_broken_line(tmp_path):
    lines = yaml.safe_dump(VALID, sort_keys=False).splitlines()
    for index in range(len(lines)):
        broken = list(lines)
        broken[index] = broken[index][: len(broken[index]) // 2]
        path = tmp_path / ("broken%d.yml" % index)
        path.write_text("\n".join(broken) + "\n")
        try:
            load_topology(path)
        except TopologyError as exc:
            assert str(exc).startswith(str(path))
