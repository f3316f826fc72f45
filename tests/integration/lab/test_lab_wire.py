"""A real lab on this machine: three switches in a ring, four hosts, the
hand-written renamed-style intent of fixtures/lab/ring3_intent.yml pushed
over SSH, and the behaviour checked on the wire.

The lab is built and pushed once for the module (runner and platform code,
as the ``lab`` and ``ovs_switch`` plugins call them); the playbooks are
tested in test_lab_playbooks.py. The last test removes the lab and checks
that nothing is left.
"""

import json
import os
import re
import subprocess
import threading
import time

import pytest
import yaml
from lab_helpers import (
    FIXTURES,
    frames_command,
    netns_exec,
    processes_mentioning,
    root_interfaces,
)

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan, runner
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from lab_ssh import Session  # the OpenSSH client, for tests without a playbook
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology

pytestmark = pytest.mark.lab

LAB = "pytest-wire"
GAP = 0.5
ETHERTYPE = 0x88B5  # IEEE local experimental


class Lab:
    def __init__(self, layout, intent):
        self.layout = layout
        self.intent = intent
        self.paths = plan.lab_paths(layout)

    def session(self, switch):
        return Session(switch, self.layout["switches"][switch]["mgmt_address"],
                       key_filename=self.paths["client_key"], known_hosts=self.paths["known_hosts"])

    def push(self, switch, config):
        """Read, compare and write, like ovs_switch; return the changes."""
        desired = ovs.render(config, switch)
        with self.session(switch) as session:
            current = ovs.parse_state(session.run(ovs.read_script(), "read"))
            changes = ovs.compare(current, desired, switch)
            if changes.changed:
                session.run(ovs.write_script(changes, desired, current), "write")
            return changes

    def held(self, switch):
        with self.session(switch) as session:
            return ovs.parse_state(session.run(ovs.read_script(), "read"))

    def host(self, name):
        return self.layout["hosts"][name]

    def ofctl(self, switch, *args):
        env = plan.ovs_env(self.layout["switches"][switch]["dir"])
        result = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", *args],
                                env=dict(os.environ, **env), capture_output=True,
                                text=True, check=True, timeout=10)
        return result.stdout

    def port_counters(self):
        """{(switch, port): (rx packets, tx packets)} over the whole lab."""
        counters = {}
        for switch in self.layout["switches"]:
            text = self.ofctl(switch, "dump-ports", "br0")
            for number, rx, tx in re.findall(
                    r"port\s+(\d+): rx pkts=(\d+).*?\n\s+tx pkts=(\d+)", text):
                counters[(switch, number)] = (int(rx), int(tx))
        return counters

    def ping(self, source, target, count=1, wait=2):
        return netns_exec(self.host(source)["netns"], "ping", "-c", count, "-W", wait, "-q",
                          self.host(target)["address"], check=False).returncode == 0


@pytest.fixture(scope="module")
def lab(lab_machine):
    topology = load_topology(FIXTURES / "ring3_topology.yml")
    layout = lab_layout(topology, name=LAB, mgmt_network="203.0.113.0/26",
                        host_network="10.43.0.0/16", renegotiation_gap=GAP)
    runner.lab_down(layout["state_root"], LAB)  # a lab left by an interrupted run
    before = root_interfaces()
    result = runner.lab_up(layout)
    assert result["outcome"] == "created"
    intent = yaml.safe_load((FIXTURES / "ring3_intent.yml").read_text())
    the_lab = Lab(layout, intent)
    the_lab.interfaces_before = before
    the_lab.first_push = {switch: the_lab.push(switch, config)
                          for switch, config in intent["switches"].items()}
    yield the_lab
    runner.lab_down(layout["state_root"], LAB)


def test_lab_is_healthy_and_built_as_planned(lab):
    assert runner.health(lab.layout) == []
    assert runner.lab_up(lab.layout)["outcome"] == "unchanged"
    for switch, sw in lab.layout["switches"].items():
        ofports = netns_exec(sw["netns"], "ovs-vsctl", "--db=unix:%s/db.sock" % sw["dir"],
                             "--format=json", "--columns=name,ofport", "list", "Interface").stdout
        held = dict(json.loads(ofports)["data"])
        assert held == dict({port["dev"]: port["ofport"] for port in sw["ports"].values()},
                            br0=65534)
        sysctl = netns_exec(sw["netns"], "sysctl", "-n", "net.ipv6.conf.all.disable_ipv6").stdout
        assert sysctl.strip() == "1"
    # no data port in the root namespace: only the management links were added there
    added = root_interfaces() - lab.interfaces_before
    assert added == set(plan.root_devices(lab.layout))


def test_first_push_loads_the_pipeline_and_a_second_changes_nothing(lab):
    for switch, changes in lab.first_push.items():
        assert changes.flows_added and not changes.flows_removed, switch
        assert not changes.admin_up and not changes.admin_down and not changes.speeds
    for switch, config in lab.intent["switches"].items():
        changes = lab.push(switch, config)
        assert not changes.changed, switch


def test_stp_is_off_and_the_bridge_is_secure(lab):
    for switch in lab.layout["switches"]:
        bridge = lab.held(switch)["bridge"]
        assert bridge == {"stp": False, "rstp": False, "fail_mode": "secure"}


def test_broadcast_reaches_every_host_once_and_dies_out(lab):
    """One broadcast from each host: every other host receives exactly one
    copy, the sender none, and no switch port counter moves between 1 s and
    3 s after the last one was sent."""
    hosts = lab.layout["hosts"]
    receivers = {}
    for name, host in hosts.items():
        process = subprocess.Popen(frames_command(host["netns"], "count", host["dev"],
                                                  hex(ETHERTYPE), 4.5),
                                   stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline().strip() == "ready"
        receivers[name] = process
    for host in hosts.values():
        netns_exec(host["netns"], *frames_command(host["netns"], "send", host["dev"],
                                                  "ff:ff:ff:ff:ff:ff", host["mac"],
                                                  hex(ETHERTYPE), 1)[4:])
    time.sleep(1.0)
    settled = lab.port_counters()
    time.sleep(2.0)
    assert lab.port_counters() == settled, "frames still move: a broadcast storm"
    for name, process in receivers.items():
        seen = json.loads(process.communicate(timeout=10)[0].strip().splitlines()[-1])
        expected = {host["mac"]: 1 for other, host in hosts.items() if other != name}
        assert seen == expected, name


def test_every_host_pair_pings_both_ways(lab):
    names = sorted(lab.layout["hosts"])
    failed = [(a, b) for a in names for b in names if a != b and not lab.ping(a, b)]
    assert failed == []


def test_a_burst_moves_the_counters_of_the_planned_path_only(lab):
    """h0a -> h2 is routed sw0 -> sw1 -> sw2 (not over the sw0-sw2 link)."""
    source, target = lab.host("h0a"), lab.host("h2")
    before = lab.port_counters()
    netns_exec(source["netns"], *frames_command(source["netns"], "send", source["dev"],
                                                target["mac"], source["mac"], hex(ETHERTYPE),
                                                400)[4:])
    time.sleep(0.5)
    after = lab.port_counters()
    moved = {key: (after[key][0] - before[key][0], after[key][1] - before[key][1])
             for key in after}
    path_tx = [("sw0", "2"), ("sw1", "3"), ("sw2", "1")]
    path_rx = [("sw0", "1"), ("sw1", "2"), ("sw2", "2")]
    # a userspace datapath may drop a few frames of a burst; none takes another path
    for key in path_tx:
        assert moved[key][1] >= 360, (key, moved[key])
    for key in path_rx:
        assert moved[key][0] >= 360, (key, moved[key])
    for key, (rx, tx) in moved.items():
        if key not in path_tx:
            assert tx < 40, (key, moved[key])
        if key not in path_rx:
            assert rx < 40, (key, moved[key])


def test_tcp_transfer_arrives_intact_across_two_switches(lab):
    """The veth checksum quirk: TCP fails on bad checksums unless handled
    (userspace TSO); 16 MB from h2 to h0a, compared by SHA-256."""
    server, client = lab.host("h0a"), lab.host("h2")
    receiver = subprocess.Popen(frames_command(server["netns"], "tcp-recv", server["address"],
                                               5201), stdout=subprocess.PIPE, text=True)
    assert receiver.stdout.readline().strip() == "ready"
    sent = json.loads(netns_exec(client["netns"], *frames_command(
        client["netns"], "tcp-send", server["address"], 5201, 16 << 20)[4:], timeout=60).stdout)
    received = json.loads(receiver.communicate(timeout=60)[0].strip().splitlines()[-1])
    assert received == sent


def test_ingress_filtering_drops_foreign_tags_and_accepts_member_tags(lab):
    sender = lab.host("h0a")
    others = {name: host for name, host in lab.layout["hosts"].items() if name != "h0a"}

    def receive_after(vlan):
        procs = {}
        for name, host in others.items():
            procs[name] = subprocess.Popen(frames_command(host["netns"], "count", host["dev"],
                                                          hex(ETHERTYPE), 1.0),
                                           stdout=subprocess.PIPE, text=True)
            assert procs[name].stdout.readline().strip() == "ready"
        netns_exec(sender["netns"], *frames_command(sender["netns"], "send", sender["dev"],
                                                    "ff:ff:ff:ff:ff:ff", sender["mac"],
                                                    hex(ETHERTYPE), 5, vlan)[4:])
        return {name: json.loads(proc.communicate(timeout=10)[0].strip().splitlines()[-1])
                for name, proc in procs.items()}

    # port 1 of sw0 is no member of VLAN 99: dropped at the door
    assert receive_after(99) == {name: {} for name in others}
    # it is an untagged member of VLAN 11: accepted, flooded in VLAN 11 and on
    assert receive_after(11) == {name: {sender["mac"]: 5} for name in others}


def _teach_sw0_h1_behind_port_4(lab):
    """h0b sends frames with h1's MAC as source: sw0 learns h1 behind port 4 in VLAN 10."""
    h0b = lab.host("h0b")
    netns_exec(h0b["netns"], *frames_command(h0b["netns"], "send", h0b["dev"], lab.host("h0a")["mac"],
                                             lab.host("h1")["mac"], hex(ETHERTYPE), 3)[4:])


def _sw0_learned_h1(lab):
    """sw0's learned entries of h1's MAC in VLAN 10."""
    mac = lab.host("h1")["mac"]
    return [flow for flow in lab.held("sw0")["learned_flows"]
            if ("dl_dst", mac) in flow.match and ("reg0", (10, 0xFFF)) in flow.match]


def test_static_entries_win_over_learned_ones(lab):
    """sw0 learns h1 behind port 4 in VLAN 10, yet the static entry (h1 ->
    port 2) keeps h0a reaching h1."""
    _teach_sw0_h1_behind_port_4(lab)
    assert [flow.actions for flow in _sw0_learned_h1(lab)] == [("load:0x4->nxm_nx_reg1[0..15]",)]
    assert lab.ping("h0a", "h1", count=2)


def test_a_flow_write_keeps_the_learned_entries_unless_the_pipeline_has_no_static_one(lab):
    """A write sends the switch's own diff in one bundle (docs/platforms.md):
    beside static entries the learned ones stay (deleting them under traffic
    could abort Open vSwitch 3.1.0); without any static entry (mac_learning:
    self) the learned entries are the forwarding, and a write flushes them."""
    config = json.loads(json.dumps(lab.intent["switches"]["sw0"]))
    try:
        _teach_sw0_h1_behind_port_4(lab)
        assert _sw0_learned_h1(lab)
        config["static_macs"] = config["static_macs"][1:]
        changes = lab.push("sw0", config)
        assert changes.flows_removed and not changes.flows_added
        held = lab.held("sw0")
        assert held["flows"] == ovs.render(config, "sw0")["flows"] and not held["foreign_flows"]
        assert _sw0_learned_h1(lab)
        config["static_macs"] = []
        assert lab.push("sw0", config).flows_removed
        assert lab.held("sw0")["flows"] == ovs.render(config, "sw0")["flows"]
        assert not _sw0_learned_h1(lab)
    finally:
        lab.push("sw0", lab.intent["switches"]["sw0"])
    assert lab.held("sw0")["flows"] == ovs.render(lab.intent["switches"]["sw0"], "sw0")["flows"]
    assert lab.ping("h0a", "h1", count=2)


def test_admin_down_stops_the_link_both_ways_and_up_restores_it(lab):
    config = json.loads(json.dumps(lab.intent["switches"]["sw0"]))
    config["ports"]["3"]["admin"] = "down"  # sw0:3 carries h2 -> h0a
    changes = lab.push("sw0", config)
    assert changes.admin_down == ["3"]
    peer = netns_exec(lab.layout["switches"]["sw2"]["netns"], "ip", "-o", "link", "show",
                      "p3").stdout
    assert "NO-CARRIER" in peer
    assert not lab.ping("h2", "h0a", wait=1)
    assert lab.held("sw0")["ports"]["3"]["admin"] == "down"
    changes = lab.push("sw0", lab.intent["switches"]["sw0"])
    assert changes.admin_up == ["3"]
    assert lab.ping("h2", "h0a", count=2)


def test_speed_change_renegotiates_with_a_gap(lab):
    """sw2 port 1 (to h2) goes to 100 Mb/s: the lab's renegotiation gap takes
    the port down while the tbf changes, then it comes back at the new rate."""
    netns = lab.layout["switches"]["sw2"]["netns"]
    states = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            text = netns_exec(netns, "ip", "-o", "link", "show", "p1", check=False).stdout
            states.append("DOWN" if "state DOWN" in text else "UP")
            time.sleep(0.05)

    config = json.loads(json.dumps(lab.intent["switches"]["sw2"]))
    config["ports"]["1"]["speed_mbps"] = 100
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        changes = lab.push("sw2", config)
    finally:
        stop.set()
        watcher.join()
    assert changes.speeds == {"1": 100}
    assert "DOWN" in states
    assert "state UP" in netns_exec(netns, "ip", "-o", "link", "show", "p1").stdout
    held = lab.held("sw2")
    assert held["ports"]["1"]["speed_mbps"] == 100 and held["gap"] == GAP
    assert "rate 100Mbit" in netns_exec(netns, "tc", "qdisc", "show", "dev", "p1").stdout
    assert not lab.push("sw2", config).changed
    assert lab.ping("h0a", "h2", count=2)
    assert lab.push("sw2", lab.intent["switches"]["sw2"]).speeds == {"1": 1000}


def test_teardown_leaves_nothing(lab):
    result = runner.lab_down(lab.layout["state_root"], LAB)
    assert result["changed"] is True
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                check=True).stdout
    assert "ec-%s-" % LAB not in namespaces
    assert processes_mentioning(lab.layout["dir"]) == []
    assert runner.netns_processes(plan.all_netns(lab.layout)) == {}
    assert root_interfaces() == lab.interfaces_before
    assert not os.path.exists(lab.layout["dir"])
    assert runner.lab_down(lab.layout["state_root"], LAB)["changed"] is False
