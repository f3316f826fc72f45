# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scalability calculator of the Stack-Ring/Stack-Mesh paper (section
4.2, Table 2): switches, nodes, software forwards and bisection bandwidth
of the star, the tree, the Stack-Ring and the Stack-Mesh, from the switch
port count I_s, the switches per stack SK_n, the link bandwidth b, the
NICs per node and the backplane SP, for any of them.

Table 2 is 24-port 100 Mb/s switches, stacks of five, a 5-stage ring and a
4 x 4 mesh: ``table2()`` gives its rows. docs/stack.md, "The calculator",
has the formulas and where the paper's own figures stop holding.
"""

from __future__ import annotations


def _bisection(switch_ports: int, link_gbps: float, backplane_gbps: float | None) -> float:
    """min(I_s / 2 * b, SP), section 4.2: one switch's half of its ports."""
    half = switch_ports / 2 * link_gbps
    return half if backplane_gbps is None else min(half, backplane_gbps)


def star(switch_ports: int, stack: int, link_gbps: float, nics: int = 1,
         backplane_gbps: float | None = None) -> dict:
    """Section 3.1: one SSB of I_s x SK_n ports; ``nics`` NICs per node,
    each into its own SSB (Fig. 2 (b)). BW = min(I_s/2 b, SP) x NICs."""
    return {"topology": "star", "switches": stack * nics, "nodes": switch_ports * stack,
            "software_forwards": 0, "hops": 2,
            "bisection_gbps": _bisection(switch_ports, link_gbps, backplane_gbps) * nics}


def tree_nodes_single(switch_ports: int, levels: int) -> int:
    """Section 3.2's N_c = (I_s - 1)^M + (I_s - 1)^(M-1): single switches,
    one uplink each, M levels of switches."""
    return (switch_ports - 1) ** levels + (switch_ports - 1) ** (levels - 1)


def tree(switch_ports: int, stack: int, link_gbps: float, levels: int = 2, bundle: int = 2,
         nics: int = 1, backplane_gbps: float | None = None) -> dict:
    """Section 3.2/4.2: a root switch, then ``levels - 1`` levels of SSBs,
    each with ``bundle`` ports bundled upwards; the nodes hang off the
    last level. The root's I_s ports take I_s // bundle SSBs (Table 2:
    twelve stacks of five under one 24-port root with two-link bundles,
    61 switches, 12 x 118 = 1416 nodes); BW is the root's min(I_s/2 b, SP).
    With SK_n = 1 and bundle = 1 the node count is N_c above."""
    units, below = 1, switch_ports // bundle  # the root: one switch
    switches = 1
    ports = switch_ports * stack
    for _level in range(levels - 1):
        units *= below
        switches += units * stack
        below = (ports - bundle) // bundle
    nodes = switch_ports if levels == 1 else units * (ports - bundle)
    return {"topology": "tree", "switches": switches * nics, "nodes": nodes, "software_forwards": 0,
            "hops": 2 * levels, "bisection_gbps": _bisection(switch_ports, link_gbps, backplane_gbps) * nics}


def ring(switch_ports: int, stack: int, link_gbps: float, stages: int) -> dict:
    """Section 3.3/4.2: S_t SSBs of SK_n switches; N_r = I_s SK_n / 2 nodes
    per stage (two NICs each); a cut crosses two SSBs of N_r links each:
    BW = 2 N_r b. Software forwards between a node pair (its nearest
    address): floor((S_t - 2) / 2); hops (links) 2 (forwards + 1)."""
    per_stage = switch_ports * stack // 2
    forwards = max(0, (stages - 2) // 2)
    return {"topology": "stack_ring", "switches": stages * stack, "nodes": stages * per_stage,
            "software_forwards": forwards, "hops": 2 * (forwards + 1), "nics": 2,
            "bisection_gbps": 2 * per_stage * link_gbps}


def mesh(switch_ports: int, stack: int, link_gbps: float, groups: tuple[int, int]) -> dict:
    """Section 3.4/4.2: an N x M k-ary 2-cube of node groups with one SSB
    between neighbouring groups (2 N M SSBs); I_s SK_n / 2 nodes per group
    (four NICs each). BW = 2 min(N, M) x (nodes per group) x b: a cut
    across the narrower dimension crosses two SSBs per row (wrap-around).
    Software forwards between a pair: N//2 + M//2 - 1 (the group distance
    less one); along one dimension max(N, M)//2 - 1, Table 2's figure."""
    width, height = groups
    per_group = switch_ports * stack // 2
    forwards = max(0, width // 2 + height // 2 - 1)
    return {"topology": "stack_mesh", "switches": 2 * width * height * stack, "nodes": width * height * per_group,
            "software_forwards": forwards, "software_forwards_one_dimension": max(0, max(width, height) // 2 - 1),
            "hops": 2 * (forwards + 1), "nics": 4,
            "bisection_gbps": 2 * min(width, height) * per_group * link_gbps}


def table2(switch_ports: int = 24, stack: int = 5, link_gbps: float = 0.1, stages: int = 5,
           groups: tuple[int, int] = (4, 4), bundle: int = 2, levels: int = 2,
           backplane_gbps: float | None = None) -> list[dict]:
    """The rows of Table 2 (section 4.2) for this hardware; the defaults
    are the paper's: 24-port fast Ethernet switches, five per stack, a
    two-level tree with two-link bundles, a 5-stage ring and a 4 x 4 mesh."""
    return [star(switch_ports, stack, link_gbps, backplane_gbps=backplane_gbps),
            tree(switch_ports, stack, link_gbps, levels, bundle, backplane_gbps=backplane_gbps),
            ring(switch_ports, stack, link_gbps, stages),
            mesh(switch_ports, stack, link_gbps, groups)]


def round_row(row: dict) -> dict:
    """A row with its bandwidth rounded to 1e-9 Gb/s (0.1 is not exact in binary)."""
    return {key: (round(value, 9) if isinstance(value, float) else value) for key, value in row.items()}


def design_capacity(design: dict) -> dict:
    """Table 2 for the design's hardware (I_s, SK_n, b) and its own ring
    stages or mesh groups, and the design as planned (its node count may
    be below the SSBs' maximum)."""
    ports, stack, link = design["switch_ports"], design["switches_per_stack"], design["link_gbps"]
    stages = design.get("stages", 5)
    groups = tuple(design.get("groups", (4, 4)))
    rows = [round_row(row) for row in table2(ports, stack, link, stages, (groups[0], groups[1]))]
    if design["kind"] == "stack_ring":
        per = design["nodes_per_stage"]
        planned = {"nodes": per * stages, "bisection_gbps": round(2 * per * link, 9)}
    else:
        per = design["nodes_per_group"]
        planned = {"nodes": per * groups[0] * groups[1],
                   "bisection_gbps": round(2 * min(groups) * per * link, 9)}
    planned["forwarders"] = (stages if design["kind"] == "stack_ring" else groups[0] * groups[1]) \
        if design["extra_forwarder"] else 0
    return {"hardware": {"switch_ports": ports, "switches_per_stack": stack, "link_gbps": link,
                         "ssb_ports": ports * stack, "max_nodes_per_ssb_side": ports * stack // 2},
            "table2": rows, "planned": planned}
