#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Power saving benchmark (issue 7): the switch-tagged paper's on/off link
regulation scenarios (§5.4.2, Fig. 12/13) with the power of Table 2.

* fully connected: 8 switches, 2 links per pair, 8 hosts per switch
  (64 hosts), up*/down* routing (paper Fig. 12a: complete graph, 2 links);
* torus: 4x4, 3 links per neighbour pair, 4 hosts per switch (64 hosts),
  DOR (paper Fig. 12b/13: torus with 3 links between switches);
* traffic (host level, §5.3): all-to-all, nearest-neighbour (1-D ring in
  host order), bit-reversal, matrix transpose;
* profiles PC5324 and PC6248 on every switch.

For each case: the paper's greedy selector and our search selector, on/off
only and with multispeed (1000/100/10 Mb/s), all at a maximum channel
utilisation no higher than with every link on. The on/off-only search does
not depend on the profile when all switches share one (every link saves the
same watts), so it runs once and is priced for both profiles.

    python benchmarks/power_saving.py                     # the table (~1 min; 2 with --torus-engines dor updown)
    python benchmarks/power_saving.py --quick             # smaller budget, 2 patterns
    python benchmarks/power_saving.py --torus-engines dor updown --json out.json
"""

from __future__ import annotations

import platform
import sys
import time

from checkout import benchmark_parser, make_importable, write_rows

make_importable()

# pylint: disable=wrong-import-position
from ansible_collections.ethercluster.routing.plugins.module_utils.power import (
    selection as link_selection,
)  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.power.model import (
    LinkPowerModel,
)  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

PATTERNS = ("all_to_all", "nearest_neighbour", "bit_reversal", "transpose")
PROFILES = ("PC5324", "PC6248")
MULTISPEED = (1000, 100, 10)


def scenarios(torus_engines):
    complete = {"kind": "complete", "switches": 8, "links_per_pair": 2, "hosts_per_switch": 8}
    torus = {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 3, "hosts_per_switch": 4}
    yield "complete 8, 2 links/pair", complete, "updown"
    for engine in torus_engines:
        yield "torus 4x4, 3 links/pair", torus, engine


def run_case(label, spec, engine, pattern, budget, seed):
    topology = topology_from_data({"generate": spec})
    started = time.perf_counter()
    problem = link_selection.LinkSelectionProblem(topology, pattern, engine)
    rows = []
    search_on_off = link_selection.search_selection(
        topology, pattern, engine, problem=problem, speeds=(), max_evaluations=budget, seed=seed)
    for profile in PROFILES:
        greedy_on_off = link_selection.greedy_selection(
            topology, pattern, engine, problem=problem, speeds=(), default_profile=profile)
        greedy_multi = link_selection.greedy_selection(
            topology, pattern, engine, problem=problem, speeds=MULTISPEED, default_profile=profile)
        search_multi = link_selection.search_selection(
            topology, pattern, engine, problem=problem, speeds=MULTISPEED,
            default_profile=profile, max_evaluations=budget, seed=seed)
        model = LinkPowerModel(topology, default_profile=profile)
        search_off_w = model.total(search_on_off.links_off)
        before = model.total()
        results = (greedy_on_off, greedy_multi, search_multi)
        worst_after = max([r.max_utilisation_after for r in results]
                          + [search_on_off.max_utilisation_after])
        rows.append({
            "topology": label, "engine": engine, "traffic": pattern, "profile": profile,
            "links": len(topology.links), "watts_all_on": round(before, 1),
            "greedy_on_off": {"off": len(greedy_on_off.links_off),
                              "saved_pct": round(greedy_on_off.saved_pct, 1)},
            "greedy_multispeed": {"off": len(greedy_multi.links_off),
                                  "slowed": len(greedy_multi.speeds),
                                  "saved_pct": round(greedy_multi.saved_pct, 1)},
            "search_on_off": {"off": len(search_on_off.links_off),
                              "saved_pct": round(100 * (before - search_off_w) / before, 1)},
            "search_multispeed": {"off": len(search_multi.links_off),
                                  "slowed": len(search_multi.speeds),
                                  "saved_pct": round(search_multi.saved_pct, 1)},
            "max_load": problem.baseline.max_load,
            "max_utilisation_ratio": round(worst_after / problem.limit, 6) if problem.limit else 0,
        })
    elapsed = time.perf_counter() - started
    for row in rows:
        row["routings"] = problem.evaluations
        row["seconds"] = round(elapsed, 1)
    return rows


def markdown(rows):
    lines = [
        "| topology | engine | traffic | profile | W all on | greedy on/off | greedy multispeed "
        "| search on/off | search multispeed | max load (after ÷ before) | routings, s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            "| %s | %s | %s | %s | %.1f | %.1f %% (%d off) | %.1f %% (%d off, %d slow) "
            "| %.1f %% (%d off) | **%.1f %%** (%d off, %d slow) | %g (%.2f) | %d, %.0f |" % (
                r["topology"], r["engine"], r["traffic"].replace("_", "-"), r["profile"],
                r["watts_all_on"],
                r["greedy_on_off"]["saved_pct"], r["greedy_on_off"]["off"],
                r["greedy_multispeed"]["saved_pct"], r["greedy_multispeed"]["off"],
                r["greedy_multispeed"]["slowed"],
                r["search_on_off"]["saved_pct"], r["search_on_off"]["off"],
                r["search_multispeed"]["saved_pct"], r["search_multispeed"]["off"],
                r["search_multispeed"]["slowed"],
                r["max_load"], r["max_utilisation_ratio"], r["routings"], r["seconds"]))
    return "\n".join(lines)


def main(argv=None):
    parser = benchmark_parser(__doc__, quick="budget 60, only all-to-all and bit-reversal")
    parser.add_argument("--evaluations", type=int, default=400,
                        help="search budget: link sets per search run (default 400)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torus-engines", nargs="+", default=["dor"],
                        help="engines for the torus (default: dor)")
    args = parser.parse_args(argv)
    budget = 60 if args.quick else args.evaluations
    patterns = ("all_to_all", "bit_reversal") if args.quick else PATTERNS
    started = time.perf_counter()
    rows = []
    for label, spec, engine in scenarios(args.torus_engines):
        for pattern in patterns:
            rows.extend(run_case(label, spec, engine, pattern, budget, args.seed))
            elapsed = time.perf_counter() - started
            print("  done: %s, %s, %s (%.0f s)" % (label, engine, pattern, elapsed),
                  file=sys.stderr, flush=True)
    print(markdown(rows))
    best = max(r["search_multispeed"]["saved_pct"] for r in rows)
    best_greedy = max(r["greedy_on_off"]["saved_pct"] for r in rows)
    print()
    print("Best saving: greedy on/off %.1f %% (paper: up to 19-25 %%), search with multispeed "
          "%.1f %% (goal >= 30 %%). Search budget %d link sets, seed %d; total %.0f s on %s, "
          "Python %s." % (best_greedy, best, budget, args.seed, time.perf_counter() - started,
                          platform.machine(), platform.python_version()))
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
