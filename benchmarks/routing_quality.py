#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routing quality benchmark: the segment-based routing paper's matrix (§3).

For every topology (8x8 mesh, 8x8 torus with 1 and 2 links per neighbour,
8x8 mesh with 5 % random link faults, random irregular fabrics of 16/32/64
switches with 4 inter-switch ports and 1 host per switch) and every engine
(STP, up*/down*, TBTP, segment-based routing, and dimension order where it
is valid) it measures, under uniform all-to-all traffic:

* the maximum channel load (ordered host pairs over the busiest directed
  link; the metric OpenSM's engines are compared on in docs/benchmarks.md),
* its ratio to up*/down*'s load and to the LP lower bound (the optimum over
  any fractional multipath routing, metrics.lp_lower_bound),
* the average hop count and the worst stretch,
* the computation time: routing plus CDG verification.

Engines whose module is not there yet are marked "missing"; an engine that
refuses a topology is marked "n/a" with its reason. ``--large`` also times
a 1,024-switch random fabric. Prints markdown; ``--json`` writes the rows.

    python benchmarks/routing_quality.py                  # full matrix, 3 seeds
    python benchmarks/routing_quality.py --quick          # small subset
    python benchmarks/routing_quality.py --large --json out.json
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time

from checkout import benchmark_parser, make_importable


make_importable()

from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (  # noqa: E402
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import (  # noqa: E402
    compute_routing,
    engine_function,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing
except ImportError:  # verification not written yet: time routing alone
    verify_routing = None

ENGINES = ("stp", "updown", "tbtp", "segment", "dor")
LABELS = {"stp": "STP", "updown": "up*/down*", "tbtp": "TBTP", "segment": "SR (segment)",
          "dor": "DOR", "updown_best": "up*/down*, best root"}
BASELINE = "updown"

# Segment-based routing paper §3: saturation throughput of SR over up*/down*
# (uniform traffic, J-Sim packet simulator, 1 host and <= 4 links per switch).
PAPER_SR_OVER_UD = {"torus": 2.2, "mesh": 1.2, "faulty": 2.0,
                    "random16": 1.5, "random32": 1.84, "random64": 2.0}
# OpenSM 3.3.23 on the same fabrics (docs/benchmarks.md): max channel load / LP bound.
OPENSM = {
    "mesh": {"lp": "128", "updn_centre": "3.81x", "updn_best": "1.66x", "nue": "3.00x",
             "minhop": "172 (1.34x, cyclic)"},
    "torus": {"lp": "64", "updn_centre": "5.08x", "updn_best": "4.50x", "nue": "4.84x",
              "minhop": "103 (1.61x, cyclic)"},
    "random16": {"lp": "8-10", "updn_centre": "2.2-2.5x", "updn_best": "1.7-2.25x",
                 "nue": "1.9-2.1x", "minhop": "1.5-1.6x (cyclic)"},
    "random32": {"lp": "21-26", "updn_centre": "3.5-4.4x", "updn_best": "2.6-3.0x",
                 "nue": "3.1-3.4x", "minhop": "1.35-1.6x (cyclic)"},
    "random64": {"lp": "51-52", "updn_centre": "5.3-7.9x", "updn_best": "4.1-4.3x",
                 "nue": "4.7-6.8x", "minhop": "1.6-1.75x (cyclic)"},
}


def cases(seeds, quick=False):
    """(group, label, generator spec, engines) for every benchmark topology."""
    found = []
    if not quick:
        found.append(("mesh", "8x8 mesh", {"kind": "mesh", "dims": [8, 8]}, ENGINES))
        found.append(("torus", "8x8 torus, 1 link/neighbour",
                      {"kind": "torus", "dims": [8, 8]}, ENGINES[:-1]))
        found.append(("torus2", "8x8 torus, 2 links/neighbour",
                      {"kind": "torus", "dims": [8, 8], "links_per_neighbor": 2}, ENGINES))
        for seed in seeds:
            found.append(("faulty", "8x8 mesh, 5 %% faults (seed %d)" % seed,
                          {"kind": "mesh", "dims": [8, 8], "faults": 0.05, "seed": seed},
                          ENGINES[:-1]))
    for size in ((16, 32) if quick else (16, 32, 64)):
        for seed in seeds:
            found.append(("random%d" % size, "random %d, degree 4 (seed %d)" % (size, seed),
                          {"kind": "random", "switches": size, "degree": 4, "seed": seed},
                          ENGINES[:-1]))
    return found


def available(engine):
    """None if the engine can run, else why not."""
    try:
        engine_function(engine)
    except EtherclusterError as exc:
        return str(exc)
    return None


def run_engine(topology, engine, traffic, options=None):
    """Route, verify and measure; a dict with ``status`` ok / n/a / failed."""
    row = {"engine": engine}
    start = time.perf_counter()
    try:
        routing = compute_routing(topology, engine, **(options or {}))
    except EtherclusterError as exc:
        row.update(status="n/a", reason=str(exc))
        return row, None
    row["routing_s"] = time.perf_counter() - start
    if verify_routing is not None:
        start = time.perf_counter()
        report = verify_routing(routing)
        row["verify_s"] = time.perf_counter() - start
        row["verified"] = bool(report["ok"])
        if not report["ok"]:
            row["verify_problems"] = {key: report[key] for key in
                                      ("acyclic", "cycle", "connected", "unreachable_count",
                                       "down_links_used", "u_turns", "consistent")}
    else:
        row["verify_s"] = None
        row["verified"] = None
    row["total_s"] = row["routing_s"] + (row["verify_s"] or 0.0)
    start = time.perf_counter()
    paths = routing.paths()
    loads = metrics.channel_loads(topology, paths, traffic)
    requested = frozenset(routing.down) - frozenset(getattr(routing, "blocked", ()))
    row.update(status="ok",
               max_load=float(loads.max()),
               average_hops=metrics.average_hops(topology, paths, traffic),
               stretch=metrics.stretch(topology, paths, traffic, down=requested),
               blocked_links=len(getattr(routing, "blocked", ())),
               metrics_s=time.perf_counter() - start)
    return row, routing


def run_matrix(args):
    rows = []
    missing = {engine: available(engine) for engine in args.engines}
    for group, label, spec, engines in cases(args.seeds, args.quick):
        topology = topology_from_data({"generate": dict(spec, hosts_per_switch=1)})
        traffic = metrics.uniform(topology)
        start = time.perf_counter()
        bound = metrics.lp_lower_bound(topology, traffic) if not args.no_lp else None
        lp_s = time.perf_counter() - start
        results = []
        for engine in engines:
            if engine not in args.engines:
                continue
            if missing[engine]:
                results.append({"engine": engine, "status": "missing",
                                "reason": missing[engine]})
                continue
            row, _routing = run_engine(topology, engine, traffic)
            results.append(row)
            print("  %-34s %-8s %s" % (label, engine, _short(row)), file=sys.stderr, flush=True)
        if args.best_root and "updown" in engines and "updown" in args.engines \
                and not missing["updown"]:
            row = best_root_updown(topology, traffic)
            results.append(row)
            print("  %-34s %-8s %s" % (label, "best-root", _short(row)), file=sys.stderr,
                  flush=True)
        baseline = next((r["max_load"] for r in results
                         if r["engine"] == BASELINE and r["status"] == "ok"), None)
        for row in results:
            if row["status"] == "ok":
                row["ratio_to_updown"] = row["max_load"] / baseline if baseline else None
                row["ratio_to_lp"] = row["max_load"] / bound if bound else None
            row.update(group=group, topology=label, spec=spec, switches=len(topology.switches),
                       links=len(topology.links), hosts=len(topology.hosts), lp_bound=bound,
                       lp_s=lp_s)
            if row["status"] == "ok":
                row["fluid_throughput"] = fluid_throughput(row["max_load"], row["hosts"])
            rows.append(row)
    return rows


def best_root_updown(topology, traffic):
    """up*/down* with every switch tried as root; the row of the root with
    the least maximum load (time: all roots, routing only, plus verifying
    the winner)."""
    start = time.perf_counter()
    best = None
    for root in topology.switch_names():
        try:
            routing = compute_routing(topology, "updown", root=root)
        except EtherclusterError:
            continue
        load = metrics.max_channel_load(topology, routing.paths(), traffic)
        if best is None or load < best[0]:
            best = (load, root)
    elapsed = time.perf_counter() - start
    if best is None:
        return {"engine": "updown_best", "status": "n/a", "reason": "no root works"}
    row, _routing = run_engine(topology, "updown", traffic, {"root": best[1]})
    row.update(engine="updown_best", root=best[1], routing_s=elapsed,
               total_s=elapsed + (row["verify_s"] or 0.0))
    return row


def fluid_throughput(max_load, hosts):
    """Saturation throughput of uniform traffic in a fluid model, as a
    fraction of the host link rate: each host offers r, i.e. r / (H - 1) to
    every other host, so the busiest channel carries max_load * r / (H - 1)
    and saturates at r = (H - 1) / max_load; a host cannot offer more than
    its own link (r <= 1)."""
    return min(1.0, (hosts - 1) / max_load) if max_load else 1.0


def run_timing(args):
    """Routing + verification time on an 8x8 torus and (``--large``) a
    1,024-switch random fabric of degree 4."""
    specs = [("8x8 torus, 1 link/neighbour", {"kind": "torus", "dims": [8, 8]}),
             ("8x8 torus, 2 links/neighbour",
              {"kind": "torus", "dims": [8, 8], "links_per_neighbor": 2})]
    if args.large:
        specs.append(("random 1024, degree 4 (seed 1)",
                      {"kind": "random", "switches": 1024, "degree": 4, "seed": 1}))
    rows = []
    for label, spec in specs:
        topology = topology_from_data({"generate": dict(spec, hosts_per_switch=1)})
        traffic = metrics.uniform(topology)
        for engine in args.engines:
            if engine == "dor" and spec["kind"] != "torus":
                continue
            if engine == "dor" and spec.get("links_per_neighbor", 1) < 2:
                continue
            if available(engine):
                rows.append({"topology": label, "engine": engine, "status": "missing"})
                continue
            row, _routing = run_engine(topology, engine, traffic)
            row.update(topology=label, switches=len(topology.switches))
            print("  %-34s %-8s %s" % (label, engine, _short(row)), file=sys.stderr, flush=True)
            rows.append(row)
    return rows


# ------------------------------------------------------------------ output
def _short(row):
    if row["status"] != "ok":
        return row["status"] + (": " + row["reason"] if row.get("reason") else "")
    return "load %g, %.2fs" % (row["max_load"], row["total_s"])


def _num(value, digits=2):
    if value is None:
        return "–"
    if abs(value - round(value)) < 1e-6:
        return "%d" % round(value)
    return "%.*f" % (digits, value)


def _ratio(value):
    return "–" if value is None else "%.2f×" % value


def _seconds(value):
    if value is None:
        return "–"
    return "%.3f" % value if value < 10 else "%.1f" % value


def matrix_table(rows):
    lines = ["| topology | LP bound | engine | max load | × up*/down* | × LP | avg hops | "
             "max stretch | time (s) route + verify | verified |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        head = "| %s | %s | %s " % (row["topology"], _num(row["lp_bound"]), LABELS[row["engine"]])
        if row["status"] != "ok":
            reason = row.get("reason", "")
            lines.append(head + "| %s | | | | | | |" % (
                row["status"] if row["status"] == "missing" else "n/a: " + reason))
            continue
        lines.append(head + "| %s | %s | %s | %.2f | %.2f | %s + %s | %s |" % (
            _num(row["max_load"]), _ratio(row.get("ratio_to_updown")),
            _ratio(row.get("ratio_to_lp")), row["average_hops"], row["stretch"]["max"],
            _seconds(row["routing_s"]), _seconds(row["verify_s"]),
            {True: "yes", False: "**NO**", None: "–"}[row["verified"]]))
    return "\n".join(lines)


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summary_table(rows):
    """Per topology group: our SR / up*/down* load ratio next to the paper's
    throughput factor and the OpenSM anchors."""
    lines = ["| topology | LP bound | up*/down* ÷ SR max load | SR ÷ up*/down* fluid throughput "
             "| paper: SR ÷ UD throughput | × LP: up*/down* / (best root) / TBTP / STP / SR / DOR "
             "| OpenSM × LP: updn centre / best root / nue 1 lane |",
             "|---|---|---|---|---|---|---|"]
    groups = []
    for row in rows:
        if row["group"] not in groups:
            groups.append(row["group"])
    names = {"mesh": "8x8 mesh", "torus": "8x8 torus (1 link)", "torus2": "8x8 torus (2 links)",
             "faulty": "8x8 mesh, 5 % faults", "random16": "random 16",
             "random32": "random 32", "random64": "random 64"}
    for group in groups:
        members = [r for r in rows if r["group"] == group]
        topologies = sorted({r["topology"] for r in members})
        bounds = sorted({_num(r["lp_bound"], 1) for r in members})
        per_topology, fluid = [], []
        for topo in topologies:
            by_engine = {r["engine"]: r for r in members if r["topology"] == topo}
            ud, sr = by_engine.get("updown"), by_engine.get("segment")
            if ud and sr and ud["status"] == sr["status"] == "ok":
                per_topology.append(ud["max_load"] / sr["max_load"])
                fluid.append(sr["fluid_throughput"] / ud["fluid_throughput"])
        ratio, fluid_ratio = _mean_range(per_topology), _mean_range(fluid)
        ours = []
        for engine in ("updown", "updown_best", "tbtp", "stp", "segment", "dor"):
            values = [r.get("ratio_to_lp") for r in members
                      if r["engine"] == engine and r["status"] == "ok"]
            if any(r["engine"] == engine for r in members):
                ours.append(_range(values))
        paper = PAPER_SR_OVER_UD.get(group)
        anchor = OPENSM.get(group)
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            names.get(group, group), " / ".join(bounds), ratio, fluid_ratio,
            "%.2f×" % paper if paper else "–", " / ".join(ours),
            " / ".join((anchor["updn_centre"], anchor["updn_best"], anchor["nue"]))
            if anchor else "–"))
    return "\n".join(lines)


def _mean_range(values):
    """Mean, with the range when there are several values."""
    if not values:
        return "–"
    text = "%.2f×" % _mean(values)
    if len(values) > 1:
        text += " (%.2f–%.2f)" % (min(values), max(values))
    return text


def _range(values):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if max(values) - min(values) < 0.005:
        return "%.2f×" % values[0]
    return "%.2f–%.2f×" % (min(values), max(values))


def timing_table(rows):
    lines = ["| topology | engine | routing (s) | verification (s) | total (s) | max load | "
             "verified |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        if row["status"] != "ok":
            lines.append("| %s | %s | %s | | | | |"
                         % (row["topology"], LABELS[row["engine"]], row["status"]))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            row["topology"], LABELS[row["engine"]], _seconds(row["routing_s"]),
            _seconds(row["verify_s"]), _seconds(row["total_s"]), _num(row["max_load"]),
            {True: "yes", False: "**NO**", None: "–"}[row["verified"]]))
    return "\n".join(lines)


def main(argv=None):
    parser = benchmark_parser(__doc__, quick="only random 16 and 32 switches, one seed")
    parser.add_argument("--seeds", type=int, default=3,
                        help="random topologies / fault sets per size (default 3)")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES,
                        help="engines to run (default: all)")
    parser.add_argument("--large", action="store_true",
                        help="also time a 1,024-switch random fabric")
    parser.add_argument("--no-lp", action="store_true", help="skip the LP lower bound")
    parser.add_argument("--best-root", action="store_true",
                        help="also run up*/down* from every root and keep the best")
    parser.add_argument("--no-matrix", action="store_true",
                        help="only the timing table")
    args = parser.parse_args(argv)
    args.seeds = list(range(1, (1 if args.quick else args.seeds) + 1))

    rows = [] if args.no_matrix else run_matrix(args)
    timing = run_timing(args)
    out = []
    if rows:
        out += ["## Uniform traffic, one host per switch", "", matrix_table(rows), "",
                "## Against the paper and OpenSM", "", summary_table(rows), ""]
    out += ["## Computation time", "", timing_table(timing), ""]
    out.append("Machine: %s, Python %s, %d CPU(s)." % (platform.machine(),
                                                       platform.python_version(),
                                                       os.cpu_count() or 1))
    print("\n".join(out))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"matrix": rows, "timing": timing,
                       "machine": {"arch": platform.machine(),
                                   "python": platform.python_version(),
                                   "cpus": os.cpu_count()}}, handle, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
