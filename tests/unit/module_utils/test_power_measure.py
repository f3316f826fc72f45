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
    decide() pick another link and say why it kept link 0."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import decide
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.measure import lossless_off
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        topology_from_data,
    )
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4]}})
    quiet = [[0.0] * len(topology.channels)] * 3
    plain = decide(topology, None, None, quiet, {"max_changes": 1})
    assert plain["actions"][0]["link"] == str(topology.links[0].a)   # quietest, lowest index
    vetoed = decide(topology, None, None, quiet, {"max_changes": 1},
                    can_turn_off=lossless_off(topology, "A", "segment"))
    assert vetoed["actions"] and vetoed["actions"][0]["link"] != str(topology.links[0].a)
    assert any("keeping %s on: no lossless transition" % topology.links[0].name in line
               and "the kept turn order leaves a pair without a path" in line for line in vetoed["log"])
    planned = decide(topology, None, None, quiet, {"max_changes": 1},
                     can_turn_off=lossless_off(topology, "A", "segment", quick=False))
    assert planned["actions"] == vetoed["actions"]
    assert any("keeping %s on: no lossless transition" % topology.links[0].name in line
               and "drains are not allowed" in line for line in planned["log"])


def test_the_quick_veto_agrees_with_planning_and_takes_milliseconds():
    """The links of the 4x4 torus that the kept turn order cannot route
    without them (sw0--sw1, sw0--sw4, sw4--sw8: docs/transitions.md) are
    vetoed without planning, as planning would (it finds only a drain); a
    link it routes is planned and passes. After the first call (which
    builds the base routing) a quick veto takes milliseconds, planning
    seconds."""
    import time
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.measure import lossless_off
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        topology_from_data,
    )
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4]}})
    quick, planned = lossless_off(topology, "A", "segment"), lossless_off(topology, "A", "segment", quick=False)
    assert quick(2, set()) is None and planned(2, set()) is None
    for index in (0, 1, 9):
        started = time.perf_counter()
        why = quick(index, set())
        seconds = time.perf_counter() - started
        assert why.startswith("no lossless transition (with %s off the kept turn order leaves a pair "
                              "without a path" % topology.links[index].name), why
        assert seconds < 0.5
        assert "drains are not allowed" in planned(index, set())
