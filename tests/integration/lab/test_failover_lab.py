"""Failover on a real lab (a ring of four emulated switches, lab failtest):
UDP probes every 10 ms between every host pair; the carrier of one link is
cut (ip link set ... down on one end's veth, in the switch's namespace),
link_failed.yml applies the precomputed failover, then the link comes back
and link_restored.yml returns to the base routing.

Proves: failover_plan.yml stores the backups beside the deployed intent; the
failover applies the stored backup, changes only what it planned and
every pair delivers again after it (recovery per pair measured from the
probes: the send time of its last lost datagram after the cut); a second
run changes nothing; the return to the base routing loses no datagram and
leaves the switches holding the deployed routing in the other bank. The
responder's carrier poll on these real switches wakes on the cut's port-status
message, not when its hold ends. A responder started while the fabric holds
a failover's backup (applied by hand, or by a responder that died) takes
that failure over and restores the base when the link is back."""

import json
import subprocess
import threading
import time

import pytest
from lab_helpers import ansible_playbook, build_lab, held_pipelines, netns_exec, tasks_by_name

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import probes, runner

pytestmark = pytest.mark.lab

LAB = "failtest"
STATE_ROOT = "/run/ethercluster-lab"
LINK = "sw2:3"          # sw2:3--sw3:2 of the ring (updown: its failure has a backup)
SETTINGS = ["-e", "routing=updown", "-e", "assignment=renamed"]


def play(lab, playbook, *args):
    proc = ansible_playbook("-i", str(lab["topology"]), "-i", lab["inventory"], playbook, *args,
                            controller=lab["layout"]["lab"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return tasks_by_name(proc.stdout)


def failover_result(tasks):
    found = [hosts["localhost"] for name, hosts in tasks.items() if name.startswith("Failover: ")]
    assert len(found) == 1, sorted(tasks)
    return found[0]


def recovery_per_pair(summary, cut):
    """{pair: seconds from the cut to the send time of its last lost datagram}
    (0 for a pair that lost nothing after the cut)."""
    directory = summary["directory"]
    results = {}
    for name in json.load(open("%s/%s" % (directory, probes.RECORD), encoding="utf-8"))["hosts"]:
        with open("%s/%s.json" % (directory, name), encoding="utf-8") as handle:
            results[name] = json.load(handle)
    recovery = {}
    for source, sender in results.items():
        for target, receiver in results.items():
            if source == target:
                continue
            _entry, missing = probes._pair_counts(sender, receiver, source, target, summary["since"])
            times = [sender["start"] + sender["ticks_ms"][n] / 1000.0 for n in missing]
            after = [when - cut for when in times if when >= cut - 0.05]
            recovery["%s->%s" % (source, target)] = round(max(after), 3) if after else 0.0
    return recovery


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    directory = tmp_path_factory.mktemp("failover")
    topology = directory / "ring4.yml"
    topology.write_text("plugin: ethercluster.routing.topology\nname: failtest\n"
                        "generate: {kind: torus, dims: [4], hosts_per_switch: 1}\n")
    info = dict(build_lab(LAB, topology, "198.18.98.0/27", "10.98.0.0/16"), dir=directory, topology=topology)
    play(info, "playbooks/deploy_routing.yml", "-e", "out=%s" % directory, "-e", "verify=false", *SETTINGS)
    yield info
    if probes.running(info["layout"]):
        probes.stop(info["layout"])
    runner.lab_down(STATE_ROOT, LAB)


def test_cut_failover_and_return(lab):
    tasks = play(lab, "playbooks/failover_plan.yml", "-e", "intent=%s" % lab["dir"])
    assert failover_result(tasks)["coverage"]["link"]["covered"] >= 3
    assert (lab["dir"] / "failover.json").exists() and (lab["dir"] / "failover.md").exists()
    switch, port = LINK.split(":")
    netns = lab["layout"]["switches"][switch]["netns"]
    probes.start(lab["layout"])
    windows = []
    try:
        time.sleep(2.0)
        cut = time.time()
        netns_exec(netns, "ip", "link", "set", "p" + port, "down")
        tasks = play(lab, "playbooks/link_failed.yml", "-e", "link=%s" % LINK, "-e", "intent=%s" % lab["dir"])
        failed = failover_result(tasks)
        assert failed["changed"] and failed["stored"] and failed["reason"] == "fresh"
        assert not failed["proof"]["drain"] and failed["proof"]["order_free"]
        windows.append({"name": "failover", "start": cut, "end": failed["end"]})
        again = failover_result(play(lab, "playbooks/link_failed.yml", "-e", "link=%s" % LINK,
                                     "-e", "intent=%s" % lab["dir"]))
        assert not again["changed"] and "done already" in again["reason"]
        time.sleep(2.0)
        netns_exec(netns, "ip", "link", "set", "p" + port, "up")
        time.sleep(2.0)
        back = failover_result(play(lab, "playbooks/link_restored.yml", "-e", "link=%s" % LINK,
                                    "-e", "intent=%s" % lab["dir"]))
        assert back["changed"] and back["bank_after"] == "A"
        windows.append({"name": "restore", "start": back["start"], "end": back["end"]})
        time.sleep(1.0)
    finally:
        summary = probes.stop(lab["layout"], windows=windows)
    lost = {window["name"]: window["lost"] for window in summary["windows"]}
    recovery = recovery_per_pair(summary, cut)
    print("failover: lost %d datagrams; recovery per pair (s): %s; failover task %.2f s"
          % (lost["failover"], json.dumps(recovery, sort_keys=True), failed["seconds"]))
    assert lost["restore"] == 0 and summary["outside"] == 0
    # every pair delivers again once the failover task has ended
    assert max(recovery.values()) <= failed["end"] - cut + 0.2
    assert summary["totals"]["duplicates"] == 0


def test_the_long_poll_wakes_on_the_switchs_port_status_message(lab):
    """The responder's carrier poll (failover_watch.carriers_script) on a
    real Open vSwitch: it answers when the cut's port-status message comes,
    not when its hold ends (the hold is 30 s here, the cut after 1 s)."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_watch as fw

    switch, port = LINK.split(":")
    peer = lab["layout"]["switches"][switch]["ports"][port]["peer"]          # the other end sees the carrier go
    peer_switch, peer_port = peer.split(":")
    where = lab["layout"]["switches"][peer_switch]

    def poll(script):
        return ["ip", "netns", "exec", where["netns"], "env", "OVS_RUNDIR=%s" % where["dir"], "sh", "-c", script]

    first = subprocess.run(poll(fw.carriers_script("br0")), capture_output=True, text=True, timeout=30, check=True)
    assert fw.parse_carriers(first.stdout)[peer_port] == "up"
    started = time.monotonic()
    waiting = subprocess.Popen(poll(fw.carriers_script("br0", fw.carrier_line(first.stdout), hold_s=30.0,
                                                       interval_s=30.0)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        netns_exec(lab["layout"]["switches"][switch]["netns"], "ip", "link", "set", "p" + port, "down")
        out, err = waiting.communicate(timeout=60)
        seconds = time.monotonic() - started
    finally:
        netns_exec(lab["layout"]["switches"][switch]["netns"], "ip", "link", "set", "p" + port, "up")
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, err
    assert fw.parse_carriers(out)[peer_port] == "down"
    # woken by the message: neither the 30 s hold nor the 30 s read interval ended
    assert seconds < 20.0, "the poll answered after %.1f s" % seconds


def test_the_responder_reads_the_switches_through_kept_shells(lab, tmp_path):
    """failover_watch in check mode for a few seconds: every switch is read
    through a shell kept open over network_cli (posix_shell plugins), the
    reads parse into the base routing (else the responder refuses), and no
    switch fell back to an SSH session per script."""
    log = tmp_path / "watch.jsonl"
    tasks = play(lab, "playbooks/failover_watch.yml", "--check", "-e", "intent=%s" % lab["dir"],
                 "-e", "failover_watch_log=%s" % log, "-e", "failover_watch_duration_s=3",
                 "-e", json.dumps({"failover_watch_preplan": [LINK]}))
    result = tasks["Watch every fabric port's carrier and fail over"]["localhost"]
    assert "kept_shells" in result, result
    assert result["kept_shells"] == ["sw0", "sw1", "sw2", "sw3"]
    events = [json.loads(line)["event"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert events[0] == "ready" and "failed" not in events


def test_a_responder_started_on_a_held_failover_takes_it_over_and_restores_the_base(lab, tmp_path):
    """The link cut and failed over by hand (link_failed.yml: the fabric in
    bank B), then failover_watch.yml started: its ready resumes that
    failure (nothing written), and the link's return runs the planned
    restore; on stopping it writes the plain base back, so every switch
    holds exactly what it held before the cut."""
    before = held_pipelines(lab["layout"])
    switch, port = LINK.split(":")
    netns = lab["layout"]["switches"][switch]["netns"]
    log = tmp_path / "watch.jsonl"
    watched = threading.Event()

    def bring_the_link_back():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not watched.is_set():
            if log.exists() and '"event": "watching"' in log.read_text(encoding="utf-8"):
                time.sleep(1.0)
                netns_exec(netns, "ip", "link", "set", "p" + port, "up")
                return
            time.sleep(0.2)

    netns_exec(netns, "ip", "link", "set", "p" + port, "down")
    try:
        failed = failover_result(play(lab, "playbooks/link_failed.yml", "-e", "link=%s" % LINK,
                                      "-e", "intent=%s" % lab["dir"]))
        assert failed["changed"] and held_pipelines(lab["layout"]) != before
        returner = threading.Thread(target=bring_the_link_back, daemon=True)
        returner.start()
        play(lab, "playbooks/failover_watch.yml", "-e", "intent=%s" % lab["dir"], "-e", "failover_watch_log=%s" % log,
             "-e", "failover_watch_max_events=1", "-e", "failover_watch_duration_s=240",
             "-e", json.dumps({"failover_watch_preplan": [LINK]}))
    finally:
        watched.set()
        netns_exec(netns, "ip", "link", "set", "p" + port, "up")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    handled = [entry for entry in events if entry["event"] in ("recovered", "restored", "failed", "ignored")]
    assert events[0]["event"] == "ready" and LINK in (events[0]["resumed"] or ""), events[0]
    assert [(entry["event"], entry["kind"]) for entry in handled] == [("restored", "link_up")], handled
    assert handled[0]["proof"]["acyclic"] and not handled[0]["proof"]["drain"]
    assert held_pipelines(lab["layout"]) == before
