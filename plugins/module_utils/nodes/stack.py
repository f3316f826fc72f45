# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host routing plan of a Stack-Ring or Stack-Mesh fabric (the
Stack-Ring/Stack-Mesh paper, sections 3.3 and 3.4): every node's NICs,
addresses and static routes, the SSBs and what is cabled to them, the
forwarding tables in the paper's Table 1 form, and the proof, by walking
every source and destination through the planned tables, that every
address is reached without a loop in the fewest software forwards.

``plan_stack(design)`` is the entry point; its ``nodes`` and ``switches``
follow the node network contract (docs/stack.md, "The plan"), which the
role node_network and the host-routed lab consume.

Names: ring nodes ``s<i>n<x>`` (stage i, rank x), mesh nodes
``g<i>-<j>n<x>`` (group (i, j)); the extra forwarder of a stage/group is
``s<i>f`` / ``g<i>-<j>f``. SSBs: ``ssb<j>`` (ring), ``ssbx<i>-<j>`` and
``ssby<i>-<j>`` (mesh). NICs: ``east``, ``west`` (ring), plus ``north``,
``south`` (mesh).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .stack_capacity import design_capacity
from .stack_design import cells, members, side_address, ssb_subnet, validate_design
from .stack_select import mesh_interface, ring_interface
from .stack_walk import prove, trace

__all__ = ["plan_stack", "trace", "node_name", "ssb_name"]

SCHEMA = "ethercluster.routing/stack-plan/v1"
OPPOSITE = {"east": "west", "west": "east", "north": "south", "south": "north"}
# sections 3.3 / 3.4: loose reverse-path filtering; strict mode would drop
# the packets whose way back leaves by another NIC (ties on even rings)
RP_FILTER = 2

Cell = tuple[int, int]
Ssb = tuple[int, int, int]  # (axis, a, b); the ring's SSB j is (0, j, 0)


def node_name(design: dict, cell: Cell, rank: int) -> str:
    """The name of the node of ``rank`` in stage/group ``cell``; the rank
    ``members(design) - 1`` of a design with an extra forwarder is ``...f``."""
    prefix = _prefix(design, cell)
    if design["extra_forwarder"] and rank == members(design) - 1:
        return prefix + "f"
    return "%sn%d" % (prefix, rank)


def _prefix(design: dict, cell: Cell) -> str:
    return "s%d" % cell[0] if design["kind"] == "stack_ring" else "g%d-%d" % cell


def ssb_name(design: dict, ssb: Ssb) -> str:
    """The name of an SSB (one L2 switch of the plan)."""
    if design["kind"] == "stack_ring":
        return "ssb%d" % ssb[1]
    return "ssb%s%d-%d" % ("xy"[ssb[0]], ssb[1], ssb[2])


def _sizes(design: dict) -> tuple[int, int]:
    if design["kind"] == "stack_ring":
        return design["stages"], 1
    return design["groups"][0], design["groups"][1]


def nics(design: dict, cell: Cell) -> list[tuple[str, Ssb, int, Cell]]:
    """The NICs of a node of ``cell``: (name, SSB, side, neighbour cell
    across that SSB). Side 0 is the East/North side of the SSB's subnet,
    side 1 the West/South side (section 3.3: E 10.10.i.x, W 10.10.(i-1).x)."""
    width, height = _sizes(design)
    i, j = cell
    ring = [("east", (0, i, j), 0, ((i + 1) % width, j)),
            ("west", (0, (i - 1) % width, j), 1, ((i - 1) % width, j))]
    if design["kind"] == "stack_ring":
        return ring
    return ring + [("north", (1, i, j), 0, (i, (j + 1) % height)),
                   ("south", (1, i, (j - 1) % height), 1, (i, (j - 1) % height))]


def ssbs(design: dict) -> list[Ssb]:
    """Every SSB in address order."""
    axes = (0,) if design["kind"] == "stack_ring" else (0, 1)
    return [(axis, i, j) for (i, j) in cells(design) for axis in axes]


def subnet_of(design: dict, ssb: Ssb) -> ipaddress.IPv4Network:
    """The IPv4 subnet of an SSB."""
    axis, i, j = ssb
    return ssb_subnet(design, i + _sizes(design)[0] * j, axis)


def select(design: dict, cell: Cell, ssb: Ssb) -> str | None:
    """The NIC a node of ``cell`` sends on towards ``ssb`` (None: attached)."""
    if design["kind"] == "stack_ring":
        if ssb[1] in (cell[0], (cell[0] - 1) % design["stages"]):
            return None
        return ring_interface(cell[0], ssb[1], design["stages"])
    return mesh_interface(cell, ssb, _sizes(design))


def gateway(design: dict, cell: Cell, rank: int, nic: str) -> tuple[int, ipaddress.IPv4Interface]:
    """The gateway of a node (cell, rank) out of ``nic``: node x of the
    neighbouring stage/group (section 3.3's balancing: the x-th node uses
    the x-th nodes of the next and previous stages), or its extra
    forwarder (Table 3's "SR with extra node"). Returns (rank, address)."""
    ssb, side = {name: (s, d) for name, s, d, _n in nics(design, cell)}[nic]
    via = members(design) - 1 if design["extra_forwarder"] else rank
    return via, side_address(subnet_of(design, ssb), 1 - side, via)


def _forwards(design: dict, rank: int) -> bool:
    return not design["extra_forwarder"] or rank == members(design) - 1


def _node(design: dict, cell: Cell, rank: int, all_ssbs: list[Ssb]) -> dict:
    interfaces = [{"name": name, "switch": ssb_name(design, ssb),
                   "address": str(side_address(subnet_of(design, ssb), side, rank))}
                  for name, ssb, side, _neighbour in nics(design, cell)]
    routes = []
    for ssb in all_ssbs:
        nic = select(design, cell, ssb)
        if nic is not None:
            routes.append({"to": str(subnet_of(design, ssb)), "via": str(gateway(design, cell, rank, nic)[1].ip),
                           "dev": nic})
    return {"interfaces": interfaces, "routes": routes, "forwarding": _forwards(design, rank),
            "rp_filter": RP_FILTER, "sysctls": {}}


def cell_label(design: dict, cell: Cell) -> str:
    """``stage i`` (ring) or ``group i,j`` (mesh)."""
    return "stage %d" % cell[0] if design["kind"] == "stack_ring" else "group %d,%d" % cell


def forwarding_table(design: dict, cell: Cell, all_ssbs: list[Ssb]) -> list[dict]:
    """The routes of a stage/group in Table 1's form (section 3.3): one row
    per SSB subnet, its interface, and the gateway: ``connected`` or the
    gateway of rank x (``10.10.1.128 + x``: the address of node x of the
    neighbouring stage), or the neighbour's extra forwarder."""
    rows = []
    for ssb in all_ssbs:
        nic = select(design, cell, ssb)
        row = {"network": str(subnet_of(design, ssb)), "switch": ssb_name(design, ssb)}
        if nic is None:
            attached = [name for name, s, _d, _n in nics(design, cell) if s == ssb]
            row.update(interface=attached[0], gateway="connected")
        else:
            via, address = gateway(design, cell, 0, nic)
            neighbour = {name: n for name, _s, _d, n in nics(design, cell)}[nic]
            text = str(address.ip) if design["extra_forwarder"] else "%s + x" % address.ip
            row.update(interface=nic, gateway=text, gateway_node=node_name(design, neighbour, via)
                       if design["extra_forwarder"] else _prefix(design, neighbour) + "n<x>")
        rows.append(row)
    return rows


def plan_stack(design: dict) -> dict:
    """The plan of a Stack-Ring/Stack-Mesh design (a design mapping, or
    ``{"design": {...}}``): ``nodes`` and ``switches`` (the node network
    contract), ``subnets``, ``forwarding_table`` (Table 1's form per
    stage/group), ``checks`` (the walk of every source and destination
    through the planned tables) and ``capacity`` (Table 2's figures for
    this hardware). Raises StackDesignError naming the field."""
    if isinstance(design, dict) and "design" in design and "kind" not in design:
        design = design["design"]
    design = validate_design(design)
    all_ssbs = ssbs(design)
    nodes: dict[str, Any] = {}
    attached: dict[str, list[list[str]]] = {ssb_name(design, ssb): [] for ssb in all_ssbs}
    for cell in cells(design):
        for rank in range(members(design)):
            name = node_name(design, cell, rank)
            nodes[name] = _node(design, cell, rank, all_ssbs)
            for nic in nodes[name]["interfaces"]:
                attached[nic["switch"]].append([name, nic["name"]])
    ports = design["switches_per_stack"] * design["switch_ports"]
    plan = {
        "schema": SCHEMA,
        "design": design,
        "nodes": nodes,
        "switches": {name: {"ports": ports, "attached": cabled} for name, cabled in attached.items()},
        "subnets": {ssb_name(design, ssb): str(subnet_of(design, ssb)) for ssb in all_ssbs},
        "forwarding_table": {cell_label(design, cell): forwarding_table(design, cell, all_ssbs)
                             for cell in cells(design)},
        "capacity": design_capacity(design),
    }
    # above the walk budget: the first and the last node (the forwarder) of every stage/group
    sample = [node_name(design, cell, rank) for cell in cells(design) for rank in sorted({0, members(design) - 1})]
    plan["checks"] = prove(plan, expected_forwards(design), sample)
    return plan


def expected_forwards(design: dict) -> dict:
    """The fewest software forwards the design allows, from its geometry
    alone (not from the routes): ``pairs``, the most over node pairs when
    the destination's nearest address is used, and ``addresses``, the most
    over every (node, address). Ring (section 3.3): a stage touches SSBs
    i-1 and i, so pairs need floor((S_t-2)/2) and addresses
    floor((S_t-1)/2); the paper's 5-stage ring: 1 and 2. Mesh: the group
    distance less one for pairs, (N-1)//2 + M//2 for addresses
    (docs/stack.md, "Software forwards")."""
    width, height = _sizes(design)
    if design["kind"] == "stack_ring":
        return {"pairs": max(0, (width - 2) // 2), "addresses": (width - 1) // 2}
    pairs = max(0, width // 2 + height // 2 - 1)
    addresses = max((width - 1) // 2 + height // 2, width // 2 + (height - 1) // 2)
    return {"pairs": pairs, "addresses": addresses}
