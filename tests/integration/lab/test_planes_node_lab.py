"""The role node_planes on a real plane fabric (2 nodes x 2 planes, the
host-routed lab of lab_up.yml -e design=, lab ``plxnode``): pmcme loads,
is idempotent, spreads TCP streams over both ports with port 1 of the
sender reaching port 1 of the receiver, its maps are readable with
bpftool; check mode changes nothing; state absent leaves nothing."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from lab_helpers import ansible_playbook, netns_exec, play_results

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes import plan_planes

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_machine")]

LAB = "plxnode"
PLAYBOOK = """
- name: node_planes on the lab's nodes
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Read the plan
      ansible.builtin.include_vars:
        file: "{{ design }}"
        name: planes_plan
    - name: Apply the role
      ansible.builtin.include_role:
        name: ethercluster.routing.node_planes
      vars:
        node_planes_plan: "{{ planes_plan }}"
        node_planes_mode: "{{ mode }}"
        node_planes_state: "{{ state }}"
        node_planes_workdir: "{{ workdir }}"
"""


def _role(tmp_path, mode, state, *extra, output=None):
    """Run the role; its play recap's counts per host (and its output into the list ``output``)."""
    proc = ansible_playbook("-i", "/run/ethercluster-lab/%s/inventory.yml" % LAB, tmp_path / "play.yml",
                            "-e", "design=%s" % (tmp_path / "plan.json"), "-e", "mode=%s" % mode, "-e", "state=%s" % state,
                            "-e", "workdir=%s" % (tmp_path / "work"), *extra)
    assert proc.returncode == 0, proc.stdout[-3000:]
    if output is not None:
        output.append(proc.stdout)
    return play_results(proc.stdout)


def _changed(result):
    return {host: counts["changed"] for host, counts in result[0].items() if host != "localhost"}


def _what_changed(stdout):
    """Each task that changed a node, with what it changed (the module's
    changes and commands, else the task's whole result): a second run's
    failure names its cause, not the output's last lines."""
    found = []
    for name, hosts in play_results(stdout)[1].items():
        for host, result in hosts.items():
            if result.get("changed"):
                what = {key: result[key] for key in ("changes", "commands") if key in result} or result
                found.append("%s on %s: %s" % (name, host, json.dumps(what, sort_keys=True)))
    return found


def _bytes(node, port, way):
    link = json.loads(netns_exec("ec-%s-%s" % (LAB, node), "ip", "-s", "-j", "link", "show", port).stdout)[0]
    return link["stats64"][way]["bytes"]


def _bpftool(*args):
    return json.loads(subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, check=True).stdout)


@pytest.fixture(name="lab")
def fixture_lab(tmp_path):
    plan = plan_planes({"kind": "planes", "name": LAB, "nodes": 2, "ports": 2, "base_prefix": "10.97.64.0/18"})
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    up = ansible_playbook("playbooks/lab_up.yml", "-e", "design=%s" % (tmp_path / "plan.json"), "-e", "lab_name=%s" % LAB,
                          "-e", "lab_speed_mbps=200")
    assert up.returncode == 0, up.stdout[-3000:]
    try:
        yield plan
    finally:
        _role(tmp_path, "pmcme", "absent")
        down = ansible_playbook("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
        assert down.returncode == 0, down.stdout[-3000:]


def test_pmcme_spreads_streams_port_to_port_and_absent_removes_it(tmp_path, lab):
    # check mode on bare nodes (no source copied yet): the build is reported, nothing is done
    assert min(_changed(_role(tmp_path, "pmcme", "present", "--check")).values()) >= 1
    assert netns_exec("ec-%s-n0" % LAB, "tc", "qdisc", "show", "dev", "e0").stdout.count("clsact") == 0
    assert netns_exec("ec-%s-n0" % LAB, "ip", "-4", "-o", "address", "show", "dev", "e1").stdout == ""
    assert set(_changed(_role(tmp_path, "pmcme", "present")).values()) != {0}
    # idempotent; --diff names what a second run would change (once in CI, 2026-11-29, n1 changed one thing)
    second = []
    assert _changed(_role(tmp_path, "pmcme", "present", "--diff", output=second)) == {"n0": 0, "n1": 0}, \
        _what_changed(second[0])
    pins = "/sys/fs/bpf/ethercluster_planes/ec-%s-n0" % LAB
    server, client = lab["node_planes"]["n1"]["primary"]["address"], lab["node_planes"]["n0"]["primary"]["address"]
    before = {(node, port, way): _bytes(node, port, way) for node in ("n0", "n1") for port in ("e0", "e1") for way in ("tx", "rx")}
    daemon = subprocess.Popen(["ip", "netns", "exec", "ec-%s-n1" % LAB, "iperf3", "-s", "-1", "-B", server],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    netns_exec("ec-%s-n0" % LAB, "iperf3", "-c", server, "-B", client, "-P", "4", "-t", "2", timeout=60)
    daemon.wait(timeout=30)
    sent = {key: _bytes(*key) - value for key, value in before.items()}
    # 4 bulk streams registered round robin: 2 per port, each port at least a quarter of the bytes
    total = sent[("n0", "e0", "tx")] + sent[("n0", "e1", "tx")]
    assert min(sent[("n0", "e0", "tx")], sent[("n0", "e1", "tx")]) > total / 4, sent
    # port 1 of the sender reaches port 1 of the receiver (the MAC table's rewrite)
    assert sent[("n1", "e1", "rx")] > total / 4, sent
    registered = [entry["formatted"]["value"]["port"] for entry in _bpftool("map", "dump", "pinned", pins + "/maps/pmc_port_info")]
    assert sorted(set(registered)) == [0, 1] and len(registered) >= 4
    # check mode of another mode: reports changes, changes nothing
    result = _role(tmp_path, "l4_multipath", "present", "--check", "--diff")
    assert min(_changed(result).values()) >= 1  # the module (and the source file to remove)
    assert netns_exec("ec-%s-n0" % LAB, "ip", "route", "show", "proto", "234").stdout == ""
    assert netns_exec("ec-%s-n0" % LAB, "tc", "filter", "show", "dev", "e0", "egress").stdout.strip() != ""
    # absent: nothing of the role left, a second absent changes nothing
    _role(tmp_path, "pmcme", "absent")
    assert _changed(_role(tmp_path, "pmcme", "absent")) == {"n0": 0, "n1": 0}
    for node in ("n0", "n1"):
        netns = "ec-%s-%s" % (LAB, node)
        assert "clsact" not in netns_exec(netns, "tc", "qdisc", "show", "dev", "e0").stdout
        assert netns_exec(netns, "ip", "-4", "-o", "address", "show", "dev", "e1").stdout == ""
        assert netns_exec(netns, "sysctl", "-n", "net.ipv4.conf.e1.rp_filter").stdout.strip() == \
            netns_exec(netns, "sysctl", "-n", "net.ipv4.conf.default.rp_filter").stdout.strip()
    assert not subprocess.run(["test", "-e", pins], check=False).returncode == 0


def test_l4_multipath_spreads_by_hash_and_single_uses_port_0(tmp_path, lab):
    _role(tmp_path, "l4_multipath", "present")
    assert _changed(_role(tmp_path, "l4_multipath", "present")) == {"n0": 0, "n1": 0}
    peer = lab["node_planes"]["n1"]["primary"]["address"]
    own = lab["node_planes"]["n0"]["primary"]["address"]
    devs = set()
    for sport in range(40000, 40032):
        out = netns_exec("ec-%s-n0" % LAB, "ip", "-j", "route", "get", peer, "from", own, "ipproto", "tcp",
                         "sport", str(sport), "dport", "5201").stdout
        devs.add(json.loads(out)[0]["dev"])
    assert devs == {"e0", "e1"}  # 32 hashed streams use both planes
    assert netns_exec("ec-%s-n0" % LAB, "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").stdout.strip() == "1"
    _role(tmp_path, "single", "present")
    out = netns_exec("ec-%s-n0" % LAB, "ip", "-j", "route", "get", peer, "from", own).stdout
    assert json.loads(out)[0]["dev"] == "e0"
    assert netns_exec("ec-%s-n0" % LAB, "ip", "-4", "-o", "address", "show", "dev", "e1").stdout == ""
    assert netns_exec("ec-%s-n0" % LAB, "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").stdout.strip() == "0"
