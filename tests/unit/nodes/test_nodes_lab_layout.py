"""lab/nodes_lab.py, the pure part: the layout of a host-routed plan's lab
(switch ports in the order of attached, one veth per NIC), the plan's steps,
the inventory, refusals naming the switch/node/NIC; the probes the
verification sends; the scenarios' plan files equal their generator."""

from __future__ import annotations

import os

import pytest
import yaml
from stack_fixture import mesh, ring

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import nodes_lab
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.plan import Command, LabError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_layout_cables_every_nic_to_its_switch_port():
    layout = nodes_lab.nodes_layout(ring(4, 3), "stackring")
    assert layout["switches"]["ssb1"]["netns"] == "ec-stackring-ssb1"
    assert layout["switches"]["ssb1"]["ports"]["p1"] == {"node": "s1n0", "nic": "east"}
    assert len(layout["switches"]["ssb1"]["ports"]) == 6
    assert layout["nodes"]["s1n0"]["nics"] == [{"name": "east", "switch": "ssb1"}, {"name": "west", "switch": "ssb0"}]
    assert len(nodes_lab.all_netns(layout)) == 4 + 12


def test_plan_creates_each_cable_inside_its_namespaces_and_bridges_the_ports():
    layout = nodes_lab.nodes_layout(mesh(3), "stackmesh", speed_mbps=100)
    phases = {phase.name: phase for phase in nodes_lab.up_phases(layout)}
    assert list(phases) == ["files", "namespaces", "ipv6-off", "cables", "interfaces"]
    cables = phases["cables"].jobs[0][0].input.splitlines()
    assert len(cables) == 36
    assert "link add name p1 netns ec-stackmesh-x0_0 type veth peer name west netns ec-stackmesh-g0_0" in cables
    switch_job = next(job for job in phases["interfaces"].jobs if job[0].argv[2] == "ec-stackmesh-x0_0")
    lines = switch_job[0].input.splitlines()
    assert "link add br0 type bridge stp_state 0 mcast_snooping 0" in lines
    assert "link set p2 master br0" in lines
    assert "rate 100mbit" in switch_job[1].input
    node_off = [job[0] for job in phases["ipv6-off"].jobs if job[0].netns == "ec-stackmesh-g1_1"][0]
    assert isinstance(node_off, Command) and "net.ipv4.icmp_ratelimit=0" in node_off.argv


def test_inventory_names_every_node_with_its_namespace():
    layout = nodes_lab.nodes_layout(ring(4, 2), "nodestest")
    inventory = yaml.safe_load(nodes_lab.inventory_yaml(layout))
    hosts = inventory["all"]["children"]["nodes"]["hosts"]
    assert sorted(hosts) == sorted(ring(4, 2)["nodes"])
    assert hosts["s2n1"]["ethercluster_lab_netns"] == "ec-nodestest-s2n1"
    assert inventory["all"]["vars"]["ethercluster_lab_dir"] == "/run/ethercluster-lab/nodestest"


@pytest.mark.parametrize("change, message", [
    (lambda p: p["switches"]["ssb0"]["attached"].append(["s1n0", "east"]), "switch ssb1: s1n0 east is already cabled to switch ssb0"),
    (lambda p: p["switches"]["ssb0"]["attached"].remove(["s0n0", "east"]), "node s0n0: NIC east is in no switch"),
    (lambda p: p["switches"]["ssb0"]["attached"].append(["s9n9", "east"]), "attached s9n9 east is not a NIC"),
    (lambda p: p["switches"].update(s0n0={"attached": []}), "s0n0 names both a node and a switch"),
    (lambda p: p["nodes"]["s0n0"]["interfaces"].append({"name": "lo", "address": "10.0.0.1/8"}), "interface name 'lo'"),
])
def test_bad_plans_are_refused_naming_the_culprit(change, message):
    plan = ring(4, 2)
    change(plan)
    with pytest.raises(LabError, match=message):
        nodes_lab.nodes_layout(plan, "nodestest")


def test_probes_allow_exactly_the_planned_forwards_and_name_each_gateway():
    probes = nodes_lab.probes(ring(4, 3)["nodes"])
    reply = [p for p in probes if p["src"] == "s1n1" and p["dst"] == "10.10.3.2" and p["expect"] == "reply"][0]
    # stage 3's East address: out of the West NIC through node 1 of stage 0, and back the same way
    assert reply["ttl"] == 2 and reply["back"] == [1] and reply["forwarders"] == ["s0n1"]
    hop = [p for p in probes if p["src"] == "s1n1" and p["dst"] == "10.10.3.2" and p["expect"] == "exceeded"]
    assert hop == [{"src": "s1n1", "dst": "10.10.3.2", "owner": "s3n1", "ttl": 1, "expect": "exceeded", "at": ["s0n1"]}]
    assert len([p for p in probes if p["expect"] == "reply"]) == 12 * 22


@pytest.mark.parametrize("scenario, forwards", [("stack_ring4x3", 1), ("stack_mesh3x3", 2)])
def test_the_scenarios_plans_build_labs_and_probes(scenario, forwards):
    """What plan_stack makes of the molecule scenarios' designs is what this
    lab, its verification and the role's checks take: the schema, a layout,
    every node's entry, probes (at most the paper's forwards: 1 in a
    4-stage ring, 2 in a 3 x 3 mesh, X then Y)."""
    import json

    import jsonschema

    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import linux_network
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack import plan_stack
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_design import validate_design

    with open(os.path.join(ROOT, "extensions", "molecule", scenario, "files", "design.yml"), encoding="utf-8") as handle:
        plan = plan_stack(validate_design(yaml.safe_load(handle)["design"]))
    schema = os.path.join(os.path.dirname(linux_network.__file__), "schemas", "node_network.v1.schema.json")
    with open(schema, encoding="utf-8") as handle:
        jsonschema.validate({"nodes": plan["nodes"], "switches": plan["switches"]}, json.load(handle))
    for name, entry in plan["nodes"].items():
        linux_network.check_node(name, entry)
    layout = nodes_lab.nodes_layout(plan, "nodestest")
    assert sum(len(sw["ports"]) for sw in layout["switches"].values()) == \
        sum(len(entry["interfaces"]) for entry in plan["nodes"].values())
    replies = [probe for probe in nodes_lab.probes(plan["nodes"]) if probe["expect"] == "reply"]
    assert max(probe["ttl"] - 1 for probe in replies) == forwards
