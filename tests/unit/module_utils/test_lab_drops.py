"""The lab's drop counters (lab/drops.py, module lab_drops): the outputs of
ss, ip, tc, /proc/net/snmp and /proc/net/softnet_stat as a lab machine
prints them (Debian 12, iproute2 6.1), read into counters, and what grew
between two readings named by place."""

import json

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import drops

SS = """\
Netid Recv-Q Send-Q Local Address:Port Peer Address:PortProcess
p_raw 0      0                  *:p2               *     skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d0)
p_raw 0      0                  *:p1               *     skmem:(r212480,rb212992,t0,tb212992,f0,w0,o176,bl0,d132)
p_raw 0      0                [0]:*                *     skmem:(r0,rb212992,t0,tb212992,f0,w0,o0,bl0,d7)
"""


def link(name, rx_dropped=0, tx_dropped=0):
    return {"ifindex": 6, "ifname": name, "flags": ["BROADCAST", "UP"], "mtu": 1500, "operstate": "UP",
            "stats64": {"rx": {"bytes": 1, "packets": 1, "errors": 0, "dropped": rx_dropped, "over_errors": 0,
                               "multicast": 0},
                        "tx": {"bytes": 1, "packets": 1, "errors": 0, "dropped": tx_dropped, "carrier_errors": 0,
                               "collisions": 0}}}


def qdisc(dev, drops_, kind="tbf", root=True):
    return {"kind": kind, "handle": "86d6:", "dev": dev, "root": root, "refcnt": 3,
            "options": {"rate": 125000000, "burst": 131000, "lat": 20000}, "bytes": 1, "packets": 1,
            "drops": drops_, "overlimits": 0, "requeues": 0, "backlog": 0, "qlen": 0}


SNMP = """\
Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 964495
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 964495 45 3 964725 3 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 0 0 0 0 0 0 0 0 0
"""

SOFTNET = """\
09fdcc42 00000000 0000000e 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
08a9fbfd 0000001a 00000009 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001
"""


def switch_output(ss=SS, links=None, qdiscs=None):
    links = links if links is not None else [link("lo"), link("p1", 2, 0), link("p2", 0, 5)]
    qdiscs = qdiscs if qdiscs is not None else [qdisc("lo", 0, "noqueue"), qdisc("p1", 0), qdisc("p2", 11)]
    return "\n".join([ss + drops.SEPARATOR, json.dumps(links), drops.SEPARATOR, json.dumps(qdiscs), ""])


def test_the_packet_socket_drops_are_the_skmem_d_field_per_port():
    assert drops.socket_drops(SS) == {"p2": 0, "p1": 132}  # the socket bound to no port is left out


def test_the_readings_of_a_switch_per_port():
    counters = drops.switch_counters(switch_output(), ["p1", "p2", "p3"], "switch sw4")
    assert counters == {"p1": {"socket": 132, "qdisc": 0, "rx_dropped": 2, "tx_dropped": 0},
                        "p2": {"socket": 0, "qdisc": 11, "rx_dropped": 0, "tx_dropped": 5},
                        "p3": {"socket": 0, "qdisc": 0, "rx_dropped": 0, "tx_dropped": 0}}


def test_the_readings_of_a_host_and_of_the_machine():
    text = "\n".join([SNMP + drops.SEPARATOR, json.dumps([link("lo"), link("eth0", 4, 1)]), drops.SEPARATOR,
                      json.dumps([qdisc("eth0", 9), qdisc("eth0", 100, "pfifo", root=False)]), ""])
    assert drops.host_counters(text, "eth0", "host node04") == {
        "udp_rcvbuf": 3, "udp_in_errors": 3, "qdisc": 9, "rx_dropped": 4, "tx_dropped": 1}
    assert drops.softnet_drops(SOFTNET) == [0, 26]


def test_an_output_that_is_not_the_three_readings_names_the_switch():
    with pytest.raises(drops.DropsError, match="^switch sw4: the counters could not be read"):
        drops.switch_counters("ss: command not found\n", ["p1"], "switch sw4")


LAYOUT = {"switches": {"sw4": {"netns": "ec-x-sw4", "ports": {"1": {"dev": "p1"}, "2": {"dev": "p2"}}}},
          "hosts": {"node04": {"netns": "ec-x-node04", "dev": "eth0"}}}


def test_read_runs_one_shell_per_namespace_and_the_changes_name_each_place():
    calls = []
    quiet = {"ec-x-sw4": switch_output(SS.replace("d132", "d0"), qdiscs=[qdisc("p1", 0), qdisc("p2", 0)],
                                       links=[link("p1"), link("p2")]),
             "ec-x-node04": "\n".join([SNMP.replace("964495 45 3 964725 3", "964495 45 0 964725 0"),
                                       drops.SEPARATOR, json.dumps([link("eth0")]), drops.SEPARATOR, "[]", ""])}

    def netns_read(netns, script, what):
        calls.append((netns, script, what))
        return quiet[netns]

    before = drops.read(LAYOUT, netns_read=netns_read, softnet=lambda: SOFTNET.replace("0000001a", "00000000"))
    assert sorted(calls) == [("ec-x-node04", drops.HOST_READ, "host node04"),
                             ("ec-x-sw4", drops.SWITCH_READ, "switch sw4")]
    quiet["ec-x-sw4"] = switch_output()
    quiet["ec-x-node04"] = "\n".join([SNMP, drops.SEPARATOR, json.dumps([link("eth0")]), drops.SEPARATOR, "[]", ""])
    after = drops.read(LAYOUT, netns_read=netns_read, softnet=lambda: SOFTNET)
    assert drops.changes(before, before) == [] and drops.dropped(before, before) == 0
    assert drops.changes(before, after) == [
        "switch sw4 port p1: rx_dropped +2, socket +132",
        "switch sw4 port p2: qdisc +11, tx_dropped +5",
        "host node04: udp_in_errors +3, udp_rcvbuf +3",
        "input backlog cpu1: softnet +26",
    ]
    assert drops.dropped(before, after) == 2 + 132 + 11 + 5 + 3 + 3 + 26
    assert json.loads(json.dumps(after)) == after  # plain data: a module result, a later `since`
