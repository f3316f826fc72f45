# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab bring-up benchmark (issue 5 target: 16 switches under 10 s).

Builds the lab of a generated topology (default: the default lab's 4x4
torus, one host per switch) with the lab runner (what the ``lab`` module
does, without Ansible's start-up), measures the wall time per phase and in
total, the memory of the lab's processes (RSS and PSS, per command), and
the teardown time; repeats ``--runs`` times and prints markdown
(``--json FILE`` writes the rows). Needs root and the lab's packages
(``ansible-playbook playbooks/lab_up.yml`` installs them). The lab is named
``bench`` and uses 203.0.113.128/25 for management, so it can run beside a
default lab.

    python benchmarks/lab_bringup.py                 # 4x4 torus, 3 runs
    python benchmarks/lab_bringup.py --dims 8 8 --runs 1
"""

from __future__ import annotations

import os
import platform
import statistics
import time

from checkout import benchmark_parser, make_importable, write_rows


def run(dims, kind, hosts_per_switch, runs, mgmt_network):
    make_importable()
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import (
        lab_layout,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        topology_from_data,
    )

    topology = topology_from_data({"name": "bench", "generate": {
        "kind": kind, "dims": list(dims), "hosts_per_switch": hosts_per_switch}})
    layout = lab_layout(topology, name="bench", mgmt_network=mgmt_network,
                        host_network="10.45.0.0/16")
    runner.lab_down(layout["state_root"], "bench")
    rows = []
    for number in range(runs):
        started = time.monotonic()
        result = runner.lab_up(layout)
        up = time.monotonic() - started
        memory = runner.memory(layout)
        started = time.monotonic()
        runner.lab_down(layout["state_root"], "bench")
        down = time.monotonic() - started
        rows.append({"run": number + 1, "switches": len(topology.switches),
                     "hosts": len(topology.hosts), "links": len(topology.links),
                     "bring_up_s": round(up, 3), "phases_s": result["timings"],
                     "teardown_s": round(down, 3), "processes": memory["processes"],
                     "rss_mb": round(memory["rss_kb"] / 1024, 1),
                     "pss_mb": round(memory["pss_kb"] / 1024, 1),
                     "pss_mb_by_command": {name: round(kb / 1024, 1) for name, kb in
                                           memory["pss_kb_by_command"].items()}})
    return rows


def markdown(rows):
    lines = ["| run | switches | hosts | links | bring-up s | teardown s | processes | "
             "RSS MB | PSS MB | PSS MB per command |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| %d | %d | %d | %d | %.2f | %.2f | %d | %.0f | %.0f | %s |" % (
            row["run"], row["switches"], row["hosts"], row["links"], row["bring_up_s"],
            row["teardown_s"], row["processes"], row["rss_mb"], row["pss_mb"],
            ", ".join("%s %.0f" % item for item in sorted(row["pss_mb_by_command"].items()))))
    ups = [row["bring_up_s"] for row in rows]
    lines.append("")
    lines.append("bring-up: median %.2f s, max %.2f s; phases of the last run: %s" % (
        statistics.median(ups), max(ups),
        ", ".join("%s %.2f" % item for item in rows[-1]["phases_s"].items())))
    lines.append("machine: %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count(),
                                                      platform.python_version()))
    return "\n".join(lines)


def main():
    parser = benchmark_parser(__doc__)
    parser.add_argument("--dims", type=int, nargs="+", default=[4, 4])
    parser.add_argument("--kind", default="torus", choices=["torus", "mesh"])
    parser.add_argument("--hosts-per-switch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mgmt-network", default="203.0.113.128/25")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the lab needs root")
    rows = run(args.dims, args.kind, args.hosts_per_switch, args.runs, args.mgmt_network)
    print(markdown(rows))
    write_rows(args.json, rows)


if __name__ == "__main__":
    main()
