#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenSM against our engines, measured in the same run on the same fabrics.

For each topology (8x8 mesh, 8x8 torus with 1 link per neighbour, random
fabrics of 32, 64 and 256 switches of degree 4, seed 1, and with ``--large``
1,024 switches; one host per switch) it routes with our engines (up*/down*,
segment-based routing, TBTP, dimension order on the mesh) and with OpenSM's
(minhop, updn, nue, dor on the mesh). OpenSM runs for real against ibsim,
the InfiniBand fabric simulator (``opensm --once`` with
``LD_PRELOAD=libumad2sim.so``); its unicast forwarding tables are read from
``opensm-lfts.dump`` and followed switch to switch, so its maximum channel
load (ordered host pairs over the busiest directed link, uniform
all-to-all traffic) is counted by the same code as ours
(metrics.channel_loads). Also reported: the ratio to the LP lower bound
(up to 64 switches), whether the channel dependency graph on one lane is
acyclic (deadlock-free without virtual lanes), and the time: ours is
routing plus CDG verification, OpenSM's is its routing engine from its
log ("building routing" to "tables configured"), next to the wall clock of
the whole ``opensm --once`` run (discovery, LIDs and programming the
simulated switches included).

OpenSM's updn gets our up*/down*'s default root (the switch of least
eccentricity) through ``--root_guid_file``: with a host on every switch
its own root detection finds none and it would fall back to minhop. Every
OpenSM engine but minhop runs with ``no_fallback``, and the engine the log
says it used is checked. On the mesh the IB ports are numbered by
dimension (x-, x+, y-, y+), as OpenSM's dor expects.

Needs the Debian packages opensm and ibsim-utils (no root, no hardware);
without them it prints how to install them and exits 0. Only one ibsim can
run on a machine at a time (it binds the socket "sim:ctl").

    python benchmarks/opensm_compare.py                  # up to 256 switches
    python benchmarks/opensm_compare.py --quick          # mesh and random 32 only
    python benchmarks/opensm_compare.py --large --json out.json
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time

import networkx as nx

from checkout import benchmark_parser, make_importable, write_rows
import opensm_fabric


make_importable()

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.updown import default_root  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.cdg import verify_routing  # noqa: E402

OURS = ("updown", "segment", "tbtp", "dor")
THEIRS = ("minhop", "updn", "nue", "dor")
LABELS = {("ours", "updown"): "ours: up*/down*", ("ours", "segment"): "ours: SR (segment)",
          ("ours", "tbtp"): "ours: TBTP", ("ours", "dor"): "ours: DOR",
          ("opensm", "minhop"): "OpenSM minhop", ("opensm", "updn"): "OpenSM updn (centre root)",
          ("opensm", "nue"): "OpenSM nue (1 VL)", ("opensm", "dor"): "OpenSM dor"}
LP_LIMIT = 64


def cases(quick=False, large=False):
    """(label, generator spec, our engines, OpenSM engines)."""
    found = [("8x8 mesh", {"kind": "mesh", "dims": [8, 8]}, OURS, THEIRS)]
    if not quick:
        found.append(("8x8 torus, 1 link", {"kind": "torus", "dims": [8, 8]}, OURS[:-1], THEIRS[:-1]))
    sizes = (32,) if quick else (32, 64, 256) + ((1024,) if large else ())
    for size in sizes:
        found.append(("random %d, degree 4 (seed 1)" % size,
                      {"kind": "random", "switches": size, "degree": 4, "seed": 1}, OURS[:-1], THEIRS[:-1]))
    return found


def acyclic(paths):
    """Whether the channel dependency graph of ``paths`` (one lane) has no cycle."""
    graph = nx.DiGraph()
    for path in paths.values():
        graph.add_edges_from(zip(path, path[1:]))
    return nx.is_directed_acyclic_graph(graph)


def run_ours(topology, engine, traffic):
    """Our engine: route, verify (CDG), measure."""
    row = {"side": "ours", "engine": engine}
    start = time.perf_counter()
    try:
        routing = compute_routing(topology, engine)
    except EtherclusterError as exc:
        row.update(status="n/a", reason=str(exc))
        return row
    row["routing_s"] = time.perf_counter() - start
    start = time.perf_counter()
    report = verify_routing(routing)
    row["verify_s"] = time.perf_counter() - start
    row["time_s"] = row["routing_s"] + row["verify_s"]
    paths = routing.paths()
    row.update(status="ok", max_load=metrics.max_channel_load(topology, paths, traffic),
               average_hops=metrics.average_hops(topology, paths, traffic),
               deadlock_free=bool(report["acyclic"]), verified=bool(report["ok"]))
    return row


def run_theirs(topology, engine, traffic, workdir, root):
    """OpenSM's engine against ibsim: route, read the LFTs, measure."""
    row = {"side": "opensm", "engine": engine}
    _text, ports, hca_of = opensm_fabric.net_file(topology)
    try:
        result = opensm_fabric.run_opensm(topology, engine, workdir, root=root if engine == "updn" else None)
        if result["engine_used"] != engine:
            raise opensm_fabric.OpenSMError("the log says OpenSM routed with %r, not %r; %s"
                                            % (result["engine_used"], engine, "; ".join(result["errors"])))
        paths = opensm_fabric.lft_paths(topology, result["lfts"], ports, hca_of)
    except opensm_fabric.OpenSMError as exc:
        row.update(status="failed", reason=str(exc))
        return row
    row.update(status="ok", time_s=result["routing_s"], wall_s=result["wall_s"],
               max_load=metrics.max_channel_load(topology, paths, traffic),
               average_hops=metrics.average_hops(topology, paths, traffic),
               deadlock_free=acyclic(paths), root=root if engine == "updn" else None)
    return row


def run(args):
    """Every case, our engines then OpenSM's; a list of rows."""
    rows = []
    workdir = tempfile.mkdtemp(prefix="opensm-compare-")
    try:
        for label, spec, ours, theirs in cases(args.quick, args.large):
            topology = topology_from_data({"generate": dict(spec, hosts_per_switch=1)})
            traffic = metrics.uniform(topology)
            bound = None
            if len(topology.switches) <= LP_LIMIT and not args.no_lp:
                bound = metrics.lp_lower_bound(topology, traffic)
            root = topology.switch_names()[default_root(topology)]
            found = [run_ours(topology, engine, traffic) for engine in ours]
            found += [run_theirs(topology, engine, traffic, workdir, root) for engine in theirs]
            reference = next((r.get("time_s") for r in found
                              if r["side"] == "opensm" and r["engine"] == "updn" and r["status"] == "ok"), None)
            for row in found:
                row.update(topology=label, switches=len(topology.switches), links=len(topology.links),
                           hosts=len(topology.hosts), lp_bound=bound)
                if row["status"] == "ok":
                    row["ratio_to_lp"] = row["max_load"] / bound if bound else None
                    row["time_over_opensm_updn"] = (row["time_s"] / reference
                                                    if reference and row.get("time_s") is not None else None)
                print("  %-30s %-28s %s" % (label, LABELS[(row["side"], row["engine"])], _short(row)),
                      file=sys.stderr, flush=True)
                rows.append(row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return rows


# ------------------------------------------------------------------ output
def _short(row):
    if row["status"] != "ok":
        return "%s: %s" % (row["status"], row.get("reason", ""))
    return "load %g, %.4f s" % (row["max_load"], row["time_s"] or 0.0)


def _num(value):
    if value is None:
        return "–"
    return "%d" % round(value) if abs(value - round(value)) < 1e-6 else "%.1f" % value


def _seconds(value):
    if value is None:
        return "–"
    if value < 0.1:
        return "%.1f ms" % (value * 1000)
    return "%.2f s" % value


def table(rows):
    """The markdown table of the rows."""
    lines = ["| topology | LP bound | engine | max load | × LP | avg hops | acyclic CDG (1 lane) | "
             "routing time | ÷ OpenSM updn time | OpenSM wall clock (--once) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        head = "| %s | %s | %s " % (row["topology"], _num(row["lp_bound"]), LABELS[(row["side"], row["engine"])])
        if row["status"] != "ok":
            lines.append(head + "| %s: %s | | | | | | |" % (row["status"], row.get("reason", "")[:120]))
            continue
        ratio = row.get("time_over_opensm_updn")
        lines.append(head + "| %s | %s | %.2f | %s | %s | %s | %s |" % (
            _num(row["max_load"]), "%.2f×" % row["ratio_to_lp"] if row.get("ratio_to_lp") else "–",
            row["average_hops"], "yes" if row["deadlock_free"] else "**no**", _seconds(row["time_s"]),
            "%.1f×" % ratio if ratio else "–", _seconds(row.get("wall_s"))))
    return "\n".join(lines)


def main(argv=None):
    """Run the comparison; 0 also when OpenSM or ibsim is not installed."""
    parser = benchmark_parser(__doc__, quick="only the 8x8 mesh and random 32")
    parser.add_argument("--large", action="store_true", help="also a 1,024-switch random fabric")
    parser.add_argument("--no-lp", action="store_true", help="skip the LP lower bound")
    args = parser.parse_args(argv)
    missing = opensm_fabric.missing_tools()
    if missing:
        print("opensm_compare: not run, missing %s. Install them with:\n    %s\n"
              "(the benchmark needs no root and no InfiniBand hardware: OpenSM runs against ibsim)."
              % (", ".join(missing), opensm_fabric.INSTALL_HINT))
        return 0
    started = time.perf_counter()
    rows = run(args)
    print("# Same run against OpenSM\n")
    print(table(rows))
    print("\n%s, ibsim; %s, Python %s, %d CPU(s); %.0f s in all."
          % (opensm_fabric.opensm_version() or "OpenSM", platform.machine(), platform.python_version(),
             os.cpu_count() or 1, time.perf_counter() - started))
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
