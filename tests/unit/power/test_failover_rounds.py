# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failover's urgent pushes as proven parallel rounds
(power/failover_rounds.py), checked apart from the proof with the 802.1Q
simulator on fixed mixes of old and new switches: flipping every changing
switch at once (what an order-free phase was once trusted with) floods
frames in some mixes; within each proven round, every mix of its switches
floods nothing, loops nothing and storms nothing, and once the rounds are
done every surviving pair is delivered around the failure."""

from __future__ import annotations

import itertools
import random

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_arming, failover_rounds, failover_run
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import resolve_failure
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover_watch import changing
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric

OPTIONS = {"engine": "segment", "assignment": "renamed", "engine_options": None}
TORUS = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})


def _dead(intent, failure):
    names = {TORUS.links[index].name for index in failure.links}
    return dict(intent, links=[dict(item, state="down") if "%s--%s" % (item["a"], item["b"]) in names else item
                               for item in intent["links"]])


def _bad_pairs(intent, failure, lost_ok=True):
    """Pairs whose frame floods, loops, arrives twice or (unless ``lost_ok``)
    does not arrive, in the fixed state ``intent`` with the failure real."""
    fabric = Dot1qFabric(_dead(intent, failure))
    gone = {name for name, host in TORUS.hosts.items() if failure.switch == host.switch}
    bad = []
    for src, dst in itertools.permutations(sorted(set(TORUS.hosts) - gone), 2):
        trace = fabric.send(src, dst)
        copies = trace["delivered"].get(dst, {}).get("copies")
        if trace["flooded"] or trace["storm"] or copies not in (None, 1) or (not lost_ok and copies != 1):
            bad.append((src, dst))
    return bad


@pytest.fixture(scope="module")
def planned():
    failure = resolve_failure(TORUS, link="sw5:4")
    transition = failover_run.plan_failover(TORUS, OPTIONS, failure, "A")
    return failure, transition, failover_rounds.in_rounds(TORUS, failure, transition, changing(transition))


def _mix(base, flips, chosen):
    return dict(base, switches=dict(base["switches"], **{name: flips[name] for name in chosen}))


def test_flipping_every_changing_switch_at_once_floods_in_some_mix(planned):
    failure, transition, _rounds = planned
    cut = failover_run.urgent_cut(transition, changing(transition))
    flips = {name: entry for step in transition.steps[1:cut] for name, entry in step["switches"].items()}
    installed = transition.states[1]["intent"]
    rng = random.Random(7)
    names = sorted(flips)
    found = next((chosen for chosen in (rng.sample(names, rng.randint(1, len(names) - 1)) for _attempt in range(300))
                  if _bad_pairs(_mix(installed, flips, chosen), failure)), None)
    assert found is not None


def _urgent_rounds_clean(rounded, failure, rng):
    """Random mixes of each urgent round of ``rounded`` flood, loop and storm
    nothing, and every surviving pair delivers after the last; returns that state."""
    state = rounded.before
    for step in rounded.steps[:rounded.proof["rounds"]]:
        names = sorted(step["switches"])
        for _attempt in range(12):
            chosen = rng.sample(names, rng.randint(0, len(names)))
            assert _bad_pairs(_mix(state, step["switches"], chosen), failure) == [], (step["name"], chosen)
        state = _mix(state, step["switches"], names)
    assert _bad_pairs(state, failure, lost_ok=False) == []
    return state


def test_every_mix_inside_a_round_is_clean_and_the_last_round_delivers_every_pair(planned):
    failure, transition, rounded = planned
    rounds = rounded.proof["rounds"]
    cut = failover_run.urgent_cut(transition, changing(transition))
    assert 1 <= rounds < cut                     # fewer pushes than install + one flip each
    assert [step["kind"] for step in rounded.steps[:rounds]] == ["push"] * rounds
    rng = random.Random(11)
    state = _urgent_rounds_clean(rounded, failure, rng)
    assert rounded.after == transition.after and rounded.proof["acyclic"]
    assert rounded.proof["recovered_after_step"] == rounds
    # the rounds after recovery flip the other changing switches: no mix of theirs loses a pair again
    later = [step for step in rounded.steps if step.get("after_recovery")]
    assert later and rounded.proof["rounds_after_recovery"] == len(later)
    for step in rounded.steps[rounds:rounds + 1 + len(later)]:
        names = sorted(step["switches"])
        for _attempt in range(12 if step.get("after_recovery") else 0):
            chosen = rng.sample(names, rng.randint(0, len(names)))
            assert _bad_pairs(_mix(state, step["switches"], chosen), failure, lost_ok=False) == [], \
                (step["name"], chosen)
        state = _mix(state, step["switches"], names)


def _undelivered(intent):
    """Pairs (every host, nothing failed) not delivered exactly once without a flood or storm."""
    fabric = Dot1qFabric(intent)
    bad = []
    for src, dst in itertools.permutations(sorted(TORUS.hosts), 2):
        trace = fabric.send(src, dst)
        if trace["flooded"] or trace["storm"] or trace["delivered"].get(dst, {}).get("copies") != 1:
            bad.append((src, dst))
    return bad


@pytest.mark.parametrize("what", [{"switch": "sw10"}, {"link": "sw5:4"}])
def test_a_restore_in_rounds_waits_for_carrier_first_and_every_mix_delivers_every_pair(what):
    failure = resolve_failure(TORUS, **what)
    transition = failover_run.plan_restore(TORUS, OPTIONS, failure, "B")
    rounded = failover_rounds.in_rounds(TORUS, failure, transition, TORUS.switch_names(), restore=True)
    lead = len(failure.links)
    assert [step["kind"] for step in rounded.steps[:lead]] == ["wait_carrier"] * lead
    assert rounded.steps[:lead] == transition.steps[:lead]
    rounds = rounded.proof["rounds"]
    flips = [step for step in transition.steps if step["name"].startswith("flip ")]
    assert 1 <= rounds < len(flips) and rounded.proof["acyclic"]
    assert [step.get("round") for step in rounded.steps[lead:lead + rounds]] == list(range(1, rounds + 1))
    rng = random.Random(5)
    state = rounded.states[1]["intent"]      # after the first round; its links are up again
    state = dict(rounded.before, links=state["links"])
    for step in rounded.steps[lead:lead + rounds]:
        names = sorted(step["switches"])
        for _attempt in range(8):
            chosen = rng.sample(names, rng.randint(0, len(names)))
            assert _undelivered(_mix(state, step["switches"], chosen)) == [], (step["name"], chosen)
        state = _mix(state, step["switches"], names)
    assert _undelivered(state) == []
    for step in rounded.steps[lead + rounds:]:     # the drain wait, the old bank's removal
        state = _mix(state, step.get("switches") or {}, step.get("switches") or {})
    assert state["switches"] == rounded.after["switches"] == transition.after["switches"]


def test_the_rounds_write_only_the_switches_they_flip_and_those_whose_old_bank_the_install_completes(planned):
    _failure, transition, rounded = planned
    rounds = rounded.proof["rounds"]
    install = transition.steps[0]["switches"]
    before = transition.before["switches"]
    flips = {name: entry for step in transition.steps[1:failover_run.urgent_cut(transition, changing(transition))]
             for name, entry in step["switches"].items()}
    rounds_of = [step for step in rounded.steps if step.get("round") or step.get("after_recovery")]
    flipped = {name for step in rounded.steps[:rounds] for name in step["switches"]
               if step["switches"][name] == flips[name]}
    written = {name for step in rounded.steps[:rounds] for name in step["switches"]}
    completed = written - flipped
    # sw5:4 on the 4x4 torus: 6 switches in round 1 where installing everywhere wrote 16
    assert len(rounded.steps[0]["switches"]) < len(TORUS.switch_names())
    assert all(not failover_rounds._adds_only_vlans(before[name], install[name]) for name in completed)
    # the urgent rounds flip only what delivery needs: the other changing switches flip in rounds after
    # them, off the urgent path, and every changing switch holds its backup entry at the end
    later = {name for step in rounds_of[rounds:] for name in step["switches"] if step["switches"][name] == flips[name]}
    assert flipped and later and not flipped & later and set(changing(transition)) <= flipped | later
    assert all(step["after_recovery"] and not step.get("round") for step in rounds_of[rounds:])
    # the switches no round writes get the backup bank right after the urgent rounds
    rest = rounded.steps[rounds]
    every_written = {name for step in rounds_of for name in step["switches"]}
    assert rest["name"].startswith("install bank B on ") and not rest.get("round")
    assert set(rest["switches"]) == {name for name in install if name not in every_written}
    assert all(rest["switches"][name] == install[name] for name in rest["switches"])
    assert failover_run.urgent_cut(rounded, changing(transition)) == rounds


def test_an_install_that_only_adds_vlans_and_one_that_completes_the_old_bank():
    before = {"vlans": [100, 101], "ports": {"1": {"pvid": 100, "untagged": [100, 101], "tagged": []}},
              "static_macs": [{"mac": "02:00:00:00:00:01", "vlan": 100, "port": "1"}]}
    added = {"vlans": [100, 101, 2100], "ports": {"1": {"pvid": 100, "untagged": [100, 101, 2100], "tagged": []}},
             "static_macs": before["static_macs"] + [{"mac": "02:00:00:00:00:01", "vlan": 2100, "port": "1"}]}
    assert failover_rounds._adds_only_vlans(before, added)
    completion = {"mac": "02:00:00:00:00:02", "vlan": 101, "port": "1"}
    completing = dict(added, static_macs=added["static_macs"] + [completion])
    assert not failover_rounds._adds_only_vlans(before, completing)
    moved = dict(added, ports={"1": {"pvid": 2100, "untagged": [100, 101, 2100], "tagged": []}})
    assert not failover_rounds._adds_only_vlans(before, moved)
    dropped = dict(added, vlans=[100, 2100])
    assert not failover_rounds._adds_only_vlans(before, dropped)


def test_rounds_without_the_needed_completions_fail_their_proof_and_the_install_goes_everywhere(monkeypatch):
    # pretend every install adds only the backup bank: the lean rounds then leave out the old bank's
    # completions some flips need, their windows flood, and round 1 installs the bank on every switch
    failure = resolve_failure(TORUS, link="sw1:3")
    transition = failover_run.plan_failover(TORUS, OPTIONS, failure, "A")
    monkeypatch.setattr(failover_rounds, "_adds_only_vlans", lambda before, installed: True)
    rounded = failover_rounds.in_rounds(TORUS, failure, transition, changing(transition))
    assert rounded.steps[0]["name"].startswith("round 1: install bank B, flip ")
    assert set(rounded.steps[0]["switches"]) == set(TORUS.switch_names())
    assert rounded.proof["acyclic"] and rounded.after == transition.after


@pytest.fixture(scope="module")
def armed_moves():
    """The failovers of link sw5:4 and switch sw10 planned from the plain
    base, and the base armed with continuation rows toward both backups."""
    moves = {}
    for what in ({"link": "sw5:4"}, {"switch": "sw10"}):
        failure = resolve_failure(TORUS, **what)
        moves[failure.name] = (failure, failover_run.plan_failover(TORUS, OPTIONS, failure, "A"))
    base = next(iter(moves.values()))[1].before
    return base, moves, failover_arming.armed(base["switches"], [move.after["switches"] for _f, move in moves.values()])


def test_the_armed_base_delivers_as_the_base_and_only_adds_rows_the_base_lacks(armed_moves):
    base, _moves, armed = armed_moves
    intent = dict(base, switches=dict(base["switches"], **armed))
    assert armed and _undelivered(intent) == [] and failover_arming.storm_free(intent)
    for name, entry in armed.items():
        plain = failover_arming.rows(base["switches"][name])
        rows = failover_arming.rows(entry)
        assert len(rows) > len(plain) and {key: rows[key] for key in plain} == plain, name


@pytest.mark.parametrize("name", ["sw5:4--sw6:3", "sw10"])
def test_rounds_from_the_armed_base_are_fewer_every_mix_is_clean_and_they_end_on_the_plain_backup(armed_moves, name):
    _base, moves, armed = armed_moves
    failure, transition = moves[name]
    plain = failover_rounds.in_rounds(TORUS, failure, transition, changing(transition))
    rounded = failover_rounds.in_rounds(TORUS, failure, transition, changing(transition), armed=armed)
    rounds = rounded.proof["rounds"]
    assert rounds < plain.proof["rounds"], (rounds, plain.proof["rounds"])
    # and write fewer switches: the continuation rows make the installs' old-bank completions unneeded
    written = [sum(len(step["switches"]) for step in made.steps[:made.proof["rounds"]]) for made in (rounded, plain)]
    assert written[0] < written[1], written
    assert rounded.before["switches"] == dict(transition.before["switches"], **armed)
    _urgent_rounds_clean(rounded, failure, random.Random(5))
    # the old bank's removal writes the plain backup; a failed switch, never written, keeps its rows
    kept = {failure.switch: armed[failure.switch]} if failure.switch in armed else {}
    assert rounded.after["switches"] == dict(transition.after["switches"], **kept) and rounded.proof["acyclic"]
