"""The transition executor (module_utils/power/transition_run.py) against an
in-memory fabric of OVS switches (a fake driver holding parsed states) and a
small hand-built planner (the real one is module_utils/power/transition.py).

Proves: steps run in order; a parallel push writes its switches at the same
time (a barrier that only opens when all are inside) and an ordered push in
the step's order; check mode writes nothing and returns the step list; a
second run changes nothing; a failed step names itself and a re-run
resumes from it (state read from the switches, no side file); a carrier
that never comes names the link; linux_bridge is refused before any
switch is read (the CLI platforms: tests/unit/power/test_cli_driver.py)."""

import copy
import os
import threading
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.power import transition_run as tr
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.power.fabric_state import fabric_state
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan as plan_fabric
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    SwitchConnectionError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"
RING = load_topology(FIXTURES / "ring3_topology.yml")


def plan(topology, **options):
    """The renamed plans plan_transition makes (its default assignment)."""
    return plan_fabric(topology, assignment="renamed", **options)


LINK = "sw1:3"  # sw1:3--sw2:2, link 1


class FakeFabric:
    """Switches held in memory, reachable through the executor's driver API."""

    def __init__(self, topology, intent):
        self.topology = topology
        self.states = {}
        for switch, entry in intent["switches"].items():
            state = ovs.render(entry, switch)
            for port, value in state["ports"].items():
                value.update(dev="p" + port, ofport=int(port), link="up")
            self.states[switch] = state
        self.writes = []
        self.reads = []
        self.barrier = None
        self.fail_writes_on = set()  # switch, or (switch, nth write of it)
        self.written = {}
        self.lock = threading.Lock()

    def read(self, switch):
        with self.lock:
            self.reads.append(switch)
            return copy.deepcopy(self.states[switch])

    def write(self, switch, changes, desired, current):
        with self.lock:
            self.written[switch] = self.written.get(switch, 0) + 1
            nth = self.written[switch]
        if switch in self.fail_writes_on or (switch, nth) in self.fail_writes_on:
            raise SwitchConnectionError("%s: write failed with exit code 1: test" % switch)
        if self.barrier is not None:
            self.barrier.wait(timeout=5)
        with self.lock:
            self.writes.append(switch)
            state = self.states[switch]
            state["flows"] = list(desired["flows"])
            for port, value in desired["ports"].items():
                state["ports"][port]["admin"] = value["admin"]
                if value["speed_mbps"] is not None:
                    state["ports"][port]["speed_mbps"] = value["speed_mbps"]

    def carrier(self, switch, port):
        link = self.topology.link("%s:%s" % (switch, port))
        ends = [self.states[end.switch]["ports"][str(end.port)]["admin"] for end in (link.a, link.b)]
        return "up" if all(value == "up" for value in ends) else "down"


class Transition:
    def __init__(self, before, after, steps):
        self.before, self.after, self.steps = before, after, steps
        self.proof = {"hand_built": True}

    def text(self):
        return "\n".join(tr.step_lines(self.steps))


def hand_planner(topology, action, link, current_down=(), current_bank="A", speed_mbps=None,
                 wait_s=0.5):
    """Link off only: route around the link in the other bank (every switch at
    once), wait, shut the far end then the near end (in that order)."""
    if action != "off":
        raise EtherclusterError("the hand planner plans link off only")
    link = topology.link(link)
    if link.index in current_down:
        raise EtherclusterError("link %s is already down" % link.name)
    other = "B" if current_bank == "A" else "A"
    before = plan(topology, down=current_down, bank=current_bank).intent
    after = plan(topology, down=tuple(current_down) + (link.index,), bank=other).intent
    routed = copy.deepcopy(after)
    for end in (link.a, link.b):
        routed["switches"][end.switch]["ports"][str(end.port)]["admin"] = "up"
    shut = {end.switch: after["switches"][end.switch] for end in (link.b, link.a)}
    steps = [
        {"index": 1, "kind": "push", "name": "routing without the link, bank %s" % other,
         "switches": routed["switches"], "parallel": True},
        {"index": 2, "kind": "wait", "name": "old frames drain", "seconds": wait_s},
        {"index": 3, "kind": "push", "name": "shut the link", "switches": shut, "parallel": False},
    ]
    return Transition(before, after, steps)


def settled(topology, down, bank):
    return plan(topology, down=down, bank=bank).intent


def run(fabric, check_mode=False, sleeps=None, **kwargs):
    return tr.execute(RING, "off", LINK, fabric, hand_planner, settled, check_mode=check_mode,
                      sleep=(sleeps.append if sleeps is not None else lambda s: None), **kwargs)


@pytest.fixture
def fabric():
    return FakeFabric(RING, plan(RING, bank="A").intent)


def test_a_link_off_runs_the_steps_in_order(fabric):
    fabric.barrier = threading.Barrier(3)  # opens only if all three write at once
    sleeps = []
    logged = []

    def log(entry):
        logged.append(entry)
        fabric.barrier = None  # the ordered step would never fill it

    result = run(fabric, sleeps=sleeps, log=log)
    assert result["changed"] and result["reason"] == "fresh transition"
    assert [step["index"] for step in result["steps"]] == [1, 2, 3] == [s["index"] for s in logged]
    assert sorted(fabric.writes[:3]) == ["sw0", "sw1", "sw2"]
    assert fabric.writes[3:] == ["sw2", "sw1"]  # the ordered step: far end, then near end
    assert result["steps"][2]["changed"] == ["sw2", "sw1"]
    assert sleeps == [0.5]
    assert all(step["end"] >= step["start"] for step in result["steps"])
    # each pushed switch's own time, within its step's
    for step in result["steps"]:
        pushed = set(step["switch_seconds"])
        assert pushed == set(step["changed"]) or not step["changed"]
        assert all(0 <= value <= step["seconds"] + 0.001 for value in step["switch_seconds"].values())
    assert set(result["steps"][0]["switch_seconds"]) == {"sw0", "sw1", "sw2"}
    state = fabric_state(RING, {sw: fabric.read(sw) for sw in fabric.states})
    assert state["down_links"] == ["sw1:3--sw2:2"] and state["bank"] == "B" and state["settled"]


def test_a_second_run_changes_nothing(fabric):
    run(fabric)
    writes = list(fabric.writes)
    again = run(fabric)
    assert not again["changed"] and again["steps"] == []
    assert "already down" in again["reason"]
    assert fabric.writes == writes


def test_check_mode_plans_and_writes_nothing(fabric):
    before = copy.deepcopy(fabric.states)
    result = run(fabric, check_mode=True)
    assert result["changed"] and result["steps"] == [] and result["steps_planned"] == 3
    assert result["plan"][0].startswith("1. push: routing without the link, bank B [parallel")
    assert result["plan"][2] == "3. push: shut the link [in order: sw2, sw1]"
    assert fabric.writes == [] and fabric.states == before


def test_a_failed_step_names_itself_and_a_rerun_resumes_there(fabric):
    fabric.fail_writes_on = {"sw1"}
    with pytest.raises(tr.TransitionRunError) as failed:
        run(fabric)
    message = str(failed.value)
    # sw1 already fails in step 1 (parallel): sw0 and sw2 took it, sw1 did not
    assert message.startswith("step 1 (push: routing without the link, bank B) failed")
    assert "re-run the same playbook" in message
    assert failed.value.steps[-1]["failed"]
    fabric.fail_writes_on = set()
    writes = len(fabric.writes)
    result = run(fabric)
    assert result["resumed_after"] == 0  # inside step 1: it runs again
    assert result["steps"][0]["changed"] == ["sw1"]  # sw0 and sw2 took it already
    assert fabric.writes[writes:] == ["sw1", "sw2", "sw1"]


def test_a_failure_in_a_parallel_pool_lets_every_queued_item_run():
    # more items than threads: the queued ones must still run after item 0 failed
    # (pool.map cancelled them, so a failed parallel push wrote a timing-dependent set)
    ran = []
    lock = threading.Lock()
    second_started = threading.Event()

    def one(item):
        if item == 0:
            second_started.wait(timeout=5)
            raise EtherclusterError("sw%d: write failed" % item)
        second_started.set()
        time.sleep(0.05)  # the failure is met while most items still wait in the queue
        with lock:
            ran.append(item)
        return item

    with pytest.raises(EtherclusterError, match="sw0: write failed"):
        tr._pool(one, range(8), workers=2)  # pylint: disable=protected-access
    assert sorted(ran) == list(range(1, 8))


def test_a_rerun_after_a_failure_in_the_last_step_resumes_with_it(fabric):
    fabric.fail_writes_on = {("sw1", 2)}  # step 1 passes, sw1's shut in step 3 fails
    with pytest.raises(tr.TransitionRunError, match=r"step 3 \(push: shut the link\) failed"):
        run(fabric)
    fabric.fail_writes_on = set()
    sleeps = []
    result = run(fabric, sleeps=sleeps)
    assert result["resumed_after"] == 2  # step 3 half done: it runs again, on its own
    assert "resuming after step 2 of 3" in result["reason"]
    assert [step["index"] for step in result["steps"]] == [3]
    assert result["steps"][0]["changed"] == ["sw1"]  # sw2 was shut already
    assert sleeps == []


def test_a_carrier_that_never_comes_names_the_link(fabric):
    fabric.states["sw2"]["ports"]["2"]["admin"] = "down"
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    step = {"index": 1, "kind": "wait_carrier", "link": {"a": "sw1:3", "b": "sw2:2"},
            "timeout_s": 2, "up": True}
    with pytest.raises(tr.TransitionRunError,
                       match=r"step 1 \(wait_carrier.*link sw1:3--sw2:2: no carrier up after 2 s"):
        tr.run_steps([step], fabric, sleep=sleep, clock=lambda: clock[0])
    assert clock[0] >= 2
    fabric.states["sw2"]["ports"]["2"]["admin"] = "up"
    done = tr.run_steps([step], fabric, sleep=sleep, clock=lambda: clock[0])
    assert done[0]["carrier"] == {"sw1:3": "up", "sw2:2": "up"}


def test_other_platforms_are_refused_before_any_switch_is_read(fabric):
    data = RING.to_data()
    data["switches"]["sw1"]["platform"] = "linux_bridge"
    other = topology_from_data(data)
    with pytest.raises(tr.TransitionRunError, match=r"platforms ovs, dell_os6, huawei_vrp only.*sw1 \(linux_bridge\)"):
        tr.execute(other, "off", LINK, fabric, hand_planner, settled)
    assert fabric.reads == []


def test_a_refused_transition_says_why_and_changes_nothing(fabric):
    with pytest.raises(tr.TransitionRunError, match="plans link off only"):
        tr.execute(RING, "speed", LINK, fabric, hand_planner, settled, speed_mbps=100)
    assert fabric.writes == []
    # "on" for a link that is up (given by its index): nothing to do (idempotent)
    result = tr.execute(RING, "on", "1", fabric, hand_planner, settled)
    assert not result["changed"] and "link sw1:3--sw2:2 is already up" in result["reason"]
    result = tr.execute(RING, "on", LINK, fabric, hand_planner, settled)
    assert not result["changed"] and "already up" in result["reason"]
    with pytest.raises(tr.TransitionRunError, match="link: .*sw7"):
        tr.execute(RING, "off", "sw7:1", fabric, hand_planner, settled)


def test_switches_holding_something_else_are_refused(fabric):
    fabric.states["sw0"] = FakeFabric(RING, plan(RING, bank="B").intent).states["sw0"]
    with pytest.raises(tr.TransitionRunError, match="disagree on the VLAN bank"):
        run(fabric)
    assert fabric.writes == []


def test_the_planners_steps_run_and_resume_on_the_in_memory_fabric(fabric):
    """With the real planner (module_utils/power/transition.py): the install step
    leaves both banks on every switch; a failure in a flip leaves a mixed
    fabric that fabric_state names; the re-run resumes and ends in the
    planned state."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import plan_transition
    fabric.fail_writes_on = {("sw0", 2)}  # sw0 takes the install, then fails its flip
    with pytest.raises(tr.TransitionRunError, match="flip sw0"):
        tr.execute(RING, "off", LINK, fabric, plan_transition, settled, sleep=lambda s: None)
    state = fabric_state(RING, {sw: fabric.read(sw) for sw in fabric.states})
    assert not state["settled"] and "a transition was interrupted" in state["problems"][0]
    assert state["switches"]["sw0"]["banks"] == ["A", "B"]
    fabric.fail_writes_on = set()
    result = tr.execute(RING, "off", LINK, fabric, plan_transition, settled, sleep=lambda s: None)
    assert result["resumed_after"] >= 1 and "resuming after step" in result["reason"]
    state = fabric_state(RING, {sw: fabric.read(sw) for sw in fabric.states})
    assert state["settled"] and state["bank"] == "B"
    assert state["down_links"] == ["sw1:3--sw2:2"]


# ------------------------------------------- a dropped OpenFlow connection
DROPPED = ("sw1: write failed with exit code 1: ovs-ofctl: talking to "
           "unix:/run/ethercluster-lab/x/sw1/br0.mgmt (End of file)")


class _Sw1Session:
    """sw1 of the recorded ring3 lab: reads give ``held`` (the recorded
    answer until a write lands); the first ``drops`` writes fail as when
    ovs-vswitchd closes the OpenFlow connection, after committing when
    ``committed``."""

    def __init__(self, drops, committed=False, error=DROPPED):
        self.held = (FIXTURES / "ovs31_sw1_read.txt").read_text()
        self.drops, self.committed, self.error = drops, committed, error
        self.writes = []

    def run(self, script, what="script", timeout=None):
        if what == "read":
            return self.held
        self.writes.append(script)
        if self.drops:
            self.drops -= 1
            if self.committed:
                self._land(script)
            raise EtherclusterError(self.error)
        self._land(script)
        return ""

    def _land(self, script):
        # the emulated effect of the script: the only change asked is port 2 going down
        assert "mod-port br0 2 down" in script
        port2 = self.held.index(" 2(p2): addr")
        self.held = self.held[:port2] + self.held[port2:].replace("config:     0", "config:     PORT_DOWN", 1)

    def close(self):
        pass


def _write_port2_down(session):
    driver = tr.OvsDriver(lambda switch: session)
    current = driver.read("sw1")
    entry = yaml.safe_load((FIXTURES / "ring3_intent.yml").read_text())["switches"]["sw1"]
    entry["ports"]["2"]["admin"] = "down"
    desired = ovs.render(entry, "sw1")
    changes = ovs.compare(current, desired, "sw1")
    assert changes.admin_down == ["2"]
    driver.write("sw1", changes, desired, current)
    return driver


def test_a_write_whose_connection_dropped_is_read_again_and_finished():
    session = _Sw1Session(drops=1)
    driver = _write_port2_down(session)
    assert len(session.writes) == 2
    assert driver.read("sw1")["ports"]["2"]["admin"] == "down"
    assert driver.retried == ["sw1: %s; read again and rewritten" % DROPPED]


def test_a_dropped_write_that_had_landed_is_not_written_again():
    session = _Sw1Session(drops=1, committed=True)
    driver = _write_port2_down(session)
    assert len(session.writes) == 1 and len(driver.retried) == 1


def test_a_second_drop_or_a_refused_command_fails_the_write():
    with pytest.raises(EtherclusterError, match="End of file"):
        _write_port2_down(_Sw1Session(drops=2))
    refused = _Sw1Session(drops=1, error="sw1: write failed with exit code 1: ovs-ofctl: br0 is not a bridge")
    with pytest.raises(EtherclusterError, match="not a bridge"):
        _write_port2_down(refused)
    assert len(refused.writes) == 1


# ------------------------------------------- writes sent together
class _Answered:
    """A sent script as a kept shell's ``begin`` returns it: readable at
    once (a byte in a pipe), its answer the session's ``run``."""

    def __init__(self, session, script, what, timeout):
        self.session, self.script, self.what, self.timeout = session, script, what, timeout
        self.read_end, write_end = os.pipe()
        os.write(write_end, b"x")
        os.close(write_end)

    def fileno(self):
        return self.read_end

    def result(self):
        os.close(self.read_end)
        return self.session.run(self.script, self.what, self.timeout)


class _KeptSw1Session(_Sw1Session):
    def begin(self, script, what="script", timeout=None):
        self.begun = getattr(self, "begun", 0) + 1
        return _Answered(self, script, what, timeout)


def _port2_down_write(driver):
    current = driver.read("sw1")
    entry = yaml.safe_load((FIXTURES / "ring3_intent.yml").read_text())["switches"]["sw1"]
    entry["ports"]["2"]["admin"] = "down"
    desired = ovs.render(entry, "sw1")
    return ("sw1", ovs.compare(current, desired, "sw1"), desired, current)


@pytest.mark.parametrize("kept", [True, False])
def test_writes_sent_together_are_finished_after_a_dropped_connection(kept):
    session = (_KeptSw1Session if kept else _Sw1Session)(drops=1)
    driver = tr.OvsDriver(lambda switch: session)
    results = driver.write_many([_port2_down_write(driver)])
    assert results["sw1"][0] is None and results["sw1"][1] >= 0
    assert len(session.writes) == 2 and driver.read("sw1")["ports"]["2"]["admin"] == "down"
    assert getattr(session, "begun", 0) == (1 if kept else 0)     # a session without begin: a thread
    assert driver.retried == ["sw1: %s; read again and rewritten" % DROPPED]
    refused = _KeptSw1Session(drops=1, error="sw1: write failed with exit code 1: ovs-ofctl: br0 is not a bridge")
    driver = tr.OvsDriver(lambda switch: refused)
    error, _seconds = driver.write_many([_port2_down_write(driver)])["sw1"]
    assert "not a bridge" in str(error) and len(refused.writes) == 1


class _Together:
    """FakeFabric with ``write_many``: records each call's switches."""

    def __init__(self, fabric):
        self.fabric = fabric
        self.calls = []
        self.read = fabric.read

    def write_many(self, writes):
        self.calls.append([item[0] for item in writes])
        return tr.write_in_threads(self.fabric, writes)


def test_a_parallel_push_through_write_many_writes_the_changed_switches_in_one_call():
    fabric = FakeFabric(RING, plan(RING, bank="A").intent)
    driver = _Together(fabric)
    entries = plan(RING, bank="B").intent["switches"]
    entries["sw0"] = plan(RING, bank="A").intent["switches"]["sw0"]    # already held
    seconds = {}
    changed = tr._push({"kind": "push", "parallel": True, "switches": entries}, driver, {}, seconds=seconds)
    assert changed == ["sw1", "sw2"] and driver.calls == [["sw1", "sw2"]]
    assert set(seconds) == {"sw0", "sw1", "sw2"} and seconds["sw0"] == 0.0
    # max_parallel: calls of at most that many switches; a failed write is raised once all answered
    fabric = FakeFabric(RING, plan(RING, bank="A").intent)
    fabric.fail_writes_on = {"sw0"}
    driver = _Together(fabric)
    with pytest.raises(SwitchConnectionError, match="sw0: write failed"):
        tr._push({"kind": "push", "parallel": True, "switches": plan(RING, bank="B").intent["switches"]},
                 driver, {}, max_parallel=2)
    assert driver.calls == [["sw0", "sw1"]]           # the first call's failure stops the push
    assert fabric.writes == ["sw1"]


def test_writes_sent_before_an_unexpected_error_are_still_answered():
    class Broken:
        def begin(self, script, what="script", timeout=None):
            raise RuntimeError("a bug")

    session = _KeptSw1Session(drops=0)
    driver = tr.OvsDriver(lambda switch: session if switch == "sw1" else Broken())
    write = _port2_down_write(driver)
    with pytest.raises(RuntimeError, match="a bug"):
        driver.write_many([write, ("sw2",) + write[1:]])
    # sw1's write was sent before sw2's failed: its answer was taken (a kept shell's lock is freed there)
    assert len(session.writes) == 1


def test_resume_index_judges_each_switch_entry_once_and_finds_every_stage(fabric, monkeypatch):
    transition = hand_planner(RING, "off", LINK)
    before, steps = transition.before["switches"], transition.steps
    states = {switch: fabric.read(switch) for switch in before}
    judged = []
    real_holds = tr.holds

    def counting_holds(state, entry, switch):
        judged.append((switch, id(entry)))
        return real_holds(state, entry, switch)

    monkeypatch.setattr(tr, "holds", counting_holds)
    assert tr.resume_index(before, steps, states) == 0
    # one render and compare per (switch, entry): the states share entries (3 switches, each
    # with its entry before, after step 1 and, for the link's ends, after step 3)
    assert len(judged) == len(set(judged)) <= 3 + 3 + 2
    # the stages it tells apart are unchanged: after step 1, inside step 3, after step 3
    routed = steps[0]["switches"]
    after_one = {switch: ovs.render(routed[switch], switch) for switch in routed}
    assert tr.resume_index(before, steps, after_one) == 1
    shut = steps[2]["switches"]
    first = next(iter(shut))
    half = dict(after_one, **{first: ovs.render(shut[first], first)})
    assert tr.resume_index(before, steps, half) == 2
    done = dict(half, **{switch: ovs.render(entry, switch) for switch, entry in shut.items()})
    assert tr.resume_index(before, steps, done) == 3
