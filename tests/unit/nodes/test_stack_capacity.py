"""The scalability calculator (module_utils/nodes/stack_capacity.py, the
Stack-Ring/Stack-Mesh paper's section 4.2 and Table 2, docs/stack.md
"The calculator"): every cell of Table 2 from its formulas, the tree's
N_c formula, and the calculator against real plans of the same hardware."""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack import plan_stack
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_capacity import (
    mesh,
    ring,
    round_row,
    star,
    table2,
    tree,
    tree_nodes_single,
)

# Table 2: topology, switches, nodes, software forwarding, bisection bandwidth (Gb/s)
TABLE2 = [("star", 5, 120, 0, 1.2), ("tree", 61, 1416, 0, 1.2), ("stack_ring", 25, 300, 1, 12.0),
          ("stack_mesh", 160, 960, 1, 48.0)]


def test_every_cell_of_table_2():
    rows = [round_row(row) for row in table2()]
    got = [(row["topology"], row["switches"], row["nodes"],
            row.get("software_forwards_one_dimension", row["software_forwards"]), row["bisection_gbps"])
           for row in rows]
    assert got == TABLE2


def test_the_mesh_forwards_of_table_2_hold_along_one_dimension_only():
    # a 4 x 4 mesh's far groups are 2 + 2 apart: three groups forward on the way
    assert mesh(24, 5, 0.1, (4, 4))["software_forwards"] == 3
    assert mesh(24, 5, 0.1, (4, 4))["software_forwards_one_dimension"] == 1
    assert ring(24, 5, 0.1, 5)["hops"] == 4  # section 4.2: "the network diameter D is 4 hops"


@pytest.mark.parametrize("ports", [3, 8, 24, 48])
@pytest.mark.parametrize("levels", [1, 2, 3, 4])
def test_tree_of_single_switches_is_n_c(ports, levels):
    # section 3.2: N_c = (I_s - 1)^M + (I_s - 1)^(M-1)
    assert tree(ports, 1, 1.0, levels=levels, bundle=1)["nodes"] == tree_nodes_single(ports, levels)
    assert tree_nodes_single(ports, levels) == (ports - 1) ** levels + (ports - 1) ** (levels - 1)


def test_other_hardware():
    # 48-port gigabit switches, stacks of 4, backplane 10 Gb/s: the backplane caps the star's bisection
    assert round_row(star(48, 4, 1.0, nics=2, backplane_gbps=10.0)) == {
        "topology": "star", "switches": 8, "nodes": 192, "software_forwards": 0, "hops": 2, "bisection_gbps": 20.0}
    assert round_row(ring(48, 4, 1.0, 8)) == {
        "topology": "stack_ring", "switches": 32, "nodes": 768, "software_forwards": 3, "hops": 8, "nics": 2,
        "bisection_gbps": 192.0}
    # 3 x 5 mesh: the cut across the narrower dimension crosses 2 x 3 SSBs
    assert mesh(48, 4, 1.0, (3, 5))["bisection_gbps"] == 2 * 3 * 96 * 1.0


@pytest.mark.parametrize("design", [
    {"kind": "stack_ring", "stages": 5, "nodes_per_stage": 12, "switch_ports": 24, "switches_per_stack": 1},
    {"kind": "stack_ring", "stages": 6, "nodes_per_stage": 8, "switch_ports": 8, "switches_per_stack": 2},
    {"kind": "stack_mesh", "groups": [4, 4], "nodes_per_group": 4, "switch_ports": 8, "switches_per_stack": 1},
    {"kind": "stack_mesh", "groups": [3, 5], "nodes_per_group": 6, "switch_ports": 6, "switches_per_stack": 2},
])
def test_the_calculator_agrees_with_a_full_plan(design):
    # nodes at the SSBs' maximum: the calculator's counts are the plan's
    plan = plan_stack(design)
    row = {r["topology"]: r for r in plan["capacity"]["table2"]}[design["kind"]]
    assert row["nodes"] == len(plan["nodes"])
    assert row["switches"] == len(plan["switches"]) * design["switches_per_stack"]
    assert row["software_forwards"] == plan["checks"]["most_forwards"]["pairs"]
    assert all(len(switch["attached"]) == switch["ports"] for switch in plan["switches"].values())
    assert plan["capacity"]["planned"]["nodes"] == len(plan["nodes"])
