#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Distribution policies of a multi-port node (issue 17 item 3): the PMCME
paper's policy against LACP (Linux bonding's layer2, layer2+3, layer3+4
hashes) and packet round robin, on the paper's traffic shapes.

The paper's cluster (§5): 8 nodes, 8 Gigabit ports each, 8 processes per
node (8p), frames of 1,518 bytes; every stream carries one 64 KiB message.
pmcme, LACP and single run on the planes design (port X on switch X);
round_robin runs on the planes design and on the paper's Fig. 9 (a) (two
switches of 4 ports per node, one MAC on every port: the switches deliver
where they last learned it). The LACP rows use random MAC addresses (the
NICs' own); the trunk column is Fig. 19's (the LACP fabric: half the nodes
per switch, 8 trunk links hashed with the same policy). Each figure is the
mean over the seeds, with the worst seed in brackets (balance: highest;
out of order: highest).

    python benchmarks/planes_sim.py                  # the table (~1 min)
    python benchmarks/planes_sim.py --quick          # 2 seeds
    python benchmarks/planes_sim.py --json out.json
"""

from __future__ import annotations

import sys

from checkout import make_importable, report, start

make_importable()

# pylint: disable=wrong-import-position
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes_sim import (  # noqa: E402
    SHAPES,
    configure,
    simulate,
)

LABELS = {"all_to_all": "all-to-all (FT, IS)", "neighbours": "neighbours (LU)", "butterfly": "butterfly (CG)",
          "one_to_many": "one-to-many", "many_to_one": "many-to-one", "one_to_one": "one-to-one"}
POLICIES = [("pmcme", {}), ("layer2", {}), ("layer2+3", {}), ("layer3+4", {}), ("round_robin", {}),
            ("round_robin", {"switches": 2}), ("single", {})]


def _cell(values, digits=2, worst=max):
    mean = sum(values) / len(values)
    if len(set(values)) == 1:
        return "%.*f" % (digits, mean)
    return "%.*f (%.*f)" % (digits, mean, digits, worst(values))


def run(seeds):
    """Every (shape, policy) over ``seeds``: the rows and the table's lines."""
    rows, lines = [], [
        "| shape | policy | tx max/mean | rx max/mean | out of order % | time / ideal | LACP trunk links used |",
        "|---|---|---|---|---|---|---|"]
    for shape in SHAPES:
        for policy, fields in POLICIES:
            results = [simulate(configure(seed=seed, **fields), shape, policy) for seed in seeds]
            name = policy + (" (2 switches)" if fields else "")
            trunk = "%s of 8" % _cell([r["trunk"]["links_used"] for r in results], 1, min) if "trunk" in results[0] \
                and shape not in ("one_to_one",) else "-"
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                LABELS[shape], name, _cell([r["tx_balance"] for r in results]), _cell([r["rx_balance"] for r in results]),
                _cell([r["out_of_order_pct"] for r in results], 1), _cell([r["time_over_ideal"] for r in results]), trunk))
            rows.append({"shape": shape, "policy": name, "seeds": list(seeds),
                         "results": [{key: value for key, value in r.items() if key not in ("shape", "policy")}
                                     for r in results]})
    return rows, lines


def main(argv):
    """Print the table."""
    args, started = start(__doc__, argv, quick="2 seeds instead of 5")
    seeds = range(2) if args.quick else range(5)
    rows, lines = run(seeds)
    report("Distribution policies: 8 nodes x 8 ports, 8 processes per node, 64 KiB per stream, seeds %d-%d"
           % (seeds[0], seeds[-1]), started, "\n".join(lines), args.json, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
