"""The routing_tables filter: topology in (data, file or model), tables out,
every problem as an AnsibleFilterError with the routing layer's message."""

import jinja2
import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.ethercluster.routing.plugins.filter.routing import (
    FilterModule,
    routing_tables,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

MESH = {"generate": {"kind": "mesh", "dims": [3, 3]}}


def deliver(data, topology, src, dst):
    """Follow the returned tables from src's host port to dst; return the
    switches visited (fails on a loop or a missing entry)."""
    at, port, visited = src, "host", [src]
    while at != dst:
        out_port = data["tables"][at][port][dst]
        channel = topology.channel_from(at, out_port)
        at, port = channel.dst, channel.dst_port
        visited.append(at)
        assert len(visited) <= len(topology.switches) * 4, "forwarding loop"
    return visited


def test_tables_deliver_every_pair_of_a_generated_mesh():
    data = routing_tables(MESH, "dor")
    topology = topology_from_data(MESH)
    assert data["engine"] == "dor"
    assert data["switches"] == topology.switch_names()
    for src in topology.switches:
        for dst in topology.switches:
            if src != dst:
                visited = deliver(data, topology, src, dst)
                coords = [topology.switches[s].coords for s in (src, dst)]
                # dimension order is minimal: Manhattan distance hops
                assert len(visited) - 1 == sum(abs(a - b) for a, b in zip(*coords))


def test_topology_from_a_file_or_a_model(tmp_path):
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(MESH))
    topology = topology_from_data(MESH)
    from_file = routing_tables(str(path), "updown")
    from_model = routing_tables(topology, "updown")
    assert from_file == from_model == routing_tables(MESH, "updown")


def test_down_links_root_and_options_reach_the_engine():
    topology = topology_from_data(MESH)
    link = topology.link("sw0:2")
    data = routing_tables(MESH, "updown", down_links=["sw0:2"], root="sw4",
                          engine_options={"balance": False})
    assert link.index in data["down"]
    assert data["options"]["root"] == "sw4"
    assert data["options"]["balance"] is False
    ends = {(link.a.switch, link.a.port), (link.b.switch, link.b.port)}
    for switch, table in data["tables"].items():
        for entries in table.values():
            assert not any((switch, port) in ends for port in entries.values())
    # a single link may be given without a list
    assert routing_tables(MESH, "updown", down_links="sw0:2")["down"] == data["down"]


def test_filter_module_exposes_the_filter_to_jinja():
    assert FilterModule().filters() == {"routing_tables": routing_tables}
    env = jinja2.Environment()
    env.filters.update(FilterModule().filters())
    rendered = env.from_string(
        "{{ (topo | routing_tables('stp', root='sw0')).blocked | length }}").render(topo=MESH)
    # a 3x3 mesh has 12 links and a spanning tree of 9 switches keeps 8
    assert rendered == "4"


@pytest.mark.parametrize("call, message", [
    (lambda: routing_tables(MESH, "ospf"), r"unknown routing engine 'ospf' \(engines: .*segment"),
    (lambda: routing_tables({"generate": {"kind": "mesh", "dims": [1]}}, "dor"), "generate.dims"),
    (lambda: routing_tables({"switches": {}}, "dor"), "switches: must be a non-empty mapping"),
    (lambda: routing_tables("/nonexistent/fabric.yml", "dor"), "cannot read the file"),
    (lambda: routing_tables(["sw0"], "dor"), "must be topology data.*got list"),
    (lambda: routing_tables(MESH, "dor", down_links=["sw0:77"]), "sw0:77"),
    (lambda: routing_tables(MESH, "updown", root="sw99"), "root='sw99' is not a switch"),
    (lambda: routing_tables(MESH, "dor", seed=3), "unknown option 'seed'"),
    (lambda: routing_tables(MESH, "updown", root="sw1", engine_options={"root": "sw2"}),
     "root is given twice"),
    (lambda: routing_tables(MESH, "dor", engine_options=["balance"]),
     "engine_options must be a mapping"),
    (lambda: routing_tables(MESH, "dor", engine_options={"down": [1]}),
     "engine_options.down is not an engine"),
])
def test_problems_are_filter_errors_naming_the_cause(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()
