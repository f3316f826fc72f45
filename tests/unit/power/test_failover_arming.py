# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Continuation rows (power/failover_arming.py) on hand-made switch
entries: a row gets the port the other routing takes from the same input
port, never the input port itself, never where two input ports of one VLAN
disagree; the output port becomes a member where it is none; the armed
base takes the port most backups take; a flipped switch's backup rows are
completed from its base rows. (The rounds they save: test_failover_rounds.py.)"""

from __future__ import annotations

from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_arming as arming

M1, M2, M3 = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03"


def entry(pvids, members, statics):
    """A switch entry: ``pvids`` {port: PVID}, ``members`` {port: [VLANs]},
    ``statics`` [(vlan, mac, port)]."""
    return {"vlans": sorted({vlan for vlans in members.values() for vlan in vlans}),
            "ports": {port: {"pvid": pvids.get(port), "untagged": list(members.get(port, [])), "tagged": []}
                      for port in sorted(set(pvids) | set(members))},
            "static_macs": [{"vlan": vlan, "mac": mac, "port": port} for vlan, mac, port in statics]}


# base: port 2 classifies into 101, which knows M1 only; the backup sends M2 from port 2 out of port 4
BASE = entry({"1": 100, "2": 101, "3": 102, "4": 100}, {"1": [100, 101, 102], "3": [100, 101], "4": [100, 102]},
             [(100, M1, "3"), (100, M2, "4"), (101, M1, "3"), (102, M1, "1"), (102, M2, "4")])
BACKUP = entry({"1": 2100, "2": 2101, "3": 2102, "4": 2100}, {"1": [2100, 2101], "3": [2100], "4": [2101, 2102]},
               [(2100, M1, "3"), (2100, M2, "4"), (2101, M1, "3"), (2101, M2, "4"), (2102, M2, "4"),
                (2102, M3, "2")])


def test_a_row_gets_the_port_the_other_routing_takes_from_the_same_input_port():
    found = arming.continuations(BASE, BACKUP, [M1, M2, M3])
    # 101 (port 2) lacks M2: the backup's row of port 2 (2101) sends it out of 4; 102 (port 3) has
    # M1 and M2 already and the backup's row of port 3 sends M3 back out of 2 (not port 3: kept)
    assert found == {(101, M2): "4", (102, M3): "2"}


def test_never_the_input_port_and_never_where_the_input_ports_of_one_vlan_disagree():
    backup = entry({"1": 2100, "2": 2101, "3": 2102, "4": 2100}, {"1": [2100]},
                   [(2101, M3, "2"), (2100, M3, "4"), (2102, M3, "1")])
    base = entry({"1": 100, "2": 101, "3": 102, "4": 100}, {"1": [100]}, [])
    found = arming.continuations(base, backup, [M3])
    # port 2's row would send M3 back out of port 2: none for 101; ports 1 and 4 share VLAN 100, the
    # backup sends M3 from port 1 out of 4 and from port 4 out of 4 itself, which does not count
    assert found == {(100, M3): "4", (102, M3): "1"}
    torn = entry({"1": 2100, "4": 2101}, {}, [(2100, M3, "2"), (2101, M3, "3")])
    assert arming.continuations(base, torn, [M3]) == {}     # 1 and 4 share VLAN 100 and disagree


def test_widen_false_keeps_only_ports_already_members_and_with_rows_adds_the_member():
    assert arming.continuations(BASE, BACKUP, [M1, M2, M3], widen=False) == {}
    made = arming.with_rows(BASE, {(101, M2): "4", (100, M1): "1"})
    assert arming.rows(made)[(101, M2)] == "4" and arming.rows(made)[(100, M1)] == "3"     # present rows stay
    assert 101 in made["ports"]["4"]["untagged"] and 101 not in BASE["ports"]["4"]["untagged"]
    assert arming.added_rows(made, BASE) == {(101, M2): "4"}
    assert arming.with_rows(BASE, {(100, M1): "1"}) is BASE


def test_the_armed_base_takes_the_port_most_backups_take():
    other = entry({"1": 2100, "2": 2101, "3": 2102, "4": 2100}, {}, [(2101, M2, "1")])
    armed = arming.armed({"sw": BASE, "still": BASE}, [{"sw": BACKUP}, {"sw": other}, {"sw": BACKUP}])
    assert set(armed) == {"sw"} and arming.added_rows(armed["sw"], BASE) == {(101, M2): "4", (102, M3): "2"}
    armed = arming.armed({"sw": BASE}, [{"sw": other}, {"sw": BACKUP}])     # one each: the lower port name
    assert arming.added_rows(armed["sw"], BASE)[(101, M2)] == "1"


def test_a_flipped_switch_completes_its_backup_rows_from_its_base_rows():
    done = arming.completed_flips({"sw": BACKUP}, {"sw": BASE})["sw"]
    # 2100 (ports 1 and 4) has M1 and M2; 2102 (port 3) lacks M1: the base's row of port 3 (102) sends it to 1
    assert arming.added_rows(done, BACKUP) == {(2102, M1): "1"}
