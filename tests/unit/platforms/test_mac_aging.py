"""The switches' MAC aging time (switch-tagged paper §3.3: with
``mac_learning: self`` the learned entries must outlive the interval
between learning rounds, or never age). The plan sets ``mac_aging_s`` per
switch (0 where the platform can keep entries forever, else its longest);
every platform renders, parses and diffs it."""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.assign.macs import (
    MacError,
    effective_aging_time,
    switch_mac_aging,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import PlanError, plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import Os6Cli, ovs_entry
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_diff, dell_os6, huawei_vrp, linux_bridge, ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.capabilities import mac_aging_for
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import PlatformError


def ring(platforms=("ovs", "ovs", "ovs")):
    """A 3-switch ring, a host on each switch's port 1."""
    return topology_from_data({
        "name": "aging",
        "switches": {"sw%d" % i: {"platform": platform} for i, platform in enumerate(platforms)},
        "links": [{"a": "sw0:2", "b": "sw1:3"}, {"a": "sw1:2", "b": "sw2:3"},
                  {"a": "sw2:2", "b": "sw0:3"}],
        "hosts": {"n%d" % i: {"switch": "sw%d" % i, "port": 1, "mac": "02:00:00:00:00:0%d" % (i + 1)}
                  for i in range(3)}})


def switch_entry(aging=None, platform=None):
    entry = {"stp": False, "vlans": [10],
             "ports": {"1": {"pvid": 10, "untagged": [10], "tagged": [], "admin": "up",
                             "speed_mbps": None, "flow_control": True}},
             "static_macs": []}
    if aging is not None:
        entry["mac_aging_s"] = aging
    if platform is not None:
        entry["platform"] = platform
    return entry


# ---------------------------------------------------------------- capabilities
@pytest.mark.parametrize("platform, wanted, expected", [
    ("ovs", None, 0), ("huawei_vrp", None, 0),          # can keep entries forever
    ("dell_os6", None, 1000000), ("linux_bridge", None, 1000000),  # their longest
    ("dell_os6", 0, 1000000), ("ovs", 600, 600), ("huawei_vrp", 0, 0),
])
def test_each_platform_gets_the_longest_aging_it_allows(platform, wanted, expected):
    assert mac_aging_for(platform, wanted, "sw0") == expected


@pytest.mark.parametrize("platform, wanted, message", [
    ("ovs", 70000, r"switch sw0: MAC aging time 70000 s is outside platform ovs's range 1-65535 s \(or 0: never\)"),
    ("dell_os6", 5, r"switch sw0: MAC aging time 5 s is outside platform dell_os6's range 10-1000000 s$"),
    ("pica8", None, r"switch sw0: platform pica8 has no settable MAC aging time"),
    ("ovs", -1, r"must be whole seconds >= 0"),
])
def test_an_impossible_aging_time_is_refused_naming_switch_and_range(platform, wanted, message):
    with pytest.raises(PlatformError, match=message):
        mac_aging_for(platform, wanted, "sw0")


# ---------------------------------------------------------------- the plan
def test_self_learning_sets_every_switch_and_repeats_before_the_shortest_runs_out():
    topology = ring(("ovs", "dell_os6", "huawei_vrp"))
    result = plan(topology, engine="updown", assignment="fixed", mac_learning="self")
    aging = {name: sw.get("mac_aging_s") for name, sw in result.intent["switches"].items()}
    assert aging == {"sw0": 0, "sw1": 1000000, "sw2": 0}
    learning = result.intent["mac_learning"]
    assert (learning["aging_time_s"], learning["repeat_every_s"]) == (1000000, 500000)
    assert all(sw["static_macs"] == [] for sw in result.intent["switches"].values())


def test_where_every_switch_keeps_entries_forever_one_round_is_enough():
    result = plan(ring(), engine="updown", assignment="fixed", mac_learning="self")
    assert {sw["mac_aging_s"] for sw in result.intent["switches"].values()} == {0}
    assert (result.intent["mac_learning"]["aging_time_s"], result.intent["mac_learning"]["repeat_every_s"]) == (0, 0)


def test_a_given_aging_time_applies_everywhere_and_is_checked_per_platform():
    result = plan(ring(), engine="updown", assignment="fixed", mac_learning="self", aging_time=600)
    assert {sw["mac_aging_s"] for sw in result.intent["switches"].values()} == {600}
    assert result.intent["mac_learning"]["repeat_every_s"] == 300
    with pytest.raises(PlanError, match="mac_learning.aging_time: switch sw0: MAC aging time 99999 s"):
        plan(ring(), engine="updown", assignment="fixed", mac_learning="self", aging_time=99999)


def test_static_macs_leave_the_aging_time_alone():
    result = plan(ring(), engine="updown", assignment="fixed")
    assert not any("mac_aging_s" in sw for sw in result.intent["switches"].values())


def test_switch_mac_aging_helpers():
    assert switch_mac_aging(ring(("ovs", "linux_bridge", "ovs")), 20) == {"sw0": 20, "sw1": 20, "sw2": 20}
    assert effective_aging_time({"a": 0, "b": 40, "c": 30}) == 30
    assert effective_aging_time({"a": 0}) == 0
    with pytest.raises(MacError, match="switch sw1: MAC aging time 5 s is outside platform linux_bridge"):
        switch_mac_aging(ring(("ovs", "linux_bridge", "ovs")), 5)


# ---------------------------------------------------------------- renderers and parsers
@pytest.mark.parametrize("module, platform, line", [
    (dell_os6, "dell_os6", "\nmac address-table aging-time 600\n"),
    (huawei_vrp, "huawei_vrp", "\nmac-address aging-time 600\n"),
])
def test_cli_platforms_render_and_parse_the_global_line(module, platform, line):
    text = module.render(switch_entry(600), "sw0")
    assert line in text
    assert module.parse(text)["mac_aging_s"] == 600
    unset = module.render(switch_entry(), "sw0")
    assert "aging-time" not in unset and "mac_aging_s" not in module.parse(unset)


def test_huawei_vrp_can_turn_aging_off_and_dell_os6_cannot():
    assert "\nmac-address aging-time 0\n" in huawei_vrp.render(switch_entry(0), "sw0")
    with pytest.raises(PlatformError, match=r"switch sw0: mac_aging_s 0 \(never age\) is not possible on "
                                            r"platform dell_os6; its longest is 1000000 s"):
        dell_os6.render(switch_entry(0), "sw0")


def test_linux_bridge_sets_ageing_time_in_hundredths_and_ifupdown2_in_seconds():
    script = linux_bridge.render(switch_entry(600), "sw0")
    assert "stp_state 0 ageing_time 60000\n" in script
    interfaces = linux_bridge.render_interfaces(switch_entry(600), "sw0")
    assert "    bridge-ageing 600\n" in interfaces
    assert linux_bridge.parse(script)["mac_aging_s"] == 600
    assert linux_bridge.parse_interfaces(interfaces)["mac_aging_s"] == 600
    assert "ageing" not in linux_bridge.render(switch_entry(), "sw0")
    with pytest.raises(PlatformError, match="linux_bridge"):
        linux_bridge.render(switch_entry(0), "sw0")


def test_ovs_ages_learned_flows_by_the_learn_idle_timeout():
    def learn(entry):
        flows = ovs.render(entry, "sw0")["flows"]
        return next(action for flow in flows for action in flow.actions if action.startswith("learn("))
    assert "idle_timeout=300," in learn(switch_entry(platform="ovs"))   # the default
    assert "idle_timeout=600," in learn(switch_entry(600, "ovs"))
    # 0: permanent; OVS leaves idle_timeout out of a dumped learn(), so does the render
    never = learn(switch_entry(0, "ovs"))
    assert "idle_timeout" not in never
    assert ovs.parse_flow("table=1,priority=0 actions=%s" % never).actions[0] == never
    with pytest.raises(ovs.OvsError, match=r"switches.sw0.mac_aging_s: must be whole seconds 0-65535"):
        ovs.render(switch_entry(70000, "ovs"), "sw0")


def test_a_bad_intent_value_is_refused_naming_the_switch():
    with pytest.raises(PlatformError, match=r"switch sw0: mac_aging_s: must be whole seconds >= 0"):
        huawei_vrp.render(switch_entry("600"), "sw0")


# ---------------------------------------------------------------- CLI diff and the emulated OS6
def test_vrp_diff_sets_and_resets_the_aging_time():
    unset = huawei_vrp.render(switch_entry(), "sw0")
    set_600 = huawei_vrp.render(switch_entry(600), "sw0")
    assert cli_diff.diff_commands("huawei_vrp", unset, set_600) == ["mac-address aging-time 600"]
    assert cli_diff.diff_commands("huawei_vrp", set_600, unset) == ["undo mac-address aging-time"]
    assert cli_diff.diff_commands("huawei_vrp", set_600, set_600) == []


def test_os6_diff_and_the_emulator_hold_the_aging_time_and_the_data_plane_follows():
    cli = Os6Cli("sw0", ["Gi1/0/1"], privileged=True)
    candidate = dell_os6.render(switch_entry(1000000), "sw0")
    commands = cli_diff.diff_commands("dell_os6", cli.running_config(), candidate)
    assert "mac address-table aging-time 1000000" in commands
    replies = [cli.execute(line) for line in ["configure"] + commands + ["end"]]
    assert not any(replies), replies
    assert "\nmac address-table aging-time 1000000\n" in cli.running_config()
    assert cli_diff.diff_commands("dell_os6", cli.running_config(), candidate) == []
    # the lab's OVS data plane: learn()'s idle_timeout is 16 bits
    assert ovs_entry(cli.running_config(), None, "sw0")["mac_aging_s"] == 65535
    # OS6 refuses what it cannot hold, and "no" goes back to the default
    assert "Invalid input" in cli.execute("configure") + cli.execute("mac address-table aging-time 5")
    assert cli.execute("no mac address-table aging-time") == ""
    assert "aging-time" not in cli.running_config()
