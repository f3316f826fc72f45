# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Applying a precomputed failover and going back (power/failover_run.py),
checked with the 802.1Q simulator on the planned states with the failed
link really down: before the failover the pairs that used it are cut off;
once the switches whose entries change have flipped, every pair delivers
again, and every later state too; the dependencies of all states together
are acyclic; the restore ends on the base routing. The executor runs the
steps against in-memory switches (the link transitions' fake), resumes a
run stopped midway and changes nothing the second time."""

from __future__ import annotations

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_run
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import FailoverError, resolve_failure
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import TransitionRunError
from power_helpers import assert_deadlock_free, cut_pairs, dead_link, module_utils_test

OPTIONS = {"engine": "segment", "assignment": "renamed", "engine_options": None}
FAKES = module_utils_test("test_transition_run")


def torus():
    return topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})


def _planned(**what):
    """The torus, the failure ``what`` names, and its failover from bank A."""
    topology = torus()
    failure = resolve_failure(topology, **what)
    return topology, failure, failover_run.plan_failover(topology, OPTIONS, failure, "A")


@pytest.fixture(scope="module")
def failed():
    return _planned(link="sw5:4")


def test_pairs_deliver_again_once_the_changed_switches_flipped(failed):
    topology, failure, transition = failed
    assert transition.banks == ["A", "B"] and transition.proof["order_free"]
    changed = transition.proof["failure"]["switches"]
    assert changed and set(changed) <= set(topology.switch_names())
    assert not any(step["kind"] == "drain" for step in transition.steps)
    flips = [step for step in transition.steps if step["name"].startswith("flip ")]
    assert [next(iter(step["switches"])) for step in flips][:len(changed)] == changed   # changed first
    by_step = {state["step"]: state["intent"] for state in transition.states}
    assert cut_pairs(dead_link(by_step[0], failure.name))          # the failure cuts pairs off
    recovered = flips[len(changed) - 1]["index"]
    for index, intent in by_step.items():
        if index >= recovered:
            assert cut_pairs(dead_link(intent, failure.name)) == [], index
    # nothing is configured on the failed link at the end
    link = topology.link(failure.name)
    for end in (link.a, link.b):
        port = transition.after["switches"][end.switch]["ports"][end.port]
        assert not port["untagged"] and not port["tagged"], end


def test_all_states_together_are_deadlock_free(failed):
    topology, failure, transition = failed
    assert_deadlock_free(topology, [dead_link(state["intent"], failure.name) for state in transition.states])


def test_restore_starts_where_the_failover_ends_and_ends_on_the_base(failed):
    topology, failure, transition = failed
    back = failover_run.plan_restore(topology, OPTIONS, failure, "B")
    assert back.before["switches"] == transition.after["switches"]
    assert back.after["switches"] == plan(topology, bank="A", **OPTIONS).intent["switches"]
    assert back.banks == ["B", "A"] and not back.proof["drain"]


def _switch_dead(intent, topology, switch):
    """The intent with every link of ``switch`` down."""
    for link in topology.links:
        if switch in (link.a.switch, link.b.switch):
            intent = dead_link(intent, link.name)
    return intent


def _cut_survivors(intent, topology, switch):
    gone = {name for name, host in topology.hosts.items() if host.switch == switch}
    return [pair for pair in cut_pairs(_switch_dead(intent, topology, switch)) if not set(pair) & gone]


@pytest.fixture(scope="module")
def switch_failed():
    return _planned(switch="sw10")


def test_a_switch_failure_is_pushed_around_the_switch_without_touching_it(switch_failed):
    topology, failure, transition = switch_failed
    assert not any("sw10" in (step.get("switches") or {}) for step in transition.steps)
    assert transition.after["switches"]["sw10"] == transition.before["switches"]["sw10"]
    by_step = {state["step"]: state["intent"] for state in transition.states}
    assert _cut_survivors(by_step[0], topology, "sw10")           # pairs crossing sw10 are cut
    recovered = transition.proof["recovered_after_step"]
    assert 0 < recovered < len(transition.steps)
    for index, intent in by_step.items():
        if index >= recovered:   # from the last urgent step on, every surviving pair delivers around sw10
            assert _cut_survivors(intent, topology, "sw10") == [], index


def test_a_switch_failure_and_its_return_are_deadlock_free_and_end_on_the_base(switch_failed):
    topology, failure, transition = switch_failed
    back = failover_run.plan_restore(topology, OPTIONS, failure, "B")
    assert back.before["switches"] == transition.after["switches"]
    assert back.after["switches"] == plan(topology, bank="A", **OPTIONS).intent["switches"]
    assert [step["kind"] for step in back.steps[:4]] == ["wait_carrier"] * 4    # its four links
    assert_deadlock_free(topology, [_switch_dead(state["intent"], topology, "sw10")
                                    for state in transition.states + back.states])


class DeadSwitch(FAKES.FakeFabric):
    """In-memory switches, one of which cannot be reached."""

    dead = "sw10"

    def read(self, switch):
        if switch == self.dead:
            raise FAKES.SwitchConnectionError("%s: unreachable" % switch)
        return super().read(switch)


def test_the_executor_never_reaches_the_failed_switch():
    topology = torus()
    failure = resolve_failure(topology, switch="sw10")
    fake = DeadSwitch(topology, plan(topology, bank="A", **OPTIONS).intent)
    stored = failover_run.plan_failover(topology, OPTIONS, failure, "A")   # planned once, as the responder does

    def planner(bank):
        if bank != "A":
            raise FailoverError("planned from bank A only")
        return stored
    done = failover_run.execute(topology, fake, planner, failure=failure)
    assert done["changed"] and fake.writes and "sw10" not in fake.writes + fake.reads
    again = failover_run.execute(topology, fake, planner, failure=failure)
    assert not again["changed"] and "sw10" not in fake.reads


def test_a_switch_failure_with_the_fixed_assignment_is_refused_by_name():
    topology = topology_from_data({"generate": {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 1}})
    options = dict(OPTIONS, engine="dor", assignment="fixed")
    with pytest.raises(FailoverError, match="switch sw5: a switch failure is pushed only with the renamed"):
        failover_run.plan_failover(topology, options, resolve_failure(topology, switch="sw5"), "A")


def test_execute_runs_resumes_and_is_idempotent():
    topology = FAKES.RING
    options = dict(OPTIONS, engine="updown")
    failure = resolve_failure(topology, link=FAKES.LINK)
    fake = FAKES.FakeFabric(topology, plan(topology, bank="A", engine="updown", assignment="renamed").intent)

    def planner(bank):
        return failover_run.plan_failover(topology, options, failure, bank)

    checked = failover_run.execute(topology, fake, planner, check_mode=True)
    assert checked["changed"] and fake.writes == [] and "check mode" in checked["reason"]
    fake.fail_writes_on = {("sw0", 2)}     # the second write of sw0 (its flip) fails
    with pytest.raises(TransitionRunError):
        failover_run.execute(topology, fake, planner)
    fake.fail_writes_on = set()
    resumed = failover_run.execute(topology, fake, planner)
    assert resumed["changed"] and resumed["reason"].startswith("resumed after step")
    again = failover_run.execute(topology, fake, planner)
    assert not again["changed"] and "done already" in again["reason"]
    back = failover_run.execute(topology, fake, lambda bank: failover_run.plan_restore(topology, options, failure, bank))
    assert back["changed"] and back["bank_after"] == "A"
