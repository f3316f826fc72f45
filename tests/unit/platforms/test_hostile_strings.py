"""Hostile strings: no name from a topology file or an intent may become a
command, a shell word or a line of a switch configuration.

Every string field of the topology x every hostile payload is refused by
the model, naming the field; every renderer refuses the same values when
handed an intent directly (a hand-edited intent.json), naming the switch
and port; and every line a renderer writes for a valid intent is one of the
lines its platform's template can write (no extra line, command or flow).
"""

import copy
import re

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import device_strings
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    dell_os6, huawei_vrp, linux_bridge, ovs)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.cli_diff import diff_commands
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import (
    PlatformError, render_template)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import (
    render_configs, render_switch)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

# Each payload is appended to (or replaces) a valid value. Newline, carriage
# return and NUL first (the reported injections), then every other kind of
# character that can end a token or a line somewhere: other C0 controls,
# DEL, C1 NEL, Unicode line/paragraph separators, blanks, shell and CLI
# metacharacters, and an overlong value.
INJECTIONS = {
    "newline": "\nreload",
    "carriage return": "\rreload",
    "crlf": "\r\nreload",
    "nul": "\x00reload",
    "escape": "\x1b[2J",
    "vertical tab": "\x0breload",
    "form feed": "\x0creload",
    "del": "\x7f",
    "next line (NEL)": "\x85reload",
    "line separator": "\u2028reload",
    "paragraph separator": "\u2029reload",
    "tab": "\treload",
    "space": " reload",
    "semicolon": ";reboot",
    "command substitution": "$(reboot)",
    "backtick": "`reboot`",
    "pipe": "|reboot",
    "ampersand": "&&reboot",
    "redirect": ">/etc/passwd",
    "quote": "'x",
    "double quote": '"x',
    "cli comment": "!x",
    "vrp comment": "#x",
    "braces": "{x}",
    "path": "/../../etc",
}
OVERLONG = "x" * 10000
PAYLOADS = dict(INJECTIONS, overlong=OVERLONG)


def fabric():
    """Two dell_os6 switches, one link, a host on each."""
    return {
        "name": "lab",
        "switches": {"sw0": {"platform": "dell_os6", "ports": 26, "interface_pattern": "Gi1/0/{port}",
                             "mgmt_address": "192.0.2.10", "power_profile": "PC5324"},
                     "sw1": {"platform": "dell_os6", "ports": 26, "interface_names": {1: "Te1/0/1", 25: "Te1/0/25"}}},
        "links": [{"a": "sw0:25", "b": "sw1:25"}],
        "hosts": {"node00": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01", "ip": "192.0.2.1"},
                  "node01": {"switch": "sw1", "port": "1", "mac": "02:00:00:00:00:02"}},
    }


def _rename_switch(data, new):
    data["switches"][new] = data["switches"].pop("sw0")
    data["links"][0]["a"] = "%s:25" % new
    data["hosts"]["node00"]["switch"] = new


def _rename_host(data, new):
    data["hosts"][new] = data["hosts"].pop("node00")


# field -> (function(data, payload) putting the payload into that field, the field's name in the error)
FIELDS = {
    "switch name": (lambda d, p: _rename_switch(d, "sw0" + p), "switches."),
    "host name": (lambda d, p: _rename_host(d, "node00" + p), "hosts."),
    "fabric name": (lambda d, p: d.update(name="lab" + p), "name"),
    "platform": (lambda d, p: d["switches"]["sw0"].update(platform="dell_os6" + p), "switches.sw0.platform"),
    "interface_pattern": (lambda d, p: d["switches"]["sw0"].update(interface_pattern="Gi1/0/{port}" + p),
                          "switches.sw0.interface_pattern"),
    "interface_names value": (lambda d, p: d["switches"]["sw1"]["interface_names"].update({1: "Te1/0/1" + p}),
                              "switches.sw1.interface_names.1"),
    "interface_names key": (lambda d, p: d["switches"]["sw1"]["interface_names"].update({"1" + p: "Te1/0/9"}),
                            "switches.sw1.interface_names"),
    "link port": (lambda d, p: d["links"][0].update(a="sw0:25" + p), "links[0].a"),
    "link switch": (lambda d, p: d["links"][0].update(b="sw1" + p + ":25"), "links[0].b"),
    "host port": (lambda d, p: d["hosts"]["node00"].update(port="1" + p), "hosts.node00.port"),
    "host switch": (lambda d, p: d["hosts"]["node00"].update(switch="sw0" + p), "hosts.node00.switch"),
    "host mac": (lambda d, p: d["hosts"]["node00"].update(mac="02:00:00:00:00:01" + p), "hosts.node00.mac"),
    "host ip": (lambda d, p: d["hosts"]["node00"].update(ip="192.0.2.1" + p), "hosts.node00.ip"),
    "host ipv6 zone": (lambda d, p: d["hosts"]["node00"].update(ip="fe80::1%eth0" + p), "hosts.node00.ip"),
    "mgmt_address": (lambda d, p: d["switches"]["sw0"].update(mgmt_address="192.0.2.10" + p),
                     "switches.sw0.mgmt_address"),
    "power_profile": (lambda d, p: d["switches"]["sw0"].update(power_profile="PC5324" + p),
                      "switches.sw0.power_profile"),
    "switch_defaults platform": (lambda d, p: d.update(switch_defaults={"platform": "huawei_vrp" + p}),
                                 "switch_defaults.platform"),
}


def test_the_fabric_itself_is_valid():
    topology = topology_from_data(fabric(), "topo.yml")
    assert topology.switches["sw0"].interface_name("1") == "Gi1/0/1"
    assert topology.switches["sw1"].interface_name("25") == "Te1/0/25"


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=sorted(PAYLOADS))
@pytest.mark.parametrize("field", sorted(FIELDS), ids=sorted(FIELDS))
def test_every_string_field_refuses_every_hostile_payload_naming_the_field(field, payload):
    data = fabric()
    put, where = FIELDS[field]
    put(data, PAYLOADS[payload])
    with pytest.raises(TopologyError) as info:
        topology_from_data(data, "topo.yml")
    message = str(info.value)
    assert message.startswith("topo.yml: ")
    assert where in message
    # the refusal itself never carries the raw control character (it would
    # break the log line it is printed on)
    for char in "\n\r\x00\x1b\x0b\x0c\x85\u2028\u2029":
        assert char not in message.replace("\n  - ", "")
    # an overlong value is shown cut, not in full
    assert len(message) < 2000


@pytest.mark.parametrize("name", ["all", "ungrouped", "switches", "nodes", "localhost", "platform_ovs", "ALL"])
def test_names_the_inventory_already_uses_are_refused(name):
    data = fabric()
    _rename_switch(data, name)
    with pytest.raises(TopologyError, match="is reserved in the inventory"):
        topology_from_data(data, "topo.yml")
    data = fabric()
    _rename_host(data, name)
    with pytest.raises(TopologyError, match="hosts.%s: .* is reserved" % name):
        topology_from_data(data, "topo.yml")


def test_a_port_named_twice_in_interface_names_is_refused():
    data = fabric()
    data["switches"]["sw1"]["interface_names"] = {1: "Te1/0/1", "1": "Te1/0/2", 25: "Te1/0/25"}
    with pytest.raises(TopologyError, match="switches.sw1.interface_names: port 1 is named twice"):
        topology_from_data(data, "topo.yml")


@pytest.mark.parametrize("platform, name, ok", [
    ("dell_os6", "Gi1/0/1", True), ("dell_os6", "Te1/0/48", True), ("dell_os6", "Po1", True),
    ("dell_os6", "1/0/1", False), ("dell_os6", "G" * 33, False),
    ("huawei_vrp", "GigabitEthernet0/0/1", True), ("huawei_vrp", "40GE0/0/1", True),
    ("huawei_vrp", "Eth-Trunk1", True), ("huawei_vrp", "G" * 64, False),
    ("linux_bridge", "swp1", True), ("linux_bridge", "eth0.100", True), ("linux_bridge", "enp3s0f1np1", True),
    ("linux_bridge", "a" * 16, False), ("linux_bridge", "eth0:1", False), ("linux_bridge", "sw/1", False),
    ("linux_bridge", "..", False),
])
def test_interface_names_follow_the_platform_rule(platform, name, ok):
    data = fabric()
    data["switches"]["sw1"].update(platform=platform, interface_names={1: name, 25: "x25"})
    if ok:
        assert topology_from_data(data, "topo.yml").switches["sw1"].interface_name("1") == name
    else:
        with pytest.raises(TopologyError, match=r"switches.sw1.interface_names.1( \(port 1\))?: (%s )?interface name"
                           % platform):
            topology_from_data(data, "topo.yml")


def test_a_pattern_too_long_for_the_platform_is_refused_for_the_ports_in_use():
    data = fabric()
    data["switches"]["sw0"].update(platform="linux_bridge", interface_pattern="longbridgeport{port}")
    with pytest.raises(TopologyError, match=r"switches.sw0.interface_pattern \(port 1\): linux_bridge interface "
                                            r"name 'longbridgeport1' has 15|has 16 characters"):
        topology_from_data(data, "topo.yml")


# ----------------------------------------------------------------- renderers
RING = {"name": "ring3", "switches": {"sw0": {}, "sw1": {}, "sw2": {}},
        "links": [{"a": "sw0:25", "b": "sw1:25"}, {"a": "sw1:26", "b": "sw2:26"}, {"a": "sw2:25", "b": "sw0:26"}],
        "hosts": {"n%d" % i: {"switch": "sw%d" % i, "port": "1", "mac": "02:00:00:00:00:0%d" % (i + 1)}
                  for i in range(3)}}


@pytest.fixture(scope="module", name="intent")
def fixture_intent():
    return plan(topology_from_data(copy.deepcopy(RING), "ring.yml"), engine="updown", assignment="renamed", broadcast="bounded").intent


# renderer name -> (render functions, how its interface names may be given)
TEXT_RENDERERS = {
    "dell_os6": [dell_os6.render],
    "huawei_vrp": [huawei_vrp.render],
    "linux_bridge": [linux_bridge.render, linux_bridge.render_interfaces],
}


@pytest.mark.parametrize("payload", sorted(INJECTIONS), ids=sorted(INJECTIONS))
@pytest.mark.parametrize("platform", sorted(TEXT_RENDERERS))
def test_renderers_refuse_hostile_interface_names_from_any_caller(intent, platform, payload):
    entry = dict(intent["switches"]["sw0"], platform=platform)
    for render in TEXT_RENDERERS[platform]:
        with pytest.raises(PlatformError, match="switch sw0 interface_names.1"):
            render(entry, "sw0", {"1": "eth1" + INJECTIONS[payload]})
    # through the render entry point too, with the map inside the intent entry
    with pytest.raises(PlatformError, match="switch sw0"):
        render_switch("sw0", dict(entry, interface_names={"1": "eth1" + INJECTIONS[payload]}))


@pytest.mark.parametrize("payload", sorted(PAYLOADS), ids=sorted(PAYLOADS))
@pytest.mark.parametrize("platform", sorted(TEXT_RENDERERS) + ["ovs"])
def test_renderers_refuse_hostile_switch_names_and_ports(intent, platform, payload):
    bad_intent = copy.deepcopy(intent)
    entry = bad_intent["switches"].pop("sw0")
    entry["platform"] = platform
    bad_intent["switches"]["sw0" + PAYLOADS[payload]] = entry
    with pytest.raises(PlatformError, match="switch name"):
        render_configs(bad_intent)
    entry = dict(intent["switches"]["sw0"], platform=platform)
    ports = dict(entry["ports"])
    ports["1" + PAYLOADS[payload]] = ports.pop("1")
    with pytest.raises(PlatformError, match="is not a port number|not among the switch's ports|an ovs port is an OpenFlow port"):
        render_switch("sw0", dict(entry, ports=ports, static_macs=[]))


@pytest.mark.parametrize("payload", sorted(INJECTIONS), ids=sorted(INJECTIONS))
def test_cli_diff_refuses_a_hostile_interface_name(intent, payload):
    candidate = dell_os6.render(dict(intent["switches"]["sw0"], platform="dell_os6"), "sw0")
    with pytest.raises(PlatformError, match="interface_names"):
        diff_commands("dell_os6", "", candidate, {"1": "Gi1/0/1" + INJECTIONS[payload]}, "sw0")


@pytest.mark.parametrize("payload", ["\nreload", "\rreload", "\x00", "\u2028x", "\x85x"])
def test_no_template_prints_a_control_character_whatever_the_value(payload):
    # the last guard: a value that got past every check still cannot start a line
    with pytest.raises(PlatformError, match="no control character may reach a rendered configuration"):
        render_template("dell_os6.j2", switch="sw0" + payload, vlans="", ports=[], static_macs=[])


def test_the_shell_script_quotes_every_interface_name(intent):
    # a name no platform rule would let through, forced past the namer, is
    # still one shell word (defence in depth: the template quotes)
    text = render_template("linux_bridge.sh.j2", switch="sw0", bridge="br0", stp=False,
                           ports=[{"port": "1", "interface": "a b;reboot", "vlan_commands": [],
                                   "speed_mbps": None, "admin": "up", "pause": "on"}], static_macs=[])
    assert "ip link set dev 'a b;reboot' master br0" in text
    assert "ethtool -A 'a b;reboot' rx on tx on" in text


# Every line each template can write, as a regular expression: a rendered
# configuration holding any other line would hold a command nobody asked for.
NAME = r"[A-Za-z0-9_][A-Za-z0-9_/.:-]*"
VLANS = r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*"
OVS_ACTION = (r"(?:pop_vlan|push_vlan:0x8100|set_field:(?:0x[0-9a-f]+|[0-9]+)->(?:reg0|reg1|vlan_vid)"
              r"|goto_table:[0-9]|output:[0-9]+|resubmit\(,[0-9]\)"
              r"|learn\(table=2,idle_timeout=[0-9]+,priority=[0-9]+,cookie=0x[0-9a-f]+,NXM_NX_REG0\[0\.\.11\],"
              r"NXM_OF_ETH_DST\[\]=NXM_OF_ETH_SRC\[\],load:NXM_OF_IN_PORT\[\]->NXM_NX_REG1\[0\.\.15\]\))")
LINE_GRAMMAR = {
    "cfg@dell_os6": [
        r"! ethercluster\.routing intent for switch [A-Za-z0-9_.-]+ \(platform dell_os6\)",
        r"! Dell EMC Networking N-Series / OS6 CLI, global configuration mode", r"!",
        r"no spanning-tree", r"(?:no )?flowcontrol", r"vlan database", r"vlan %s" % VLANS, r"exit", r"interface %s" % NAME,
        r"switchport mode general", r"switchport general allowed vlan add %s (?:untagged|tagged)" % VLANS,
        r"switchport general pvid [0-9]+", r"switchport general allowed vlan remove 1", r"speed [0-9]+",
        r"(?:no )?shutdown",
        r"mac address-table static [0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4} vlan [0-9]+ interface %s" % NAME],
    "cfg@huawei_vrp": [
        r"# ethercluster\.routing intent for switch [A-Za-z0-9_.-]+ \(platform huawei_vrp\)",
        r"# Huawei VRP \(S series\) system view", r"#", r"stp disable", r"vlan batch [0-9 to]+",
        r"interface %s" % NAME, r" port link-type hybrid", r" undo port hybrid vlan 1",
        r" port hybrid pvid vlan [0-9]+", r" port hybrid (?:untagged|tagged) vlan [0-9 to]+",
        r" undo negotiation auto", r" speed [0-9]+", r" (?:undo )?flow-control", r" (?:undo )?shutdown",
        r"mac-address static [0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4} %s vlan [0-9]+" % NAME, r"return"],
    "sh@linux_bridge": [
        r"#!/bin/sh", r"# ethercluster\.routing intent for switch [A-Za-z0-9_.-]+ \(platform linux_bridge, iproute2\)",
        r"set -e", r"ip link add name %s type bridge vlan_filtering 1 vlan_default_pvid 0 stp_state [01]" % NAME,
        r"ip link set dev %s up" % NAME, r"# port [0-9]+", r"ip link set dev %s master %s" % (NAME, NAME),
        r"bridge vlan add dev %s vid [0-9]+(?: pvid)?(?: untagged)?" % NAME,
        r"ethtool -s %s speed [0-9]+ duplex full autoneg off" % NAME,
        r"ethtool -A %s rx (on|off) tx \1" % NAME, r"ip link set dev %s (?:up|down)" % NAME,
        r"bridge fdb add [0-9a-f:]{17} dev %s vlan [0-9]+ master static" % NAME],
    "interfaces@linux_bridge": [
        r"# ethercluster\.routing intent for switch [A-Za-z0-9_.-]+ \(platform linux_bridge, ifupdown2\)",
        r"# /etc/network/interfaces: apply with ifreload -a", r"auto %s" % NAME, r"iface %s" % NAME,
        r"    bridge-ports %s(?: %s)*" % (NAME, NAME), r"    bridge-vlan-aware yes", r"    bridge-stp (?:on|off)",
        r"# port [0-9]+", r"    bridge-pvid [0-9]+", r"    bridge-vids [0-9 ]+",
        r"    post-up bridge vlan (?:add|del) dev %s vid [0-9]+(?: pvid)?(?: untagged)?" % NAME,
        r"    post-up bridge fdb add [0-9a-f:]{17} dev %s vlan [0-9]+ master static" % NAME,
        r"    post-up ethtool -A %s rx (on|off) tx \1" % NAME,
        r"    link-speed [0-9]+", r"    link-duplex full", r"    link-autoneg off", r"    link-down yes"],
    # one flow a line: match fields of numbers and MACs, actions of the
    # pipeline's own vocabulary (no free text anywhere)
    "flows@ovs": [
        r"cookie=0x[0-9a-f]+,table=[0-3],priority=[0-9]+(?:,(?:idle|hard)_timeout=[0-9]+)?"
        r"(?:,(?:in_port|dl_vlan|vlan_tci|reg0|reg1|dl_src|dl_dst)=(?:0x)?[0-9a-f:]+(?:/(?:0x)?[0-9a-f:]+)?)*"
        r",actions=(?:drop|%s(?:,%s)*)" % ((OVS_ACTION,) * 2)],
}


def _unusual_names():
    """Valid interface names with every character the rules allow."""
    return {"dell_os6": {"1": "Te1/0/1.5:x-y", "25": "Gi1/0/25", "26": "Gi1/0/26"},
            "huawei_vrp": {"1": "40GE0/0/1.5:x-y", "25": "Eth-Trunk25", "26": "XGigabitEthernet0/0/26"},
            "linux_bridge": {"1": "swp1_a.5-x", "25": "swp25", "26": "swp26"}}


@pytest.mark.parametrize("platform", ["dell_os6", "huawei_vrp", "linux_bridge", "ovs"])
def test_every_rendered_line_is_a_line_the_platform_template_writes(intent, platform):
    for switch, entry in intent["switches"].items():
        entry = dict(entry, platform=platform)
        names = _unusual_names().get(platform)
        files = render_switch(switch, entry, names)
        assert files
        for extension, text in files.items():
            grammar = [re.compile(pattern) for pattern in LINE_GRAMMAR["%s@%s" % (extension, platform)]]
            for number, line in enumerate(text.split("\n"), 1):
                if line == "":
                    continue
                assert any(rule.fullmatch(line) for rule in grammar), \
                    "%s %s.%s line %d is no line the template writes: %r" % (platform, switch, extension, number, line)


def test_ovs_flows_hold_only_numbers_and_macs(intent):
    # the OVS pipeline is rendered from integers and MACs only: no name of
    # the topology appears in a flow
    text = ovs.flows_text(ovs.render(dict(intent["switches"]["sw0"], platform="ovs"), "sw0")["flows"])
    assert "sw0" not in text and "n0" not in text


def test_device_string_messages_name_the_character():
    with pytest.raises(device_strings.UnsafeString, match=r"holds a line feed \(U\+000A\) at position 8"):
        device_strings.check("interface name", "Gi1/0/1\nreload", "here")
    with pytest.raises(device_strings.UnsafeString, match=r"holds line separator \(U\+2028\)"):
        device_strings.check("switch name", "sw\u2028", "here")
    with pytest.raises(device_strings.UnsafeString, match=r"has 64 characters"):
        device_strings.check("switch name", "s" * 64, "here")
    assert device_strings.check_address("2001:db8::1", "here") == "2001:db8::1"
    with pytest.raises(device_strings.UnsafeString, match="IPv6 zone"):
        device_strings.check_address("fe80::1%eth0", "here")


def test_hostile_file_through_the_loader_names_the_field(tmp_path):
    # the reported case, as a file: interface_pattern with a newline
    path = tmp_path / "topo.yml"
    data = fabric()
    data["switches"]["sw0"]["interface_pattern"] = "Gi1/0/{port}\nreload"
    path.write_text(yaml.safe_dump(data))
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology

    with pytest.raises(TopologyError, match=r"switches.sw0.interface_pattern: interface name .*line feed"):
        load_topology(str(path))
