"""The planes design and its plan (module_utils/nodes/planes.py,
docs/planes.md "Design" and "Plan"): per-plane subnets, the MAC table in
the PMCME paper's Table 2 form, the node network contract, and the checks
that name the field at fault."""

import ipaddress
import json
from pathlib import Path

import jsonschema
import pytest
from design_helpers import design_of, raised

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes import (
    load_design,
    plan_file,
    plan_planes,
)

SCHEMA = Path(__file__).resolve().parents[3] / "plugins" / "module_utils" / "nodes" / "schemas" / "node_network.v1.schema.json"


def design(**fields):
    return design_of({"kind": "planes", "nodes": 4, "ports": 4}, **fields)


def problems(spec):
    return raised(TopologyError, plan_planes, spec).problems


def test_every_plane_is_one_subnet_and_every_node_one_address_in_each():
    plan = plan_planes(design(nodes=6, ports=3, base_prefix="10.50.0.0/16"))
    subnets = [ipaddress.ip_network(plane["subnet"]) for plane in plan["planes"]]
    assert len(set(subnets)) == 3 and all(subnet.subnet_of(ipaddress.ip_network("10.50.0.0/16")) for subnet in subnets)
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])
    seen = set()
    for name, node in plan["nodes"].items():
        assert [nic["switch"] for nic in node["interfaces"]] == [plane["switch"] for plane in plan["planes"]]
        for plane, nic in enumerate(node["interfaces"]):
            address = ipaddress.ip_interface(nic["address"])
            assert address.network == subnets[plane]
            seen.add(address.ip)
        assert plan["node_planes"][name]["primary"]["address"] == node["interfaces"][0]["address"].split("/")[0]
    assert len(seen) == 6 * 3


def test_the_plan_follows_the_node_network_contract():
    plan = plan_planes(design(nodes=5, ports=2, mode="l4_multipath"))
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate({"nodes": plan["nodes"], "switches": plan["switches"]}, schema)
    for switch, entry in plan["switches"].items():
        assert len(entry["attached"]) == 5 <= entry["ports"]
        for node, nic in entry["attached"]:
            assert {"name": nic, "switch": switch}.items() <= next(
                i for i in plan["nodes"][node]["interfaces"] if i["name"] == nic).items()


def test_mac_table_sends_port_x_to_port_x_of_the_receiver():
    # Table 2: (master MAC of the destination, Eport X) -> new destination MAC,
    # the receiver's port-X MAC, which sits on the same switch as the sender's port X
    plan = plan_planes(design(nodes=4, ports=4))
    macs = {(name, port["port"]): port for name, entry in plan["node_planes"].items() for port in entry["ports"]}
    masters = {entry["primary"]["mac"]: name for name, entry in plan["node_planes"].items()}
    assert len(plan["mac_table"]) == 4 * 4
    assert len({(row["destination_node"], row["destination_port"]) for row in plan["mac_table"]}) == 16
    for row in plan["mac_table"]:
        receiver = masters[row["destination_node"]]
        port = macs[(receiver, row["destination_port"])]
        assert row["new_mac"] == port["mac"]
        assert port["switch"] == plan["planes"][row["destination_port"]]["switch"]
    every_mac = [port["mac"] for port in macs.values()]
    assert len(set(every_mac)) == len(every_mac)
    assert all(int(mac.split(":")[0], 16) & 0b11 == 0b10 for mac in every_mac)  # locally administered unicast


def test_modes_differ_only_in_routes_and_the_multipath_hash():
    plans = {mode: plan_planes(design(nodes=3, ports=2, mode=mode)) for mode in ("pmcme", "l4_multipath", "single")}
    assert all(node["routes"] == [] for node in plans["pmcme"]["nodes"].values())
    multipath = plans["l4_multipath"]["nodes"]["n0"]
    assert multipath["sysctls"]["net.ipv4.fib_multipath_hash_policy"] == 1
    assert [route["to"] for route in multipath["routes"]] == ["10.97.0.2/32", "10.97.0.3/32"]
    assert [hop["dev"] for hop in multipath["routes"][0]["nexthops"]] == ["e0", "e1"]
    assert [hop["via"] for hop in multipath["routes"][0]["nexthops"]] == ["10.97.0.2", "10.97.1.2"]
    assert plans["pmcme"]["mac_table"] == plans["single"]["mac_table"] == plans["l4_multipath"]["mac_table"]


def test_nodes_with_their_own_nics_and_speeds_per_port():
    spec = design(nodes=[{"name": "a", "interfaces": {"enp1s0": "plane1", "enp2s0": 0}}, "b"], ports=2,
                  speeds_mbps=[10000, 1000])
    plan = plan_planes(spec)
    assert [nic["name"] for nic in plan["nodes"]["a"]["interfaces"]] == ["enp2s0", "enp1s0"]
    assert plan["switches"]["plane1"]["attached"] == [["a", "enp1s0"], ["b", "e1"]]
    assert [port["speed_mbps"] for port in plan["node_planes"]["b"]["ports"]] == [10000, 1000]
    assert plan["summary"]["node_mbps"] == 11000
    assert plan_planes(plan["design"]) == plan  # the normalised design plans the same


@pytest.mark.parametrize("spec, field", [
    (design(kind="ring"), "kind:"),
    (design(nodes=1), "nodes:"),
    (design(ports=0), "ports:"),
    (design(ports=65), "ports:"),
    (design(nodes=49), "switch_ports:"),
    (design(nodes=10, switch_ports=[48, 8, 48, 48]), "switch_ports[1]:"),
    (design(speeds_mbps=[1000, 1000]), "speeds_mbps:"),
    (design(speeds_mbps=[1000, 0, 1000, 1000]), "speeds_mbps[1]:"),
    (design(base_prefix="10.97.0.0/23"), "base_prefix:"),
    (design(base_prefix="10.97.0.1/16"), "base_prefix:"),
    (design(nodes=40, switch_ports=64, plane_prefix_len=27), "plane_prefix_len:"),
    (design(interface_prefix="a-very-long-nic"), "interface_prefix:"),
    (design(nodes=["n0", "n0"]), "nodes[1].name:"),
    (design(nodes=["n0", "x" * 33]), "nodes[1].name:"),
    (design(nodes=[{"name": "a", "interfaces": {"eth0": 0, "eth1": 0, "eth2": 2, "eth3": 3}}, "b"]), "nodes[0].interfaces:"),
    (design(nodes=[{"name": "a", "interfaces": {"eth0": 0, "eth1": 9}}, "b"]), "nodes[0].interfaces.eth1:"),
    (design(nodes=[{"name": "a", "interfaces": {"a-nic-name-too-long": 0}}, "b"]), "nodes[0].interfaces:"),
    (design(mode="bonding"), "mode:"),
    (design(colour="red"), "unknown fields colour"),
])
def test_a_bad_design_is_refused_naming_the_field(spec, field):
    found = problems(spec)
    assert any(problem.startswith(field) for problem in found), found


def test_every_problem_is_reported_at_once():
    found = problems(design(kind="x", nodes=1, ports=0, mode="y"))
    assert {problem.split(":")[0] for problem in found} == {"kind", "nodes", "ports", "mode"}


def test_one_port_per_plane_names_the_plane_left_without_one():
    found = problems(design(nodes=[{"name": "a", "interfaces": {"eth0": 0, "eth1": 1}}, "b"], ports=3))
    assert found == ["nodes[0].interfaces: node a needs one port per plane: plane 2 (switch plane2) has none"]


def test_a_design_file_is_read_with_the_input_limits(tmp_path):
    good = tmp_path / "planes.yml"
    good.write_text("design:\n  kind: planes\n  nodes: 3\n  ports: 2\n")
    assert plan_file(str(good))["summary"]["nodes"] == 3
    twice = tmp_path / "twice.yml"
    twice.write_text("kind: planes\nnodes: 3\nnodes: 4\nports: 2\n")
    with pytest.raises(TopologyError, match=r"twice\.yml: not valid YAML: .*duplicate key 'nodes'"):
        load_design(str(twice))
    bomb = tmp_path / "bomb.yml"
    bomb.write_text("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        "%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n" % ((chr(98 + i), chr(98 + i)) + (chr(97 + i),) * 10)
        for i in range(8)))
    with pytest.raises(TopologyError, match="alias"):
        load_design(str(bomb))
    wrong = tmp_path / "list.yml"
    wrong.write_text("- planes\n")
    with pytest.raises(TopologyError, match=r"list\.yml: the design must be a mapping"):
        load_design(str(wrong))
    with pytest.raises(TopologyError, match=r"bad\.yml: kind:"):
        bad = tmp_path / "bad.yml"
        bad.write_text("kind: stack_ring\nnodes: 3\nports: 2\n")
        plan_file(str(bad))
