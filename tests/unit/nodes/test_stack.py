"""The Stack-Ring/Stack-Mesh plan (module_utils/nodes/stack.py, docs/stack.md):
the design's validation naming the field, the paper's address plan (section
3.3/3.4), Table 1's forwarding table, gateway balancing, the extra
forwarder, the node network contract's schema, and the walk that proves
every address is reached in the fewest forwards (and fails on a broken plan)."""

import copy
import ipaddress
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
from design_helpers import design_of, raised

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack import (
    expected_forwards,
    plan_stack,
    trace,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_design import (
    StackDesignError,
    load_design,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_walk import prove

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "plugins" / "module_utils" / "nodes" / "schemas"
                     / "node_network.v1.schema.json").read_text())


def ring(**fields):
    return design_of({"kind": "stack_ring", "stages": 4, "nodes_per_stage": 3}, **fields)


def mesh(**fields):
    return design_of({"kind": "stack_mesh", "groups": 3, "nodes_per_group": 3}, **fields)


def refused(design):
    return str(raised(StackDesignError, plan_stack, design))


def test_ring_addresses_follow_the_paper_with_the_west_half_moved_up():
    plan = plan_stack(ring())
    for i in range(4):
        for x in range(3):
            east, west = plan["nodes"]["s%dn%d" % (i, x)]["interfaces"]
            assert (east["name"], east["switch"], east["address"]) == ("east", "ssb%d" % i, "10.10.%d.%d/24" % (i, x + 1))
            assert (west["name"], west["switch"], west["address"]) == (
                "west", "ssb%d" % ((i - 1) % 4), "10.10.%d.%d/24" % ((i - 1) % 4, 128 + x))
    assert plan["subnets"] == {"ssb%d" % j: "10.10.%d.0/24" % j for j in range(4)}


def test_stage_1_of_4_has_table_1():
    rows = plan_stack(ring())["forwarding_table"]["stage 1"]
    assert [(row["network"], row["interface"], row["gateway"]) for row in rows] == [
        ("10.10.0.0/24", "west", "connected"),
        ("10.10.1.0/24", "east", "connected"),
        ("10.10.2.0/24", "east", "10.10.1.128 + x"),   # node x of stage 2, its West NIC
        ("10.10.3.0/24", "west", "10.10.0.1 + x"),     # node x of stage 0, its East NIC
    ]


def test_node_x_forwards_through_node_x_of_the_neighbouring_stages():
    plan = plan_stack(ring(stages=6, nodes_per_stage=4))
    owner = {nic["address"].split("/")[0]: name for name, node in plan["nodes"].items() for nic in node["interfaces"]}
    for name, node in plan["nodes"].items():
        stage, rank = name[1:].split("n")
        for route in node["routes"]:
            gateway = owner[route["via"]]
            assert gateway.endswith("n" + rank)
            assert int(gateway[1:].split("n")[0]) == (int(stage) + (1 if route["dev"] == "east" else -1)) % 6
    transit = plan["checks"]["transit"]
    for stage in range(6):
        assert len({transit["s%dn%d" % (stage, x)] for x in range(4)}) == 1  # balanced


def test_extra_forwarder_carries_all_forwarding():
    plan = plan_stack(ring(stages=4, nodes_per_stage=2, extra_forwarder=True))
    assert sorted(plan["nodes"]) == sorted("s%d%s" % (i, s) for i in range(4) for s in ("n0", "n1", "f"))
    forwarders = {nic["address"].split("/")[0] for i in range(4) for nic in plan["nodes"]["s%df" % i]["interfaces"]}
    for name, node in plan["nodes"].items():
        assert node["forwarding"] == name.endswith("f")
        assert all(route["via"] in forwarders for route in node["routes"])
    assert plan["checks"]["passed"]
    assert {name for name, count in plan["checks"]["transit"].items() if count} == {"s%df" % i for i in range(4)}


@pytest.mark.parametrize("design", [ring(stages=s, nodes_per_stage=n) for s in range(2, 10) for n in (1, 3)]
                         + [ring(stages=5, nodes_per_stage=2, extra_forwarder=True)]
                         + [mesh(groups=[w, h], nodes_per_group=2) for w in range(2, 6) for h in range(2, 6)]
                         + [mesh(groups=4, nodes_per_group=1, extra_forwarder=True)],
                         ids=lambda d: json.dumps(d, sort_keys=True))
def test_every_address_is_reached_without_loop_in_the_fewest_forwards(design):
    plan = plan_stack(design)
    jsonschema.validate({"nodes": plan["nodes"], "switches": plan["switches"]}, SCHEMA)
    checks = plan["checks"]
    assert checks["passed"], checks["failures"]
    assert checks["complete"] and checks["loops"] == 0 and checks["shortest"]
    nodes = len(plan["nodes"])
    assert checks["walks"] == nodes * (nodes - 1) * len(plan["nodes"]["s0n0" if "s0n0" in plan["nodes"] else "g0-0n0"]["interfaces"])
    # the bound from the geometry is reached, not only respected
    assert checks["most_forwards"] == expected_forwards(plan["design"])


def test_the_paper_5_stage_ring_needs_one_forward_per_pair():
    # section 4.2: "at most one forward operation between any pair" (Table 2, SR)
    plan = plan_stack(ring(stages=5, nodes_per_stage=60, switch_ports=24, switches_per_stack=5))
    assert len(plan["nodes"]) == 300 and len(plan["switches"]) == 5
    assert plan["checks"]["passed"] and plan["checks"]["most_forwards"]["pairs"] == 1
    assert plan["checks"]["most_forwards"]["addresses"] == 2  # the far address of a stage two away


def test_the_4x4_mesh_needs_three_forwards_between_far_groups():
    plan = plan_stack(mesh(groups=4, nodes_per_group=1))
    assert plan["checks"]["passed"] and plan["checks"]["most_forwards"]["pairs"] == 3
    # one forward along one dimension: group (0,0) to (2,0)
    assert len(trace(plan, "g0-0n0", plan["nodes"]["g2-0n0"]["interfaces"][1]["address"].split("/")[0])) == 1
    assert len(trace(plan, "g0-0n0", plan["nodes"]["g2-2n0"]["interfaces"][0]["address"].split("/")[0])) == 3


def test_mesh_addresses_keep_the_group_in_10_j_i():
    plan = plan_stack(mesh(groups=[3, 2], nodes_per_group=2))
    node = plan["nodes"]["g2-1n1"]
    assert [(nic["name"], nic["switch"], nic["address"]) for nic in node["interfaces"]] == [
        ("east", "ssbx2-1", "10.1.2.2/25"), ("west", "ssbx1-1", "10.1.1.65/25"),
        ("north", "ssby2-1", "10.1.2.130/25"), ("south", "ssby2-0", "10.0.2.193/25")]


def test_trace_lists_the_gateways_of_table_1():
    plan = plan_stack(ring())
    assert trace(plan, "s1n1", "10.10.2.2") == []              # stage 2's West NIC, on ssb1: direct
    assert trace(plan, "s1n1", "10.10.3.3") == ["10.10.0.2"]   # via node 1 of stage 0
    assert trace(plan, "s1n2", "10.10.2.1") == ["10.10.1.130"]  # via node 2 of stage 2
    with pytest.raises(ValueError):
        trace(plan, "s1n1", "10.10.9.9")


def _rebuilt(plan):
    return prove(plan, expected_forwards(plan["design"]))


def test_the_walk_finds_a_loop():
    plan = copy.deepcopy(plan_stack(ring(stages=6, nodes_per_stage=1)))
    # stage 1 sends ssb3 east through stage 2; make stage 2 send it back west
    routes = plan["nodes"]["s2n0"]["routes"]
    for route in routes:
        if route["to"] == "10.10.3.0/24":
            route.update(dev="west", via="10.10.1.1")
    checks = _rebuilt(plan)
    assert checks["loops"] > 0 and not checks["passed"]
    assert any("loop" in failure for failure in checks["failures"])


def test_the_walk_finds_a_missing_route_a_silent_gateway_and_an_off_link_gateway():
    plan = copy.deepcopy(plan_stack(ring(stages=4, nodes_per_stage=1)))
    plan["nodes"]["s0n0"]["routes"].pop()
    assert any("no route" in failure for failure in _rebuilt(plan)["failures"])
    plan = copy.deepcopy(plan_stack(ring(stages=4, nodes_per_stage=1)))
    plan["nodes"]["s1n0"]["forwarding"] = False
    checks = _rebuilt(plan)
    assert not checks["passed"] and any("does not forward" in failure for failure in checks["failures"])
    plan = copy.deepcopy(plan_stack(ring(stages=4, nodes_per_stage=1)))
    plan["nodes"]["s0n0"]["routes"][0]["via"] = "10.10.2.1"
    assert any("is not on" in failure for failure in _rebuilt(plan)["failures"])


def test_the_walk_finds_a_route_that_is_not_the_shortest():
    plan = copy.deepcopy(plan_stack(ring(stages=6, nodes_per_stage=1)))
    # stage 0 reaches ssb2 east through stages 1 and 2; send it west (5, 4, 3)
    for route in plan["nodes"]["s0n0"]["routes"]:
        if route["to"] == "10.10.2.0/24":
            route.update(dev="west", via="10.10.5.1")
    checks = _rebuilt(plan)
    assert checks["delivered"] and not checks["shortest"] and not checks["passed"]
    assert checks["longer_than_shortest"] == 1 and checks["most_forwards"]["addresses"] == 3


@pytest.mark.parametrize("design, field", [
    (ring(nodes_per_stage=128), "design.nodes_per_stage: 128 is not between 1 and 127"),
    (ring(nodes_per_stage=127, extra_forwarder=True), "more than the 127 the paper's address plan"),
    (ring(stages=1), "design.stages: 1 is not between 2 and 256"),
    (ring(stages="4"), "design.stages: '4' is not an integer"),
    (ring(nodes_per_stage=30, switch_ports=24), "put 60 NICs on each SSB, more than its 24 ports"),
    (mesh(groups=257), "design.groups: 257 is not between 2 and 256"),
    (mesh(groups=[3]), "design.groups: [3] is not k or [N, M]"),
    (mesh(nodes_per_group=64), "design.nodes_per_group: 64 is not between 1 and 63"),
    (ring(groups=3), "design.groups: unknown field"),
    ({"kind": "stack_star"}, "design.kind: 'stack_star' is not one of stack_ring, stack_mesh"),
    (ring(base_prefix="10.0.0.0/30"), "design.base_prefix: 10.0.0.0/30 holds 4 addresses"),
    (ring(base_prefix="10.0.0.1/16"), "design.base_prefix: '10.0.0.1/16' is not an IPv4 network"),
    (ring(link_gbps=0), "design.link_gbps: 0 is not a bandwidth"),
    (ring(extra_forwarder="yes"), "design.extra_forwarder: 'yes' is not true or false"),
    (ring(stages=256, nodes_per_stage=127, switch_ports=254),
     "design.nodes_per_stage: 32512 nodes x 256 SSB subnets = 8323072 route entries, more than the 2000000"),
])
def test_bad_designs_are_refused_naming_the_field(design, field):
    assert field in refused(design)


def test_a_base_prefix_carves_the_fewest_addresses_per_ssb():
    plan = plan_stack(ring(stages=3, nodes_per_stage=3, base_prefix="192.168.7.0/24"))
    # 3 nodes a side need halves of 4 (host 1..3, 4..6): /29 subnets
    assert plan["subnets"] == {"ssb0": "192.168.7.0/29", "ssb1": "192.168.7.8/29", "ssb2": "192.168.7.16/29"}
    assert plan["nodes"]["s1n2"]["interfaces"][1]["address"] == "192.168.7.6/29"
    assert plan["checks"]["passed"]
    big = plan_stack(ring(stages=2, nodes_per_stage=200, switch_ports=400, base_prefix="172.16.0.0/16"))
    assert big["checks"]["passed"] and big["subnets"]["ssb1"] == "172.16.2.0/23"
    for subnet in big["subnets"].values():
        assert ipaddress.ip_network(subnet).subnet_of(ipaddress.ip_network("172.16.0.0/16"))


def test_design_files_are_read_with_the_yaml_limits(tmp_path):
    good = tmp_path / "ring.yml"
    good.write_text(textwrap.dedent("""\
        design:
          kind: stack_ring
          stages: 4
          nodes_per_stage: 3
        """))
    assert load_design(str(good))["stages"] == 4
    duplicate = tmp_path / "dup.yml"
    duplicate.write_text("design:\n  kind: stack_ring\n  stages: 4\n  stages: 5\n")
    with pytest.raises(StackDesignError, match="dup.yml: .*duplicate key 'stages'"):
        load_design(str(duplicate))
    bomb = tmp_path / "bomb.yml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += ["a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]" % ((i, i) + (i - 1,) * 10)
              for i in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    with pytest.raises(StackDesignError, match="alias bomb"):
        load_design(str(bomb))
    with pytest.raises(StackDesignError, match="design: list is not a mapping"):
        bad = tmp_path / "list.yml"
        bad.write_text("- 1\n")
        load_design(str(bad))


def test_uniform_loads_count_every_pair_once_by_its_nearest_address():
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_walk import uniform_loads
    # three stages: every pair shares an SSB, so nobody forwards
    loads = uniform_loads(plan_stack(ring(stages=3, nodes_per_stage=2)))
    assert loads["pairs"] == 30 and loads["average_forwards"] == 0 and loads["average_links"] == 2
    assert sum(loads["link_loads"].values()) == 2 * 30
    # four stages of one node: the 4 pairs two stages apart take one forward each,
    # split between the two ways round; each node's NICs take its 3 arrivals plus the transit
    loads = uniform_loads(plan_stack(ring(stages=4, nodes_per_stage=1)))
    assert loads["pairs"] == 12 and loads["average_forwards"] == 4 / 12
    assert sum(loads["link_loads"].values()) == 8 * 2 + 4 * 4
    assert loads["max_load"] == 3
    assert sorted(way for way in loads["link_loads"] if way.startswith("s0n0")) == [
        "s0n0 east in", "s0n0 east out", "s0n0 west in", "s0n0 west out"]


def test_above_the_walk_budget_the_first_and_last_node_of_each_stage_are_walked(monkeypatch):
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import stack_walk
    monkeypatch.setattr(stack_walk, "WALK_BUDGET", 100)
    checks = plan_stack(ring(stages=4, nodes_per_stage=3))["checks"]
    assert not checks["complete"] and checks["sources"] == 8 and checks["passed"]
    assert checks["walks"] == 8 * (2 * 12 - 2)


@pytest.mark.parametrize("text", [
    b"\xff\xfe design",                                             # not UTF-8
    b"design: " + b"[" * 200 + b"]" * 200,                           # nested too deep
    b"design: {kind: stack_ring, stages: " + b"9" * 5000 + b", nodes_per_stage: 1}",  # huge integer
    b"design: {kind: stack_ring, stages: .inf, nodes_per_stage: 1}",
    b"design: {kind: stack_ring, stages: 4, nodes_per_stage: 3, base_prefix: [1, 2]}",
    b"design: {kind: stack_mesh, groups: [true, 3], nodes_per_group: 1}",
    b"design: {kind: [stack_ring], stages: 4}",
    b"design: {kind: stack_ring, stages: 4, nodes_per_stage: 3, link_gbps: .nan}",
    b"design: &a {kind: stack_ring, self: *a}",
    b"design:\n  kind: stack_ring\n  stages: 4\n  nodes_per_stage: 3\n  base_prefix: 10.10.0.0/33\n",
    b"",
])
def test_hostile_design_files_are_refused_cleanly(tmp_path, text):
    path = tmp_path / "hostile.yml"
    path.write_bytes(text)
    with pytest.raises(StackDesignError) as caught:
        load_design(str(path))
    assert str(caught.value).startswith(str(path))
