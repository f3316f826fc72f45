"""IEEE 802.3x flow control, on which switch-tagged routing's deadlock
freedom rests (a lossless fabric): chosen in the topology (``flow_control``
per switch, or the ports left off), carried per port in the intent,
rendered, parsed and diffed by every CLI platform (OS6 switch-wide, VRP per
interface, Linux per device with ethtool -A)."""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    topology_from_data,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import Os6Cli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    cli_diff,
    dell_os6,
    huawei_vrp,
    linux_bridge,
    ovs,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import (
    PlatformError,
)


def ring(**switch_fields):
    """A 3-switch ring, a host on each switch's port 1; ``switch_fields``
    adds settings per switch."""
    switches = {name: dict(switch_fields.get(name, {})) for name in ("sw0", "sw1", "sw2")}
    return {"name": "fc", "switches": switches,
            "links": [{"a": "sw0:2", "b": "sw1:3"}, {"a": "sw1:2", "b": "sw2:3"},
                      {"a": "sw2:2", "b": "sw0:3"}],
            "hosts": {"n%d" % i: {"switch": "sw%d" % i, "port": 1, "mac": "02:00:00:00:00:0%d" % (i + 1)}
                      for i in range(3)}}


def port_entry(flow_control=True, **fields):
    return dict({"pvid": 10, "untagged": [10], "tagged": [], "admin": "up", "speed_mbps": None,
                 "flow_control": flow_control}, **fields)


def switch_entry(*flags):
    return {"stp": False, "vlans": [10],
            "ports": {str(port): port_entry(flag) for port, flag in enumerate(flags, 1)},
            "static_macs": []}


# ---------------------------------------------------------------- topology
def test_flow_control_is_on_by_default_and_off_per_switch_or_port():
    topology = topology_from_data(ring(sw1={"flow_control": False}, sw2={"flow_control": {"off": [1, "3"]}}))
    on = {name: [sw.flow_control_on(port) for port in ("1", "2", "3")]
          for name, sw in topology.switches.items()}
    assert on == {"sw0": [True, True, True], "sw1": [False, False, False], "sw2": [False, True, False]}
    # the explicit form reads back into an equal topology
    again = topology_from_data(topology.to_data())
    assert {name: sw.flow_control for name, sw in again.switches.items()} == \
        {"sw0": True, "sw1": False, "sw2": ("1", "3")}


def test_switch_defaults_turn_it_off_everywhere():
    data = dict(ring(sw0={"flow_control": True}), switch_defaults={"flow_control": False})
    topology = topology_from_data(data)
    assert [sw.flow_control for sw in topology.switches.values()] == [True, False, False]


@pytest.mark.parametrize("value, message", [
    ("off", r"switches\.sw1\.flow_control: must be true, false or \{off: \[ports\]\}"),
    ({"on": [1]}, r"switches\.sw1\.flow_control: must be true, false or \{off: \[ports\]\}"),
    ({"off": ["x"]}, r"switches\.sw1\.flow_control\.off: 'x' is not a port number"),
    ({"off": [9]}, r"switches\.sw1\.flow_control\.off: port 9 is not used by a link or host of sw1"),
])
def test_bad_flow_control_is_refused_naming_the_switch_and_field(value, message):
    with pytest.raises(TopologyError, match=message):
        topology_from_data(ring(sw1={"flow_control": value}))


def test_switch_defaults_cannot_name_ports():
    with pytest.raises(TopologyError, match=r"switch_defaults\.flow_control: true or false"):
        topology_from_data(dict(ring(), switch_defaults={"flow_control": {"off": [1]}}))


def test_the_planned_intent_carries_flow_control_per_port():
    topology = topology_from_data(ring(sw2={"flow_control": {"off": [1]}}))
    intent = plan(topology, engine="updown", assignment="fixed").intent
    flags = {name: {port: entry["flow_control"] for port, entry in sw["ports"].items()}
             for name, sw in intent["switches"].items()}
    assert flags["sw0"] == {"1": True, "2": True, "3": True}
    assert flags["sw2"] == {"1": False, "2": True, "3": True}


# ---------------------------------------------------------------- renderers
def test_huawei_vrp_sets_it_per_interface():
    text = huawei_vrp.render(switch_entry(True, False), "sw0")
    blocks = text.split("#\n")
    port1 = next(block for block in blocks if "interface GigabitEthernet0/0/1\n" in block)
    port2 = next(block for block in blocks if "interface GigabitEthernet0/0/2\n" in block)
    assert " flow-control\n" in port1 and "undo flow-control" not in port1
    assert " undo flow-control\n" in port2
    parsed = huawei_vrp.parse(text)
    assert [entry["flow_control"] for entry in parsed["ports"].values()] == [True, False]


def test_linux_bridge_sets_pause_with_ethtool_in_both_renderings():
    entry = switch_entry(True, False)
    script = linux_bridge.render(entry, "sw0")
    assert "ethtool -A swp1 rx on tx on\n" in script and "ethtool -A swp2 rx off tx off\n" in script
    interfaces = linux_bridge.render_interfaces(entry, "sw0")
    assert "    post-up ethtool -A swp2 rx off tx off\n" in interfaces
    for parsed in (linux_bridge.parse(script), linux_bridge.parse_interfaces(interfaces)):
        assert [port["flow_control"] for port in parsed["ports"].values()] == [True, False]
    # one direction only is not 802.3x as the intent means it
    assert linux_bridge.parse("ethtool -A swp1 rx on tx off\n")["ports"]["1"]["flow_control"] is False


def test_dell_os6_sets_it_for_the_whole_switch():
    assert "\nflowcontrol\n" in dell_os6.render(switch_entry(True, True), "sw0")
    off = dell_os6.render(switch_entry(False, False), "sw0")
    assert "\nno flowcontrol\n" in off
    assert [port["flow_control"] for port in dell_os6.parse(off)["ports"].values()] == [False, False]
    with pytest.raises(PlatformError, match=r"switch sw0: dell_os6 sets 802\.3x flow control for the "
                                            r"whole switch \(flowcontrol\), but port 2 wants it off"):
        dell_os6.render(switch_entry(True, False), "sw0")


def test_an_intent_without_the_field_means_on():
    entry = switch_entry(True)
    del entry["ports"]["1"]["flow_control"]
    assert " flow-control\n" in huawei_vrp.render(entry, "sw0")
    with pytest.raises(PlatformError, match="flow_control must be true or false"):
        huawei_vrp.render(dict(entry, ports={"1": port_entry("yes")}), "sw0")


def test_ovs_leaves_pause_to_the_nics():
    # Open vSwitch has no 802.3x setting of its own: the intent's field is
    # accepted and changes nothing in the pipeline
    on = ovs.render(dict(switch_entry(True, True), platform="ovs"), "sw0")
    off = ovs.render(dict(switch_entry(False, False), platform="ovs"), "sw0")
    assert on == off


# ---------------------------------------------------------------- CLI diff
def test_vrp_diff_changes_only_the_port_that_differs():
    running = huawei_vrp.render(switch_entry(True, True), "sw0")
    commands = cli_diff.diff_commands("huawei_vrp", running, huawei_vrp.render(switch_entry(True, False), "sw0"))
    assert commands == ["interface GigabitEthernet0/0/2", "undo flow-control", "quit"]


def test_os6_diff_flips_the_switch_wide_setting_and_the_emulator_holds_it():
    cli = Os6Cli("sw0", ["Gi1/0/1", "Gi1/0/2"], privileged=True)
    candidate_on = dell_os6.render(switch_entry(True, True), "sw0")
    for candidate, expected in ((candidate_on, "flowcontrol"),
                                (dell_os6.render(switch_entry(False, False), "sw0"), "no flowcontrol")):
        commands = cli_diff.diff_commands("dell_os6", cli.running_config(), candidate)
        assert expected in commands
        replies = [cli.execute(line) for line in ["configure"] + commands + ["end"]]
        assert not any(replies), replies
        assert cli_diff.diff_commands("dell_os6", cli.running_config(), candidate) == []
    assert "flowcontrol" not in cli.running_config()
