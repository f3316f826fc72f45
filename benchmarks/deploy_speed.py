# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deploy benchmark through ansible-playbook (issue 5 targets: lab bring-up
of 16 switches under 10 s, full deploy of 16 switches under 60 s, a re-run
with no change under 20 s; memory of the 16-switch lab).

Per run, on the default lab topology (inventories/default/topology.yml, a
4x4 torus, one host per switch) under its own lab name:

1. ``playbooks/lab_up.yml``: wall time, and the lab module's own time;
2. ``playbooks/deploy_routing.yml`` (plan, checks, render, push to 16
   switches, verification on the wire): wall time and per stage
   (plan / render / push / verify, from the tasks' durations);
3. the same again: nothing changes (wall time, with the verification);
4. the same with ``-e verify=false`` (the no-change push alone);
5. memory of the lab's processes after the deploy (RSS, PSS per command);
6. ``playbooks/lab_down.yml``.

Everything is wall time as a user sees it (Ansible's start-up included).
The lab is always removed, also after a failure. Needs root, the lab's
packages (``ansible-playbook playbooks/lab_up.yml`` installs them) and the
checkout's .venv (``bash scripts/setup``). It uses the lab name
``bench-deploy`` and 198.18.1.0/24 (RFC 2544 benchmarking range) for
management, so it runs beside the default lab.

    .venv/bin/python benchmarks/deploy_speed.py               # 3 runs, 16 forks
    .venv/bin/python benchmarks/deploy_speed.py --runs 1 --forks 5 --json out.json
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from checkout import ROOT, benchmark_parser, make_importable, write_rows
TOPOLOGY = os.path.join(ROOT, "inventories", "default", "topology.yml")
LAB = "bench-deploy"
STATE_ROOT = "/run/ethercluster-lab"
TARGETS = {"lab_up_s": 10.0, "deploy_s": 60.0, "rerun_s": 20.0}
STAGES = {
    "plan": "Plan routing, VLANs and static MACs; check everything; write the intent",
    "render": "Render every switch's pipeline before any switch is touched",
    "push": "Push the intent (read what the switch holds, compare, write the difference)",
    "verify": "Verify on the wire (pings, planned paths, broadcast, no storm, TCP, STP off)",
}


def playbook(*args):
    """Run ansible-playbook (JSON callback); return (seconds, parsed output)."""
    tool = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".build"),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_NOCOLOR="1",
               ANSIBLE_DEPRECATION_WARNINGS="0")
    started = time.monotonic()
    proc = subprocess.run([tool, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.monotonic() - started
    start = proc.stdout.find("{")
    if proc.returncode != 0 or start < 0:
        raise SystemExit("ansible-playbook %s failed (rc %d):\n%s%s" % (
            " ".join(args), proc.returncode, proc.stdout[-4000:], proc.stderr[-2000:]))
    return seconds, json.loads(proc.stdout[start:])


def _task(data, name):
    for play in data["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].split(" : ", 1)[-1] == name:  # a role's task: "ROLE : name"
                return task
    return None


def _duration(task):
    if task is None or "duration" not in task["task"]:
        return None
    span = task["task"]["duration"]

    def parse(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return round((parse(span["end"]) - parse(span["start"])).total_seconds(), 3)


def stages(data):
    return {stage: _duration(_task(data, name)) for stage, name in STAGES.items()}


def changed_switches(data):
    task = _task(data, STAGES["push"])
    return sum(1 for result in (task or {"hosts": {}})["hosts"].values() if result.get("changed"))


def run_once(forks, out):
    make_importable()
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner

    lab_vars = ["-e", "topology=%s" % TOPOLOGY, "-e", "lab_name=%s" % LAB,
                "-e", "lab_mgmt_network=198.18.1.0/24", "-e", "lab_host_network=10.48.0.0/16"]
    inventory = "%s/%s/inventory.yml" % (STATE_ROOT, LAB)
    deploy = ["-i", TOPOLOGY, "-i", inventory, "-f", str(forks),
              os.path.join("playbooks", "deploy_routing.yml"), "-e", "out=%s" % out]
    runner.lab_down(STATE_ROOT, LAB)
    try:
        up_s, up = playbook(os.path.join("playbooks", "lab_up.yml"), *lab_vars)
        built = _task(up, "Build the lab")["hosts"]["localhost"]
        deploy_s, first = playbook(*deploy)
        layout = runner.read_record(STATE_ROOT, LAB)["layout"]
        memory = runner.memory(layout)
        rerun_s, second = playbook(*deploy)
        push_only_s, third = playbook(*deploy, "-e", "verify=false")
        verified = _task(first, STAGES["verify"])["hosts"]["localhost"]
        down_s, _down = playbook(os.path.join("playbooks", "lab_down.yml"), "-e",
                                 "lab_name=%s" % LAB)
    finally:
        runner.lab_down(STATE_ROOT, LAB)
    return {
        "switches": len(built["summary"]["switches"]), "hosts": len(built["summary"]["hosts"]),
        "forks": forks,
        "lab_up_s": round(up_s, 2), "lab_module_s": built.get("timings", {}).get("total"),
        "deploy_s": round(deploy_s, 2), "deploy_stages_s": stages(first),
        "deploy_changed": changed_switches(first),
        "verification": verified.get("summary"), "verify_checks_s": verified.get("timings"),
        "rerun_s": round(rerun_s, 2), "rerun_stages_s": stages(second),
        "rerun_changed": changed_switches(second),
        "rerun_no_verify_s": round(push_only_s, 2), "rerun_no_verify_changed":
            changed_switches(third),
        "lab_down_s": round(down_s, 2),
        "processes": memory["processes"], "rss_mb": round(memory["rss_kb"] / 1024, 1),
        "pss_mb": round(memory["pss_kb"] / 1024, 1),
        "pss_mb_by_command": {name: round(kb / 1024, 1)
                              for name, kb in memory["pss_kb_by_command"].items()},
    }


def markdown(rows):
    lines = ["| run | forks | lab_up.yml s | deploy s (plan/render/push/verify) | re-run s | "
             "re-run, verify=false s | lab_down.yml s | changed 1st/2nd/3rd | PSS MB (RSS) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for number, row in enumerate(rows, 1):
        st = row["deploy_stages_s"]
        lines.append("| %d | %d | %.1f (module %.1f) | %.1f (%s) | %.1f | %.1f | %.1f | %d/%d/%d | "
                     "%.0f (%.0f) |" % (
                         number, row["forks"], row["lab_up_s"], row["lab_module_s"] or 0,
                         row["deploy_s"], "/".join("%.1f" % (st[k] or 0) for k in STAGES),
                         row["rerun_s"], row["rerun_no_verify_s"], row["lab_down_s"],
                         row["deploy_changed"], row["rerun_changed"],
                         row["rerun_no_verify_changed"], row["pss_mb"], row["rss_mb"]))
    lines.append("")
    for key, target in TARGETS.items():
        values = [row[key] for row in rows]
        lines.append("%s: median %.1f s, max %.1f s (target < %.0f s: %s)" % (
            key, statistics.median(values), max(values), target,
            "met" if max(values) < target else "MISSED"))
    last = rows[-1]
    lines.append("memory of the %d-switch lab after the deploy: %d processes, PSS %.0f MB "
                 "(%s), RSS %.0f MB" % (last["switches"], last["processes"], last["pss_mb"],
                                        ", ".join("%s %.0f" % item for item in
                                                  sorted(last["pss_mb_by_command"].items())),
                                        last["rss_mb"]))
    lines.append("verification: %s; checks s: %s" % (last["verification"],
                                                     last["verify_checks_s"]))
    lines.append("machine: %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count(),
                                                      platform.python_version()))
    return "\n".join(lines)


def main():
    parser = benchmark_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--forks", type=int, default=16)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the lab needs root")
    rows = []
    with tempfile.TemporaryDirectory(prefix="deploy-speed-") as out:
        for _number in range(args.runs):
            rows.append(run_once(args.forks, out))
    print(markdown(rows))
    write_rows(args.json, rows)


if __name__ == "__main__":
    main()
