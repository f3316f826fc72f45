# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resident failover responder (power/failover_watch.py) against
in-memory switches (the link transitions' fake) fed with fake carriers and a
fake wall clock: a cut link is detected and its pre-planned failover runs
(the switches then hold the backup's intent), the restore brings the base
routing back in the other bank, a second failure while on a backup is
planned on the held routing or refused naming the halt-and-drain, a switch
failure while a link's backup holds is failed over on the held routing and
its return writes it back first, a switch failure without a plan is
logged (not pushed), check mode writes nothing,
the long-poll loop stops on its count."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_watch as fw
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import TREE_SWITCH_REASON
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import TransitionRunError
from power_helpers import module_utils_test

FAKES = module_utils_test("test_transition_run")

RING = topology_from_data({
    "name": "ring4", "switches": {"sw%d" % i: {} for i in range(4)},
    "links": [{"a": "sw%d:3" % i, "b": "sw%d:2" % ((i + 1) % 4)} for i in range(4)],
    "hosts": {"h%d" % i: {"switch": "sw%d" % i, "port": "1", "mac": "02:00:00:00:00:%02x" % (i + 1)} for i in range(4)}})
OPTIONS = {"engine": "updown", "assignment": "renamed", "engine_options": None}


class Clock:
    """A wall clock that moves one second per reading."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        self.now += 1.0
        return self.now


def carriers(topology, cut=(), dead=()):
    """Every fabric port's carrier with the links ``cut`` (names or ends) and
    the switches ``dead`` down."""
    down = {topology.link(name).index for name in cut}
    result = {}
    for name, ports in fw.fabric_ports(topology).items():
        result[name] = {port: "up" for port in ports}
    for link in topology.links:
        if link.index in down or link.a.switch in dead or link.b.switch in dead:
            result[link.a.switch][str(link.a.port)] = "down"
            result[link.b.switch][str(link.b.port)] = "down"
    return result


def responder(topology=RING, options=None, check_mode=False, preplan=None, atomic=True):
    options = options or OPTIONS
    fake = FAKES.FakeFabric(topology, plan(topology, bank="A", **options).intent)
    events = []
    made = fw.Responder(topology, options, fake, log=events.append, check_mode=check_mode, wall=Clock(),
                        atomic=atomic)
    made.ready(preplan)
    return made, fake, events


def holds(fake, intent):
    return FAKES.tr.differing({name: fake.read(name) for name in intent["switches"]}, intent["switches"]) == []


def test_a_cut_link_runs_its_preplanned_failover_and_the_return_restores_the_base():
    made, fake, events = responder()
    assert events[0]["event"] == "ready" and len(events[0]["planned"]) + len(events[0]["not_planned"]) == 4 + 4
    assert events[0]["not_planned"] and "halt-and-drain" in events[0]["not_planned"][0]
    link = RING.links[1]
    transition, _routing = made.plans[link.name]
    # ready armed the base: one push of the switches that get continuation rows
    base = plan(RING, bank="A", **OPTIONS).intent
    armed = made.arming["switches"]
    assert armed and events[0]["armed"] == sorted(armed) and sorted(fake.writes) == sorted(armed)
    assert holds(fake, armed_intent(base, armed)) and transition.proof["armed"]
    writes = len(fake.writes)
    made.observe(carriers(RING))
    assert made.handle() == [] and len(fake.writes) == writes          # nothing changed, nothing done
    made.observe(carriers(RING, cut=[link.name]))
    reads = len(fake.reads)
    done = made.handle()
    assert [entry["event"] for entry in done] == ["recovered"]
    assert len(fake.reads) == reads          # the states read at ready are remembered: a push only writes
    assert done[0]["how"] == "pre-planned" and done[0]["proof"]["acyclic"] and not done[0]["proof"]["drain"]
    assert done[0]["detected"] < done[0]["at"]
    made.settle()
    assert holds(fake, transition.after) and made.bank == "B" and made.down == {link.index}
    assert [entry["event"] for entry in events][-2:] == ["recovered", "settled"]
    made.observe(carriers(RING))
    back = made.handle()
    made.settle()
    assert [entry["event"] for entry in back] == ["restored"]
    # back on the base and armed again for the next failure; stopping writes the plain base back
    assert holds(fake, armed_intent(base, armed)) and made.bank == "A" and not made.down
    assert made.disarm()["switches"] == sorted(armed) and holds(fake, base)
    assert made.disarm() is None


def restarted(fake, topology=RING, options=None, preplan=None):
    """A second responder on the same switches (the first one stopped or died)."""
    events = []
    made = fw.Responder(topology, options or OPTIONS, fake, log=events.append, wall=Clock())
    made.ready(preplan)
    return made, events


def test_a_restarted_responder_resumes_a_held_link_failover_and_its_return_restores_the_base():
    """§2.3's manager taken over: the fabric holds a link's backup when a
    new responder starts; it holds that failure (no push), ignores the link
    while it is down and runs the planned restore when it is back."""
    first, fake, events = responder()
    link = RING.links[1]
    first.observe(carriers(RING, cut=[link.name]))
    assert [entry["event"] for entry in first.handle()] == ["recovered"]
    first.settle()
    armed = first.arming["switches"]
    writes = len(fake.writes)
    # the lab's cut (a veth set down) reads as the port shut: compared as the move keeps it, admin up
    fake.states[link.a.switch]["ports"][str(link.a.port)]["admin"] = "down"
    made, logged = restarted(fake)
    assert logged[0]["event"] == "ready" and logged[0]["resumed"] == link.name, logged[0]
    assert made.driver.read(link.a.switch)["ports"][str(link.a.port)]["admin"] == "up"
    assert len(fake.writes) == writes                 # nothing written: the fabric is on the backup
    assert made.bank == "B" and made.plans_bank == "A" and made.down == {link.index} and not made.gone
    assert made.held_failure.name == link.name and made.restore_plan is not None
    assert sorted(made.plans) == sorted(first.plans)  # the same moves, planned from the base in bank A
    made.observe(carriers(RING, cut=[link.name]))
    assert made.handle() == [] and len(fake.writes) == writes
    made.observe(carriers(RING))
    back = made.handle()
    made.settle()
    assert [(entry["event"], entry["how"]) for entry in back] == [("restored", "restore")], back
    assert back[0]["proof"]["acyclic"] and not back[0]["proof"]["drain"]
    base = plan(RING, bank="A", **OPTIONS).intent
    assert holds(fake, armed_intent(base, armed)) and made.bank == "A" and not made.down
    assert made.arming["switches"] == armed


def test_a_restarted_responder_resumes_a_held_switch_failover_whose_switch_came_back():
    """A failed switch is never written, so once back it alone holds the
    base's bank: the responder started then holds the switch's failure and
    its first poll (the switch up) runs the restore."""
    first, fake, events = responder()
    gone = next(name for name in events[0]["planned"] if name in RING.switches)
    first.observe(carriers(RING, dead=[gone]))
    assert [entry["event"] for entry in first.handle()] == ["recovered"]
    first.settle()
    made, logged = restarted(fake)
    assert logged[0]["resumed"] == gone and made.gone == {gone} and made.dead == {gone}, logged[0]
    made.observe(carriers(RING))
    back = made.handle()
    made.settle()
    assert [(entry["event"], entry["kind"]) for entry in back] == [("restored", "switch_up")], back
    base = plan(RING, bank="A", **OPTIONS).intent
    assert holds(fake, armed_intent(base, first.arming["switches"])) and not made.gone and not made.down


class Unanswered:
    """The fake switches, ``silent`` ones failing every read (no power)."""

    def __init__(self, fake, silent):
        self.fake, self.silent = fake, set(silent)

    def read(self, switch):
        if switch in self.silent:
            raise FAKES.SwitchConnectionError("%s: read failed: no route to host" % switch)
        return self.fake.read(switch)

    def write(self, switch, changes, desired, current):
        assert switch not in self.silent, "%s was written while it does not answer" % switch
        self.fake.write(switch, changes, desired, current)

    def carrier(self, switch, port):
        return self.fake.carrier(switch, port)


def test_a_restarted_responder_resumes_a_switch_failover_while_the_switch_does_not_answer():
    """A switch without power cannot be read: its held failover is still
    recognised from the others, it stays failed (never written) while its
    poll fails, and its return runs the restore; another switch that does
    not answer on a fabric on its base is refused, nothing written."""
    first, fake, events = responder()
    gone = next(name for name in events[0]["planned"] if name in RING.switches)
    first.observe(carriers(RING, dead=[gone]))
    assert [entry["event"] for entry in first.handle()] == ["recovered"]
    first.settle()
    silent = Unanswered(fake, [gone])
    made = fw.Responder(RING, OPTIONS, silent, log=[].append, wall=Clock())
    assert made.ready()["resumed"] == gone and made.dead == {gone} and made.bank == "B"
    made.observe({**carriers(RING, dead=[gone]), gone: None})       # its poll fails: still failed, nothing to do
    assert made.handle() == []
    silent.silent.clear()
    made.observe(carriers(RING))
    back = made.handle()
    made.settle()
    assert [(entry["event"], entry["kind"]) for entry in back] == [("restored", "switch_up")], back
    assert holds(fake, armed_intent(plan(RING, bank="A", **OPTIONS).intent, first.arming["switches"]))
    writes = len(fake.writes)
    other = next(name for name in RING.switches if name != gone)
    with pytest.raises(TransitionRunError, match="%s could not be read .*no route to host" % other):
        fw.Responder(RING, OPTIONS, Unanswered(fake, [other]), log=[].append, wall=Clock()).ready()
    assert len(fake.writes) == writes


def test_a_responder_refuses_a_fabric_on_neither_the_base_nor_a_planned_backup():
    """Nothing written, the switches named: a switch whose VLANs are gone,
    and a fabric in the middle of a move (one switch flipped alone)."""
    made, fake, events = responder()
    fake.states["sw2"]["flows"] = []
    writes = len(fake.writes)
    with pytest.raises(TransitionRunError, match="sw2 do\\(es\\) not hold the base routing of bank A"):
        restarted(fake)
    assert len(fake.writes) == writes
    made, fake, events = responder()
    link = RING.links[1]
    transition, _routing = made.plans[link.name]
    other = fw.changing(transition)[0]
    fake.write(other, None, fw.ovs.render(transition.after["switches"][other], other), None)
    with pytest.raises(TransitionRunError, match="PVIDs are in banks \\['A', 'B'\\]"):
        restarted(fake)


def armed_intent(base, armed):
    return dict(base, switches=dict(base["switches"], **armed))


def on_base(made, fake, topology, armed):
    """The switches hold the base routing in the responder's bank (armed
    again when that is the bank it started in)."""
    base = plan(topology, bank=made.bank, **OPTIONS).intent
    return holds(fake, armed_intent(base, armed) if made.bank == made.plans_bank else base)


def test_urgent_steps_are_the_proven_rounds_then_the_rest():
    made, _fake, _events = responder()
    transition, _routing = made.plans[RING.links[2].name]
    urgent, tail = fw.urgent_steps(transition, fw.changing(transition))
    assert urgent[0]["name"].startswith("round 1: flip ") and all(step.get("round") for step in urgent)
    assert len(urgent) == transition.proof["rounds"] and urgent + tail == transition.steps
    assert tail[-1]["name"].startswith("remove") and not any(step.get("round") for step in tail)
    # the urgent rounds flip only the switches delivery needs (here the failed link's ends); every other
    # changing switch is flipped in the background, so all of them hold the backup at the end
    urgent_writes = {name for step in urgent for name in step["switches"]}
    tail_writes = {name for step in tail for name in step.get("switches") or {}}
    assert urgent_writes < set(fw.changing(transition)) <= urgent_writes | tail_writes
    assert any(step.get("after_recovery") for step in tail)


def test_check_mode_logs_what_it_would_do_and_writes_nothing():
    made, fake, events = responder(check_mode=True, preplan=[RING.links[2].name])
    made.observe(carriers(RING, cut=[RING.links[2].name]))
    done = made.handle()
    assert [entry["event"] for entry in done] == ["would_run"] and done[0]["urgent"] and done[0]["proof"]["acyclic"]
    assert fake.writes == [] and made.bank == "A"


def test_a_switch_failure_is_pushed_without_touching_the_switch_and_its_return_restores_the_base():
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    made, fake, events = responder(torus, preplan=["sw4"])
    armed = made.arming["switches"]
    del fake.writes[:]           # ready's arming push
    made.observe(carriers(torus, dead=["sw4"]))
    done = made.handle()
    made.settle()
    assert [(entry["event"], entry["name"]) for entry in done] == [("recovered", "sw4")], done
    assert done[0]["proof"]["acyclic"] and done[0]["proof"]["recovered_after_step"] >= 1
    assert done[0]["proof"]["armed"]
    assert fake.writes and "sw4" not in fake.writes
    made.observe(dict(carriers(torus, dead=["sw4"]), sw4=None))     # its session died: still the same failure
    assert made.handle() == []
    made.observe(carriers(torus, cut=[torus.links[0].name], dead=["sw4"]))    # a second failure meanwhile
    refused = made.handle()
    assert [entry["event"] for entry in refused] == ["failed"] and "halt-and-drain" in refused[0]["error"]
    made.observe(carriers(torus))
    back = made.handle()
    made.settle()
    # the switch's return restores the base; the refused link's return changes nothing
    assert [entry["event"] for entry in back] == ["restored", "ignored"] and back[0]["kind"] == "switch_up", back
    # the restore ran in proven parallel rounds too, after the carrier waits
    names = [step["name"] for step in back[0]["steps"]]
    assert names[0].startswith("wait for carrier") and any(name.startswith("round 1: ") for name in names)
    assert not any(name.startswith("flip ") for name in names), names
    base = plan(torus, bank="A", **OPTIONS).intent
    assert holds(fake, armed_intent(base, armed)) and not made.down and made.held_failure is None


def test_a_switch_failure_without_a_plan_is_logged_and_not_pushed():
    made, fake, events = responder(preplan=[])
    made.observe(carriers(RING, dead=["sw2"]))
    done = made.handle()
    assert [(entry["event"], entry["name"]) for entry in done] == [("not_pushed", "sw2")]
    assert "nothing pushed" in done[0]["why"] and fake.writes == []
    made.observe(carriers(RING))
    assert [(entry["event"], entry["kind"]) for entry in made.handle()] == [("noted", "switch_up")]


def test_a_dying_switch_seen_first_as_its_link_comes_back_to_the_base_with_the_switch():
    """A switch whose ports go down one by one is seen first as one link
    failing (failed over), then as the switch failing: failed over again,
    planned on the held routing, without writing the switch; its return
    brings that link back too, so the held backup goes: the base again."""
    link = RING.links[1]        # sw1:3 -- sw2:2
    made, fake, events = responder(preplan=[link.name])
    base = plan(RING, bank="A", **OPTIONS).intent
    armed = made.arming["switches"]
    made.observe(carriers(RING, cut=[link.name]))
    assert [entry["event"] for entry in made.handle()] == ["recovered"]
    made.settle()
    writes = len(fake.writes)
    made.observe(carriers(RING, dead=["sw2"]))
    done = made.handle()
    made.settle()
    assert [(entry["event"], entry["kind"]) for entry in done] == [("recovered", "switch_down")], done
    assert "held routing" in done[0]["how"] and done[0]["proof"]["acyclic"]
    assert fake.writes[writes:] and "sw2" not in fake.writes[writes:]
    assert made.gone == {"sw2"} and made.down == {channel.link for channel in RING.out_channels("sw2")}
    made.observe(carriers(RING))
    back = made.handle()
    made.settle()
    assert [(entry["event"], entry["kind"], entry["name"]) for entry in back] == [("restored", "switch_up", "sw2")]
    # the returned switch was written first, alone, with its entry in the held routing
    assert [entry["event"] for entry in events[-3:]] == ["rejoined", "restored", "settled"]
    assert made.bank == "B" and on_base(made, fake, RING, armed)
    assert not made.down and not made.gone and made.held_failure is None and base


def test_a_switch_failure_while_a_link_backup_holds_is_failed_over_and_both_returns_restore_the_base():
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    link = torus.links[2].name                     # sw1:3--sw2:2, not at sw8
    made, fake, events = responder(torus, preplan=[link])
    armed = (made.arming or {}).get("switches", {})
    made.observe(carriers(torus, cut=[link]))
    assert [entry["event"] for entry in made.handle()] == ["recovered"]
    made.settle()
    writes = len(fake.writes)
    made.observe(carriers(torus, cut=[link], dead=["sw8"]))
    done = made.handle()
    made.settle()
    assert [(entry["event"], entry["name"]) for entry in done] == [("recovered", "sw8")], done
    proof = done[0]["proof"]
    assert proof["acyclic"] and proof["recovered_after_step"] >= 1
    # planned on the spot, its urgent flips in proven parallel rounds as a pre-planned move's
    assert proof["rounds"] >= 1 and all(step["name"].startswith("round ") for step in done[0]["steps"])
    assert fake.writes[writes:] and "sw8" not in fake.writes[writes:]
    # every surviving switch holds the backup of the backup; the dead switch kept what it held
    transition_after = made.held.intent["switches"]
    assert holds(fake, dict(made.held.intent, switches={name: entry for name, entry in transition_after.items()
                                                        if name != "sw8"}))
    # a third failure now is refused, naming the halt-and-drain; nothing is written
    writes = len(fake.writes)
    made.observe(carriers(torus, cut=[link, torus.links[6].name], dead=["sw8"]))
    refused = made.handle()
    assert [entry["event"] for entry in refused] == ["failed"] and "halt-and-drain" in refused[0]["error"]
    assert len(fake.writes) == writes
    # the switch returns first: the link is still down, so the held routing stays; a failed
    # write of it is logged and leaves it held as failed (its entry kept, not half-forgotten)
    fake.fail_writes_on = {"sw8"}
    made.observe(carriers(torus, cut=[link]))
    failed = made.handle()
    assert [entry["event"] for entry in failed] == ["failed", "ignored"] and "sw8" in failed[0]["error"], failed
    assert "sw8" in made.rejoin and made.gone == {"sw8"}
    fake.fail_writes_on = set()
    made.observe(carriers(torus, cut=[link], dead=["sw8"]))    # it goes and comes again
    assert [entry["event"] for entry in made.handle()] == ["failed"]   # still gone: nothing new to plan
    writes = len(fake.writes)
    made.observe(carriers(torus, cut=[link]))
    assert [entry["event"] for entry in made.handle()] == ["waiting"]    # the third link came back above
    # it was written alone with its entry in the held routing (it kept the old bank's)
    assert fake.writes[writes:] == ["sw8"] and events[-2]["event"] == "rejoined"
    assert holds(fake, made.held.intent) and made.gone == set() and torus.link(link).index in made.down
    made.observe(carriers(torus))
    back = made.handle()
    made.settle()
    assert [entry["event"] for entry in back] == ["restored"], back
    assert made.bank == "B" and on_base(made, fake, torus, armed) and not made.down and not made.gone


def test_a_second_cut_on_a_ring_is_refused_naming_the_halt_and_drain():
    made, fake, events = responder(preplan=[RING.links[1].name])
    made.observe(carriers(RING, cut=[RING.links[1].name]))
    made.observe(carriers(RING, cut=[RING.links[1].name, RING.links[3].name]))   # queued behind the first
    assert [entry["kind"] for entry in made.queue] == ["link_down", "link_down"]
    done = made.handle()
    assert [entry["event"] for entry in done] == ["recovered", "failed"]
    assert "halt-and-drain" in done[1]["error"] and made.down == {RING.links[1].index}


def test_a_second_cut_on_a_torus_gets_a_backup_of_the_backup():
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    first, second = torus.links[4].name, torus.links[9].name
    made, fake, events = responder(torus, preplan=[first])
    made.observe(carriers(torus, cut=[first]))
    made.observe(carriers(torus, cut=[first, second]))
    done = made.handle()
    made.settle()
    assert [entry["event"] for entry in done] == ["recovered", "recovered"], done
    assert "backup of the backup" in done[1]["how"] and done[1]["proof"]["acyclic"]
    assert done[1]["proof"]["rounds"] >= 1 and all(step["name"].startswith("round ") for step in done[1]["steps"])
    assert made.down == {torus.links[4].index, torus.links[9].index} and made.bank == "A"
    made.observe(carriers(torus, cut=[second]))
    assert [entry["event"] for entry in made.handle()] == ["waiting"]
    made.observe(carriers(torus))
    assert [entry["event"] for entry in made.handle()] == ["restored"]
    made.settle()
    assert holds(fake, plan(torus, bank="B", **OPTIONS).intent) and not made.down
    # on the base in bank B, not the pre-planned moves' A: the next failure is planned on the spot from B
    made.observe(carriers(torus, cut=[first]))
    third = made.handle()
    made.settle()
    assert [(entry["event"], entry["how"]) for entry in third] == [("recovered", "planned now on the base in bank B "
                                                                    "(the pre-planned moves start from bank A)")], third
    assert holds(fake, made.held.intent) and made.bank == "A" and made.down == {torus.links[4].index}
    made.observe(carriers(torus))
    assert [entry["event"] for entry in made.handle()] == ["restored"]
    made.settle()
    assert holds(fake, plan(torus, bank="B", **OPTIONS).intent) and not made.down and made.bank == "B"


def test_a_fabric_not_on_its_base_routing_is_refused():
    fake = FAKES.FakeFabric(RING, plan(RING, bank="A", engine="updown", assignment="renamed").intent)
    fake.states["sw0"]["flows"] = fake.states["sw0"]["flows"][:-1]      # one rule short
    with pytest.raises(TransitionRunError, match="sw0"):
        fw.Responder(RING, OPTIONS, fake).ready([])


def test_linux_bridge_switches_are_refused_before_any_switch_is_read():
    data = RING.to_data()
    data["switches"]["sw3"]["platform"] = "linux_bridge"
    bridged = topology_from_data(data)
    fake = FAKES.FakeFabric(RING, plan(RING, bank="A", **OPTIONS).intent)
    with pytest.raises(TransitionRunError, match=r"failovers run on platforms .*sw3 \(linux_bridge\)"):
        fw.Responder(bridged, OPTIONS, fake).ready([])
    assert fake.reads == [] and fake.writes == []


TREES = {"engine": "segment", "assignment": "fixed", "engine_options": {"paths": "source_tree"}}


@pytest.mark.parametrize("atomic", [True, False], ids=["bundles", "line_by_line"])
def test_a_source_tree_routing_fails_a_link_over_by_its_repaired_trees_and_returns(atomic):
    """The fixed assignment's trees (segment routing, source_tree paths):
    the pre-planned move is the planner's (the trees that crossed the link
    repaired, failover.tree_failover), in proven rounds where a switch
    takes a write whole; the restore ends on the base."""
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})
    link = torus.link("sw5:4")
    made, fake, events = responder(torus, TREES, preplan=[link.name], atomic=atomic)
    ready = events[0]
    assert ready["planned"] == [link.name] and not ready["not_planned"], ready
    transition, routing = made.plans[link.name]
    assert routing.paths_form == "source_tree" and link.index in routing.down
    made.observe(carriers(torus, cut=[link.name]))
    done = made.handle()
    made.settle()
    assert [(entry["event"], entry["how"]) for entry in done] == [("recovered", "pre-planned")], done
    assert done[0]["proof"]["acyclic"] and not done[0]["proof"]["drain"]
    names = [step["name"] for step in done[0]["steps"]]
    if atomic:      # proven rounds; a round that flips nothing is named for what it installs
        assert done[0]["proof"]["rounds"] >= 1 and all(name.startswith("round ") for name in names), names
        assert not any("flip  to" in name for name in names), names
    else:           # as planned: the install, then one flip per switch
        assert names[0].startswith("install ") and all(name.startswith("flip ") for name in names[1:]), names
    assert holds(fake, transition.after) and made.bank == "B" and made.down == {link.index}
    made.observe(carriers(torus))
    back = made.handle()
    made.settle()
    assert [entry["event"] for entry in back] == ["restored"], back
    base = plan(torus, bank="A", **TREES).intent
    armed = (made.arming or {}).get("switches", {})     # armed again on the base where that was proven
    assert holds(fake, armed_intent(base, armed)) and not made.down and made.bank == "A"
    assert bool(armed) == (atomic and bool(ready["armed"]))


def test_a_source_tree_routing_repairs_the_held_trees_for_a_second_link_and_refuses_what_has_no_backup():
    """A second link failure repairs the held trees under the base's turn
    order; the return of both ends on the base. A link with no backup is
    refused naming the halt-and-drain, a switch failure (no tree backup)
    is not pushed, nothing written for either."""
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})
    link, other = torus.link("sw5:4"), torus.link("sw9:4")
    uncovered = torus.link("sw0:2")     # sw0:2--sw1:2: no tree repair, no kept-order routing without it
    made, fake, events = responder(torus, TREES, preplan=[link.name, uncovered.name, "sw10"], atomic=False)
    ready = events[0]
    assert ready["planned"] == [link.name], ready
    assert [entry.split(":")[0] for entry in ready["not_planned"]] == ["sw0", "sw10"], ready["not_planned"]
    assert "halt-and-drain" in ready["not_planned"][0]
    made.observe(carriers(torus, cut=[uncovered.name]))     # not planned: refused, nothing written
    writes = len(fake.writes)
    refused = made.handle()
    assert [entry["event"] for entry in refused] == ["failed"], refused
    assert "no backup" in refused[0]["error"] and "halt-and-drain" in refused[0]["error"]
    assert len(fake.writes) == writes and made.bank == "A"
    made.observe(carriers(torus))
    assert [entry["event"] for entry in made.handle()] == ["ignored"]
    made.observe(carriers(torus, dead=["sw10"]))       # no switch failover with the fixed assignment
    logged = made.handle()
    assert [entry["event"] for entry in logged] == ["not_pushed"] and "nothing pushed" in logged[0]["why"], logged
    # the reason itself, not a pointer to ready's list
    assert logged[0]["backup"]["reason"] == TREE_SWITCH_REASON and TREE_SWITCH_REASON in logged[0]["why"], logged
    made.observe(carriers(torus))
    assert [entry["event"] for entry in made.handle()] == ["noted"] and len(fake.writes) == writes
    made.observe(carriers(torus, cut=[link.name]))
    assert [entry["event"] for entry in made.handle()] == ["recovered"]
    made.settle()
    made.observe(carriers(torus, cut=[link.name, other.name]))
    second = made.handle()
    made.settle()
    assert [entry["event"] for entry in second] == ["recovered"], second
    assert "backup of the backup" in second[0]["how"] and second[0]["proof"]["acyclic"] and not second[0]["proof"]["drain"]
    assert made.held.routing.paths_form == "source_tree" and made.down == {link.index, other.index}
    used = {torus.channels[c].link for path in made.held.routing.paths().values() for c in path}
    assert not {other.index, link.index} & used
    assert holds(fake, made.held.intent) and made.bank == "A"
    # while both are down: a switch failure has no tree backup; a link with none is refused; nothing written
    writes = len(fake.writes)
    made.observe(carriers(torus, cut=[link.name, other.name], dead=["sw15"]))
    made.observe(carriers(torus, cut=[link.name, other.name, uncovered.name]))
    refused = made.handle()
    assert [entry["event"] for entry in refused] == ["failed", "noted", "failed"], refused
    assert "renamed assignment" in refused[0]["error"] and "halt-and-drain" in refused[2]["error"]
    assert len(fake.writes) == writes
    made.observe(carriers(torus, cut=[link.name, uncovered.name]))
    assert [entry["event"] for entry in made.handle()] == ["waiting"]     # sw5:4 still down
    made.observe(carriers(torus, cut=[link.name]))
    assert [entry["event"] for entry in made.handle()] == ["ignored"]
    made.observe(carriers(torus))
    back = made.handle()
    made.settle()
    assert [entry["event"] for entry in back] == ["restored"], back
    # A -> B (the first), B -> A (the second), A -> B (the restore): the base in bank B, not armed there
    assert made.bank == "B" and holds(fake, plan(torus, bank="B", **TREES).intent) and not made.down


def test_the_link_and_switch_states_of_a_poll():
    seen = carriers(RING, cut=[RING.links[0].name])
    status = fw.link_status(RING, seen)
    assert status[0] == "down" and all(status[i] == "up" for i in range(1, len(RING.links)))
    assert fw.failed_switches(RING, seen) == set()
    assert fw.failed_switches(RING, dict(seen, sw3=None)) == {"sw3"}
    # a dead switch whose own answer is stale (all up): its neighbours see every link of it down
    dead = carriers(RING, dead=["sw2"])
    assert fw.failed_switches(RING, dict(dead, sw2=carriers(RING)["sw2"])) == {"sw2"}


def test_the_watch_holds_a_change_until_it_settles_so_a_dying_switch_is_one_event(monkeypatch):
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    dying = [torus.link(link.name) for link in torus.links if "sw4" in (link.a.switch, link.b.switch)]
    taken = []      # the carriers the watch held after each take of the polls' answers
    take = fw._take_answers

    def taking(found, wait, held):
        take(found, wait, held)
        taken.append({switch: dict(ports or {}) for switch, ports in held.items()})
    monkeypatch.setattr(fw, "_take_answers", taking)

    def first_event(settle_s):
        made, _fake, events = responder(torus, preplan=["sw4"], check_mode=True)
        started = time.monotonic()
        shown = {"down": 0, "at": started}
        lock = threading.Lock()

        def taken_down(link):
            last = taken[-1] if taken else {}
            return any(last.get(end.switch, {}).get(str(end.port)) == "down" for end in (link.a, link.b))

        def reader(switch, expected):
            """sw4's links lose carrier one after the other, the first 0.1 s after
            the watch began watching, each next one 50 ms after the one before
            and only once the watch has taken an answer showing that one down: a
            link is never hidden from the watch behind the next, however late the
            threads run on a loaded machine."""
            time.sleep(0.01)
            with lock:
                now, down = time.monotonic(), shown["down"]
                if down == 0 and not any(entry["event"] == "watching" for entry in events):
                    shown["at"] = now
                elif down < len(dying) and now - shown["at"] >= (0.1 if down == 0 else 0.05) \
                        and (down == 0 or taken_down(dying[down - 1])):
                    shown.update(down=down + 1, at=now)
                gone = [link.name for link in dying[:shown["down"]]]
            return carriers(torus, cut=gone)[switch], ",".join(gone)

        fw.watch(made, reader, lambda handled: handled >= 1, tick_s=0.01, settle_s=settle_s)
        return [(entry["event"], entry["kind"]) for entry in events if entry["event"] == "detected"][0]

    assert first_event(0.0) == ("detected", "link_down")          # taken for a link failure
    assert first_event(0.5) == ("detected", "switch_down")        # held until it settled: one switch failure


def test_whole_switches_failing_is_a_change_that_need_not_settle():
    whole = carriers(RING)
    assert fw.whole_switches_failed(RING, whole, carriers(RING, dead=["sw2"]))
    assert fw.whole_switches_failed(RING, whole, dict(whole, sw2=None))              # it cannot be read
    # seen by its neighbours only (its own answer stale): once every link of it is down
    neighbours = dict(carriers(RING, dead=["sw2"]), sw2=whole["sw2"])
    assert fw.whole_switches_failed(RING, whole, neighbours)
    one_side = dict(neighbours, sw1=whole["sw1"])
    assert not fw.whole_switches_failed(RING, whole, one_side)                        # a link failure, so far
    assert not fw.whole_switches_failed(RING, whole, carriers(RING, cut=[RING.links[1].name]))
    assert not fw.whole_switches_failed(RING, carriers(RING, dead=["sw2"]), whole)      # it came back: held
    # a switch failing while a link elsewhere goes down: held (on a ring that link would isolate a switch)
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    elsewhere = next(link.name for link in torus.links if "sw4" not in (link.a.switch, link.b.switch))
    assert fw.whole_switches_failed(torus, carriers(torus), carriers(torus, dead=["sw4"]))
    assert not fw.whole_switches_failed(torus, carriers(torus), carriers(torus, dead=["sw4"], cut=[elsewhere]))


def test_a_link_cut_both_ends_answered_holds_half_the_hold_down_one_end_waits_for_the_other():
    whole = carriers(RING)
    cut = carriers(RING, cut=[RING.links[1].name])                    # sw1:3--sw2:2
    assert fw.links_confirmed(RING, whole, cut) and fw.hold_needed(RING, whole, cut, 0.4) == 0.2
    one_end = dict(cut, sw2=whole["sw2"])                              # sw2 has not answered yet
    assert not fw.links_confirmed(RING, whole, one_end)
    assert fw.hold_needed(RING, whole, one_end, 0.4) == pytest.approx(0.4 * fw.ONE_END_HOLDS)
    assert fw.hold_needed(RING, whole, carriers(RING, dead=["sw2"]), 0.4) == 0.0
    assert fw.hold_needed(RING, cut, whole, 0.4) == 0.4                # a return
    assert fw.hold_needed(RING, None, whole, 0.4) == 0.4               # the first answers
    # a dying switch caught with three of its four links down still looks so; with all four it is a switch
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    links = [link.name for link in torus.links if "sw4" in (link.a.switch, link.b.switch)]
    assert fw.hold_needed(torus, carriers(torus), carriers(torus, cut=links[:3]), 0.4) == 0.2
    assert fw.hold_needed(torus, carriers(torus), carriers(torus, cut=links), 0.4) == 0.0
    # a dying switch whose own answer and one neighbour's are late (lab, 2026-11-29): three of its links
    # seen down by the far ends only wait for the other answers, which make it one switch failure
    late = dict(carriers(torus, cut=links[:3]), sw4=carriers(torus)["sw4"])
    assert fw.hold_needed(torus, carriers(torus), late, 0.4) == pytest.approx(0.4 * fw.ONE_END_HOLDS)


def _detected_with_late_answers(topology, cut=(), dead=(), late=(), late_s=0.6, settle_s=0.4):
    """The events the watch detects, and when (seconds after the failure
    began), when the switches ``late`` answer the failure ``late_s`` after
    the others."""
    fake = FAKES.FakeFabric(topology, plan(topology, bank="A", **OPTIONS).intent)
    events = []
    made = fw.Responder(topology, OPTIONS, fake, log=lambda entry: events.append(dict(entry, seen=time.monotonic())),
                        check_mode=True, wall=Clock())
    made.ready([])
    began = []

    def reader(switch, expected):
        time.sleep(0.01)
        if not any(entry["event"] == "watching" for entry in events):
            return carriers(topology)[switch], "whole"
        began.append(began[0] if began else time.monotonic())
        if switch in late and time.monotonic() - began[0] < late_s:
            return carriers(topology)[switch], "whole"
        return carriers(topology, cut=cut, dead=dead)[switch], "failed"

    fw.watch(made, reader, lambda handled: handled >= 1, tick_s=0.01, settle_s=settle_s)
    return [(entry["kind"], entry["name"], entry["seen"] - began[0])
            for entry in events if entry["event"] == "detected"]


def test_a_link_one_end_answered_waits_for_the_other_end_not_just_the_hold_down():
    link = RING.links[1]                                               # sw1:3--sw2:2
    (kind, name, at), = _detected_with_late_answers(RING, cut=[link.name], late=["sw2"])
    # sw2's answer came 0.6 s late: then both ends answered, half the hold-down (0.2 s) after it
    assert (kind, name) == ("link_down", link.name) and 0.75 <= at < 0.4 * fw.ONE_END_HOLDS


def test_a_dying_switch_with_a_late_own_answer_and_a_late_neighbour_is_one_switch_failure():
    # three neighbours see their links to sw4 go down first; sw4 and its fourth neighbour answer 0.6 s
    # later. Held only the hold-down (0.4 s), the three links were taken for three link failures
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    fourth = next(link for link in torus.links if "sw4" in (link.a.switch, link.b.switch))
    neighbour = fourth.b.switch if fourth.a.switch == "sw4" else fourth.a.switch
    found = _detected_with_late_answers(torus, dead=["sw4"], late=["sw4", neighbour])
    assert [(kind, name) for kind, name, _at in found] == [("switch_down", "sw4")]
    assert found[0][2] >= 0.6


def test_a_whole_switch_failing_is_handled_without_the_hold_down_and_a_link_cut_waits_for_it():
    # a hold-down of 3 s, every switch answering the failure at once
    (kind, _name, seconds), = _detected_with_late_answers(RING, dead=["sw2"], settle_s=3.0)
    assert kind == "switch_down" and seconds < 1.5                # not held
    (kind, _name, seconds), = _detected_with_late_answers(RING, cut=[RING.links[0].name], settle_s=3.0)
    assert kind == "link_down" and 1.5 <= seconds < 3.0           # both ends answered: half the hold-down


def test_a_change_is_taken_when_it_has_held_for_the_hold_down_not_at_the_next_tick():
    made, _fake, events = responder(RING, preplan=[RING.links[0].name], check_mode=True)
    began = []

    def reader(switch, expected):
        """A long poll: answers at once when the state differs from ``expected``, else holds 3 s."""
        failed = any(entry["event"] == "watching" for entry in events)
        answer = "cut" if failed else "whole"
        if expected == answer:
            time.sleep(3.0)
        elif failed:
            began.append(began[0] if began else time.monotonic())
        return carriers(RING, cut=[RING.links[0].name] if failed else [])[switch], answer

    fw.watch(made, reader, lambda handled: handled >= 1, tick_s=2.0, settle_s=0.3)
    detected = [entry for entry in events if entry["event"] == "detected"][0]
    assert detected["kind"] == "link_down"
    assert time.monotonic() - began[0] < 1.5     # the hold-down (0.3 s), not the next tick (2 s)


def test_the_watch_loop_feeds_the_responder_until_its_count():
    made, fake, events = responder(preplan=[RING.links[1].name])
    polls = {name: 0 for name in RING.switch_names()}

    def reader(switch, expected):
        """A long poll: the fabric is whole for each switch's first answer, then the link is cut."""
        polls[switch] += 1
        if polls[switch] > 1 and expected == "cut":
            time.sleep(0.05)    # nothing changed: the hold passes
        seen = carriers(RING, cut=[RING.links[1].name] if polls[switch] > 1 else [])
        return seen[switch], "cut" if polls[switch] > 1 else "whole"

    assert fw.watch(made, reader, lambda handled: handled >= 1, tick_s=0.01) == 1
    assert [entry["event"] for entry in events if entry["event"] != "detected"][:3] == \
        ["ready", "watching", "recovered"]


def test_watching_is_logged_once_every_switch_has_answered_and_not_before():
    made, _fake, events = responder(preplan=[])
    late = RING.switch_names()[-1]
    started = time.monotonic()
    answered = []

    def reader(switch, expected):
        """Every switch answers at once, the last one only after 0.3 s; then each holds."""
        if expected:
            time.sleep(0.05)
        elif switch == late:
            time.sleep(0.3)
        answered.append((switch, time.monotonic() - started))
        return carriers(RING)[switch], "whole"

    fw.watch(made, reader, lambda handled: any(entry["event"] == "watching" for entry in events), tick_s=0.01)
    watching = [entry for entry in events if entry["event"] == "watching"]
    assert len(watching) == 1 and watching[0]["switches"] == len(RING.switch_names())
    first_of_late = min(when for switch, when in answered if switch == late)
    assert first_of_late >= 0.3 and watching[0]["seconds"] >= first_of_late


def test_a_poller_that_breaks_stops_the_watch_naming_the_switch():
    made, fake, events = responder(preplan=[])

    def reader(switch, expected):
        if switch == "sw1":
            raise KeyError("port")
        time.sleep(0.05)
        return carriers(RING)[switch], "whole"

    with pytest.raises(TransitionRunError, match="sw1.*port"):
        fw.watch(made, reader, lambda handled: False, tick_s=0.01)


def test_the_carrier_script_and_its_answer():
    text = (" 1(p1): addr:02:00:00:00:00:01\n     config:     0\n     state:      0\n"
            " 2(p2): addr:02:00:00:00:00:02\n     config:     0\n     state:      LINK_DOWN\n"
            " 3(p3): addr:02:00:00:00:00:03\n     config:     PORT_DOWN\n     state:      0\n"
            " LOCAL(br0): addr:02:00:00:00:00:09\n")
    assert fw.parse_carriers(text) == {"1": "up", "2": "down", "3": "down"}
    assert fw.carrier_line(text) == "1(p1):addr:02:00:00:00:00:012(p2):addr:02:00:00:00:00:02state:LINK_DOWN" \
        "3(p3):addr:02:00:00:00:00:03config:PORT_DOWN"
    assert fw.carriers_script("br0").startswith("ovs-ofctl -O ")


UP = " 1(p1): addr:02:00:00:00:00:01\n     config:     0\n     state:      0\n"
DOWN = " 1(p1): addr:02:00:00:00:00:01\n     config:     0\n     state:      LINK_DOWN\n"
FAKE_OFCTL = """#!/bin/sh
# a switch's ovs-ofctl: dump-ports-desc prints $STATE; monitor (given its
# --unixctl) creates its control socket, then prints one port-status message
# when $TRIGGER appears, and stays connected. Like Open vSwitch 3.1's, the
# monitor prints the messages on its standard error, its standard output
# being for nothing.
case " $* " in
*" dump-ports-desc "*) cat "$STATE" ;;
*" monitor "*)
    [ -n "$NO_MONITOR" ] && exit 1
    for arg; do case "$arg" in --unixctl=*) : >"${arg#--unixctl=}" ;; esac; done
    while [ ! -e "$TRIGGER" ]; do sleep 0.01; done
    echo "OFPT_PORT_STATUS (xid=0x0): MOD: 1(p1): addr:02:00:00:00:00:01" >&2
    sleep 30 ;;
esac
"""


@pytest.fixture
def fake_switch(tmp_path):
    """A shell with a fake ovs-ofctl on PATH; returns run(script, change_after=None)."""
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "ovs-ofctl"
    fake.write_text(FAKE_OFCTL)
    fake.chmod(0o755)
    state, trigger = tmp_path / "state", tmp_path / "trigger"
    state.write_text(UP)
    env = dict(os.environ, PATH="%s:%s" % (fake.parent, os.environ["PATH"]), STATE=str(state),
               TRIGGER=str(trigger))

    def run(script, change_after=None, **extra):
        started = time.monotonic()
        proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True, env=dict(env, **extra))
        if change_after is not None:
            time.sleep(change_after)
            state.write_text(DOWN)
            trigger.write_text("")
        out, _err = proc.communicate(timeout=30)
        return proc.returncode, out, time.monotonic() - started
    return run


def test_the_long_poll_answers_at_once_when_the_ports_differ_from_the_last_answer(fake_switch):
    rc, out, _seconds = fake_switch(fw.carriers_script("br0", "something else", hold_s=20.0))
    assert rc == 0 and fw.parse_carriers(out) == {"1": "up"}


def test_the_long_poll_wakes_on_the_port_status_message_not_on_a_timer(fake_switch):
    script = fw.carriers_script("br0", fw.carrier_line(UP), hold_s=20.0, interval_s=10.0)
    rc, out, seconds = fake_switch(script, change_after=0.5)
    # the 10 s read interval and the 20 s hold never came into play: the message woke it
    assert rc == 0 and fw.parse_carriers(out) == {"1": "down"} and seconds < 8


def test_the_long_poll_answers_after_the_hold_when_nothing_changes(fake_switch):
    rc, out, seconds = fake_switch(fw.carriers_script("br0", fw.carrier_line(UP), hold_s=1.0))
    assert rc == 0 and fw.parse_carriers(out) == {"1": "up"} and seconds >= 1.0


def test_without_a_monitor_the_long_poll_reads_every_interval(fake_switch):
    script = fw.carriers_script("br0", fw.carrier_line(UP), hold_s=20.0, interval_s=0.05)
    rc, out, seconds = fake_switch(script, change_after=0.5, NO_MONITOR="1")
    assert rc == 0 and fw.parse_carriers(out) == {"1": "down"} and seconds < 8


class _CountingCarrier:
    def __init__(self):
        self.asked = []

    def carrier(self, switch, port):
        self.asked.append((switch, port))
        return "down"


def test_a_carrier_wait_takes_the_long_polls_answer_when_it_says_up_else_reads():
    driver = _CountingCarrier()
    known = fw.KnownStates(driver)
    assert known.carrier("sw0", "2") == "down" and driver.asked == [("sw0", "2")]     # nothing seen yet
    known.seen = {"sw0": {"2": "up", "3": "down"}, "sw1": None}
    assert known.carrier("sw0", "2") == "up" and known.carrier("sw0", 2) == "up"
    assert len(driver.asked) == 1
    assert known.carrier("sw0", "3") == "down" and known.carrier("sw1", "2") == "down"    # read: not seen up
    assert driver.asked[1:] == [("sw0", "3"), ("sw1", "2")]


def test_the_restore_reads_no_carrier_the_long_polls_saw_up():
    made, fake, _events = responder()
    link = RING.links[1]      # one the base routing uses (as in the first test)
    made.observe(carriers(RING))
    made.observe(carriers(RING, cut=[link.name]))
    assert [entry["event"] for entry in made.handle()] == ["recovered"]
    made.settle()
    asked = []
    real = fake.carrier
    fake.carrier = lambda switch, port: asked.append((switch, port)) or real(switch, port)
    made.observe(carriers(RING))
    assert [entry["event"] for entry in made.handle()] == ["restored"]
    made.settle()
    assert asked == []


def test_the_polls_holds_are_spread_so_their_sessions_do_not_renew_together():
    assert fw.poll_hold(4.0, draw=lambda: 0.0) == 3.0
    assert fw.poll_hold(4.0, draw=lambda: 1.0) == 5.0
    holds = {round(fw.poll_hold(5.0), 6) for _draw in range(50)}
    assert len(holds) > 40 and min(holds) >= 3.75 and max(holds) <= 6.25


def test_where_broadcasts_flood_by_vlan_the_armed_rows_take_no_new_member():
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3], "hosts_per_switch": 1}})
    options = dict(OPTIONS, broadcast="bounded")
    made, _fake, _events = responder(torus, options=options, preplan=["sw4"])
    base = plan(torus, bank="A", **options).intent
    assert all(entry.get("broadcast_ports") is None for entry in base["switches"].values())
    armed = made.arming["switches"]
    assert armed
    for name, entry in armed.items():
        # every row's port is a member of the row's VLAN already: no broadcast takes a new branch
        assert fw.arming.added_rows(entry, base["switches"][name]), name
        assert entry["ports"] == base["switches"][name]["ports"], name
