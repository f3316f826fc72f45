#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resident failover responder in the lab (docs/failover.md, "The
resident responder"; root): a ring of four emulated switches (or --torus:
4x4) on lab h3a, deployed, failover_plan.yml, failover_watch.yml started in
the background; UDP probes between every host pair every --interval-ms;
a link's veth cut in its switch's namespace, later set up again; then, with
--switch, every veth of one switch (--switch-name, default sw10 on the
torus), later up again; --repeat N times. With --switch-after-link the
switch fails while the link is still cut (the responder fails it over on
the link's backup), comes back first, and the link last. With --restart the responder is stopped
once the link's failover has settled and another started while the link is still cut (it takes the
held failure over), then the link comes back. Prints, per failure, the time from
the cut to the responder's detection and to the end of its urgent pushes,
the recovery measured from the probes (the send time of the last datagram
lost after the cut, over every pair not attached to a failed switch), the
datagrams lost, the pairs that delivered again last, and the losses of each
return to the base routing.
The responder plans every failure (--preplan-cut: only those cut here) and
arms the base toward all of them, as the role does by default.
Usage: benchmarks/failover_watch_lab.py [--torus] [--switch | --switch-after-link | --restart] [--repeat N]
[--interval-ms 10] [--broadcast contained] [--preplan-cut]"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".build"))
sys.path.insert(0, str(ROOT / "tests" / "integration" / "lab"))

from lab_helpers import ansible_env, build_lab  # noqa: E402

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import probes, runner  # noqa: E402

LAB = "h3a"
STATE_ROOT = "/run/ethercluster-lab"
# the shell that cuts sets itself to real-time priority first (its commands inherit it), so a switch's veths go
# down at one instant as in a power loss; at nice 0 under the switches' forwarding (nice -10) its four veths went
# down over 0.2 s, and the responder saw a switch dying port by port (docs/lab.md, "Cutting a link or a switch")
REALTIME = "chrt -f -p 50 $$ 2>/dev/null || true;"


def _play(info, playbook, *args):
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "ansible-playbook"), "-i", str(info["topology"]), "-i",
                           info["inventory"], playbook, *args], cwd=str(ROOT), env=ansible_env(),
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode:
        raise SystemExit("%s failed: %s %s" % (playbook, proc.stdout[-3000:], proc.stderr[-2000:]))


def _events(log):
    """The responder's events logged so far (a last line it is still writing is left for the next read)."""
    if not log.exists():
        return []
    complete = log.read_text(encoding="utf-8").split("\n")[:-1]
    return [json.loads(line) for line in complete if line.strip()]


def _cut(info, ends, state):
    """Set the veths of ``ends`` down or up, one ``ip -batch`` per switch (a whole switch at once), at
    real-time priority where the kernel allows it (docs/lab.md, "Cutting a link or a switch"); the time
    read just before the first command."""
    by_switch = {}
    for end in ends:
        switch, port = end.split(":")
        by_switch.setdefault(switch, []).append("link set p%s %s" % (port, state))
    at = None
    for switch, commands in by_switch.items():
        done = subprocess.run(["sh", "-c", REALTIME + ' date +%s.%N; printf "%s\\n" "$@" | ip -n "$0" -batch -',
                               info["layout"]["switches"][switch]["netns"], *commands],
                              capture_output=True, text=True, timeout=20, check=True)
        at = at or float(done.stdout.split()[0])
    return at


def run(args):
    directory = Path("/tmp/h3a-watch")
    directory.mkdir(exist_ok=True)
    topology = directory / "fabric.yml"
    dims = "[4, 4]" if args.torus else "[4]"
    topology.write_text("plugin: ethercluster.routing.topology\nname: %s\n"
                        "generate: {kind: torus, dims: %s, hosts_per_switch: 1}\n" % (LAB, dims))
    settings = ["-e", "routing=%s" % ("segment" if args.torus else "updown"), "-e", "assignment=renamed"]
    if args.broadcast:
        settings += ["-e", "broadcast=%s" % args.broadcast]
    if args.reuse and os.path.exists("%s/%s/inventory.yml" % (STATE_ROOT, LAB)):
        info = {"inventory": "%s/%s/inventory.yml" % (STATE_ROOT, LAB), "topology": topology,
                "layout": runner.read_record(STATE_ROOT, LAB)["layout"]}
    else:
        info = dict(build_lab(LAB, topology, "198.18.24.0/26", "10.83.0.0/16"), topology=topology)
    log, stop = directory / "watch.jsonl", directory / "watch.stop"
    for path in (log, stop):
        if path.exists():
            path.unlink()
    watcher = None
    try:
        if not args.reuse:
            _play(info, "playbooks/deploy_routing.yml", "-e", "out=%s" % directory, "-e", "verify=false", *settings)
            _play(info, "playbooks/failover_plan.yml", "-e", "intent=%s" % directory)
        link = args.link or ("sw5:4" if args.torus else "sw2:3")
        switch = args.switch_name or ("sw10" if args.torus else "sw1")
        # the controller has a CPU of its own on a real network: here the lab's controller.sh runs it in
        # a cpu cgroup of its own (every process it starts included) and a session of its own at the lab's
        # session priority (as the molecule scenario torus4x4_failover; docs/lab.md, "The controller's CPU")
        preplan = [link] + ([switch] if args.switch or args.switch_after_link else [])

        def start_watcher():
            return subprocess.Popen(
                ["%s/%s/controller.sh" % (STATE_ROOT, LAB), str(ROOT / ".venv" / "bin" / "ansible-playbook"),
                 "-i", str(topology), "-i", info["inventory"],
                 "playbooks/failover_watch.yml", "-e", "intent=%s" % directory, "-e", "failover_watch_log=%s" % log,
                 "-e", "failover_watch_stop_file=%s" % stop,
                 *(["-e", json.dumps({"failover_watch_preplan": preplan})] if args.preplan_cut else [])],
                cwd=str(ROOT), env=ansible_env(), stdout=open(directory / "watch.out", "a", encoding="utf-8"),
                stderr=subprocess.STDOUT, text=True)
        watcher = start_watcher()
        ready = _wait_for_after(log, 0, ("ready",))
        _wait_for_after(log, 0, ("watching",))       # every switch's poll has answered
        probes.start(info["layout"], interval=args.interval_ms / 1000.0)
        time.sleep(3.0)
        rows = []
        for _round in range(args.repeat):
            if args.restart:
                row, watcher = _restart(info, log, stop, link, watcher, start_watcher)
                rows.append(row)
                continue
            if args.switch_after_link:
                ends = ["%s:%s" % (switch, port) for port in _switch_ports(info, switch)]
                rows += _switch_after_link(info, log, link, switch, ends, _hosts_of(info, switch))
                continue
            rows.append(_one(info, log, [link], "link %s" % link, []))
            if args.switch:
                ends = ["%s:%s" % (switch, port) for port in _switch_ports(info, switch)]
                rows.append(_one(info, log, ends, "switch %s" % switch, _hosts_of(info, switch)))
        stop.write_text("stop\n")
        watcher.wait(timeout=120)
        time.sleep(1.0)
        if args.switch_after_link:      # each row's window runs to the next row's cut
            summary = probes.stop(info["layout"], windows=[
                {"name": row["what"], "start": row["cut"], "end": row["back"], "exclude_hosts": row["gone"]}
                for row in rows], margin_s=0.0)
            for row, window in zip(rows, summary["windows"]):
                row.update(recovered_s=window["last_lost_s"], lost=window["lost"],
                           lost_own_hosts=window.get("excluded", 0), pairs_lost=len(window["pairs"]))
            print(json.dumps({"ready": ready, "rows": rows, "totals": summary["totals"],
                              "outside": summary["outside"]}, indent=1, default=str))
            return
        windows = []
        for row, following in zip(rows, rows[1:] + [None]):
            windows.append({"name": row["what"] + " cut", "start": row["cut"], "end": row["back"],
                            "exclude_hosts": row["gone"]})
            windows.append({"name": row["what"] + " back", "start": row["back"],
                            "end": following["cut"] if following else row["back"] + 3600})
        summary = probes.stop(info["layout"], windows=windows, margin_s=0.0)
        for row, cut, back in zip(rows, summary["windows"][::2], summary["windows"][1::2]):
            row.update(recovered_s=cut["last_lost_s"], lost=cut["lost"], lost_own_hosts=cut.get("excluded", 0),
                       lost_back=back["lost"], lost_back_pairs=back["pairs"], last_lost_back_s=back["last_lost_s"],
                       last_pairs=sorted((cut.get("pairs_last_lost_s") or {}).items(), key=lambda item: -item[1])[:6])
        print(json.dumps({"ready": ready, "rows": rows, "totals": summary["totals"],
                          "outside": summary["outside"]}, indent=1, default=str))
    finally:
        if watcher is not None and watcher.poll() is None:
            stop.write_text("stop\n")
            try:
                watcher.wait(timeout=60)
            except subprocess.TimeoutExpired:
                watcher.kill()
        if probes.running(info["layout"]):
            probes.stop(info["layout"])
        if not args.keep:
            runner.lab_down(STATE_ROOT, LAB)


def _switch_ports(info, switch):
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
    topology = load_topology(str(info["topology"]))
    return [end.port for link in topology.links for end in (link.a, link.b) if end.switch == switch]


def _hosts_of(info, switch):
    return sorted(name for name, host in info["layout"]["hosts"].items() if host.get("switch") == switch)


def _one(info, log, ends, what, gone):
    """Cut ``ends``, wait until the responder has handled it (and its
    background steps), bring them back, wait for the restore. ``gone``: the
    hosts the failure cuts off for good (a failed switch's own)."""
    before = len(_events(log))
    cut = _cut(info, ends, "down")
    handled = _wait_for_after(log, before, ("recovered", "failed", "not_pushed"))
    if handled["event"] == "recovered":
        _wait_for_after(log, before, ("settled",))
    back = _cut(info, ends, "up")
    if handled["event"] == "recovered":
        _wait_for_after(log, before, ("restored", "failed"))
        _wait_for_after(log, before, ("settled",), count=2)
    else:
        _wait_for_after(log, before, ("noted", "restored", "failed"))
    time.sleep(2.0)
    return _row(what, cut, back, gone, _events(log)[before:])


def _row(what, cut, back, gone, entries):
    """One failure's row: its times, and the responder's events ``entries``
    (logged from the cut on) timed from the cut."""
    detected = [entry for entry in entries if entry["event"] == "detected"]
    return {"what": what, "cut": cut, "back": back, "gone": gone,
            "detected_after_s": round(detected[0]["at"] - cut, 3) if detected else None,
            "events": [(entry["event"], round(entry["at"] - cut, 3), entry.get("seconds_from_detection"),
                        entry.get("steps")) for entry in entries if entry["event"] != "detected"]}


def _restart(info, log, stop, link, watcher, start_watcher):
    """Cut ``link``; once failed over and settled, stop the responder
    (its stop file) and start another while the link is still cut: it
    takes the held failure over (``resumed``); then bring the link back
    (the new responder's restore). Returns the row (as :func:`_one`, with
    the new responder's ready) and the new responder's process."""
    before = len(_events(log))
    cut = _cut(info, [link], "down")
    handled = _wait_for_after(log, before, ("recovered", "failed"))
    if handled["event"] == "recovered":
        _wait_for_after(log, before, ("settled",))
    stop.write_text("stop\n")
    watcher.wait(timeout=120)
    stop.unlink()
    restarted = len(_events(log))
    started = time.time()
    watcher = start_watcher()
    ready = _wait_for_after(log, restarted, ("ready",))
    _wait_for_after(log, restarted, ("watching",))
    time.sleep(2.0)
    back = _cut(info, [link], "up")
    _wait_for_after(log, restarted, ("restored", "failed"))
    _wait_for_after(log, restarted, ("settled",))
    time.sleep(2.0)
    row = _row("link %s, the responder restarted while it is cut" % link, cut, back, [], _events(log)[before:])
    row["restart"] = {"resumed": ready.get("resumed"), "ready_s": ready["seconds"],
                      "ready_after_start_s": round(ready["at"] - started, 3)}
    return row, watcher


def _switch_after_link(info, log, link, switch, ends, gone):
    """Cut ``link``; once failed over, fail ``switch`` (its veths ``ends``)
    while the link is still cut; bring the switch back first (rejoined,
    the held routing stays while the link is cut: its hosts stay cut
    off), then the link (the restore). Rows as :func:`_one` makes them:
    the link's cut, the switch's cut, the switch back while the link is
    cut (its own hosts excluded), the link back."""
    rows = []
    steps = [("link %s" % link, [link], "down", ("recovered", "failed"), []),
             ("switch %s while link %s is cut" % (switch, link), ends, "down",
              ("recovered", "failed", "not_pushed"), gone),
             ("switch %s back while link %s is cut" % (switch, link), ends, "up", ("waiting", "restored", "noted", "failed"),
              gone),
             ("link %s back" % link, [link], "up", ("restored", "failed"), [])]
    for what, cut_ends, state, kinds, excluded in steps:
        before = len(_events(log))
        at = _cut(info, cut_ends, state)
        handled = _wait_for_after(log, before, kinds)
        if handled["event"] in ("recovered", "restored"):
            _wait_for_after(log, before, ("settled",))
        time.sleep(2.0)
        entries = _events(log)[before:]
        detected = [entry for entry in entries if entry["event"] == "detected"]
        if rows:
            rows[-1]["back"] = at
        rows.append({"what": what, "cut": at, "gone": excluded, "handled": handled["event"],
                     "detected_after_s": round(detected[0]["at"] - at, 3) if detected else None,
                     "events": [(entry["event"], round(entry["at"] - at, 3), entry.get("seconds_from_detection"),
                                 entry.get("steps")) for entry in entries if entry["event"] != "detected"]})
    rows[-1]["back"] = time.time() + 3600
    return rows


def _wait_for_after(log, before, kinds, count=1, timeout=900.0):
    """The ``count``-th event of ``kinds`` logged after the first ``before`` entries."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = [entry for entry in _events(log)[before:] if entry["event"] in kinds]
        if len(found) >= count:
            return found[count - 1]
        time.sleep(0.2)
    raise SystemExit("no %s event within %g s: %s" % (kinds, timeout, _events(log)[-5:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torus", action="store_true", help="a 4x4 torus (default: a ring of four)")
    parser.add_argument("--switch", action="store_true", help="also fail a whole switch")
    parser.add_argument("--switch-after-link", action="store_true",
                        help="fail the switch while the link is cut (the backup of the link's backup), bring the "
                             "switch back first, then the link")
    parser.add_argument("--restart", action="store_true",
                        help="restart the responder while the link's backup holds (the new one takes it over), "
                             "then bring the link back")
    parser.add_argument("--switch-name", help="the switch to fail (default sw10 on the torus, sw1 on the ring)")
    parser.add_argument("--repeat", type=int, default=1, help="fail the link (and the switch) this many times")
    parser.add_argument("--link", help="the link to cut (an end)")
    parser.add_argument("--interval-ms", type=float, default=10.0)
    parser.add_argument("--broadcast", help="the fabric's broadcast setting (torus4x4_failover: contained; "
                                            "default: the built-in one)")
    parser.add_argument("--preplan-cut", action="store_true",
                        help="plan only the failures cut here (default: every failure, as the role does; the "
                             "base is armed toward the backups planned)")
    parser.add_argument("--reuse", action="store_true", help="the lab h3a is up and deployed: reuse it")
    parser.add_argument("--keep", action="store_true", help="leave the lab up")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 2
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
