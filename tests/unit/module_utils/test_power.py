"""Power model (switch-tagged paper §3.6, Table 2): profiles, fabric power
arithmetic checked against numbers computed by hand from Table 2, the
both-ends rule of the SF-0420G, user-defined profiles and their errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.power import model as power
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.power.model import PowerError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data


def pair_fabric(profile_a=None, profile_b=None, links=2, hosts=(1, 1)):
    """sw0 -- sw1 with ``links`` parallel links and hosts on each switch.
    Ports: hosts first ("1".."h"), then links."""
    switches = {"sw0": {}, "sw1": {}}
    if profile_a:
        switches["sw0"]["power_profile"] = profile_a
    if profile_b:
        switches["sw1"]["power_profile"] = profile_b
    host_entries, number = {}, 0
    for sw, count in zip(("sw0", "sw1"), hosts):
        for port in range(1, count + 1):
            number += 1
            host_entries["h%d" % number] = {"switch": sw, "port": str(port),
                                            "mac": "02:00:00:00:00:%02x" % number}
    link_entries = [{"a": "sw0:%d" % (hosts[0] + k), "b": "sw1:%d" % (hosts[1] + k)}
                    for k in range(1, links + 1)]
    return topology_from_data({"switches": switches, "links": link_entries,
                               "hosts": host_entries})


# --------------------------------------------------------------- profiles
def test_table2_profiles_hold_the_paper_figures():
    expected = {  # Table 2: GbE/port, 100M/port, 10M/port, all except ports
        "PC5324": (1.2, 0.9, 0.5, 15.0, False),
        "PC6224": (2.0, 0.9, 0.8, 42.5, False),
        "PC6248": (2.1, 1.3, 1.1, 56.8, False),
        "SF-0420G": (1.0, 0.2, 0.0, 32.6, True),
    }
    assert set(power.TABLE2_PROFILES) == set(expected)
    for name, (g, m100, m10, base, both) in expected.items():
        profile = power.TABLE2_PROFILES[name]
        assert profile.port_watts == {1000: g, 100: m100, 10: m10}
        assert profile.base_watts == base
        assert profile.both_ends_rule is both
        assert profile.speeds() == [1000, 100, 10]


def test_default_profile_is_used_when_a_switch_names_none():
    topology = pair_fabric()
    result = power.fabric_power(topology)
    assert {entry["profile"] for entry in result["switches"].values()} == {power.DEFAULT_PROFILE}


# ----------------------------------------------------------- arithmetic
def test_power_of_a_mixed_two_switch_fabric_matches_table2_by_hand():
    # sw0 PC5324: base 15.0 + 2 link ports + 1 host port at 1.2 W = 18.6 W
    # sw1 PC6248: base 56.8 + 3 ports at 2.1 W                    = 63.1 W
    topology = pair_fabric("PC5324", "PC6248")
    result = power.fabric_power(topology)
    assert result["switches"]["sw0"]["total_w"] == pytest.approx(18.6)
    assert result["switches"]["sw1"]["total_w"] == pytest.approx(63.1)
    assert result["total_w"] == pytest.approx(81.7)
    assert result["base_w"] == pytest.approx(71.8)
    assert result["ports"]["sw0:1"] == {"kind": "host", "peer": "h1", "state": "up",
                                        "speed_mbps": 1000, "watts": 1.2}
    assert result["ports"]["sw1:2"]["peer"] == "sw0:2"

    # one link off: both ends shut, -1.2 (PC5324) -2.1 (PC6248)
    off = power.fabric_power(topology, link_states={"sw0:3": "down"})
    assert off["total_w"] == pytest.approx(81.7 - 3.3)
    assert off["switches"]["sw0"]["shut_ports"] == 1
    assert off["ports"]["sw1:3"]["watts"] == 0.0

    # one link at 100 Mb/s: 1.2 -> 0.9 and 2.1 -> 1.3; at 10 Mb/s: -> 0.5 and 1.1
    slow = power.fabric_power(topology, speeds={"sw1:2": 100})
    assert slow["total_w"] == pytest.approx(81.7 - 0.3 - 0.8)
    slower = power.fabric_power(topology, speeds={0: 10})
    assert slower["total_w"] == pytest.approx(81.7 - 0.7 - 1.0)

    # a host link at 100 Mb/s (hosts are named in speeds)
    host_slow = power.fabric_power(topology, speeds={"h2": 100})
    assert host_slow["total_w"] == pytest.approx(81.7 - 0.8)


def test_every_switch_shut_leaves_the_base_power():
    topology = pair_fabric("PC6224", "PC6224", links=3, hosts=(0, 0))
    result = power.fabric_power(topology, link_states={0: "down", 1: "off", 2: False})
    assert result["total_w"] == pytest.approx(2 * 42.5)
    assert result["ports_w"] == 0


# -------------------------------------------------------- both-ends rule
def test_both_ends_rule_a_link_off_saves_on_sf0420g():
    topology = pair_fabric("SF-0420G", "SF-0420G", links=2, hosts=(1, 1))
    full = power.fabric_power(topology)["total_w"]
    assert full == pytest.approx(2 * 32.6 + 6 * 1.0)
    # A link off is shut at both ends: the SF-0420G saves both ports.
    assert power.fabric_power(topology, link_states={"sw0:2": "down"})["total_w"] \
        == pytest.approx(full - 2.0)


def test_both_ends_rule_one_end_shut_saves_nothing_on_sf0420g():
    topology = pair_fabric("SF-0420G", "PC5324", links=1, hosts=(1, 1))
    full = power.fabric_power(topology)["total_w"]
    # Only the SF-0420G end shut: its port still draws (the other end is up).
    result = power.fabric_power(topology, port_states={"sw0:2": "down"})
    assert result["total_w"] == pytest.approx(full)
    assert result["ports"]["sw0:2"] == {"kind": "link", "peer": "sw1:2", "state": "down",
                                        "speed_mbps": 1000, "watts": 1.0}
    # Only the PC5324 end shut: that port saves its 1.2 W; the SF-0420G port is up.
    assert power.fabric_power(topology, port_states={"sw1:2": "down"})["total_w"] \
        == pytest.approx(full - 1.2)
    # Both ends shut one by one: both save, as for a link off.
    both = power.fabric_power(topology, port_states={"sw0:2": "down", "sw1:2": "down"})
    assert both["total_w"] == pytest.approx(full - 2.2)
    assert both["total_w"] == pytest.approx(
        power.fabric_power(topology, link_states={0: "down"})["total_w"])


def test_both_ends_rule_a_shut_host_port_still_draws_on_sf0420g():
    topology = pair_fabric("SF-0420G", "PC5324", links=1, hosts=(1, 1))
    full = power.fabric_power(topology)["total_w"]
    # The host NIC (other end) stays up: the SF-0420G port keeps drawing 1.0 W.
    assert power.fabric_power(topology, port_states={"h1": "down"})["total_w"] \
        == pytest.approx(full)
    # The same on the PC5324 saves the host port.
    assert power.fabric_power(topology, port_states={"sw1:1": "down"})["total_w"] \
        == pytest.approx(full - 1.2)


# --------------------------------------------------- user-defined profiles
def test_user_profile_from_playbook_data_with_string_speeds():
    profiles = {"lab-10g": {"port_watts": {"10000": 4.5, "1000": 1.5}, "base_watts": 80,
                            "description": "a 10GbE switch"}}
    topology = pair_fabric("lab-10g", "lab-10g", links=1, hosts=(0, 0))
    result = power.fabric_power(topology, profiles=profiles, speeds={0: 10000})
    assert result["total_w"] == pytest.approx(2 * 80 + 2 * 4.5)
    with pytest.raises(PowerError, match=r"no figure for 100 Mb/s .*10000, 1000"):
        power.fabric_power(topology, profiles=profiles, speeds={0: 100})


def test_user_profile_may_replace_a_table2_one():
    topology = pair_fabric("PC5324", "PC5324", links=1, hosts=(0, 0))
    mine = {"PC5324": {"port_watts": {1000: 2.0}, "base_watts": 10.0}}
    assert power.fabric_power(topology, profiles=mine)["total_w"] == pytest.approx(24.0)


@pytest.mark.parametrize("data, message", [
    ({"port_watts": {1000: 1.0}}, r"power_profiles\.bad\.base_watts: missing"),
    ({"port_watts": {}, "base_watts": 1}, r"power_profiles\.bad\.port_watts: must be a non-empty"),
    ({"port_watts": {"fast": 1.0}, "base_watts": 1}, r"power_profiles\.bad\.port_watts\.fast: the speed"),
    ({"port_watts": {1000: -1}, "base_watts": 1}, r"power_profiles\.bad\.port_watts\.1000: must be a number"),
    ({"port_watts": {1000: 1}, "base_watts": "x"}, r"power_profiles\.bad\.base_watts: must be a number"),
    ({"port_watts": {1000: 1}, "base_watts": 1, "both_ends_rule": "yes"},
     r"power_profiles\.bad\.both_ends_rule: must be true or false"),
    ({"port_watts": {1000: 1}, "base_watts": 1, "watts": 3}, r"power_profiles\.bad\.watts: unknown field"),
    ([1, 2], r"power_profiles\.bad: must be a mapping"),
])
def test_bad_user_profiles_name_the_field(data, message):
    with pytest.raises(PowerError, match=message):
        power.power_profiles({"bad": data})


def test_errors_name_the_switch_link_or_port():
    topology = pair_fabric("nosuch", None, links=1, hosts=(1, 0))
    with pytest.raises(PowerError, match=r"switches\.sw0\.power_profile: unknown power profile "
                                         r"'nosuch'"):
        power.fabric_power(topology)
    topology = pair_fabric(links=1, hosts=(1, 0))
    with pytest.raises(PowerError, match=r"default power profile \(switch sw0"):
        power.fabric_power(topology, default_profile="gone")
    with pytest.raises(PowerError, match=r"link_states\[sw7:1\]"):
        power.fabric_power(topology, link_states={"sw7:1": "down"})
    with pytest.raises(PowerError, match=r"link_states\[0\]: the state must be up or down"):
        power.fabric_power(topology, link_states={0: "sleeping"})
    with pytest.raises(PowerError, match=r"speeds\[sw0:2\]: the speed must be a whole number"):
        power.fabric_power(topology, speeds={"sw0:2": "fast"})
    with pytest.raises(PowerError, match=r"sw0:2 \(link sw0:2--sw1:1, switch sw0\): power "
                                         r"profile PC5324 has no figure for 40 Mb/s"):
        power.fabric_power(topology, speeds={"sw0:2": 40})
    with pytest.raises(PowerError, match=r"port_states\[sw1:9\]: no cabled port"):
        power.fabric_power(topology, port_states={"sw1:9": "down"})
    with pytest.raises(PowerError, match=r"power_profiles: must be a mapping"):
        power.fabric_power(topology, profiles=["PC5324"])
    assert issubclass(PowerError, EtherclusterError)


# ---------------------------------------------- additive model = report
TORUS = topology_from_data({"generate": {"kind": "torus", "dims": [3, 3],
                                         "links_per_neighbor": 2, "hosts_per_switch": 2},
                            "switch_defaults": {"power_profile": "PC6248"}})


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_link_power_model_agrees_with_fabric_power(data):
    count = len(TORUS.links)
    off = data.draw(st.sets(st.integers(0, count - 1), max_size=count))
    speeds = data.draw(st.dictionaries(st.integers(0, count - 1), st.sampled_from([1000, 100, 10])))
    model = power.LinkPowerModel(TORUS)
    report = power.fabric_power(TORUS, link_states={i: "down" for i in off}, speeds=speeds)
    assert model.total(off, speeds) == pytest.approx(report["total_w"], abs=1e-6)
    # Table-2 profiles: turning a link off or slowing it never costs power.
    assert report["total_w"] <= model.total() + 1e-9
    assert model.total(off) >= model.total(off | set(speeds)) - 1e-9


def test_link_power_model_speeds_are_the_common_ones_of_both_ends():
    profiles = {"fast-only": {"port_watts": {1000: 1.0}, "base_watts": 5}}
    topology = pair_fabric("fast-only", "PC5324", links=1, hosts=(0, 0))
    model = power.LinkPowerModel(topology, profiles)
    assert model.speeds(0) == [1000]
    assert model.link_watts(0, 1000) == pytest.approx(2.2)
    assert model.total() == pytest.approx(5 + 15 + 2.2)
    assert np.isclose(model.total(off=[0]), 20.0)
