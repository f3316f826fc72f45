"""A link cut while a transition runs (module_utils/power/transition_watch.py),
on the in-memory fabric of test_transition_run.py with the real planner:
the 3-switch ring switches sw1:3--sw2:2 off and sw0:2--sw1:2 loses its
carrier between two steps (injected from the step log, as a cable pulled
while the executor works).

Proves: the executor writes nothing after the cut and says which switch
holds which bank, how many pairs the held state still delivers (exactly the
pairs whose walk does not cross the dead link) and how to resume; a re-run
once the carrier is back resumes and ends in the planned state; a re-run
while the link is still dead takes the fabric back, through the planned
states in reverse, to the state before the transition, after which a
fresh run is refused before any write; the way back undoes every push of
the way there and waits before it removes the bank the install added."""

from __future__ import annotations

import itertools
import re

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.power import transition_run as tr
from ansible_collections.ethercluster.routing.plugins.module_utils.power.fabric_state import fabric_state
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import plan_transition
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_watch import (
    delivered_pairs,
    rollback_steps,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from power_helpers import module_utils_test

FAKES = module_utils_test("test_transition_run")
RING, LINK = FAKES.RING, FAKES.LINK  # switched off: sw1:3--sw2:2
CUT = "sw0:2--sw1:2"


class CuttableFabric(FAKES.FakeFabric):
    """The in-memory fabric with carrier: a cut link's ends read LINK_DOWN
    (admin still up), as a pulled cable."""

    def __init__(self, topology, intent):
        super().__init__(topology, intent)
        self.cut = set()
        self.writes_at_cut = None

    def cut_link(self, name, one_end_down=False):
        """Carrier lost at both ends; ``one_end_down``: and the first end
        admin down too (the lab cuts a link by setting one veth down)."""
        link = self.topology.link(name)
        with self.lock:
            self.writes_at_cut = len(self.writes)
            for end in (link.a, link.b):
                self.cut.add(str(end))
                self.states[end.switch]["ports"][str(end.port)]["link"] = "down"
            if one_end_down:
                self.states[link.a.switch]["ports"][str(link.a.port)]["admin"] = "down"

    def restore(self, name):
        link = self.topology.link(name)
        for end in (link.a, link.b):
            self.cut.discard(str(end))
            self.states[end.switch]["ports"][str(end.port)].update(link="up", admin="up")

    def carrier(self, switch, port):
        if "%s:%s" % (switch, port) in self.cut:
            return "down"
        return super().carrier(switch, port)


@pytest.fixture
def fabric():
    return CuttableFabric(RING, FAKES.plan(RING, bank="A").intent)


def run(fabric, log=None):
    return tr.execute(RING, "off", LINK, fabric, plan_transition, FAKES.settled, sleep=lambda s: None,
                      log=log)


def cut_after(fabric, index, one_end_down=False):
    def log(entry):
        if entry["index"] == index:
            fabric.cut_link(CUT, one_end_down)
    return log


def held(fabric):
    return {sw: fabric.read(sw) for sw in fabric.states}


def crosses(intent, pair, link_name):
    """Whether the pair's walk in ``intent`` (every link up) leaves a switch
    through an end of ``link_name``."""
    link = RING.link(link_name)
    walk = Dot1qFabric(intent).walk_unicast(*pair)
    assert walk["error"] is None
    return any("%s:%s" % hop in (str(link.a), str(link.b)) for hop in walk["hops"])


def stopped_run(fabric, after=1, one_end_down=False):
    with pytest.raises(tr.TransitionRunError) as stopped:
        run(fabric, log=cut_after(fabric, after, one_end_down))
    return stopped.value


def test_a_link_cut_mid_transition_stops_before_the_next_write(fabric):
    transition = plan_transition(RING, "off", LINK, current_bank="A")
    error = stopped_run(fabric)
    message = str(error)
    assert fabric.writes[fabric.writes_at_cut:] == []  # nothing written after the cut
    assert message.startswith("link(s) %s lost carrier (sw0:2 down) after step 1 of %d; "
                              "stopped before step 2 (push: " % (CUT, len(transition.steps)))
    # which switch holds which bank: the install put bank B beside A everywhere
    assert "The switches hold: banks A and B, PVIDs in A: sw0, sw1, sw2." in message
    # the pairs: exactly those whose walk in the state held crosses the dead link are lost
    state = tr.cumulative_states(transition.before["switches"], transition.steps)[1]
    intent = dict(transition.before, switches=state)
    pairs = list(itertools.permutations(sorted(intent["hosts"]), 2))
    lost = [pair for pair in pairs if crosses(intent, pair, CUT)]
    assert lost and len(lost) < len(pairs)
    assert "delivers %d of %d host pairs" % (len(pairs) - len(lost), len(pairs)) in message
    named = re.search(r"not delivered: ([^.]*)\.", message).group(1)
    assert named.split(", ") == ["%s->%s" % pair for pair in lost][:8]
    assert "re-run the same playbook (it resumes after step 1)" in message
    assert "link_failed.yml -e link=sw0:2" in message
    assert [step["index"] for step in error.steps] == [1]


def test_a_rerun_once_the_carrier_is_back_resumes_and_finishes(fabric):
    stopped_run(fabric, after=2)
    fabric.restore(CUT)
    result = run(fabric)
    assert result["resumed_after"] == 2 and result["steps"][0]["index"] == 3
    state = fabric_state(RING, held(fabric))
    assert state["settled"] and state["bank"] == "B" and state["down_links"] == [RING.link(LINK).name]
    writes = len(fabric.writes)
    assert not run(fabric)["changed"] and len(fabric.writes) == writes  # converged


def test_a_rerun_with_the_link_still_dead_rolls_back_then_a_fresh_run_is_refused(fabric):
    transition = plan_transition(RING, "off", LINK, current_bank="A")
    stopped_run(fabric, after=2)
    with pytest.raises(tr.TransitionRunError) as rolled:
        run(fabric)
    message = str(rolled.value)
    assert message.startswith("link(s) %s lost carrier while the transition (off %s) stood after step 2 "
                              "of %d: rolled back to the state before it" % (CUT, RING.link(LINK).name,
                                                                             len(transition.steps)))
    assert "link_failed.yml -e link=sw0:2" in message
    assert [step["kind"] for step in rolled.value.steps] == ["push", "wait", "push"]
    assert tr.differing(held(fabric), transition.before["switches"]) == []
    state = fabric_state(RING, held(fabric))
    assert state["settled"] and state["bank"] == "A" and state["down_links"] == []
    writes = len(fabric.writes)
    with pytest.raises(tr.TransitionRunError, match=r"link\(s\) %s have no carrier although admin up: "
                       r".*nothing was done" % CUT):
        run(fabric)
    assert len(fabric.writes) == writes


def test_a_link_shut_at_one_end_is_stopped_at_too_and_the_rerun_waits_for_it(fabric):
    """The lab cuts a link by setting one veth down: that end reads admin
    down. The run stops the same; a re-run cannot match the switches to the
    plan (which holds the port up) and writes nothing; once the end is up
    again the re-run resumes and finishes."""
    stopped_run(fabric, after=2, one_end_down=True)
    writes = len(fabric.writes)
    with pytest.raises(tr.TransitionRunError, match="the switches hold neither"):
        run(fabric)
    assert len(fabric.writes) == writes
    fabric.restore(CUT)
    assert run(fabric)["resumed_after"] == 2
    assert fabric_state(RING, held(fabric))["settled"]


def test_check_mode_with_a_dead_link_midway_says_it_would_roll_back(fabric):
    stopped_run(fabric, after=2)
    writes = len(fabric.writes)
    with pytest.raises(tr.TransitionRunError, match=r"a run would roll the fabric back .*\(3 steps: undo"):
        tr.execute(RING, "off", LINK, fabric, plan_transition, FAKES.settled, check_mode=True)
    assert len(fabric.writes) == writes


@pytest.mark.parametrize("done", [1, 3, 5])
def test_the_way_back_undoes_every_push_in_reverse(done):
    transition = plan_transition(RING, "off", LINK, current_bank="A")
    steps = transition.steps
    states = tr.cumulative_states(transition.before["switches"], steps)
    back = rollback_steps(steps, transition.before["switches"], done)
    current = dict(states[done])
    visited = [dict(current)]
    for step in back:
        if step["kind"] == "push":
            current.update(step["switches"])
            visited.append(dict(current))
    pushes = [i for i in range(done) if steps[i]["kind"] == "push"]
    assert visited == [states[i + 1] for i in reversed(pushes)] + [states[0]]
    assert [step["index"] for step in back] == list(range(1, len(back) + 1))
    removing = back.index(next(step for step in back if step["name"].endswith(steps[0]["name"])))
    if removing:  # the install's undo removes bank B: the frames classified into it drain first
        assert back[removing - 1]["kind"] == "wait"


def test_pairs_counted_by_the_simulator_without_the_dead_link():
    intent = FAKES.plan(RING, bank="A").intent
    delivered, lost = delivered_pairs(intent, [CUT])
    pairs = list(itertools.permutations(sorted(intent["hosts"]), 2))
    assert sorted(lost) == sorted(pair for pair in pairs if crosses(intent, pair, CUT))
    assert len(delivered) + len(lost) == len(pairs)
    assert delivered_pairs(intent, []) == (pairs, [])


def test_the_cover_holds_an_end_of_every_watched_link():
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_watch import cover
    torus = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})
    links = [{"index": link.index, "a": str(link.a), "b": str(link.b)} for link in torus.links]
    chosen = cover(links)
    assert all(link.a.switch in chosen or link.b.switch in chosen for link in torus.links)
    assert len(chosen) == 8  # the 4x4 torus is bipartite: one colour class
    ring = [{"index": link.index, "a": str(link.a), "b": str(link.b)} for link in RING.links if link.name != CUT]
    assert cover(ring) == ["sw2"]  # the two links left share it
