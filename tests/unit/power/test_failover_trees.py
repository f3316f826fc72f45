# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failover of source-tree routings (power/failover.py, "source trees"):
the fixed assignment of a 4x4 torus of dell_os6 switches, one VLAN per
source switch whose links form a tree. A link's backup repairs only the
trees that crossed it; the failover flips the sources of those trees first
and, checked with the 802.1Q simulator on the planned states with the
failed link really down, every pair delivers again once they have flipped;
all states together are deadlock-free; the restore ends on the base; a
stored backup that is not the one computed now is refused."""

from __future__ import annotations

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_run
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import (
    TREE_SWITCH_REASON, FailoverError, repair_trees, resolve_failure, tree_backup)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_planner import _turn_order
from power_helpers import assert_deadlock_free, cut_pairs, dead_link

OPTIONS = {"engine": "segment", "assignment": "fixed", "engine_options": {"paths": "source_tree"}}
LINK = "sw5:4"      # sw5:4--sw6:3: covered by a repair


def os6_torus():
    return topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1},
                               "switch_defaults": {"platform": "dell_os6"}})


@pytest.fixture(scope="module")
def document():
    topology = os6_torus()
    return topology, failover_run.failover_document(topology, OPTIONS)


@pytest.fixture(scope="module")
def failed(document):
    topology, stored = document
    failure = resolve_failure(topology, link=LINK)
    entry = [item for item in stored["failures"] if item["name"] == failure.name][0]
    return topology, failure, entry, failover_run.plan_failover(topology, OPTIONS, failure, "A", stored=entry)


def test_link_failures_are_covered_or_named_and_switch_failures_need_the_renamed_assignment(document):
    topology, stored = document
    assert stored["paths"] == "source_tree" and stored["settings"]["assignment"] == "fixed"
    cover = stored["coverage"]
    assert cover["link"]["total"] == 32 and cover["link"]["covered"] >= 24
    assert cover["switch"] == {"covered": 0, "total": 16}
    for entry in stored["failures"]:
        if entry["kind"] == "switch":
            assert not entry["covered"] and entry["reason"] == TREE_SWITCH_REASON
        elif entry["covered"]:
            assert entry["backup_digest"] and entry["switches"] and entry["pairs_affected"] > 0
        else:
            assert "halt-and-drain" in entry["reason"] and entry["name"] in entry["reason"]


def test_a_repair_keeps_every_tree_that_did_not_cross_the_link(document):
    topology, _stored = document
    base = failover_run.base_plan(topology, OPTIONS).routing
    failure = resolve_failure(topology, link=LINK)
    dead = {2 * index + side for index in failure.links for side in (0, 1)}
    backup = repair_trees(base, failure.links, _turn_order(base))
    crossing = []
    for s, name in enumerate(base.switch_names):
        old, new = base.entry[s].tolist(), backup.entry[s].tolist()
        assert not dead & set(new), name
        if dead & set(old):
            crossing.append(name)
            assert old != new, name
        else:
            assert old == new, name
    found = tree_backup(base, backup, failure)
    assert found.covered and found.switches == crossing
    # every pair still delivered, none over the failed link
    assert all(not dead & set(path) for path in backup.paths().values())


def test_pairs_deliver_again_once_the_sources_of_the_changed_trees_flipped(failed):
    topology, failure, entry, transition = failed
    assert transition.banks == ["A", "B"] and transition.proof["order_free"] and not transition.proof["drain"]
    changed = transition.proof["failure"]["switches"]
    assert changed == entry["switches"]
    flips = [step for step in transition.steps if step["name"].startswith("flip ")]
    assert [next(iter(step["switches"])) for step in flips][:len(changed)] == changed   # changed first
    by_step = {state["step"]: state["intent"] for state in transition.states}
    assert cut_pairs(dead_link(by_step[0], failure.name))          # the failure cuts pairs off
    recovered = transition.proof["recovered_after_step"]
    assert recovered == flips[len(changed) - 1]["index"] < len(transition.steps)
    for index, intent in by_step.items():
        if index >= recovered:
            assert cut_pairs(dead_link(intent, failure.name)) == [], index
    link = topology.link(failure.name)
    for end in (link.a, link.b):   # nothing is configured on the failed link at the end, its ports stay up
        port = transition.after["switches"][end.switch]["ports"][end.port]
        assert not port["untagged"] and not port["tagged"] and port["admin"] == "up", end


def test_all_states_and_the_restore_are_deadlock_free_and_end_on_the_base(failed):
    topology, failure, entry, transition = failed
    back = failover_run.plan_restore(topology, OPTIONS, failure, "B", stored=entry)
    assert back.before["switches"] == transition.after["switches"]
    assert back.after["switches"] == plan(topology, bank="A", **OPTIONS).intent["switches"]
    assert back.banks == ["B", "A"] and not back.proof["drain"]
    assert_deadlock_free(topology, [dead_link(state["intent"], failure.name)
                                    for state in transition.states + back.states])


def test_a_stored_backup_of_another_routing_and_an_uncovered_link_are_refused_by_name(document):
    topology, stored = document
    failure = resolve_failure(topology, link=LINK)
    entry = dict([item for item in stored["failures"] if item["name"] == failure.name][0], backup_digest="0" * 16)
    with pytest.raises(FailoverError, match="stored backup is not the one computed now.*failover_plan.yml"):
        failover_run.plan_failover(topology, OPTIONS, failure, "A", stored=entry)
    uncovered = [item["name"] for item in stored["failures"] if item["kind"] == "link" and not item["covered"]]
    assert uncovered
    with pytest.raises(FailoverError, match="%s has no backup: .*halt-and-drain" % uncovered[0]):
        failover_run.plan_failover(topology, OPTIONS, resolve_failure(topology, link=uncovered[0].split("--")[0]),
                                   "A")
    with pytest.raises(FailoverError, match="failure sw5 has no backup: a switch failure is pushed only with the renamed"):
        failover_run.plan_failover(topology, OPTIONS, resolve_failure(topology, switch="sw5"), "A")


def test_the_report_says_which_trees_move(document):
    _topology, stored = document
    text = failover_run.failover_report(stored)
    assert "the source trees that crossed the failed link are repaired" in text
    uncovered = [entry["name"] for entry in stored["failures"] if entry["kind"] == "link" and not entry["covered"]]
    assert "| link %s | - |" % uncovered[0] in text and "halt-and-drain" in text
