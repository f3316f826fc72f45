"""deploy_routing.yml onto a live fabric holding another routing (lab h5b, a
3x3 mesh, one host per switch; the 4x4 mesh's figures are in
docs/benchmarks.md): UDP probes every 10 ms between every host
pair while the playbook re-deploys dimension-order routing to
segment-based routing (renamed assignment). The two routings' paths
together close a dependency cycle, so the move goes dor -> a bridge
routing (bank B) -> segment (bank A again), each phase order-free
(power/redeploy_bridge.py).

Proves: the held routing is recognised from the switches alone (no hint:
another output directory); the move needs no drain and loses no datagram
between any host pair (none outside the window either, no duplicate); the
switches' play then changes nothing; a second run changes nothing. (A move
with no proof is refused before any write: tests/unit/power/test_redeploy_run.py.)"""

import time

import pytest
from lab_helpers import ansible_playbook, build_lab, tasks_by_name

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import probes, runner

pytestmark = pytest.mark.lab

LAB = "h5b"
STATE_ROOT = "/run/ethercluster-lab"
REDEPLOY = "Re-deploy: read every switch, move make-before-break when it holds another routing"
DOR = ["-e", "routing=dor", "-e", "assignment=renamed"]
SEGMENT = ["-e", "routing=segment", "-e", "assignment=renamed"]


def deploy(lab, out, *args):
    proc = ansible_playbook("-i", str(lab["topology"]), "-i", lab["inventory"], "playbooks/deploy_routing.yml",
                            "-e", "out=%s" % out, "-e", "make_before_break=true", *args, timeout=1800,
                            controller=lab["layout"]["lab"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return tasks_by_name(proc.stdout)


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    directory = tmp_path_factory.mktemp("redeploy")
    topology = directory / "mesh3x3.yml"
    topology.write_text("plugin: ethercluster.routing.topology\nname: %s\n"
                        "generate: {kind: mesh, dims: [3, 3], hosts_per_switch: 1}\n" % LAB)
    info = dict(build_lab(LAB, topology, "198.18.33.0/24", "10.85.0.0/16"), dir=directory, topology=topology)
    fresh = deploy(info, directory / "first", "-e", "verify=false", *DOR)[REDEPLOY]["localhost"]
    assert fresh["mode"] == "push" and "fresh" in fresh["reason"]
    yield info
    if probes.running(info["layout"]):
        probes.stop(info["layout"])
    runner.lab_down(STATE_ROOT, LAB)


def test_a_redeploy_from_dor_to_segment_loses_nothing_and_a_second_run_changes_nothing(lab):
    out = lab["dir"] / "second"     # no intent.json of the first deploy there: the switches alone say what they hold
    windows = []
    probes.start(lab["layout"])
    try:
        time.sleep(2.0)
        tasks = deploy(lab, out, "-e", "verify=false", *SEGMENT)    # the probes check every pair
        moved = tasks[REDEPLOY]["localhost"]
        windows.append({"name": "redeploy", "start": moved["start"], "end": moved["end"]})
        time.sleep(1.0)
    finally:
        summary = probes.stop(lab["layout"], windows=windows)
    assert moved["mode"] == "moved" and moved["changed"] and moved["held"].startswith("dor (renamed")
    assert not moved["proof"]["drain"] and moved["proof"]["order_free"]
    assert moved["proof"]["bridge"]["bank"] == "B" and moved["bank_after"] == "A", moved["proof"]["bridge"]
    window = summary["windows"][0]
    print("re-deploy dor -> bridge -> segment: %d steps in %.2f s (window %.2f s); %d datagrams sent in "
          "all, %d lost in the window, %d outside; duplicates %d" % (
              len(moved["steps"]), moved["seconds"], window["end"] - window["start"], summary["totals"]["sent"],
              window["lost"], summary["outside"], summary["totals"]["duplicates"]))
    where = "lossy pairs %s; losses by send time (s after the first agent's start) %s; window %.1f-%.1f s" % (
        summary["lossy_pairs"], summary["timeline"][:40], window["start"] - summary["start"],
        window["end"] - summary["start"])
    assert summary["totals"]["sent"] > 0 and window["lost"] == 0, where
    assert summary["outside"] == 0 and summary["totals"]["duplicates"] == 0, where
    pushed = [hosts for name, hosts in tasks.items() if name.startswith("Push the intent")]
    assert pushed and not any(result.get("changed") for hosts in pushed for result in hosts.values())
    tasks = deploy(lab, out, "-e", "verify=false", *SEGMENT)
    again = tasks[REDEPLOY]["localhost"]     # the move ended in the intent's own bank: the plain push, a no-op
    assert again["mode"] == "push" and "hold this intent already" in again["reason"] and not again["changed"]
    pushed = [hosts for name, hosts in tasks.items() if name.startswith("Push the intent")]
    assert pushed and not any(result.get("changed") for hosts in pushed for result in hosts.values())
