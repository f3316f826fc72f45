# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_routing.yml onto a live fabric (power/redeploy_run.py) against an
in-memory fabric of OVS switches (the link transitions' fake driver):
what the switches hold decides -- a fresh fabric and the same intent get
the plain push, another routing is recognised from the switches alone and
moved make-before-break (check mode writes nothing, a failed step resumes,
a second run changes nothing), a move with no proof is refused before any
write naming both routings, and a drain only when allowed."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.power import redeploy_run
from ansible_collections.ethercluster.routing.plugins.module_utils.power.redeploy_run import RedeployError
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import (
    TransitionRunError,
    differing,
    read_states,
)

# the link transitions' in-memory fabric of OVS switches (their executor's tests)
FakeFabric = runpy.run_path(str(Path(__file__).resolve().parents[1] / "module_utils" / "test_transition_run.py"))[
    "FakeFabric"]

TORUS = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}})
UNBALANCED = {"balance": False}


def intent(bank="A", engine="updown", engine_options=None):
    return plan(TORUS, bank=bank, engine=engine, assignment="renamed", engine_options=engine_options).intent


def holding(held):
    return FakeFabric(TORUS, held)


def test_a_fresh_fabric_and_the_same_intent_get_the_plain_push():
    fake = holding(intent())
    for state in fake.states.values():
        state["flows"] = []
    fresh = redeploy_run.redeploy(TORUS, fake, intent())
    assert fresh["mode"] == "push" and "fresh" in fresh["reason"] and fresh["intent"] is None
    same = redeploy_run.redeploy(TORUS, holding(intent()), intent())
    assert same["mode"] == "push" and "already" in same["reason"]


def test_a_switch_changed_by_hand_gets_the_plain_push_back_to_the_intent():
    fake = holding(intent())
    fake.states["sw5"]["flows"] = fake.states["sw5"]["flows"][:-1]  # one flow removed by hand
    drift = redeploy_run.redeploy(TORUS, fake, intent())
    assert drift["mode"] == "push" and "sw5 differ" in drift["reason"] and fake.writes == []
    other = holding(intent(engine_options=UNBALANCED))  # another routing differs on most switches
    assert len(differing(read_states(other, TORUS.switch_names()), intent()["switches"])) * 2 >= 16


def test_another_routing_is_recognised_and_moved_through_the_other_bank():
    fake = holding(intent())
    wanted = intent(engine_options=UNBALANCED)
    checked = redeploy_run.redeploy(TORUS, fake, wanted, check_mode=True)
    assert checked["mode"] == "moved" and checked["changed"] and fake.writes == []
    assert checked["held"] == "updown (renamed)" and checked["held_bank"] == "A"
    assert any("flip" in line for line in checked["plan"])
    moved = redeploy_run.redeploy(TORUS, fake, wanted)
    assert moved["mode"] == "moved" and moved["changed"] and moved["bank_after"] == "B"
    assert not moved["proof"]["drain"] and moved["proof"]["order_free"]
    # the switches hold the wanted routing, in bank B; the playbook pushes that (no change)
    assert moved["intent"]["switches"] == intent("B", engine_options=UNBALANCED)["switches"]
    assert not differing(read_states(fake, TORUS.switch_names()), moved["intent"]["switches"])
    writes = len(fake.writes)
    again = redeploy_run.redeploy(TORUS, fake, wanted)
    assert again["mode"] == "held" and not again["changed"] and len(fake.writes) == writes
    assert again["intent"]["switches"] == moved["intent"]["switches"]


def test_a_stopped_re_deploy_is_recognised_from_both_banks_and_resumed():
    fake = holding(intent())
    wanted = intent(engine_options=UNBALANCED)
    fake.fail_writes_on = {("sw3", 2)}      # sw3's flip fails: the fabric holds both banks
    with pytest.raises(TransitionRunError):
        redeploy_run.redeploy(TORUS, fake, wanted)
    fake.fail_writes_on = set()
    resumed = redeploy_run.redeploy(TORUS, fake, wanted)
    assert resumed["mode"] == "moved"
    assert "resumed after step" in resumed["reason"] and resumed["held"] == "updown (renamed)"
    assert not differing(read_states(fake, TORUS.switch_names()), intent("B", engine_options=UNBALANCED)["switches"])


def test_no_proven_move_is_refused_before_any_write_unless_a_drain_is_allowed():
    fake = holding(intent())
    rerooted = {"root": "sw5"}
    with pytest.raises(RedeployError) as caught:
        redeploy_run.redeploy(TORUS, fake, intent(engine_options=rerooted))
    message = str(caught.value)
    assert message.startswith("nothing pushed to any switch: the switches hold updown (renamed) in bank A, "
                              "the intent is updown (renamed, {'root': 'sw5'}")
    assert "flood" in message or "cycle" in message
    assert "switch_deploy_allow_drain: true" in message and "transition_allow_drain" not in message
    assert fake.writes == []
    drained = redeploy_run.redeploy(TORUS, fake, intent(engine_options=rerooted), allow_drain=True)
    assert drained["mode"] == "moved" and drained["proof"]["drain"]
    assert not differing(read_states(fake, TORUS.switch_names()), intent("B", engine_options=rerooted)["switches"])


def test_another_engine_moves_through_a_bridge_and_ends_in_the_starting_bank():
    fake = holding(intent())
    moved = redeploy_run.redeploy(TORUS, fake, intent(engine="segment"))
    assert moved["mode"] == "moved" and not moved["proof"]["drain"] and moved["proof"]["bridge"]
    assert not differing(read_states(fake, TORUS.switch_names()), intent("A", engine="segment")["switches"])


def test_the_held_routing_is_what_the_switches_hold_a_hint_only_a_candidate():
    fake = holding(intent(engine_options=UNBALANCED))     # no engine default: unknown without a hint
    with pytest.raises(RedeployError) as caught:
        redeploy_run.redeploy(TORUS, fake, intent())
    assert "none of" in str(caught.value) and fake.writes == []
    # a wrong hint is tried and passed over; the right one is recognised
    moved = redeploy_run.redeploy(TORUS, fake, intent(), hints=[{"engine": "updown", "engine_options": {"root": "sw5"}},
                                                                {"engine": "updown", "engine_options": UNBALANCED}],
                                  check_mode=True)
    assert moved["mode"] == "moved" and moved["held"] == "updown (renamed, {'balance': False})"
    lossy = redeploy_run.redeploy(TORUS, fake, intent(), allow_drain=True)
    assert lossy["mode"] == "push" and lossy["lossy"] and "LOST" in lossy["reason"]


def test_candidates_put_hints_first_and_leave_out_the_wanted_routing():
    wanted = redeploy_run.settings_of(intent())
    assert wanted["engine"] == "updown" and wanted["mac_learning"] == "static"
    same = {"engine": "updown", "engine_options": wanted["engine_options"]}
    found = redeploy_run.candidates(wanted, [{"engine": "dor"}, same, {"engine": "segment"}])
    engines = [entry["engine"] for entry in found]
    # hints first, each engine once more with its defaults (dor and segment were hints), never the wanted one
    assert engines[:2] == ["dor", "segment"] and len(engines) == 8
    assert all(entry["engine_options"] != wanted["engine_options"] for entry in found)
    with pytest.raises(RedeployError):
        redeploy_run.candidates(wanted, ["updown"])


def test_a_switch_that_cannot_be_read_is_named_before_any_write():
    fake = holding(intent())
    read = fake.read

    def unreachable(switch):
        if switch == "sw7":
            raise RedeployError("Unable to connect to port 22 on 198.51.100.8")
        return read(switch)

    fake.read = unreachable
    with pytest.raises(redeploy_run.UnreachedSwitch) as caught:
        redeploy_run.redeploy(TORUS, fake, intent(engine_options=UNBALANCED))
    assert caught.value.switch == "sw7" and "port 22" in str(caught.value) and fake.writes == []


def test_after_a_bridged_move_the_same_intent_is_held():
    fake = holding(intent())
    redeploy_run.redeploy(TORUS, fake, intent(engine="segment"))
    again = redeploy_run.redeploy(TORUS, fake, intent(engine="segment"))     # the bank it ended in: bank A
    assert again["mode"] == "push" and "hold this intent already" in again["reason"] and not again["changed"]
    other_bank = redeploy_run.redeploy(TORUS, fake, intent("B", engine="segment"))
    assert other_bank["mode"] == "held" and not other_bank["changed"], other_bank["reason"]
