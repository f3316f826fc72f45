# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-routed lab benchmark: the Stack-Ring 4 x 3 and Stack-Mesh 3 x 3 (2 nodes per group) of the molecule scenarios.

Plans each design with plan_stack, builds its host-routed lab with the lab
code (what ``lab_up.yml -e design=`` does, without Ansible's start-up),
configures every node with the node_network logic (read, difference, apply;
a second round must find nothing), runs the verification's probes, then
iperf3: one TCP stream per number of planned software forwards (0, 1, 2),
one pair at a time, and all nodes at once (every node to the node half the
list away). Prints markdown; ``--json FILE`` writes the rows. Needs root,
iproute2, iputils ping and iperf3. The lab is named ``nodestest``.

    python benchmarks/nodes_forwarding.py [--seconds 3]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from checkout import benchmark_parser, make_importable, report

DESIGNS = {
    "ring 4 x 3": {"kind": "stack_ring", "stages": 4, "nodes_per_stage": 3},
    "mesh 3 x 3 x 2": {"kind": "stack_mesh", "groups": 3, "nodes_per_group": 2},
}


def configure(layout, nodes, ln):
    """Apply every node's entry as the module does; the second round must
    change nothing. Returns the seconds of the first round."""
    started = time.perf_counter()
    seconds = 0.0
    for round_ in (1, 2):
        for name, entry in nodes.items():
            def run(argv, netns=layout["nodes"][name]["netns"]):
                return subprocess.run(["ip", "netns", "exec", netns] + argv, capture_output=True, text=True, check=False)
            node = ln.check_node(name, entry)
            found = ln.changes(node, ln.parse_links(run(["ip", "-j", "address", "show"]).stdout),
                               ln.parse_routes(run(["ip", "-4", "-j", "route", "show", "table", "main"]).stdout),
                               ln.parse_sysctl(run(["sysctl"] + sorted(ln.wanted_sysctls(node))).stdout))
            assert round_ == 1 or not found, (name, found)
            for change in found:
                assert run(change["argv"]).returncode == 0, change
        if round_ == 1:
            seconds = time.perf_counter() - started
    return seconds


def single_streams(layout, nodes, seconds, nodes_lab):
    """Mbit/s of one TCP stream per planned forward count (first pair found)."""
    found = {}
    for probe in nodes_lab.probes(nodes):
        forwards = probe["ttl"] - 1
        if probe["expect"] != "reply" or forwards in found:
            continue
        server = subprocess.Popen(["ip", "netns", "exec", layout["nodes"][probe["owner"]]["netns"],
                                   "iperf3", "-s", "-1", "-p", "5202"], stdout=subprocess.DEVNULL)
        time.sleep(0.3)
        out = subprocess.run(["ip", "netns", "exec", layout["nodes"][probe["src"]]["netns"], "iperf3", "-c",
                              probe["dst"], "-p", "5202", "-t", str(seconds), "-J"],
                             capture_output=True, text=True, check=False).stdout
        server.wait(timeout=10)
        found[forwards] = round(json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e6)
    return dict(sorted(found.items()))


def main(argv):
    parser = benchmark_parser(__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each iperf3 run")
    parser_args = parser.parse_args(argv)
    seconds, started = parser_args.seconds, time.perf_counter()
    make_importable()
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import nodes_lab
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import linux_network as ln
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack import plan_stack
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_design import validate_design

    rows = []
    for label, design in DESIGNS.items():
        plan = plan_stack(validate_design(design))
        layout = nodes_lab.nodes_layout(plan, "nodestest")
        up = nodes_lab.nodes_lab_up(layout)
        try:
            configured = configure(layout, plan["nodes"], ln)
            checked = nodes_lab.verify(layout, plan["nodes"], iperf_seconds=seconds)
            streams = single_streams(layout, plan["nodes"], seconds, nodes_lab)
        finally:
            down_started = time.perf_counter()
            nodes_lab.nodes_lab_down(nodes_lab.read_record(layout["state_root"], layout["lab"]))
            down = time.perf_counter() - down_started
        rows.append({"fabric": label, "nodes": len(plan["nodes"]), "switches": len(plan["switches"]),
                     "build_s": up["timings"]["total"], "configure_s": round(configured, 2),
                     "probes": checked["pings"] + checked["hop_checks"], "probe_s": checked["probe_seconds"],
                     "passed": checked["passed"], "single_stream_mbps": streams,
                     "all_at_once_mbps": checked["iperf3"]["total_mbps"],
                     "per_pair_mbps": [checked["iperf3"]["min_mbps"], checked["iperf3"]["max_mbps"]],
                     "teardown_s": round(down, 2)})
    table = ["| fabric | nodes | SSBs | build | configure | probes (s) | passed | 1 stream by forwards (Mbit/s) "
             "| all at once: total (per pair) | teardown |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        table.append("| %s | %d | %d | %.2f s | %.2f s | %d (%.1f s) | %s | %s | %.0f (%.0f-%.0f) Mbit/s | %.2f s |" % (
            row["fabric"], row["nodes"], row["switches"], row["build_s"], row["configure_s"], row["probes"],
            row["probe_s"], "yes" if row["passed"] else "NO",
            ", ".join("%d: %d" % item for item in row["single_stream_mbps"].items()),
            row["all_at_once_mbps"], row["per_pair_mbps"][0], row["per_pair_mbps"][1], row["teardown_s"]))
    report("Host-routed lab, %g s iperf3 runs, links shaped to 1000 Mbit/s" % seconds, started, "\n".join(table),
           parser_args.json, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
