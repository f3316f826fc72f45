"""The host-routed lab and the role node_network with what the Stack-Ring
does not use: fixed MACs, multipath routes (two equal next hops), an extra
sysctl, ifupdown2 files. Lab ``nodestest``: node a reaches z's network
through r1 or r2 (a diamond), z answers the same way."""

from __future__ import annotations

import json

import pytest
import yaml
from lab_helpers import ansible_playbook, netns_exec, play_results

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_machine")]

LAB = "nodestest"
DIR = "/run/ethercluster-lab/%s" % LAB


def _nic(name, switch, address, mac=None):
    nic = {"name": name, "switch": switch, "address": address}
    if mac:
        nic["mac"] = mac
    return nic


PLAN = {
    "nodes": {
        "a": {"interfaces": [_nic("p0", "sw1", "10.77.1.1/24", "02:00:0a:4d:01:01"),
                             _nic("p1", "sw2", "10.77.2.1/24", "02:00:0a:4d:02:01")],
              "routes": [{"to": "10.77.9.0/24", "nexthops": [{"via": "10.77.1.2", "dev": "p0"},
                                                             {"via": "10.77.2.2", "dev": "p1"}]}],
              "forwarding": False, "rp_filter": 2, "sysctls": {"net.ipv4.fib_multipath_hash_policy": 1}},
        "r1": {"interfaces": [_nic("p0", "sw1", "10.77.1.2/24"), _nic("p1", "sw3", "10.77.9.2/24")],
               "routes": [{"to": "10.77.2.0/24", "via": "10.77.9.3", "dev": "p1"}], "forwarding": True, "rp_filter": 0},
        "r2": {"interfaces": [_nic("p0", "sw2", "10.77.2.2/24"), _nic("p1", "sw3", "10.77.9.3/24")],
               "routes": [{"to": "10.77.1.0/24", "via": "10.77.9.2", "dev": "p1"}], "forwarding": True, "rp_filter": 0},
        "z": {"interfaces": [_nic("p0", "sw3", "10.77.9.9/24")],
              "routes": [{"to": "10.77.0.0/20", "nexthops": [{"via": "10.77.9.2", "dev": "p0"},
                                                             {"via": "10.77.9.3", "dev": "p0"}]}],
              "forwarding": False, "rp_filter": 2},
    },
    "switches": {"sw1": {"ports": 8, "attached": [["a", "p0"], ["r1", "p0"]]},
                 "sw2": {"ports": 8, "attached": [["a", "p1"], ["r2", "p0"]]},
                 "sw3": {"ports": 8, "attached": [["r1", "p1"], ["r2", "p1"], ["z", "p0"]]}},
}


def test_multipath_macs_and_ifupdown2_files(tmp_path):
    path = tmp_path / "plan.yml"
    path.write_text(yaml.safe_dump(PLAN))
    up = ansible_playbook("playbooks/lab_up.yml", "-e", "design=%s" % path, "-e", "lab_name=%s" % LAB)
    assert up.returncode == 0, up.stdout[-3000:]
    try:
        args = ("-i", "%s/inventory.yml" % DIR, "playbooks/node_network.yml", "-e", "design=%s" % path,
                "-e", "node_network_persist=ifupdown2")
        first = ansible_playbook(*args)
        assert first.returncode == 0, first.stdout[-3000:]
        second = ansible_playbook(*args)
        assert {host: counts["changed"] for host, counts in play_results(second.stdout)[0].items()} == \
            {"a": 0, "r1": 0, "r2": 0, "z": 0}
        links = {link["ifname"]: link for link in json.loads(netns_exec("ec-%s-a" % LAB, "ip", "-j", "link").stdout)}
        assert links["p0"]["address"] == "02:00:0a:4d:01:01" and links["p1"]["address"] == "02:00:0a:4d:02:01"
        route = json.loads(netns_exec("ec-%s-a" % LAB, "ip", "-j", "route", "show", "10.77.9.0/24").stdout)[0]
        assert sorted(hop["gateway"] for hop in route["nexthops"]) == ["10.77.1.2", "10.77.2.2"]
        text = open("%s/a/ifupdown2/ethercluster-a" % DIR, encoding="utf-8").read()
        assert "hwaddress ether 02:00:0a:4d:01:01" in text
        assert ("post-up ip route replace 10.77.9.0/24 proto 233 nexthop via 10.77.1.2 dev p0 "
                "nexthop via 10.77.2.2 dev p1") in text
        verify = ansible_playbook("playbooks/lab_nodes_verify.yml", "-e", "design=%s" % path, "-e",
                                  "lab_name=%s" % LAB, "-e", "lab_iperf_seconds=1")
        assert verify.returncode == 0, verify.stdout[-3000:]
        result = play_results(verify.stdout)[1]["Ping, count forwards hop by hop, run iperf3 many-to-many"]["localhost"]
        # z reaches 10.77.1.0/24 through r1, or through r2 and then r1: the longest of the paths bounds the TTL
        assert result["max_forwards"] == 2 and result["failures"] == []
    finally:
        down = ansible_playbook("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
        assert down.returncode == 0, down.stdout[-3000:]
