# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SNMP notifications as the responder's wake-up (power/snmp_traps.py,
power/failover_watch.py Wakeups): messages recorded from net-snmp's snmpd
decode to their trap, ifIndex and oper status; the listener hands on only
the notifications of known senders with the right community; a trap wakes
the switch's reader at once instead of its poll interval."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_watch as fw
from ansible_collections.ethercluster.routing.plugins.module_utils.power import snmp_traps

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COLD_START, LINK_DOWN, LINK_UP = [bytes.fromhex(line) for line in
                                  (FIXTURES / "snmp" / "netsnmp_traps.txt").read_text().splitlines()
                                  if line and not line.startswith("#")]


def test_net_snmp_notifications_decode_to_their_trap_interface_and_state():
    assert snmp_traps.decode(COLD_START, "public") == {"trap": "coldStart", "if_index": None, "oper": None}
    assert snmp_traps.decode(LINK_DOWN, "public") == {"trap": "linkDown", "if_index": 3, "oper": "down"}
    assert snmp_traps.decode(LINK_UP, "public") == {"trap": "linkUp", "if_index": 3, "oper": "up"}
    assert snmp_traps.decode(LINK_DOWN, "private") is None          # another community
    assert snmp_traps.decode(b"\x30\x03\x02\x01", "public") is None  # not a message
    assert snmp_traps.decode(LINK_DOWN[:40], "public") is None      # cut short


def _listener(addresses, found):
    return snmp_traps.TrapListener("127.0.0.1:0", "public", addresses,
                                   lambda switch, trap: found.append((switch, trap)))


def _send(data, listener, source="127.0.0.1"):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.bind((source, 0))
        sender.sendto(data, listener.address)


def _until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_the_listener_hands_on_the_notifications_of_known_switches_only():
    found = []
    listener = _listener({"127.0.0.1": "sw1"}, found)
    try:
        _send(LINK_DOWN, listener)
        assert _until(lambda: found) and found == [("sw1", {"trap": "linkDown", "if_index": 3, "oper": "down"})]
        _send(LINK_DOWN, listener, source="127.0.0.2")                     # no switch of the fabric
        _send(LINK_DOWN.replace(b"public", b"Public"), listener)           # another community
        assert _until(lambda: sum(listener.ignored.values()) == 2)
        assert listener.ignored == {"127.0.0.2": 1, "127.0.0.1": 1} and listener.received == 1 and len(found) == 1
    finally:
        listener.close()


def test_a_bad_listen_address_or_switch_host_is_named():
    with pytest.raises(snmp_traps.TrapError, match="traps_listen '162': give ADDRESS:PORT"):
        snmp_traps.parse_listen("162")
    assert snmp_traps.parse_listen("[::1]:16162") == ("::1", 16162)
    listener = _listener({}, [])
    try:
        taken = "%s:%d" % listener.address
        with pytest.raises(snmp_traps.TrapError, match="traps_listen %s: cannot listen there" % taken):
            snmp_traps.TrapListener(taken, "public", {}, print)
    finally:
        listener.close()
    assert snmp_traps.addresses_of({"sw0": "127.0.0.1"}) == {"127.0.0.1": "sw0"}
    with pytest.raises(snmp_traps.TrapError, match="sw3: its address 'no-such-switch.invalid' does not resolve"):
        snmp_traps.addresses_of({"sw3": "no-such-switch.invalid"})


class Status:
    """A driver whose interface status is every port up, counting the reads."""

    def __init__(self):
        self.reads = 0

    def carriers(self, switch):
        self.reads += 1
        return {"1": "up", "2": "up", "3": "up", "4": "up"}


def test_a_trap_wakes_the_switchs_reader_at_once_and_the_poll_stays_the_fallback():
    ring = load_topology(FIXTURES / "lab" / "ring3_topology.yml")
    wake = fw.Wakeups(ring.switch_names())
    driver = Status()
    read = fw.status_reader(driver, ring, 30.0, wake=wake)
    carriers, line = read("sw1", "")                  # the first answer: at once
    assert carriers == {"2": "up", "3": "up"} and driver.reads == 1
    answered = []
    reader = threading.Thread(target=lambda: answered.append(read("sw1", line)))
    started = time.monotonic()
    reader.start()
    time.sleep(0.2)
    assert not answered                               # waiting for the poll interval (30 s) or a trap
    wake.trap("sw1")
    reader.join(timeout=5.0)
    assert answered and time.monotonic() - started < 5.0 and driver.reads == 2
    # without a trap the interval is the fallback
    short = fw.status_reader(driver, ring, 0.05, wake=wake)
    started = time.monotonic()
    short("sw2", line)
    assert 0.04 <= time.monotonic() - started < 5.0 and driver.reads == 3


def test_a_stopped_responders_late_poll_reads_nothing_and_opens_no_session():
    driver = Status()
    closed = []
    driver.close = lambda: closed.append(True)
    serial = fw.OneAtATime(driver)
    assert serial.carriers("sw1") and driver.reads == 1
    serial.close()
    with pytest.raises(fw.EtherclusterError, match="sw1: not read, the responder has stopped"):
        serial.carriers("sw1")
    assert driver.reads == 1 and closed == [True]
