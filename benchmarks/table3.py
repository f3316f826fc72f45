#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table 3 benchmark (issue 13): VLANs per fabric of the switch-tagged
paper (§4.1, Table 3) against the project's, for every row (mesh, mesh
with one link off, torus, torus with one link off, fat tree) and k = 3..8,
n = 2, 3: the paper's fixed / renamed counts, ours with the engine option
``paths: paper``, and ours with the engine's default (balanced,
per-destination) paths, with the maximum channel load of both path sets
under uniform traffic (one host per switch).

    python benchmarks/table3.py            # prints the markdown table
    python benchmarks/table3.py --quick    # n = 2 and the fat trees only
"""

from __future__ import annotations

import sys
import time

from checkout import make_importable, report, start

make_importable()

from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import assign_vlans  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import path_metrics  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import cdg  # noqa: E402


def one_x_cable_down(topology):
    """The first cable between (0, 1, 0..) and (1, 1, 0..), as the tests take it."""
    for link in topology.links:
        a, b = topology.switches[link.a.switch].coords, topology.switches[link.b.switch].coords
        if {a[0], b[0]} == {0, 1} and a[1:] == b[1:] and a[1] == 1 and not any(a[2:]):
            return [link.index]
    raise ValueError("no x-link above the lowest row")


def grid_rows(k, n):
    """(row, spec, down?, paper counts, default engine) of the grid rows."""
    mesh = {"kind": "mesh", "dims": [k] * n}
    torus = {"kind": "torus", "dims": [k] * n, "links_per_neighbor": 2}
    detour = "north_last" if n == 2 else "dor"
    return [
        ("mesh", mesh, False, (k ** (n - 1), n), "dor"),
        ("mesh, 1 link off", mesh, True, ((k + 1) * k ** (n - 2), n), detour),
        ("torus", torus, False, (2 * k ** (n - 1), 3 * n), "dor"),
        ("torus, 1 link off", torus, True, (2 * (k + 1) * k ** (n - 2), 3 * n), "dor"),
    ]


def counts(routing):
    """(fixed or "refused", renamed, max channel load) of a routing."""
    try:
        fixed = assign_vlans(routing, "fixed").vlans_used
    except EtherclusterError:
        fixed = "refused"
    return fixed, assign_vlans(routing, "renamed").vlans_used, path_metrics(routing)["max_channel_load"]


def measure(row, spec, size, cable_down, paper, engine, paper_engine):
    """One line: the paper's counts, ours with paths: paper and with the
    engine's default paths."""
    topology = topology_from_data({"generate": spec})
    down = one_x_cable_down(topology) if cable_down else []
    result = {"row": row, "size": size, "paper": list(paper), "engine": engine}
    started = time.perf_counter()
    routing = compute_routing(topology, paper_engine, down=down, paths="paper")
    assert cdg.verify_routing(routing)["ok"]
    result["paper_paths"] = list(counts(routing))
    result["paper_paths_s"] = round(time.perf_counter() - started, 2)
    try:
        result["default_paths"] = list(counts(compute_routing(topology, engine, down=down)))
    except EtherclusterError as exc:
        result["default_paths"] = ["refused: " + str(exc).split(";", maxsplit=1)[0][:70]]
    return result


def table(rows):
    lines = ["| row | size | paper fixed / renamed | `paths: paper` fixed / renamed | max load | "
             "default paths (engine) fixed / renamed | max load |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        ours = row["paper_paths"]
        default = row["default_paths"]
        theirs = ("%s / %s | %d" % tuple(default) if len(default) == 3 else "%s | –" % default[0])
        lines.append("| %s | %s | %d / %d | %s / %s | %d | %s: %s |" % (
            row["row"], row["size"], row["paper"][0], row["paper"][1], ours[0], ours[1], ours[2],
            row["engine"], theirs))
    return "\n".join(lines)


def main(argv=None):
    args, started = start(__doc__, argv, quick="n = 2 and the fat trees only")
    rows = []
    for n in (2,) if args.quick else (2, 3):
        for k in range(3, 9):
            for row, spec, cable_down, paper, engine in grid_rows(k, n):
                rows.append(measure(row, spec, "x".join([str(k)] * n), cable_down, paper, engine, "dor"))
                print("measured %s %s" % (row, rows[-1]["size"]), file=sys.stderr)
    for u, d, r in ((2, 4, 1), (3, 3, 1), (2, 4, 2), (3, 6, 2), (4, 4, 2)):
        spec = {"kind": "fat_tree", "u": u, "d": d, "r": r}
        rows.append(measure("fat tree", spec, "(%d,%d,%d)" % (u, d, r), False, (u ** r, u),
                            "updown", "updown"))
    report("Table 3", started, table(rows), args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
