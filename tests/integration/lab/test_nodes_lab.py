"""The host-routed lab and the role node_network, end to end on a small
Stack-Ring (4 stages, 2 nodes each; lab ``nodestest``): lab_up.yml with
``-e design`` builds it and a second run changes nothing; node_network.yml
in check mode reports and changes nothing, then configures every node
(persistent files in the lab's node directories), and a second run changes
nothing; lab_nodes_verify.yml passes, fails when a node's route takes a
longer way, passes again once the role has put the route back; state
absent removes addresses, routes and files and restores the sysctls."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml
from lab_helpers import ansible_playbook, netns_exec, play_results

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "unit", "nodes"))
from stack_fixture import ring  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_machine")]

LAB = "nodestest"
STATE_ROOT = "/run/ethercluster-lab"


def _changed(stdout):
    stats = play_results(stdout)[0]
    return {host: counts["changed"] for host, counts in stats.items()}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    plan = ring(4, 2)
    path = tmp_path_factory.mktemp("nodes") / "plan.yml"
    path.write_text(yaml.safe_dump(plan))
    ansible_playbook("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
    first = ansible_playbook("playbooks/lab_up.yml", "-e", "design=%s" % path, "-e", "lab_name=%s" % LAB)
    assert first.returncode == 0, first.stdout[-3000:]
    yield {"plan": plan, "path": path, "first": first,
           "inventory": "%s/%s/inventory.yml" % (STATE_ROOT, LAB)}
    down = ansible_playbook("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
    assert down.returncode == 0, down.stdout[-3000:]
    assert not [ns for ns in os.listdir("/run/netns") if ns.startswith("ec-%s-" % LAB)]


def _nodes(lab, *extra):
    return ansible_playbook("-i", lab["inventory"], "playbooks/node_network.yml", "-e", "design=%s" % lab["path"],
                            *extra)


def _verify(lab):
    return ansible_playbook("playbooks/lab_nodes_verify.yml", "-e", "design=%s" % lab["path"], "-e",
                            "lab_name=%s" % LAB, "-e", "lab_iperf_seconds=1")


def test_the_lab_is_built_once_as_planned(lab):
    assert _changed(lab["first"].stdout)["localhost"] >= 1
    again = ansible_playbook("playbooks/lab_up.yml", "-e", "design=%s" % lab["path"], "-e", "lab_name=%s" % LAB)
    assert again.returncode == 0 and _changed(again.stdout)["localhost"] == 0
    # every switch is a bridge holding exactly the NICs its attached list names
    for name, switch in lab["plan"]["switches"].items():
        ports = json.loads(netns_exec("ec-%s-%s" % (LAB, name), "ip", "-j", "link", "show", "master", "br0").stdout)
        assert len(ports) == len(switch["attached"])
    links = json.loads(netns_exec("ec-%s-s1n0" % LAB, "ip", "-j", "address", "show").stdout)
    assert sorted(link["ifname"] for link in links) == ["east", "lo", "west"]


def test_check_mode_reports_and_changes_nothing(lab):
    proc = _nodes(lab, "--check", "--diff")
    assert proc.returncode == 0, proc.stdout[-3000:]
    result = play_results(proc.stdout)[1]["Apply the plan to the live state (interfaces, addresses, routes, sysctls)"]
    assert "ip address add 10.10.1.1/24 dev east" in result["s1n0"]["commands"]
    assert "route 10.10.3.0/24: 10.10.3.0/24 via 10.10.0.1 dev west" in result["s1n0"]["diff"]["after"]
    links = json.loads(netns_exec("ec-%s-s1n0" % LAB, "ip", "-j", "address", "show", "dev", "east").stdout)
    assert [info["local"] for info in links[0].get("addr_info", [])] == [] and "UP" not in links[0]["flags"]


def test_the_role_converges_persists_and_a_second_run_changes_nothing(lab):
    first = _nodes(lab)
    assert first.returncode == 0, first.stdout[-3000:]
    assert set(_changed(first.stdout).values()) != {0}
    second = _nodes(lab)
    assert second.returncode == 0 and set(_changed(second.stdout).values()) == {0}, second.stdout[-3000:]
    network = open("%s/%s/s1n0/networkd/10-ethercluster-west.network" % (STATE_ROOT, LAB), encoding="utf-8").read()
    assert "Address=10.10.0.129/24" in network and "Destination=10.10.3.0/24\nProtocol=233\nGateway=10.10.0.1" in network
    sysctl = open("%s/%s/s1n0/sysctl.d/90-ethercluster-node-network.conf" % (STATE_ROOT, LAB), encoding="utf-8").read()
    assert "net.ipv4.ip_forward = 1" in sysctl
    assert netns_exec("ec-%s-s1n0" % LAB, "sysctl", "-n", "net.ipv4.ip_forward").stdout.strip() == "1"


def test_verification_passes_and_catches_a_longer_path(lab):
    _nodes(lab)
    proc = _verify(lab)
    assert proc.returncode == 0, proc.stdout[-3000:]
    # s1n0 sends stage 3's network east (through s2n0, and s3n0 for all but s3n0's own address) where the
    # plan sends it west (through s0n0, or straight to s0n0)
    netns_exec("ec-%s-s1n0" % LAB, "ip", "route", "replace", "10.10.3.0/24", "via", "10.10.1.129", "dev", "east",
               "proto", "233")
    proc = _verify(lab)
    assert proc.returncode != 0
    failures = play_results(proc.stdout)[1]["Ping, count forwards hop by hop, run iperf3 many-to-many"]["localhost"]["failures"]
    assert "s1n0 -> 10.10.3.2 (s3n1, ttl 2): no reply within the planned 1 forwards" in " ".join(failures)
    assert "s1n0 -> 10.10.3.129 (s0n0, ttl 1): no reply within the planned 0 forwards" in " ".join(failures)
    assert "s1n0 -> 10.10.3.1 (s3n0, ttl 1): hop 1 is 10.10.1.129 (s2n0), planned s0n0" in failures
    # the rest: replies to s1n0 from stage 3 and s0n0 (they leave s1n0 the wrong way)
    others = [failure for failure in failures if not failure.startswith("s1n0 -> 10.10.3.")]
    assert others and all(failure.startswith(("s3n", "s0n0")) and "the reply was forwarded" in failure
                          for failure in others), others
    repaired = _nodes(lab)
    assert _changed(repaired.stdout)["s1n0"] == 1 and set(_changed(repaired.stdout).values()) == {0, 1}
    assert _verify(lab).returncode == 0


def test_absent_removes_what_the_role_added(lab):
    _nodes(lab)
    proc = _nodes(lab, "-e", "node_network_state=absent")
    assert proc.returncode == 0, proc.stdout[-3000:]
    netns = "ec-%s-s1n0" % LAB
    assert "proto 233" not in netns_exec(netns, "ip", "route", "show").stdout
    assert "10.10.1.1" not in netns_exec(netns, "ip", "-4", "address", "show").stdout
    assert netns_exec(netns, "sysctl", "-n", "net.ipv4.ip_forward").stdout.strip() == "0"
    assert not os.path.exists("%s/%s/s1n0/networkd/10-ethercluster-west.network" % (STATE_ROOT, LAB))
    again = _nodes(lab, "-e", "node_network_state=absent")
    assert set(_changed(again.stdout).values()) == {0}
