# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-model link timings (switch-tagged paper §4.3, Table 6): the profile
data, the transition planner's waits and the lab's renegotiation gap."""

from __future__ import annotations

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.plan import LabError, up_phases
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.power.link_timings import (
    TABLE6_TIMINGS,
    LinkTimings,
    link_operation_s,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.model import (
    PowerError,
    power_profiles,
    profile_from_data,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import (
    DEFAULT_RENEGOTIATION_S,
    plan_transition,
)

# Table 6 as printed: on/off, Gb->100M, Gb<-100M, 100M->10M, 100M<-10M, Gb->10M, Gb<-10M
TABLE6 = {
    "PC5324": (3.2, 4.1, 2.4, 2.3, 3.3, 2.5, 2.4),
    "PC6224": (2.6, 2.8, 5.7, 2.6, 2.6, 2.6, 5.7),
    "PC6248": (2.2, 2.7, 3.3, 2.8, 3.1, 2.5, 2.3),
    "SF-0420G": (1.2, 2.7, 2.5, 2.4, 2.3, 2.8, 2.3),
}
COLUMNS = ((1000, 100), (100, 1000), (100, 10), (10, 100), (1000, 10), (10, 1000))


@pytest.mark.parametrize("model", sorted(TABLE6))
def test_every_built_in_profile_carries_its_table6_row(model):
    timings = power_profiles()[model].link_timings
    row = TABLE6[model]
    assert timings.on_off_s == row[0]
    assert [timings.speed_s(old, new) for old, new in COLUMNS] == list(row[1:])
    assert timings.speed_s(1000, 40000) is None and timings.speed_s(None, 100) is None


def test_a_link_takes_the_longer_of_its_ends():
    fast, slow = TABLE6_TIMINGS["SF-0420G"], TABLE6_TIMINGS["PC6224"]
    assert link_operation_s([fast, slow], "on") == 2.6
    assert link_operation_s([fast, slow], "speed", 100, 1000) == 5.7
    assert link_operation_s([fast, slow], "speed", 1000, 100) == 2.8
    assert link_operation_s([fast, None], "on") is None
    assert link_operation_s([fast, LinkTimings(None, {})], "off") is None


def test_user_profile_timings_round_trip_and_bad_fields_are_named():
    data = {"port_watts": {1000: 1.0}, "base_watts": 10,
            "link_timings": {"on_off_s": 1.5, "speed_change_s": {"1000>100": 2, "100>1000": 3.5}}}
    profile = profile_from_data("lab-1g", data)
    assert profile.link_timings.speed_s(100, 1000) == 3.5
    assert profile_from_data("again", profile.to_data()) == profile._replace(name="again")
    bad = {"port_watts": {1000: 1.0}, "base_watts": 10,
           "link_timings": {"on_off_s": -1, "speed_change_s": {"1000-100": 2, "100>100": 1, "10>100": "x"},
                            "wait": 3}}
    with pytest.raises(PowerError) as caught:
        profile_from_data("lab-1g", bad)
    message = str(caught.value)
    for part in ("power_profiles.lab-1g.link_timings.wait: unknown field",
                 "power_profiles.lab-1g.link_timings.on_off_s: must be a number of seconds >= 0, got -1",
                 "power_profiles.lab-1g.link_timings.speed_change_s.1000-100: the key must be FROM>TO",
                 "power_profiles.lab-1g.link_timings.speed_change_s.100>100: the key must be FROM>TO",
                 "power_profiles.lab-1g.link_timings.speed_change_s.10>100: must be a number of seconds"):
        assert part in message


def _ring(profile_a, profile_b):
    """A 4-ring whose link 0 joins a switch of ``profile_a`` to one of ``profile_b``."""
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4]}}).to_data()
    link = topology["links"][0]
    ends = (link["a"].split(":")[0], link["b"].split(":")[0])
    for name, profile in zip(ends, (profile_a, profile_b)):
        topology["switches"][name]["power_profile"] = profile
    return topology_from_data(topology)


PLAN = {"engine": "updown", "assignment": "renamed", "broadcast": "bounded"}


def _carrier(transition):
    return next(step for step in transition.steps if step["kind"] == "wait_carrier")


def test_speed_change_waits_the_slower_end_per_direction():
    topology = _ring("SF-0420G", "PC6224")
    down = plan_transition(topology, "speed", 0, speed_mbps=100, **PLAN)
    assert _carrier(down)["settle_s"] == 2.8 and _carrier(down)["expected_s"] == 2.8
    assert down.proof["link_timings"] == {"expected_s": 2.8, "profiles": ["PC6224", "SF-0420G"],
                                          "renegotiation_s": 2.8,
                                          "renegotiation_source": "Table 6 (power profiles)"}
    assert "the switches take 2.8s" in down.text()
    slow = topology_from_data(dict(topology.to_data(), links=[
        dict(link, speed_mbps=100) if index == 0 else link
        for index, link in enumerate(topology.to_data()["links"])]))
    up = plan_transition(slow, "speed", 0, speed_mbps=1000, **PLAN)
    assert _carrier(up)["settle_s"] == 5.7


def test_a_given_renegotiation_wait_wins_and_unknown_figures_fall_back():
    topology = _ring("PC5324", "PC5324")
    given = plan_transition(topology, "speed", 0, speed_mbps=100, renegotiation_s=1.0, **PLAN)
    assert _carrier(given)["settle_s"] == 1.0 and _carrier(given)["expected_s"] == 4.1
    plain = {"port_watts": {1000: 1.0, 100: 0.5}, "base_watts": 10}
    custom = _ring("plain", "PC5324")
    fallback = plan_transition(custom, "speed", 0, speed_mbps=100, power_profiles={"plain": plain}, **PLAN)
    assert _carrier(fallback)["settle_s"] == DEFAULT_RENEGOTIATION_S
    assert _carrier(fallback)["expected_s"] is None
    assert fallback.proof["link_timings"]["renegotiation_source"] == "default"


def test_link_on_records_how_long_the_models_take_without_delaying_the_poll():
    topology = _ring("PC6248", "PC5324")
    on = plan_transition(topology, "on", 0, current_down=[0], **PLAN)
    assert _carrier(on)["settle_s"] == 0.0 and _carrier(on)["expected_s"] == 3.2
    assert on.proof["link_timings"]["renegotiation_s"] is None


def test_an_unknown_profile_is_refused_naming_the_switch():
    with pytest.raises(Exception, match=r"switches\.sw\w+\.power_profile: unknown power profile 'nope'"):
        plan_transition(_ring("nope", "PC5324"), "speed", 0, speed_mbps=100, **PLAN)


# ------------------------------------------------------------------ the lab
def _gap_files(layout):
    files = {}
    for phase in up_phases(layout):
        for job in phase.jobs:
            for step in job:
                if getattr(step, "path", "").endswith(ovs.GAP_FILE):
                    files[step.path.split("/")[-2]] = step.content
    return files


def test_lab_gap_from_profiles_writes_each_switch_its_models_figures():
    topology = _ring("PC6224", "SF-0420G")
    layout = lab_layout(topology, name="gaps", renegotiation_gap="profile")
    files = _gap_files(layout)
    assert len(files) == len(topology.switches)
    link = topology.links[0]
    gap, gaps = ovs.parse_gap_file(files[link.a.switch].splitlines())
    assert (gap, gaps["1000>100"], gaps["100>1000"]) == (5.7, 2.8, 5.7)
    gap, gaps = ovs.parse_gap_file(files[link.b.switch].splitlines())
    assert (gap, gaps["100>1000"]) == (2.8, 2.5)
    plain = lab_layout(topology, name="plain", renegotiation_gap=2)
    assert set(_gap_files(plain).values()) == {"2\n"}


def test_lab_gap_from_an_unknown_profile_is_refused_naming_it():
    with pytest.raises(LabError, match=r"renegotiation_gap: profile: .*unknown power profile 'mine'"):
        lab_layout(_ring("mine", "PC5324"), name="gaps", renegotiation_gap="profile")
    with pytest.raises(LabError, match=r"renegotiation_gap: must be a number of seconds or 'profile'"):
        lab_layout(_ring("PC5324", "PC5324"), name="gaps", renegotiation_gap="table6")


def test_ovs_speed_change_keeps_the_port_down_for_its_own_figure():
    current = {"ports": {"1": {"dev": "sw0-p1", "speed_mbps": 1000, "admin": "up"},
                         "2": {"dev": "sw0-p2", "speed_mbps": 100, "admin": "up"}},
               "gap": 4.1, "gaps": {"1000>100": 4.1, "100>1000": 2.4}}
    desired = {"ports": {"1": {"admin": "up"}, "2": {"admin": "up"}}, "flows": []}

    def script(speeds):
        changes = ovs.Changes([], [], [], [], speeds, {})
        return ovs.write_script(changes, desired, current)
    assert "sleep 4.1" in script({"1": 100})
    assert "sleep 2.4" in script({"2": 1000})
    assert "sleep 4.1" in script({"1": 10})         # no figure for 1000>10: the switch's gap
    assert ovs.parse_gap_file(["3", "garbage", "1000>100 x", "100>1000 2"]) == (3.0, {"100>1000": 2.0})
