"""Measured utilisation for power_save (module_utils/power/measure.py): port
counters read several times become per-channel utilisation samples at the
speeds the switches run; a counter that went backwards counts 0; the
decision (link_selection.decide) sees the link states read from the
switches: quiet samples turn a link off, a busy one turns a down link on."""

from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.power import measure as pm
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology

RING = load_topology(Path(__file__).resolve().parents[1] / "fixtures" / "lab" /
                     "ring3_topology.yml")
PORTS = {"sw0": ["1", "2", "3", "4"], "sw1": ["1", "2", "3"], "sw2": ["1", "2", "3"]}


def reading(at, sent=None):
    """Counters at time ``at``: every port has sent ``sent[(switch, port)]`` bytes."""
    sent = sent or {}
    return {"at": at, "counters": {sw: {port: {"tx_bytes": sent.get((sw, port), 0),
                                               "rx_bytes": 0} for port in ports}
                                   for sw, ports in PORTS.items()}}


def state(down=()):
    links = [{"name": link.name, "admin": "down" if link.index in down else "up"}
             for link in RING.links]
    return {"links": links, "speeds": {link.name: 1000 for link in RING.links}}


def test_bytes_sent_become_utilisation_at_the_current_speed():
    readings = [reading(0.0), reading(2.0, {("sw0", "2"): 25_000_000, ("sw1", "3"): 5}),
                reading(4.0, {("sw0", "2"): 50_000_000, ("sw1", "3"): 0})]
    samples = pm.utilisation_samples(RING, readings, {"sw0:2--sw1:2": 100})
    channel = RING.channel_from("sw0", "2").id
    # 25 MB in 2 s = 100 Mb/s: all of a 100 Mb/s link
    assert samples[0][channel] == pytest.approx(1.0)
    assert samples[1][channel] == pytest.approx(1.0)
    backwards = RING.channel_from("sw1", "3").id
    assert samples[1][backwards] == 0.0  # the counter went back (a restart): 0, not negative
    assert pm.utilisation_samples(RING, readings)[0][channel] == pytest.approx(0.1)


def test_quiet_samples_turn_a_link_off_and_a_busy_one_turns_a_down_link_on():
    quiet = [reading(float(t)) for t in range(4)]
    decision = pm.power_decision(RING, state(), quiet, {"samples": 3})
    assert decision["samples"] == 3 and decision["sample_peaks"] == [0.0, 0.0, 0.0]
    assert [action["action"] for action in decision["actions"]] == ["off"]
    busy = [reading(0.0), reading(1.0, {("sw1", "3"): 100_000_000})]  # 800 Mb/s on 1000
    decision = pm.power_decision(RING, state(down=(0,)), busy, {"samples": 3})
    assert [(a["action"], a["link"]) for a in decision["actions"]] == [("on", "sw0:2")]
    assert decision["max_utilisation"] == pytest.approx(0.8)


def test_readings_out_of_order_or_too_few_are_refused():
    with pytest.raises(pm.MeasureError, match="at least two"):
        pm.utilisation_samples(RING, [reading(0.0)])
    with pytest.raises(pm.MeasureError, match=r"readings\[1\] is not later"):
        pm.utilisation_samples(RING, [reading(1.0), reading(1.0)])
    with pytest.raises(pm.MeasureError, match="switch sw2"):
        pm.sent_bytes({"sw0": {}}, {"sw2": {}})


def test_decide_keeps_on_a_link_only_a_drain_could_switch_off():
    """On the 4x4 torus with segment routing, sw0--sw1 (link 0) can only be
    switched off through a drain: with every link quiet, the veto makes
    decide() pick another link and say why it kept link 0. With the quick
    pre-test link 0 is only sent to the back of the queue, and never
    planned while another link fills max_changes."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import decide
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.measure import lossless_off
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4]}})
    quiet = [[0.0] * len(topology.channels)] * 3
    plain = decide(topology, None, None, quiet, {"max_changes": 1})
    assert plain["actions"][0]["link"] == str(topology.links[0].a)   # quietest, lowest index
    quick = decide(topology, None, None, quiet, {"max_changes": 1},
                   can_turn_off=lossless_off(topology, "A", "segment"))
    assert quick["actions"] and quick["actions"][0]["link"] != str(topology.links[0].a)
    assert any(line.startswith("trying %s last: with %s off the kept turn order leaves a pair without a path"
                               % (topology.links[0].name, topology.links[0].name)) for line in quick["log"])
    assert not any("keeping %s on" % topology.links[0].name in line for line in quick["log"])
    planned = decide(topology, None, None, quiet, {"max_changes": 1},
                     can_turn_off=lossless_off(topology, "A", "segment", quick=False))
    assert planned["actions"] == quick["actions"]
    assert any("keeping %s on: no lossless transition" % topology.links[0].name in line
               and "drains are not allowed" in line for line in planned["log"])


def test_the_quick_pre_test_agrees_with_planning_on_the_torus():
    """The links of the 4x4 torus that the kept turn order cannot route
    without them (sw0--sw1, sw0--sw4, sw4--sw8: docs/transitions.md) fail
    the quick pre-test, and planning finds only a drain for them; a link it
    routes passes both."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.measure import lossless_off
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4]}})
    veto = lossless_off(topology, "A", "segment")
    assert veto.quick(2, set()) is None and veto(2, set()) is None
    for index in (0, 1, 9):
        why = veto.quick(index, set())
        assert why.startswith("with %s off the kept turn order leaves a pair without a path"
                              % topology.links[index].name), why
        assert "drains are not allowed" in veto(index, set())
    assert lossless_off(topology, "A", "segment", quick=False).quick(0, set()) is None


def test_a_link_that_fails_the_quick_pre_test_is_still_planned_and_turned_off():
    """On the 3-switch ring no link can be routed by the kept turn order
    once it is off (every one fails the pre-test), but the planner switches
    each without a drain (a bridge routing): decide() must still turn the
    quietest off, after planning it in full."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import decide
    veto = pm.lossless_off(RING, "A", "segment", assignment="fixed")
    assert all(veto.quick(index, set()) for index in range(len(RING.links)))
    assert veto(0, set()) is None
    quiet = [[0.0] * len(RING.channels)] * 3
    decision = decide(RING, None, None, quiet, {"max_changes": 1}, can_turn_off=veto)
    assert [action["action"] for action in decision["actions"]] == ["off"]
    assert decision["actions"][0]["link"] == str(RING.links[0].a)
    assert any(line.startswith("trying %s last" % RING.links[0].name) for line in decision["log"])
