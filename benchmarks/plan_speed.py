#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan speed benchmark: the whole offline plan (``intent.plan``: routing,
CDG verification, VLAN assignment, static MAC tables, intent, every check,
metrics) on two sizes (issue 4 targets):

* an 8x8 torus, two links per neighbour, 4 hosts per switch -- target
  under 2 s;
* 1,024 switches and 16,384 hosts: a 32x32 torus, two links per
  neighbour, 16 hosts per switch, MAC tables of 262,144 entries (the
  renamed assignment auto picks there needs 9 VLANs, so H = T/V must reach 16,384)
  -- target under 60 s.

Each case runs in its own process so the peak resident memory
(``resource.getrusage``, ru_maxrss) is that case's alone; with
``--tracemalloc`` the peak of Python allocations is measured too (slower).
Prints markdown (wall time per stage, total, peak memory, VLANs used,
static entries); ``--json FILE`` writes the rows.

    python benchmarks/plan_speed.py               # both sizes, the default engines
    python benchmarks/plan_speed.py --quick       # the 8x8 cases only
    python benchmarks/plan_speed.py --engines dor segment --assignments auto renamed fixed
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
import sys
import time
import tracemalloc

from checkout import benchmark_parser, make_importable, write_rows


make_importable()

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (  # noqa: E402
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

SMALL = {"name": "8x8 torus, 4 hosts/switch", "target_s": 2.0,
         "data": {"generate": {"kind": "torus", "dims": [8, 8], "links_per_neighbor": 2,
                               "hosts_per_switch": 4}}}
LARGE = {"name": "32x32 torus, 1,024 switches, 16,384 hosts", "target_s": 60.0,
         "data": {"generate": {"kind": "torus", "dims": [32, 32], "links_per_neighbor": 2,
                               "hosts_per_switch": 16},
                  "switch_defaults": {"mac_table_size": 262144}}}
STAGES = ("topology", "routing", "verification", "assignment", "metrics", "macs", "intent",
          "checks")


def run_case(case, engine, assignment, use_tracemalloc, queue):
    """One plan in this (child) process; puts a result row on ``queue``."""
    row = {"case": case["name"], "engine": engine, "assignment": assignment,
           "target_s": case["target_s"]}
    if use_tracemalloc:
        tracemalloc.start()
    started = time.perf_counter()
    try:
        topology = topology_from_data(case["data"])
        loaded = time.perf_counter()
        result = plan(topology, engine=engine, assignment=assignment)
        row["status"] = "ok"
        row["timings"] = dict(topology=round(loaded - started, 3), **result.timings)
        row["vlans_used"] = result.intent["fabric"]["vlans_used"]
        row["static_entries"] = sum(len(sw["static_macs"])
                                    for sw in result.intent["switches"].values())
        row["max_channel_load"] = result.metrics["max_channel_load"]
        row["switches"], row["hosts"] = len(topology.switches), len(topology.hosts)
    except EtherclusterError as exc:
        row["status"] = "refused: %s" % " ".join(str(exc).split())[:200]
    row["total_s"] = round(time.perf_counter() - started, 3)
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if use_tracemalloc:
        row["tracemalloc_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2 ** 20, 1)
        tracemalloc.stop()
    queue.put(row)


def measure(case, engine, assignment, use_tracemalloc=False):
    """Run one case in a fresh process (own peak memory)."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=run_case, args=(case, engine, assignment,
                                                     use_tracemalloc, queue))
    process.start()
    row = queue.get()
    process.join()
    return row


def table(rows):
    head = ["case", "engine", "assignment", "total s", "target s"] + \
        ["%s s" % stage for stage in STAGES] + ["peak RSS MB", "VLANs", "static entries"]
    if any("tracemalloc_peak_mb" in row for row in rows):
        head.append("tracemalloc peak MB")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        if row["status"] != "ok":
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                row["case"], row["engine"], row["assignment"], row["total_s"], row["target_s"],
                row["status"]))
            continue
        cells = [row["case"], row["engine"], row["assignment"], row["total_s"], row["target_s"]]
        cells += [row["timings"].get(stage, "") for stage in STAGES]
        cells += [row["peak_rss_mb"], row["vlans_used"], "{:,}".format(row["static_entries"])]
        if "tracemalloc_peak_mb" in row:
            cells.append(row["tracemalloc_peak_mb"])
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = benchmark_parser(__doc__, quick="only the 8x8 torus")
    parser.add_argument("--engines", nargs="+", default=None,
                        help="engines for the 8x8 torus (default: dor segment)")
    parser.add_argument("--assignments", nargs="+", default=["auto"],
                        choices=("auto", "renamed", "fixed"))
    parser.add_argument("--large-engine", default="dor",
                        help="engine for the 1,024-switch case (default dor)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also measure the peak of Python allocations (slower)")
    args = parser.parse_args(argv)
    rows = []
    for engine in args.engines or ["dor", "segment"]:
        for assignment in args.assignments:
            rows.append(measure(SMALL, engine, assignment, args.tracemalloc))
    if not args.quick:
        for assignment in args.assignments:
            rows.append(measure(LARGE, args.large_engine, assignment, args.tracemalloc))
    print("Plan speed (%s, Python %s, %d CPUs)\n"
          % (platform.machine(), platform.python_version(), os.cpu_count() or 0))
    print(table(rows))
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
