"""The declarative CLI diff (platforms/cli_diff.py): from a running
configuration to a rendered one, exactly the needed commands, removals
included; nothing when the switch already holds the candidate. The OS6
commands are checked by feeding them to the lab's OS6 emulator and reading
its running configuration back."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import Os6Cli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    cli_diff,
    dell_os6,
    huawei_vrp,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import (
    PlatformError,
)

INTERFACES = ["Gi1/0/%d" % port for port in range(1, 7)]


def entry(vlans, ports, statics=()):
    return {"platform": "dell_os6", "stp": False, "vlans": vlans,
            "ports": {str(port): dict({"admin": "up", "speed_mbps": 1000, "tagged": []}, **value)
                      for port, value in ports.items()},
            "static_macs": [{"mac": mac, "vlan": vlan, "port": str(port)} for mac, vlan, port in statics]}


BASE = entry([10, 11, 20], {1: {"pvid": 10, "untagged": [10, 11], "tagged": [20]},
                            2: {"pvid": 20, "untagged": [20], "tagged": [10]}},
             [("02:00:00:00:00:02", 10, 2), ("02:00:00:00:00:01", 20, 1)])


def switch_with(config_text):
    """An emulated OS6 switch that holds ``config_text`` (pushed through its CLI)."""
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    push(cli, cli_diff.diff_commands("dell_os6", cli.running_config(), config_text))
    return cli


def push(cli, commands):
    replies = [cli.execute(line) for line in ["configure"] + commands + ["end"]]
    refused = [(line, reply) for line, reply in zip(["configure"] + commands + ["end"], replies) if reply]
    assert not refused, refused
    assert cli.mode == "exec"


def test_from_a_factory_switch_every_port_is_put_in_general_mode_and_vlan_1_removed():
    commands = cli_diff.diff_commands("dell_os6", "", dell_os6.render(BASE, "sw0"))
    # a factory switch has 802.3x off: the switch-wide flowcontrol comes right after STP
    assert commands[:5] == ["no spanning-tree", "flowcontrol", "vlan database", "vlan 10-11,20", "exit"]
    port1 = commands[commands.index("interface Gi1/0/1") + 1:commands.index("interface Gi1/0/2")]
    assert port1 == ["switchport mode general", "switchport general allowed vlan add 10-11 untagged",
                     "switchport general allowed vlan add 20 tagged", "switchport general pvid 10",
                     "switchport general allowed vlan remove 1", "speed 1000", "exit"]
    # static entries come after the ports joined their VLANs
    assert commands[-2:] == ["mac address-table static 0200.0000.0002 vlan 10 interface Gi1/0/2",
                             "mac address-table static 0200.0000.0001 vlan 20 interface Gi1/0/1"]


def test_a_switch_that_holds_the_candidate_gets_no_command():
    candidate = dell_os6.render(BASE, "sw0")
    cli = switch_with(candidate)
    assert cli_diff.diff_commands("dell_os6", cli.running_config(), candidate) == []
    assert cli_diff.diff_commands("dell_os6", candidate, candidate) == []


def test_removals_vlan_off_a_port_static_entry_pvid_and_a_vlan_of_the_switch():
    cli = switch_with(dell_os6.render(BASE, "sw0"))
    changed = entry([10, 20], {1: {"pvid": 20, "untagged": [10], "tagged": [20]},
                               2: {"pvid": 20, "untagged": [20], "tagged": [10]}},
                    [("02:00:00:00:00:01", 20, 1)])
    commands = cli_diff.diff_commands("dell_os6", cli.running_config(), dell_os6.render(changed, "sw0"))
    assert commands == [
        "no mac address-table static 0200.0000.0002 vlan 10 interface Gi1/0/2",
        "interface Gi1/0/1", "switchport general pvid 20", "switchport general allowed vlan remove 11",
        "exit",
        "vlan database", "no vlan 11", "exit"]
    push(cli, commands)
    assert dell_os6.parse(cli.running_config()) == dell_os6.parse(dell_os6.render(changed, "sw0"))


def test_a_vlan_that_changes_kind_is_re_added_not_removed():
    moved = entry([10, 11, 20], {1: {"pvid": 10, "untagged": [10], "tagged": [11, 20]},
                                 2: {"pvid": 20, "untagged": [20], "tagged": [10]}},
                  [("02:00:00:00:00:02", 10, 2), ("02:00:00:00:00:01", 20, 1)])
    commands = cli_diff.diff_commands("dell_os6", dell_os6.render(BASE, "sw0"), dell_os6.render(moved, "sw0"))
    assert commands == ["interface Gi1/0/1", "switchport general allowed vlan add 11 tagged", "exit"]


def test_speed_and_admin_state_and_ports_the_candidate_does_not_name_stay():
    running = dell_os6.render(BASE, "sw0") + "interface Gi1/0/6\nswitchport mode general\nshutdown\nexit\n"
    slower = entry([10, 11, 20], {1: {"pvid": 10, "untagged": [10, 11], "tagged": [20], "speed_mbps": 100,
                                      "admin": "down"},
                                  2: {"pvid": 20, "untagged": [20], "tagged": [10]}},
                   [("02:00:00:00:00:02", 10, 2), ("02:00:00:00:00:01", 20, 1)])
    commands = cli_diff.diff_commands("dell_os6", running, dell_os6.render(slower, "sw0"))
    assert commands == ["interface Gi1/0/1", "speed 100", "shutdown", "exit"]


def test_a_port_in_access_mode_is_configured_from_scratch():
    running = "interface Gi1/0/1\nswitchport mode access\nexit\n"
    one = entry([10], {1: {"pvid": 10, "untagged": [10]}})
    commands = cli_diff.diff_commands("dell_os6", running, dell_os6.render(one, "sw0"))
    assert commands[commands.index("interface Gi1/0/1") + 1] == "switchport mode general"


def test_interface_spellings_and_the_interface_name_map():
    names = {"1": "Te1/0/1", "2": "Te1/0/2"}
    candidate = dell_os6.render(BASE, "sw0", names)
    assert cli_diff.diff_commands("dell_os6", candidate, candidate, names) == []
    commands = cli_diff.diff_commands("dell_os6", "", candidate, names)
    assert "interface Te1/0/1" in commands and "interface Gi1/0/1" not in commands
    spelled = dell_os6.render(BASE, "sw0").replace("interface Gi1/0/", "interface gigabitethernet 1/0/")
    assert cli_diff.diff_commands("dell_os6", spelled, dell_os6.render(BASE, "sw0")) == []


def test_huawei_vrp_commands():
    candidate = huawei_vrp.render(BASE, "sw0")
    commands = cli_diff.diff_commands("huawei_vrp", "", candidate)
    assert commands[:2] == ["stp disable", "vlan batch 10 to 11 20"]
    port2 = commands[commands.index("interface GigabitEthernet0/0/2"):commands.index("quit", commands.index(
        "interface GigabitEthernet0/0/2")) + 1]
    assert port2 == ["interface GigabitEthernet0/0/2", "port link-type hybrid", "port hybrid untagged vlan 20",
                     "port hybrid tagged vlan 10", "port hybrid pvid vlan 20", "undo port hybrid vlan 1",
                     "undo negotiation auto", "speed 1000", "flow-control", "quit"]
    assert cli_diff.diff_commands("huawei_vrp", candidate, candidate) == []
    changed = entry([10, 20], {1: {"pvid": None, "untagged": [10], "tagged": [20]},
                               2: {"pvid": 20, "untagged": [20], "tagged": [10]}},
                    [("02:00:00:00:00:01", 20, 1)])
    assert cli_diff.diff_commands("huawei_vrp", candidate, huawei_vrp.render(changed, "sw0")) == [
        "undo mac-address static 0200-0000-0002 GigabitEthernet0/0/2 vlan 10",
        "interface GigabitEthernet0/0/1", "undo port hybrid pvid vlan", "undo port hybrid vlan 11", "quit",
        "undo vlan batch 11"]


def test_long_vlan_lists_are_split_in_vrp_batches():
    vlans = list(range(100, 140, 2))  # 20 single VLANs: two commands of ten
    wide = entry(vlans, {1: {"pvid": 100, "untagged": vlans}})
    commands = cli_diff.diff_commands("huawei_vrp", "", huawei_vrp.render(wide, "sw0"))
    assert sum(command.startswith("vlan batch ") for command in commands) == 2
    assert sum(command.startswith("port hybrid untagged vlan ") for command in commands) == 2


def test_bad_input_names_the_switch():
    with pytest.raises(PlatformError, match="switch sw9.*cisco_ios"):
        cli_diff.diff_commands("cisco_ios", "", "", switch="sw9")
    with pytest.raises(PlatformError, match="switch sw9: line 3: VLAN range 5-2"):
        cli_diff.diff_commands("dell_os6", "", "interface Gi1/0/1\nswitchport mode general\n"
                               "switchport general allowed vlan add 5-2 untagged\n", switch="sw9")


# ------------------------------------------------ any intent to any intent
VLANS = st.lists(st.integers(10, 17), min_size=1, max_size=6, unique=True)


@st.composite
def intents(draw):
    vlans = sorted(draw(VLANS))
    ports, statics = {}, []
    for port in draw(st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True)):
        members = draw(st.lists(st.sampled_from(vlans), unique=True))
        split = draw(st.integers(0, len(members)))
        untagged, tagged = sorted(members[:split]), sorted(members[split:])
        pvid = draw(st.one_of(st.none(), st.sampled_from(vlans)))
        ports[port] = {"pvid": pvid, "untagged": untagged, "tagged": tagged,
                       "admin": draw(st.sampled_from(["up", "down"])),
                       "speed_mbps": draw(st.sampled_from([10, 100, 1000]))}
        for vlan in members[:1]:
            statics.append(("02:00:00:00:%02x:%02x" % (port, vlan), vlan, port))
    return entry(vlans, ports, statics)


@settings(max_examples=40, deadline=None)
@given(intents(), intents())
def test_any_intent_to_any_other_reaches_it_and_then_changes_nothing(first, second):
    cli = switch_with(dell_os6.render(first, "sw0"))
    target = dell_os6.render(second, "sw0")
    push(cli, cli_diff.diff_commands("dell_os6", cli.running_config(), target))
    held = dell_os6.parse(cli.running_config())
    wanted = dell_os6.parse(target)
    assert held["vlans"] == wanted["vlans"] and held["static_macs"] == wanted["static_macs"]
    for port, value in wanted["ports"].items():
        assert held["ports"][port] == value
    assert cli_diff.diff_commands("dell_os6", cli.running_config(), target) == []
