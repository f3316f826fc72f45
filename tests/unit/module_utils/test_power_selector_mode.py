"""The selector mode of power_save (module_utils/power/selector_mode.py): on
the 4x4 torus with 3 links per neighbour pair and nearest-neighbour traffic
(benchmarks/power_saving.py's fabric), the paper's §5.4.2 selector proposes
links off and speeds down whose every step keeps the busiest channel at or
under the all-links maximum and lowers the watts; max_changes bounds the
actions; a drain veto and an ordering that does not fit are reported; links
the selector keeps on are turned back on first."""

import numpy as np
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.power import selector_mode as sm
from ansible_collections.ethercluster.routing.plugins.module_utils.power.model import LinkPowerModel
from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import (
    LinkSelectionProblem, SelectionError, traffic_matrix,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_planner import kept_order_router
from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics

TORUS = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 3,
                                         "hosts_per_switch": 4}})
# 1 MB/s per nearest-neighbour unit
TRAFFIC = traffic_matrix(TORUS, "nearest_neighbour") * 1e6
INDEX = {str(link.a): link.index for link in TORUS.links}
ROUTER = kept_order_router(TORUS, "segment")


def state(down=(), speeds=None):
    """A fabric state as fabric_state() returns it (the fields used)."""
    speeds = speeds or {}
    return {"links": [{"name": link.name, "admin": "down" if link.index in down else "up"}
                      for link in TORUS.links],
            "speeds": {link.name: speeds.get(link.index, link.speed_mbps) for link in TORUS.links},
            "bank": "A", "down_links": [TORUS.links[i].name for i in down]}


@pytest.fixture(scope="module")
def decision():
    return sm.selector_decision(TORUS, state(), [], {"traffic": TRAFFIC})


def max_utilisation(down, speeds):
    """The busiest channel's utilisation (fraction) computed afresh, with the
    kept-order routing the transitions push."""
    routing = ROUTER(sorted(down))
    loads = metrics.channel_loads(TORUS, routing.paths(), TRAFFIC)
    capacity = np.repeat([speeds.get(link.index, link.speed_mbps) for link in TORUS.links], 2)
    return float((loads * 8 / (1e6 * capacity)).max())


def replay(actions, down=(), speeds=None):
    """Every intermediate (down, speeds) after each action, in order."""
    down, speeds = set(down), dict(speeds or {})
    states = []
    for action in actions:
        index = INDEX[action["link"]]
        if action["action"] == "off":
            down.add(index)
        elif action["action"] == "on":
            down.discard(index)
        else:
            speeds[index] = action["speed_mbps"]
        states.append((set(down), dict(speeds)))
    return states


def test_every_step_keeps_the_busiest_channel_within_the_all_links_maximum_and_watts_drop(decision):
    bound = decision["all_links_max_utilisation"]
    assert bound == pytest.approx(max_utilisation(set(), {}), rel=1e-6)
    assert bound == pytest.approx(2e6 * 8 / 1e9)   # 2 MB/s on a 1000 Mb/s link
    kinds = {action["action"] for action in decision["actions"]}
    assert kinds == {"off", "speed"}                 # multispeed: some links go slower, not off
    offs = [a for a in decision["actions"] if a["action"] == "off"]
    assert len(offs) > len(TORUS.links) // 2
    for down, speeds in replay(decision["actions"]):
        assert max_utilisation(down, speeds) <= bound * (1 + 1e-9)
    down, speeds = replay(decision["actions"])[-1]
    assert decision["max_utilisation_after"] == pytest.approx(max_utilisation(down, speeds), rel=1e-6)
    model = LinkPowerModel(TORUS)
    assert decision["watts_before"] == pytest.approx(model.total())
    assert decision["watts_after"] == pytest.approx(model.total(down, speeds))
    assert decision["watts_after"] < decision["watts_before"] - 100
    assert decision["max_load_before"] == pytest.approx(2e6)
    assert decision["deferred"] == [] and decision["watts_target"] == decision["watts_after"]
    assert decision["log"][0].startswith("greedy selector: all-links maximum utilisation 1.6%")
    assert "W saved" in decision["log"][0]
    assert all(v["by"] == "selector" and v["reason"] for v in decision["vetoed"])


def test_max_changes_bounds_the_actions_and_defers_the_rest(decision):
    bounded = sm.selector_decision(TORUS, state(), [], {"traffic": TRAFFIC, "max_changes": 3})
    assert bounded["actions"] == decision["actions"][:3]
    assert bounded["deferred"] == [{k: v for k, v in a.items() if k != "reason"}
                                   for a in decision["actions"][3:]]
    assert decision["watts_after"] < bounded["watts_after"] < bounded["watts_before"]
    assert bounded["watts_target"] == decision["watts_after"]
    assert bounded["log"][2].startswith("deferred (max_changes): ")


def test_a_drain_veto_keeps_a_link_on_and_says_why(decision):
    first = INDEX[decision["actions"][0]["link"]]
    calls = []

    def veto(index, down):
        calls.append((index, set(down)))
        return "no lossless transition (drain)" if index == first else None

    vetoed = sm.selector_decision(TORUS, state(), [], {"traffic": TRAFFIC}, can_turn_off=veto)
    assert str(TORUS.links[first].a) not in [a["link"] for a in vetoed["actions"] if a["action"] == "off"]
    assert {"action": "off", "link": str(TORUS.links[first].a), "reason": "no lossless transition (drain)",
            "by": "transition"} in vetoed["vetoed"]
    assert calls[0] == (first, set())     # asked with what is down before it
    assert calls[1][1] == set()           # the vetoed link stayed on


def test_links_the_selector_keeps_on_come_back_on_first(decision):
    kept_on = sorted(set(range(len(TORUS.links))) - {INDEX[a["link"]] for a in decision["actions"]
                                                     if a["action"] == "off"})[:2]
    slowed = {INDEX[a["link"]]: a["speed_mbps"] for a in decision["actions"] if a["action"] == "speed"}
    fast = next(i for i in kept_on if i not in slowed)
    result = sm.selector_decision(TORUS, state(down=[fast]), [], {"traffic": TRAFFIC})
    assert result["actions"][0]["action"] == "on" and result["actions"][0]["link"] == str(TORUS.links[fast].a)
    assert result["watts_before"] < decision["watts_before"]
    for down, speeds in replay(result["actions"], down=[fast])[1:]:
        assert max_utilisation(down, speeds) <= result["all_links_max_utilisation"] * (1 + 1e-9)


def test_on_off_only_and_the_search_selector():
    on_off = sm.selector_decision(TORUS, state(), [], {"traffic": TRAFFIC, "speeds": []})
    assert {a["action"] for a in on_off["actions"]} == {"off"}
    search = sm.selector_decision(TORUS, state(), [], {"traffic": TRAFFIC, "selector": "search",
                                                       "speeds": []})
    assert search["selector"] == "search" and search["log"][0].startswith("search selector")
    assert search["watts_after"] <= on_off["watts_after"]


def test_traffic_from_host_counters_and_bad_options():
    ring = topology_from_data({"generate": {"kind": "complete", "switches": 4, "hosts_per_switch": 1}})
    host = next(iter(ring.hosts.values()))
    counters = {sw: {} for sw in ring.switches}
    later = {sw: {} for sw in ring.switches}
    for h in ring.hosts.values():
        counters[h.switch][str(h.port)] = {"rx_bytes": 0, "tx_bytes": 0}
        later[h.switch][str(h.port)] = {"rx_bytes": 4_000_000 if h is host else 0,
                                        "tx_bytes": 0 if h is host else 4_000_000}
    traffic = sm.host_traffic(ring, [{"at": 0.0, "counters": counters}, {"at": 2.0, "counters": later}])
    row = ring.switches[host.switch].index
    assert traffic[row].sum() == pytest.approx(2e6)     # 4 MB in 2 s, spread by the gravity model
    with pytest.raises(SelectionError, match="selector: must be one of greedy, search"):
        sm.selector_decision(ring, {}, [], {"selector": "paper"})
    with pytest.raises(SelectionError, match="max_changes"):
        sm.selector_decision(ring, {}, [], {"max_changes": 0})
    with pytest.raises(SelectionError, match="at least two"):
        sm.selector_decision(ring, {}, [{"at": 0, "counters": counters}])


def test_problem_is_weighed_with_the_kept_order_routings():
    """The selector sees the loads of the routings the transitions push."""
    router = kept_order_router(TORUS, "segment")
    problem = LinkSelectionProblem(TORUS, TRAFFIC, "segment", router=router)
    assert problem.limit * 8 / 1e6 == pytest.approx(max_utilisation(set(), {}))
