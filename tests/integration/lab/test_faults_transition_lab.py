"""A link cut mid-transition, on the ring of fixtures/lab/ (lab ``h4b``;
docs/reliability.md, "Faults injected"): link_off.yml switches sw0:2--sw1:2
off while sw1:3--sw2:2 loses its carrier (sw1's veth set down in its
namespace, so sw2:2 sees no carrier, as at a pulled cable) as soon as the
transition log shows the install step done. sw1's end, not sw2's: a push
sets a switch's ports to the admin state the intent says, so a cut made by
setting a switch's own veth down is undone when that switch is written,
and the flips after the install write sw2 first and sw1 last (with SSH
sessions of 0.1 s, the cut at sw2 landed after the check before sw2's flip
in 2 of 4 runs, and that flip set the port up again).

Proves, over SSH with the real playbook: the executor stops before its
next write and its message names the dead link, the banks each switch
holds, the pairs still delivered and how to resume; the switches hold
what the message says (both banks, PVIDs flipped or not); once
the carrier is back the same playbook resumes there and settles, and a
third run changes nothing."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lab_helpers import FIXTURES, ansible_env, build_lab, netns_exec, tasks_by_name

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner
from test_transitions_lab import fabric, pipelines, play, transition

pytestmark = pytest.mark.lab

LAB = "h4b"
TOPOLOGY = FIXTURES / "ring3_topology.yml"
SWITCHED, CUT = "sw0:2", "sw1:3--sw2:2"
CUT_END = "sw1:3"   # the end whose veth goes down (module doc: why this one)
# a 4 s drain wait: the cut lands while the executor still has writes to do
SLOW = ["-e", "transition_wait_s=4", "-e", "renegotiation_s=0.5"]


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    directory = tmp_path_factory.mktemp("faults_transition")
    info = dict(build_lab(LAB, TOPOLOGY, "198.18.31.0/28", "10.84.0.0/20"), dir=directory)
    play(info, "playbooks/deploy_routing.yml", "-e", "out=%s" % directory, "-e", "verify=false")
    yield info
    runner.lab_down("/run/ethercluster-lab", LAB)


def veth(lab, end, state):
    """Set the veth of ``end`` (``"sw2:2"``) up or down in its switch's namespace."""
    switch, _colon, port = end.partition(":")
    sw = lab["layout"]["switches"][switch]
    netns_exec(sw["netns"], "ip", "link", "set", "dev", sw["ports"][port]["dev"], state)


def link_off_cut_after_the_install(lab, log):
    """link_off.yml in the background; the cut as soon as step 1 is logged."""
    tool = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.Popen(
        [str(tool), "-i", str(TOPOLOGY), "-i", lab["inventory"], "playbooks/link_off.yml",
         "-e", "link=%s" % SWITCHED, "-e", "transition_log=%s" % log, *SLOW],
        cwd=str(Path(__file__).resolve().parents[3]), env=ansible_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and any(json.loads(line).get("index") == 1 for line in log.read_text().splitlines()):
            veth(lab, CUT_END, "down")
            break
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    return proc.returncode, tasks_by_name(stdout), stdout + stderr


def test_a_link_cut_mid_transition_stops_it_and_the_rerun_converges(lab):
    rc, tasks, output = link_off_cut_after_the_install(lab, lab["dir"] / "transitions.jsonl")
    result = transition(tasks)
    assert rc != 0 and result["failed"], output[-3000:]
    message = result["msg"]
    assert "link(s) %s lost carrier" % CUT in message and "stopped before step" in message, message
    assert "The switches hold: banks A and B" in message and "host pairs" in message
    assert "re-run the same playbook" in message and "link_failed.yml -e link=sw1:3" in message
    done = max(step["index"] for step in result["steps"])
    # what the message says each switch holds is what the switches hold: both banks
    # (the install done, the removal of bank A not), PVIDs in A or B as flipped so far
    held = re.search(r"The switches hold: (.*?)\. ", message).group(1)
    said = {name: group.split(":")[0] for group in held.split("; ")
            for name in group.split(": ")[1].split(", ")}
    state = fabric(lab)
    assert not state["settled"] and set(said) == set(state["switches"])
    for name, sw in state["switches"].items():
        assert sw["banks"] == ["A", "B"], name
        assert said[name] == "banks A and B, PVIDs in %s" % " and ".join(sw["pvid_banks"]), name
    veth(lab, CUT_END, "up")
    time.sleep(1)
    rc, tasks, output = play(lab, "playbooks/link_off.yml", "-e", "link=%s" % SWITCHED, *SLOW)
    result = transition(tasks)
    assert result["changed"] and result["resumed_after"] in (done - 1, done), result["reason"]
    state = fabric(lab)
    assert state["settled"] and state["bank"] == "B" and state["down_links"] == ["sw0:2--sw1:2"]
    held = pipelines(lab)
    rc, tasks, output = play(lab, "playbooks/link_off.yml", "-e", "link=%s" % SWITCHED)
    assert not transition(tasks)["changed"] and pipelines(lab) == held
