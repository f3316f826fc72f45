# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The intent (intent schema v1, docs/intent.md) and the planner: fields, determinism, every
check and the clear errors that name the switch."""

from __future__ import annotations

import copy
import itertools
import json

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.routing import paper_paths
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import (
    SCHEMA,
    PlanError,
    build_intent,
    check_intent,
    host_limits,
    path_metrics,
    plan,
    routing_checks,
    simulate_8021q,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.macs import static_mac_table
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import (
    VLAN_BANKS,
    renamed_assignment,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import cdg


def topo(switch_defaults=None, **spec):
    data = {"generate": spec or dict(kind="mesh", dims=[3, 3], hosts_per_switch=2)}
    if switch_defaults:
        data["switch_defaults"] = switch_defaults
    return topology_from_data(data)


def checks_by_name(checks):
    return {check["name"]: check for check in checks}


# ------------------------------------------------------------------ fields
@pytest.mark.parametrize("kind", ["fixed", "renamed"])
def test_the_intent_has_every_field_of_intent_md(kind):
    topology = topo()
    result = plan(topology, engine="dor", assignment=kind)
    intent = result.intent
    assert intent["schema"] == SCHEMA
    assert intent["fabric"]["assignment"] == kind and intent["fabric"]["routing"] == "dor"
    assert intent["fabric"]["vlans_used"] == len(intent["fabric"]["vlan_ids"])
    assert len(intent["links"]) == len(topology.links)
    for link, entry in zip(topology.links, intent["links"]):
        assert entry == {"a": str(link.a), "b": str(link.b), "state": "up",
                         "speed_mbps": link.speed_mbps}
    assert set(intent["hosts"]) == set(topology.hosts)
    for name, host in intent["hosts"].items():
        assert host == {"mac": topology.hosts[name].mac, "switch": topology.hosts[name].switch,
                        "port": topology.hosts[name].port}
    for name, entry in intent["switches"].items():
        assert entry["platform"] == "ovs" and entry["stp"] is False
        assert entry["vlans"] == sorted(entry["vlans"])
        assert list(entry["ports"]) == topology.used_ports(name)
        for port, config in entry["ports"].items():
            assert {"pvid", "untagged", "tagged", "admin", "speed_mbps", "role"} <= set(config)
            assert config["role"] in ("host", "link")
            assert config["pvid"] in entry["vlans"]
        for item in entry["static_macs"]:
            assert set(item) == {"mac", "vlan", "port"}
        assert entry["limits"] == {"max_vlans": 256, "mac_table_size": 8192}


def test_the_intent_is_json_and_the_same_for_the_same_input():
    one = plan(topo(), engine="segment", assignment="renamed", broadcast="bounded").intent
    two = plan(topo(), engine="segment", assignment="renamed", broadcast="bounded").intent
    text = json.dumps(one, indent=2)
    assert text == json.dumps(two, indent=2)
    assert json.loads(text) == one
    assert list(one["hosts"]) == sorted(one["hosts"])
    assert list(one["switches"]) == topo().switch_names()


def test_peer_and_host_of_every_port():
    topology = topo()
    intent = plan(topology, engine="dor").intent
    for link in topology.links:
        a = intent["switches"][link.a.switch]["ports"][link.a.port]
        b = intent["switches"][link.b.switch]["ports"][link.b.port]
        assert a["peer"] == str(link.b) and b["peer"] == str(link.a)
        assert a["link"] == b["link"] == link.name
    for name, host in topology.hosts.items():
        assert intent["switches"][host.switch]["ports"][host.port]["host"] == name


def test_bank_and_range_reach_the_intent():
    result = plan(topo(), engine="dor", assignment="fixed", bank="B")
    first, last = VLAN_BANKS["B"]
    assert result.intent["fabric"]["bank"] == "B"
    assert result.intent["fabric"]["vlan_range"] == [first, last]
    assert all(first <= vid <= last for vid in result.intent["fabric"]["vlan_ids"])
    result = plan(topo(), engine="dor", vlan_range=(3000, 3099), bank="A")
    assert result.intent["fabric"]["vlan_range"] == [3000, 3049]


def test_a_plan_reports_every_check_metrics_host_limit_and_timings():
    result = plan(topo(), engine="dor", assignment="renamed", broadcast="bounded")
    names = [check["name"] for check in result.checks]
    assert names == list(dict.fromkeys(names))        # each once
    assert {"deadlock_free", "routing_complete", "vlan_assignment", "platform_ports",
            "vlan_ids", "port_config", "max_vlans", "mac_table", "host_limit", "storm_free",
            "unicast_paths"} <= set(names)
    assert all(check["ok"] and check["detail"] for check in result.checks)
    assert len(result.metrics["channel_loads"]) == len(result.topology.channels)
    assert result.metrics["vlans_used"] == 2
    limit = result.host_limit
    assert limit["fabric"]["limit"] == 8192 // 2 and limit["fabric"]["hosts"] == 18
    assert set(result.timings) >= {"routing", "assignment", "macs", "intent", "checks"}


def test_path_metrics_equal_routing_report():
    topology = topo(kind="torus", dims=[4, 4], links_per_neighbor=2, hosts_per_switch=2)
    routing = compute_routing(topology, "dor")
    for traffic in ("uniform", "bit_reversal"):
        mine = path_metrics(routing, traffic)
        theirs = metrics.routing_report(routing, traffic)
        for key in ("max_channel_load", "average_hops", "stretch", "busiest_channels"):
            assert mine[key] == theirs[key]
        loads = metrics.channel_loads(topology, routing.paths(),
                                      metrics.traffic_pattern(topology, traffic))
        assert mine["channel_loads"] == loads.tolist()


# ----------------------------------------------------------- checks failing
def rejected(*args, **kwargs):
    with pytest.raises(PlanError) as info:
        plan(*args, **kwargs)
    return info.value


def test_too_few_vlans_on_a_switch_names_the_switch():
    error = rejected(topo({"max_vlans": 1}), engine="dor", assignment="renamed", broadcast="bounded")
    failed = checks_by_name(error.checks)
    assert set(failed) == {"max_vlans"}
    assert failed["max_vlans"]["switch"] == "sw0"
    assert "sw0 needs 2 VLANs, max_vlans is 1" in str(error)
    assert error.plan.intent is not None and error.plan.routing is not None


def test_a_mac_table_too_small_names_the_switch():
    error = rejected(topo({"mac_table_size": 20}), engine="dor", assignment="renamed", broadcast="bounded")
    failed = checks_by_name(error.checks)
    assert failed["mac_table"]["switch"] in error.plan.topology.switches
    assert "static MAC entries, mac_table_size is 20" in failed["mac_table"]["detail"]
    # 18 hosts, 2 VLANs: H = 20 // 2 = 10 < 18
    assert "H=T/V=10" in failed["host_limit"]["detail"]


def test_the_host_limit_alone_can_fail():
    # 8 hosts, 2 VLANs per switch, T = 14: the static entries fit (checked
    # below, not assumed) but H = T/V = 7 < 8 hosts
    topology = topo({"mac_table_size": 14}, kind="mesh", dims=[2, 2], hosts_per_switch=2)
    routing = compute_routing(topology, "dor")
    assignment = renamed_assignment(routing)
    table = static_mac_table(topology, routing, assignment)
    busiest = max(len(entries) for entries in table.values())
    vlans = max(len(entry["vlans"]) for entry in assignment.switches.values())
    assert busiest <= 14 < len(topology.hosts) * vlans
    error = rejected(topology, engine="dor", assignment="renamed")
    assert set(checks_by_name(error.checks)) == {"host_limit"}


def test_an_access_trunk_only_platform_is_refused_by_name():
    data = topo().to_data()
    data["switches"]["sw4"]["platform"] = "cisco_ios"
    error = rejected(topology_from_data(data), engine="dor")
    failed = checks_by_name(error.checks)
    assert failed["platform_ports"]["switch"] == "sw4"
    assert "general/hybrid" in failed["platform_ports"]["detail"]


def test_fixed_for_a_routing_without_source_trees_is_a_failed_check_naming_the_source():
    topology = topo(kind="torus", dims=[3, 3], links_per_neighbor=2)
    error = rejected(topology, engine="dor", assignment="fixed")
    failed = checks_by_name(error.checks)
    assert set(failed) == {"vlan_assignment"}
    assert failed["vlan_assignment"]["switch"] == "sw0"
    assert "paths from switch sw0 do not form a tree" in str(error)
    assert error.plan.routing is not None and error.plan.metrics


def test_an_unknown_engine_or_option_is_a_clear_plan_error():
    error = rejected(topo(), engine="nosuch")
    assert "unknown routing engine 'nosuch'" in str(error)
    assert checks_by_name(error.checks)["routing"]["ok"] is False
    with pytest.raises(PlanError, match="assignment: must be one of auto, fixed, renamed"):
        plan(topo(), assignment="mixed")
    with pytest.raises(PlanError, match="mac_learning"):
        plan(topo(), mac_learning="sometimes")
    with pytest.raises(PlanError, match="vlan_range"):
        plan(topo(), engine="dor", vlan_range=(5000, 6000))
    assert issubclass(PlanError, EtherclusterError)


def test_a_routing_with_a_cdg_cycle_fails_deadlock_and_storm_checks():
    """A ring routed clockwise only: its channel dependency graph is the ring
    itself, a cycle; the renamed assignment floods around it."""
    topology = topology_from_data({
        "switches": {"s%d" % i: {} for i in range(4)},
        "links": [{"a": "s%d:1" % i, "b": "s%d:2" % ((i + 1) % 4)} for i in range(4)],
        "hosts": {"h%d" % i: {"switch": "s%d" % i, "port": 9, "mac": "02:00:00:00:00:1%d" % i}
                  for i in range(4)}})
    paths = {(src, dst): ["s%d" % ((int(src[1]) + k) % 4)
                          for k in range((int(dst[1]) - int(src[1])) % 4 + 1)]
             for src, dst in itertools.permutations(topology.switch_names(), 2)}
    routing = paper_paths.routing_from_paths(topology, paths, "clockwise")
    report = cdg.verify_routing(routing)
    deadlock = checks_by_name(routing_checks(report))["deadlock_free"]
    assert not deadlock["ok"] and deadlock["switch"].startswith("s")
    assignment = renamed_assignment(routing)
    intent = build_intent(topology, routing, assignment,
                          static_macs=static_mac_table(topology, routing, assignment))
    checks = checks_by_name(check_intent(topology, intent, routing=routing))
    assert not checks["deadlock_free"]["ok"]
    assert not checks["storm_free"]["ok"] and checks["storm_free"]["switch"].startswith("s")
    assert simulate_8021q(intent, "h0", "broadcast")["storm"]


def good_intent(kind="fixed"):
    result = plan(topo(), engine="dor", assignment=kind,
                  broadcast="bounded" if kind == "renamed" else "contained")
    return result.topology, result.routing, copy.deepcopy(result.intent)


def test_a_vlan_loop_added_by_hand_is_found_and_named():
    topology, routing, intent = good_intent("fixed")
    vid = intent["fabric"]["vlan_ids"][0]
    for link in intent["links"]:       # tag every link in one VLAN: cycles
        for end in (link["a"], link["b"]):
            switch, port = end.rsplit(":", 1)
            config = intent["switches"][switch]["ports"][port]
            if vid not in config["tagged"]:
                config["tagged"] = sorted(config["tagged"] + [vid])
    checks = checks_by_name(check_intent(topology, intent, routing=routing))
    assert not checks["vlan_trees"]["ok"] and "VLAN %d has the cycle" % vid in \
        checks["vlan_trees"]["detail"]
    assert checks["vlan_trees"]["switch"] in topology.switches
    assert not checks["storm_free"]["ok"]


def test_a_wrong_static_entry_is_found_and_named():
    topology, routing, intent = good_intent("renamed")
    entry = intent["switches"]["sw4"]
    victim = next(item for item in entry["static_macs"]
                  if entry["ports"][item["port"]]["role"] == "link")
    other = next(p for p, cfg in entry["ports"].items()
                 if cfg["role"] == "link" and p != victim["port"]
                 and victim["vlan"] in cfg["untagged"])
    victim["port"] = other
    checks = checks_by_name(check_intent(topology, intent, routing=routing))
    failed = checks["unicast_paths"]
    assert not failed["ok"] and failed["switch"] in topology.switches
    # the misdirected frames either leave the path or find no entry where they end up
    assert victim["mac"] in failed["detail"] or "leaves the planned path" in failed["detail"]
    # a PVID the switch does not hold
    intent["switches"]["sw2"]["ports"]["1"]["pvid"] = 3999
    checks = checks_by_name(check_intent(topology, intent, routing=routing))
    assert checks["port_config"]["switch"] == "sw2"
    assert "sw2:1 uses VLAN 3999" in checks["port_config"]["detail"]


def test_check_intent_reads_the_intent_without_a_routing():
    topology, _routing, intent = good_intent("renamed")
    checks = checks_by_name(check_intent(topology, intent))
    assert "deadlock_free" not in checks
    assert checks["unicast_paths"]["ok"] and checks["storm_free"]["ok"]
    assert check_intent(topology, {"schema": "other"})[0]["ok"] is False


# ------------------------------------------------------ down links, learning
def test_a_link_taken_down_is_down_in_the_intent_and_carries_nothing():
    topology = topo(kind="mesh", dims=[3, 3])
    link = topology.links[4]
    result = plan(topology, engine="segment", down=[link.index])
    intent = result.intent
    assert intent["links"][4]["state"] == "down"
    assert intent["fabric"]["down_links"] == [link.name]
    for end in (link.a, link.b):
        assert intent["switches"][end.switch]["ports"][end.port]["admin"] == "down"
    fabric = Dot1qFabric(intent)
    for src, dst in itertools.permutations(sorted(intent["hosts"]), 2):
        trace = fabric.send(src, dst)
        assert trace["received"] and all(
            topology.channel_from(h["switch"], h["out_port"]) is None
            or topology.channel_from(h["switch"], h["out_port"]).link != link.index
            for h in trace["path"])


def test_mac_learning_self_plans_the_hosts_and_no_static_entries():
    result = plan(topo(), engine="dor", assignment="fixed", mac_learning="self",
                  learning_network="10.200.0.0/16", aging_time=600)
    intent = result.intent
    assert intent["fabric"]["mac_learning"] == "self"
    assert intent["mac_learning"]["repeat_every_s"] == 300
    assert all(entry["static_macs"] == [] for entry in intent["switches"].values())
    checks = checks_by_name(result.checks)
    assert checks["mac_table"]["ok"] and "learned" in checks["mac_table"]["detail"]
    # the check pings from the destinations, then follows learned entries only
    assert checks["unicast_paths"]["ok"] and "learned" in checks["unicast_paths"]["detail"]
    error = rejected(topo(), engine="dor", assignment="renamed", broadcast="bounded", mac_learning="self")
    assert "only with the fixed VLAN assignment" in str(error)


def test_host_limits_is_t_over_v_per_switch():
    intent = plan(topo({"mac_table_size": 1000}), engine="dor", assignment="fixed").intent
    limits = host_limits(intent)
    for name, row in limits["switches"].items():
        assert row == {"T": 1000, "V": len(intent["switches"][name]["vlans"]),
                       "H": 1000 // len(intent["switches"][name]["vlans"])}
    assert limits["fabric"]["limit"] == min(row["H"] for row in limits["switches"].values())


# ------------------------------------------------------- broadcast copies
def brute_force_broadcast_crossings(intent, host):
    """Follow every copy of one broadcast from ``host`` frame by frame
    (802.1Q through the simulator's own classify/decide/egress) and count
    the switch-to-switch link crossings."""
    fabric = Dot1qFabric(intent)
    switch, port, _mac = fabric.hosts[host]
    vid, _reason = fabric.classify(switch, port, None)
    frames = [(switch, port, vid)]
    crossings = 0
    while frames:
        sw, in_port, vlan = frames.pop()
        for out in fabric.decide(sw, in_port, vlan, "ff:ff:ff:ff:ff:ff")[0]:
            tag, where = fabric.egress(sw, out, vlan)
            if where is not None and where[0] == "switch":
                crossings += 1
                next_sw, next_port = where[1]
                next_vid, _reason = fabric.classify(next_sw, next_port, tag)
                if next_vid is not None:
                    frames.append((next_sw, next_port, next_vid))
        assert crossings < 10 ** 6, "the brute force is for small fabrics"
    return crossings


@pytest.mark.parametrize("spec, engine, assignment", [
    ({"kind": "mesh", "dims": [3, 3]}, "segment", "renamed"),
    ({"kind": "torus", "dims": [3, 3]}, "updown", "renamed"),
    ({"kind": "random", "switches": 8, "degree": 3, "seed": 2}, "segment", "renamed"),
    ({"kind": "mesh", "dims": [3, 3]}, "dor", "fixed"),
])
def test_broadcast_copies_counts_every_link_crossing_of_the_worst_broadcast(spec, engine,
                                                                            assignment):
    result = plan(topo(**spec), engine=engine, assignment=assignment, broadcast="bounded" if assignment == "renamed" else "contained")
    fabric = Dot1qFabric(result.intent)
    copies, switch, _vlan = fabric.broadcast_copies()
    crossings = {name: brute_force_broadcast_crossings(result.intent, name)
                 for name in result.intent["hosts"]}
    assert copies == max(crossings.values())
    worst_hosts = [h for h, n in crossings.items() if n == copies]
    assert switch in {result.intent["hosts"][h]["switch"] for h in worst_hosts}
    check = checks_by_name(result.checks)["broadcast_copies"]
    assert check["ok"] and ("at most %d times" % copies) in check["detail"]
    if assignment == "fixed":  # one tree per VLAN: each other switch once
        assert copies == len(result.intent["switches"]) - 1


def test_too_many_broadcast_copies_reject_the_plan_naming_the_switch():
    fabric = topo(kind="torus", dims=[4, 4])
    accepted = plan(fabric, engine="segment", assignment="renamed", broadcast="bounded")
    copies, switch, _vlan = Dot1qFabric(accepted.intent).broadcast_copies()
    assert copies > 15  # renamed floods along many paths of the segment routing
    assert accepted.intent["fabric"]["max_broadcast_copies"] == 100000
    with pytest.raises(PlanError) as info:
        plan(fabric, engine="segment", assignment="renamed", broadcast="bounded", max_broadcast_copies=copies - 1)
    failed = {check["name"]: check for check in info.value.checks if not check["ok"]}
    assert set(failed) == {"broadcast_copies"}
    assert failed["broadcast_copies"]["switch"] == switch
    assert "crosses switch links %d times" % copies in str(info.value)
    assert "assignment auto" in str(info.value)
    with pytest.raises(PlanError, match="max_broadcast_copies: must be a whole number"):
        plan(fabric, max_broadcast_copies=-1)
