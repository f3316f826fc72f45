#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-routed Stack-Ring/Stack-Mesh against the switch-tagged torus and fat tree, on the same switches.

Each budget is a number of identical switches (24 ports, 1 Gb/s links,
one switch per SSB). Every fabric uses all the ports it can: the
host-routed designs put only node NICs on the switches (12 nodes a side
per SSB; a ring node has 2 NICs, a mesh node 4), the switch-tagged ones
spend ports on switch-to-switch links and give each node one NIC. For
each fabric, under uniform all-to-all traffic (one unit per ordered node
pair, the metric of docs/benchmarks.md, here counted on every directed
link *including the node NICs*):

* nodes and NICs;
* bisection: the max flow (Gb/s) between the first and the second half of
  the nodes in plan order (stages/groups, switches in id order), every
  link 1 Gb/s each way; an upper bound of the true bisection, equal to it
  for these symmetric fabrics;
* max channel load (ordered node pairs over the busiest directed link) and
  from it the saturation rate per node, (N - 1) x 1 Gb/s / max load;
* links crossed per pair on average (NIC links and switch links);
* software forwards: the most and the average per pair (0 for the
  switch-tagged fabrics, which forward in the switches).

The host-routed fabrics are planned with plan_stack (their walk must pass)
and loaded by stack_walk.uniform_loads (the destination's nearest
address); the switch-tagged ones are routed by the collection's engines
(segment routing, the default engine; up*/down*, TBTP and STP load the
fat tree's busiest uplink more) and loaded by verify/metrics.channel_loads,
with metrics.lp_lower_bound's optimum over any switch routing beside it. Prints markdown; ``--json`` writes the rows.

    python benchmarks/stack_compare.py            # budgets of 16 and 32 switches
    python benchmarks/stack_compare.py --quick    # 16 switches only
"""

from __future__ import annotations

import sys

from checkout import make_importable, report, start

make_importable()

import networkx as nx  # noqa: E402

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack import plan_stack  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_walk import uniform_loads  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics  # noqa: E402

PORTS = 24
LINK_GBPS = 1.0

# budget (switches) -> fabrics: (label, kind, spec)
BUDGETS = {
    16: [("Stack-Ring, 16 stages x 12", "stack", {"kind": "stack_ring", "stages": 16, "nodes_per_stage": 12}),
         ("Stack-Ring + extra forwarder, 16 x (11+1)", "stack",
          {"kind": "stack_ring", "stages": 16, "nodes_per_stage": 11, "extra_forwarder": True}),
         ("Stack-Mesh, 4 x 2 groups x 12", "stack", {"kind": "stack_mesh", "groups": [4, 2], "nodes_per_group": 12}),
         ("torus 4x4, 20 hosts/switch (segment)", "tagged", ({"kind": "torus", "dims": [4, 4]}, 20, "segment")),
         ("torus 4x4, 12 hosts/switch (segment)", "tagged", ({"kind": "torus", "dims": [4, 4]}, 12, "segment")),
         ("fat tree u=4 d=12 r=1, 20 hosts/leaf (segment)", "tagged",
          ({"kind": "fat_tree", "u": 4, "d": 12, "r": 1}, 20, "segment"))],
    32: [("Stack-Ring, 32 stages x 12", "stack", {"kind": "stack_ring", "stages": 32, "nodes_per_stage": 12}),
         ("Stack-Mesh, 4 x 4 groups x 12", "stack", {"kind": "stack_mesh", "groups": [4, 4], "nodes_per_group": 12}),
         ("torus 8x4, 20 hosts/switch (segment)", "tagged", ({"kind": "torus", "dims": [8, 4]}, 20, "segment")),
         ("fat tree u=8 d=24 r=1, 16 hosts/leaf (segment)", "tagged",
          ({"kind": "fat_tree", "u": 8, "d": 24, "r": 1}, 16, "segment"))],
}


def bisection(edges, orders):
    """The least, over ``orders``, max flow between the first and second
    half of the order over ``edges`` ((a, b) directed, 1 Gb/s each;
    parallel ones add up)."""
    return min(_half_flow(edges, order) for order in orders)


def _half_flow(edges, order):
    graph = nx.DiGraph()
    for a, b in edges:
        capacity = graph[a][b]["capacity"] + LINK_GBPS if graph.has_edge(a, b) else LINK_GBPS
        graph.add_edge(a, b, capacity=capacity)
    half = len(order) // 2
    for node in order[:half]:
        graph.add_edge("_source", node)  # no capacity: unbounded
    for node in order[half:2 * half]:
        graph.add_edge(node, "_sink")
    return nx.maximum_flow_value(graph, "_source", "_sink")


def _cell_orders(plan):
    """The nodes sorted along each dimension of their stage/group (the
    name's numbers: s<i>..., g<i>-<j>...)."""
    def cell(name):
        head = name[1:].split("n")[0].rstrip("f")
        return tuple(int(part) for part in head.split("-"))
    names = list(plan["nodes"])
    dims = len(cell(names[0]))
    return [sorted(names, key=lambda name, d=d: (cell(name)[d:] + cell(name)[:d], name)) for d in range(dims)]


def stack_row(label, design):
    design = dict(design, switch_ports=PORTS, switches_per_stack=1, link_gbps=LINK_GBPS)
    plan = plan_stack(design)
    assert plan["checks"]["passed"], plan["checks"]["failures"]
    loads = uniform_loads(plan)
    edges = []
    for name, node in plan["nodes"].items():
        for nic in node["interfaces"]:
            edges += [(name, "sw:" + nic["switch"]), ("sw:" + nic["switch"], name)]
    count = len(plan["nodes"])
    return {"fabric": label, "switches": len(plan["switches"]), "nodes": count,
            "nics": sum(len(node["interfaces"]) for node in plan["nodes"].values()),
            "bisection_gbps": bisection(edges, _cell_orders(plan)), "max_load": loads["max_load"],
            "rate_per_node_gbps": (count - 1) * LINK_GBPS / loads["max_load"],
            "average_links": loads["average_links"], "most_forwards": plan["checks"]["most_forwards"]["pairs"],
            "average_forwards": loads["average_forwards"]}


def _coords(topology, host, dimension):
    """Sort key of a host: its switch's coordinates from ``dimension`` on
    (switch id order for fabrics without coordinates), then its name."""
    switch = topology.switches[topology.hosts[host].switch]
    coords = tuple(switch.coords) if switch.coords else (switch.index,)
    return coords[dimension:dimension + 1] + coords[:dimension] + coords[dimension + 1:], switch.index, host


def tagged_row(label, spec):
    generate, hosts, engine = spec
    topology = topology_from_data({"generate": dict(generate, hosts_per_switch=hosts)})
    routing = compute_routing(topology, engine)
    paths = routing.paths()
    traffic = metrics.uniform(topology)
    switch_loads = metrics.channel_loads(topology, paths, traffic)
    count = len(topology.hosts)
    edges = [(channel.src, channel.dst) for channel in topology.channels]
    dims = len(next(iter(topology.switches.values())).coords or (0,))
    orders = [sorted(topology.hosts, key=lambda host, d=d: _coords(topology, host, d)) for d in range(dims)]
    for name, host in topology.hosts.items():
        edges += [(name, host.switch), (host.switch, name)]
    inter = float(traffic.sum())  # ordered pairs on different switches
    hops = metrics.average_hops(topology, paths, traffic) * inter / (count * (count - 1))
    # every NIC link carries the N - 1 units its node sends (and receives)
    most = max(float(switch_loads.max()), count - 1.0)
    bound = max(metrics.lp_lower_bound(topology, traffic), count - 1.0)
    return {"lp_bound": bound, "fabric": label, "switches": len(topology.switches), "nodes": count, "nics": count,
            "bisection_gbps": bisection(edges, orders), "max_load": most,
            "rate_per_node_gbps": (count - 1) * LINK_GBPS / most, "average_links": hops + 2.0,
            "most_forwards": 0, "average_forwards": 0.0}


def table(rows):
    lines = ["| switches | fabric | nodes | NICs | bisection Gb/s | max channel load (LP bound) | rate/node Gb/s "
             "| aggregate Gb/s | links/pair | software forwards max (avg) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        load = "%.0f" % row["max_load"] + (" (%.0f)" % row["lp_bound"] if "lp_bound" in row else "")
        lines.append("| %d | %s | %d | %d | %.0f | %s | %.2f | %.0f | %.2f | %d (%.2f) |" % (
            row["switches"], row["fabric"], row["nodes"], row["nics"], row["bisection_gbps"], load,
            row["rate_per_node_gbps"], row["rate_per_node_gbps"] * row["nodes"], row["average_links"],
            row["most_forwards"], row["average_forwards"]))
    return "\n".join(lines)


def main(argv):
    args, started = start(__doc__, argv, quick="only the budget of 16 switches")
    rows = []
    for budget, fabrics in BUDGETS.items():
        if args.quick and budget != 16:
            continue
        for label, kind, spec in fabrics:
            row = stack_row(label, spec) if kind == "stack" else tagged_row(label, spec)
            print("  %s: %s" % (label, row["max_load"]), file=sys.stderr, flush=True)
            rows.append(row)
    report("Host-routed (Stack-Ring/Stack-Mesh) against switch-tagged fabrics, same switches, %d ports, %.0f Gb/s"
           % (PORTS, LINK_GBPS), started, table(rows), args.json, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
