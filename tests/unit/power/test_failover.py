# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Precomputed failover (power/failover.py), checked from the stored
compact form alone: every covered failure's backup, rebuilt from the base
routing and its changes, delivers every pair of surviving switches without
the failed link or switch, changes nothing for the pairs that did not use
it, and its dependencies together with the base routing's are acyclic (old
frames draining on the base paths cannot deadlock with the new ones). The
intent planned from a backup delivers every surviving host pair in the
802.1Q simulator."""

from __future__ import annotations

import itertools
import json
import re

import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import (
    FailoverError,
    backup_from_changes,
    precompute_failover,
    resolve_failure,
    single_failures,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_planner import _plan_from_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import cdg
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric


def fabric(kind="torus", dims=(4, 4), engine="segment"):
    topology = topology_from_data({"generate": {"kind": kind, "dims": list(dims), "hosts_per_switch": 1}})
    return topology, compute_routing(topology, engine)


def _path(routing, src, dst):
    """Channels from switch ``src`` to ``dst`` by next_channel alone (None: not delivered)."""
    path, at, came = [], src, None
    for _hop in range(4 * len(routing.topology.channels)):
        if at == dst:
            return path
        out = routing.next_channel(at, came, dst)
        if out is None:
            return None
        path.append(out)
        came, at = out, routing.topology.channels[out].dst
    return None


@pytest.fixture(scope="module")
def torus_segment():
    topology, base = fabric()
    stored = precompute_failover(base)
    return topology, base, json.loads(json.dumps(stored))     # the stored form is plain JSON


def test_every_single_failure_is_listed_with_coverage(torus_segment):
    topology, _base, stored = torus_segment
    assert len(stored["failures"]) == 32 + 16
    cover = stored["coverage"]
    assert cover["total"] == 48 and cover["link"]["total"] == 32 and cover["switch"]["total"] == 16
    assert cover["covered"] == sum(1 for item in stored["failures"] if item["covered"])
    assert cover["covered"] >= 40
    assert sorted(cover["uncovered"]) == sorted(item["name"] for item in stored["failures"] if not item["covered"])
    for item in stored["failures"]:
        if not item["covered"]:
            assert "halt-and-drain" in item["reason"] and item["changes"] == []


def test_covered_backups_avoid_the_failure_keep_the_rest_and_stay_acyclic(torus_segment):
    topology, base, stored = torus_segment
    names = topology.switch_names()
    base_graph = cdg.channel_dependency_graph(base)
    for item in stored["failures"]:
        if not item["covered"]:
            continue
        backup = backup_from_changes(base, item)
        dead_links = set(item["links"])
        graph = nx.DiGraph(base_graph)
        moved = 0
        for src, dst in itertools.permutations(names, 2):
            if item["switch"] in (src, dst):
                continue
            before, after = _path(base, src, dst), _path(backup, src, dst)
            assert after is not None, (item["name"], src, dst)
            assert not {topology.channels[c].link for c in after} & dead_links, (item["name"], src, dst)
            if not {topology.channels[c].link for c in before} & dead_links \
                    and item["switch"] not in {topology.channels[c].dst for c in before}:
                assert after == before, (item["name"], src, dst)   # unaffected pairs keep their path
            else:
                moved += 1
            graph.add_edges_from(zip(after, after[1:]))
        assert moved == item["pairs_affected"], item["name"]
        assert nx.is_directed_acyclic_graph(graph), item["name"]
        # only the switches listed change an entry
        changed = {switch for switch, _in, _dst, _out in item["changes"]}
        assert changed == set(item["switches"])


def test_disjoint_backups_are_counted_honestly(torus_segment):
    topology, base, stored = torus_segment
    item = next(entry for entry in stored["failures"] if entry["name"] == topology.link("sw5:4").name)
    backup = backup_from_changes(base, item)
    disjoint = 0
    for src, dst in itertools.permutations(topology.switch_names(), 2):
        before = _path(base, src, dst)
        if not {topology.channels[c].link for c in before} & set(item["links"]):
            continue
        after = _path(backup, src, dst)
        if not {topology.channels[c].link for c in before} & {topology.channels[c].link for c in after}:
            disjoint += 1
    assert disjoint == item["pairs_disjoint"] and 0 < disjoint <= item["pairs_affected"]


def test_the_backup_plans_into_an_intent_that_delivers_every_pair(torus_segment):
    topology, base, stored = torus_segment
    link = next(entry for entry in stored["failures"] if entry["kind"] == "link" and entry["covered"])
    made = _plan_from_routing(topology, backup_from_changes(base, link), "B", {"assignment": "renamed"})
    simulator = Dot1qFabric(made.intent)
    for src, dst in itertools.permutations(sorted(made.intent["hosts"]), 2):
        trace = simulator.send(src, dst)
        assert trace["received"] and trace["delivered"][dst]["copies"] == 1, (src, dst)


def test_mesh_dor_relaxed_detours_cover_more_than_the_strict_order():
    _topology, base = fabric("mesh", (4, 4), "dor")
    stored = precompute_failover(base)
    relaxed = [item for item in stored["failures"] if item["covered"] and item["reason"]]
    assert relaxed and all("close no dependency cycle" in item["reason"] for item in relaxed)
    # the note names the pair the base turn order left without a detour
    assert all(re.search(r"for sw\d+ -> sw\d+; detours", item["reason"]) for item in relaxed), relaxed[0]["reason"]
    assert stored["coverage"]["covered"] > len(stored["failures"]) // 2


def test_failure_names_and_bad_stored_changes_are_refused():
    topology, base = fabric()
    assert resolve_failure(topology, link="sw5:4").links == frozenset({topology.link("sw5:4").index})
    assert resolve_failure(topology, switch="sw5").links == next(
        item.links for item in single_failures(topology) if item.switch == "sw5")
    with pytest.raises(FailoverError, match="name one failure"):
        resolve_failure(topology)
    with pytest.raises(FailoverError, match="not a switch"):
        resolve_failure(topology, switch="sw99")
    with pytest.raises(FailoverError, match="has no backup"):
        backup_from_changes(base, {"name": "x", "covered": False, "reason": "r"})
    with pytest.raises(FailoverError, match="no link port 77"):
        backup_from_changes(base, {"name": "x", "covered": True, "links": [0],
                                   "changes": [["sw0", "77", "sw1", "2"]]})
