#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover (docs/failover.md): the coverage and time of the precomputed
backups on small fabrics, and -- with --lab (root, the emulated lab) -- the
recovery measured from 10 ms probes when a link's veth is cut on a ring of
four switches (lab failover4) and link_failed.yml is run, next to the
spanning tree protocols' documented figures. Prints Markdown tables.
Usage: benchmarks/failover_recovery.py [--lab]"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / ".build"
sys.path.insert(0, str(BUILD))
sys.path.insert(0, str(ROOT / "tests" / "integration" / "lab"))

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (  # noqa: E402
    topology_from_data,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover_run import (  # noqa: E402
    failover_document,
)

RENAMED = {"assignment": "renamed", "engine_options": None}
# the fixed assignment's source trees (dell_os6 / huawei_vrp fabrics): a link's backup repairs the trees
TREES = {"assignment": "fixed", "engine_options": {"paths": "source_tree"}}
FABRICS = [("4x4 torus", {"kind": "torus", "dims": [4, 4]}, "segment", RENAMED),
           ("4x4 torus", {"kind": "torus", "dims": [4, 4]}, "updown", RENAMED),
           ("4x4 mesh", {"kind": "mesh", "dims": [4, 4]}, "dor", RENAMED),
           ("4x4 torus, source trees", {"kind": "torus", "dims": [4, 4]}, "segment", TREES),
           ("4x4 torus, source trees", {"kind": "torus", "dims": [4, 4]}, "updown", TREES)]
# IEEE 802.1D: max age 20 s + 2 x forward delay 15 s; IEEE 802.1w: handshake on point-to-point links
PROTOCOLS = [("STP (IEEE 802.1D), documented", "30-50 s", "every frame meanwhile"),
             ("RSTP (IEEE 802.1w), documented", "about 1 s or less", "every frame meanwhile")]


def coverage_table() -> list[str]:
    """Precomputed backups per fabric: covered failures and time."""
    lines = ["| fabric, engine | covered | links | switches | pairs detoured / disjoint | switches flipped first "
             "(mean) | seconds |", "|---|---|---|---|---|---|---|"]
    for name, spec, engine, settings in FABRICS:
        topology = topology_from_data({"generate": dict(spec, hosts_per_switch=1)})
        started = time.perf_counter()
        document = failover_document(topology, dict(settings, engine=engine))
        cover = document["coverage"]
        first = [len(entry["switches"]) for entry in document["failures"] if entry["covered"]]
        lines.append("| %s, %s | %d/%d | %d/%d | %d/%d | %d / %d | %.1f | %.2f |" % (
            name, engine, cover["covered"], cover["total"], cover["link"]["covered"], cover["link"]["total"],
            cover["switch"]["covered"], cover["switch"]["total"], cover["pairs_affected"], cover["pairs_disjoint"],
            sum(first) / max(1, len(first)), time.perf_counter() - started))
    return lines


def lab_rows() -> list[str]:
    """One cut on the lab (the lab test's procedure, lab failover4)."""
    spec = importlib.util.spec_from_file_location(
        "failover_lab", ROOT / "tests" / "integration" / "lab" / "test_failover_lab.py")
    lab_test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab_test)
    lab_test.LAB = "failover4"
    directory = Path("/tmp/failover4-benchmark")
    directory.mkdir(exist_ok=True)
    topology = directory / "ring4.yml"
    topology.write_text("plugin: ethercluster.routing.topology\nname: failover4\n"
                        "generate: {kind: torus, dims: [4], hosts_per_switch: 1}\n")
    info = dict(lab_test.build_lab("failover4", topology, "198.18.98.32/27", "10.99.0.0/16"),
                dir=directory, topology=topology)
    try:
        lab_test.play(info, "playbooks/deploy_routing.yml", "-e", "out=%s" % directory, "-e", "verify=false",
                      *lab_test.SETTINGS)
        lab_test.play(info, "playbooks/failover_plan.yml", "-e", "intent=%s" % directory)
        netns = info["layout"]["switches"]["sw2"]["netns"]
        lab_test.probes.start(info["layout"])
        time.sleep(2.0)
        cut = time.time()
        lab_test.netns_exec(netns, "ip", "link", "set", "p3", "down")
        failed = lab_test.failover_result(lab_test.play(info, "playbooks/link_failed.yml", "-e", "link=sw2:3",
                                                        "-e", "intent=%s" % directory))
        time.sleep(2.0)
        summary = lab_test.probes.stop(info["layout"], windows=[{"name": "failover", "start": cut,
                                                                 "end": failed["end"]}])
        recovery = lab_test.recovery_per_pair(summary, cut)
    finally:
        if lab_test.probes.running(info["layout"]):
            lab_test.probes.stop(info["layout"])
        lab_test.runner.lab_down("/run/ethercluster-lab", "failover4")
    hit = {pair: seconds for pair, seconds in recovery.items() if seconds}
    print(json.dumps({"recovery": recovery, "task_seconds": failed["seconds"]}, sort_keys=True), file=sys.stderr)
    return ["| link_failed.yml by hand, ring of 4 (this lab) | %.1f s (worst of %d cut pairs; the task: %.1f s) | %d |"
            % (max(hit.values(), default=0.0), len(hit), failed["seconds"], summary["windows"][0]["lost"])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", action="store_true", help="also measure a cut in the lab (root)")
    args = parser.parse_args()
    print("\n".join(coverage_table()))
    print()
    rows = ["| recovery | time to recover | datagrams lost (10 ms probes, all pairs) |", "|---|---|---|"]
    rows += ["| %s | %s | %s |" % row for row in PROTOCOLS]
    if args.lab:
        if os.geteuid() != 0:
            print("--lab needs root", file=sys.stderr)
            return 2
        rows += lab_rows()
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
