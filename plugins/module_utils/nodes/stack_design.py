# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The design of a Stack-Ring or Stack-Mesh fabric: reading, validating and
addressing it (the Stack-Ring/Stack-Mesh paper, Varavithya and
Thepuatrakul, sections 3.3 and 3.4).

A design is a mapping (docs/stack.md, "The design file")::

    design:
      kind: stack_ring          # or stack_mesh
      stages: 4                 # stack_ring: S_t, the SSBs around the ring
      groups: [3, 3]            # stack_mesh: N x M node groups (an int k means k x k)
      nodes_per_stage: 3        # stack_ring (stack_mesh: nodes_per_group)
      switches_per_stack: 1     # SK_n, switches stacked into one SSB
      switch_ports: 48          # I_s, ports of one switch
      extra_forwarder: false    # one more node per stage/group that does all the forwarding
      base_prefix: null         # default: the paper's 10.10.i.x (ring) / 10.j.i.x (mesh)
      link_gbps: 1.0            # b, the bandwidth of one NIC, for the report

The SSBs (stacks of switches, one L2 domain each) sit *between* stages or
groups: in the ring SSB j carries the East NICs of stage j and the West
NICs of stage j+1 (mod S_t), so S_t stages need S_t SSBs (section 3.3); in
the mesh (a k-ary 2-cube with wrap-around, section 3.4) SSB ``x i-j``
carries the East NICs of group (i, j) and the West NICs of group (i+1, j),
SSB ``y i-j`` the North NICs of group (i, j) and the South NICs of group
(i, j+1): 2 N M SSBs, the 32 SSBs of the paper's 4 x 4 mesh.

Every SSB is one IPv4 subnet. Its first half holds the first side's NICs
(host 1 + rank), its second half the second side's (half + rank): the
paper gives both sides the same address 10.10.i.x, which cannot work, and
its limit of 127 nodes per stage is exactly what one /24 holds when split
in two halves (docs/stack.md, "Where the paper is fixed").
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from ..errors import TopologyError
from ..fabric.input_limits import load_yaml_text, read_text

KINDS = ("stack_ring", "stack_mesh")
# section 3.3: 10.10.i.x, one /24 per SSB split in two halves of 127 hosts
RING_MAX_NODES = 127
RING_MAX_STAGES = 256
# section 3.4: 10.j.i.x, one /24 per group (two SSBs, a /25 each): 256 x 256
MESH_MAX_SIDE = 256
MESH_MAX_NODES = 63
RING_BASE = ipaddress.IPv4Network("10.10.0.0/16")
MESH_BASE = ipaddress.IPv4Network("10.0.0.0/8")
# a plan lists every node's routes; beyond these it is too large to review or deploy
MAX_NODES = 65536
MAX_ROUTE_ENTRIES = 2_000_000

COMMON = {"kind", "switches_per_stack", "switch_ports", "extra_forwarder", "base_prefix", "link_gbps"}
FIELDS = {"stack_ring": COMMON | {"stages", "nodes_per_stage"},
          "stack_mesh": COMMON | {"groups", "nodes_per_group"}}


class StackDesignError(TopologyError):
    """A Stack-Ring/Stack-Mesh design is invalid; every line names the field."""


def load_design(path: str) -> dict:
    """Read a design file with the collection's YAML limits (size, depth,
    aliases, duplicate keys) and validate it. The file holds ``design:``
    (or the design mapping itself). Raises StackDesignError naming the file."""
    try:
        data = load_yaml_text(read_text(path), source=path)
    except TopologyError as exc:
        raise StackDesignError(exc.problems, path) from None
    if isinstance(data, dict) and "design" in data:
        data = data["design"]
    return validate_design(data, source=path)


def _integer(design: dict, field: str, low: int, high: int | None, problems: list[str],
             default: int | None = None) -> int:
    value = design.get(field, default)
    if value is None:
        problems.append("design.%s: required" % field)
        return low
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append("design.%s: %r is not an integer" % (field, value))
        return low
    if value < low or (high is not None and value > high):
        bound = "at least %d" % low if high is None else "between %d and %d" % (low, high)
        problems.append("design.%s: %d is not %s" % (field, value, bound))
        return low
    return value


def _groups(design: dict, problems: list[str]) -> tuple[int, int]:
    value = design.get("groups")
    sides = [value, value] if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(sides, list) or len(sides) != 2:
        problems.append("design.groups: %r is not k or [N, M] (groups per dimension)" % (value,))
        return 2, 2
    checked = [_integer({"groups": side}, "groups", 2, MESH_MAX_SIDE, problems) for side in sides]
    return checked[0], checked[1]


def _base_prefix(design: dict, problems: list[str]) -> ipaddress.IPv4Network | None:
    value = design.get("base_prefix")
    if value is None:
        return None
    try:
        return ipaddress.IPv4Network(str(value), strict=True)
    except ValueError as exc:
        problems.append("design.base_prefix: %r is not an IPv4 network (%s)" % (value, exc))
        return None


def _link_gbps(design: dict, problems: list[str]) -> float:
    value = design.get("link_gbps", 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1e6 \
            or math.isnan(value):
        problems.append("design.link_gbps: %r is not a bandwidth in Gb/s above 0" % (value,))
        return 1.0
    return float(value)


def validate_design(data: Any, source: str = "<design>") -> dict:
    """The design with defaults filled in, or StackDesignError listing
    every problem, each naming its field (``design.<field>``)."""
    if not isinstance(data, dict):
        raise StackDesignError("design: %s is not a mapping" % type(data).__name__, source)
    kind = data.get("kind")
    if kind not in KINDS:
        raise StackDesignError("design.kind: %r is not one of %s" % (kind, ", ".join(KINDS)), source)
    problems = ["design.%s: unknown field (known: %s)" % (key, ", ".join(sorted(FIELDS[kind])))
                for key in data if key not in FIELDS[kind]]
    design: dict[str, Any] = {
        "kind": kind,
        "switches_per_stack": _integer(data, "switches_per_stack", 1, 64, problems, default=1),
        "switch_ports": _integer(data, "switch_ports", 2, 4096, problems, default=48),
        "extra_forwarder": data.get("extra_forwarder", False),
        "link_gbps": _link_gbps(data, problems),
    }
    if not isinstance(design["extra_forwarder"], bool):
        problems.append("design.extra_forwarder: %r is not true or false" % (design["extra_forwarder"],))
    base = _base_prefix(data, problems)
    if kind == "stack_ring":
        design["stages"] = _integer(data, "stages", 2, RING_MAX_STAGES, problems)
        limit = RING_MAX_NODES if base is None else MAX_NODES
        design["nodes_per_stage"] = _integer(data, "nodes_per_stage", 1, limit, problems)
    else:
        design["groups"] = list(_groups(data, problems))
        limit = MESH_MAX_NODES if base is None else MAX_NODES
        design["nodes_per_group"] = _integer(data, "nodes_per_group", 1, limit, problems)
    design["base_prefix"] = str(base) if base is not None else None
    if not problems:
        problems.extend(_size_problems(design))
    if problems:
        raise StackDesignError(problems, source)
    return design


def members(design: dict) -> int:
    """Nodes of one stage (ring) or group (mesh), the extra forwarder included."""
    count = design["nodes_per_stage"] if design["kind"] == "stack_ring" else design["nodes_per_group"]
    return count + (1 if design["extra_forwarder"] else 0)


def cells(design: dict) -> list[tuple[int, int]]:
    """The stages (ring, as (i, 0)) or groups (mesh, (i, j)), in order."""
    if design["kind"] == "stack_ring":
        return [(i, 0) for i in range(design["stages"])]
    width, height = design["groups"]
    return [(i, j) for j in range(height) for i in range(width)]


def ssb_count(design: dict) -> int:
    """SSBs of the design: S_t for the ring, 2 N M for the mesh."""
    return len(cells(design)) * (1 if design["kind"] == "stack_ring" else 2)


def _size_problems(design: dict) -> list[str]:
    problems = []
    field = "nodes_per_stage" if design["kind"] == "stack_ring" else "nodes_per_group"
    per = members(design)
    ports = design["switches_per_stack"] * design["switch_ports"]
    extra = " (+1 extra forwarder)" if design["extra_forwarder"] else ""
    if design["kind"] == "stack_ring" and design["base_prefix"] is None and per > RING_MAX_NODES:
        problems.append("design.%s: %d nodes%s per stage, more than the %d the paper's address plan "
                        "10.10.i.x holds (set design.base_prefix for more)"
                        % (field, per - (1 if extra else 0), extra, RING_MAX_NODES))
    if design["kind"] == "stack_mesh" and design["base_prefix"] is None and per > MESH_MAX_NODES:
        problems.append("design.%s: %d nodes%s per group, more than the %d the address plan 10.j.i.x "
                        "holds with two SSBs per group (set design.base_prefix for more)"
                        % (field, per - (1 if extra else 0), extra, MESH_MAX_NODES))
    if 2 * per > ports:
        problems.append("design.%s: %d nodes%s put %d NICs on each SSB, more than its %d ports "
                        "(switches_per_stack x switch_ports)" % (field, per - (1 if extra else 0), extra,
                                                                 2 * per, ports))
    if per * len(cells(design)) > MAX_NODES:
        problems.append("design.%s: %d nodes in all, more than the %d a plan may have"
                        % (field, per * len(cells(design)), MAX_NODES))
    entries = per * len(cells(design)) * ssb_count(design)
    if entries > MAX_ROUTE_ENTRIES:
        problems.append("design.%s: %d nodes x %d SSB subnets = %d route entries, more than the %d a plan may hold"
                        % (field, per * len(cells(design)), ssb_count(design), entries, MAX_ROUTE_ENTRIES))
    if design["base_prefix"] is not None:
        problems.extend(_prefix_problems(design, per))
    return problems


def subnet_bits(design: dict) -> int:
    """Host bits of one SSB's subnet: 8 (/24) for the paper's ring plan, 7
    (/25) for the mesh's; with a base prefix the fewest whose halves hold
    every member (half - 1 >= members)."""
    if design["base_prefix"] is None:
        return 8 if design["kind"] == "stack_ring" else 7
    return max(2, math.ceil(math.log2(members(design) + 1)) + 1)


def _prefix_problems(design: dict, per: int) -> list[str]:
    base = ipaddress.IPv4Network(design["base_prefix"])
    needed = ssb_count(design) << subnet_bits(design)
    if needed > base.num_addresses:
        return ["design.base_prefix: %s holds %d addresses, fewer than the %d the %d SSBs need "
                "(%d subnets of /%d for %d nodes each side)"
                % (base, base.num_addresses, needed, ssb_count(design), ssb_count(design),
                   32 - subnet_bits(design), per)]
    return []


def ssb_subnet(design: dict, index: int, axis: int = 0) -> ipaddress.IPv4Network:
    """The subnet of SSB ``index`` (ring: j; mesh: the group i + N j, axis
    0 for its x SSB and 1 for its y SSB). The paper's plans: ring
    10.10.j.0/24 (section 3.3); mesh 10.j.i.0/25 (x) and 10.j.i.128/25 (y),
    keeping the group's 10.j.i of section 3.4. With a base prefix, the
    SSBs in order."""
    bits = subnet_bits(design)
    if design["base_prefix"] is None:
        if design["kind"] == "stack_ring":
            base, slot = RING_BASE, index
        else:
            width = design["groups"][0]
            i, j = index % width, index // width
            base, slot = MESH_BASE, 2 * (j * 256 + i) + axis
    else:
        base = ipaddress.IPv4Network(design["base_prefix"])
        slot = index if design["kind"] == "stack_ring" else 2 * index + axis
    first = int(base.network_address) + (slot << bits)
    return ipaddress.IPv4Network((first, 32 - bits))


def side_address(subnet: ipaddress.IPv4Network, side: int, rank: int) -> ipaddress.IPv4Interface:
    """The address of rank ``rank`` on side 0 (host 1 + rank) or side 1
    (host half + rank) of an SSB's subnet, with the subnet's prefix length."""
    half = subnet.num_addresses // 2
    host = int(subnet.network_address) + (1 + rank if side == 0 else half + rank)
    return ipaddress.IPv4Interface((host, subnet.prefixlen))
