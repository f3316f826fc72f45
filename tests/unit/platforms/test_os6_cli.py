"""The lab's emulated Dell OS6 CLI (lab/os6_cli.py): prompts, modes,
errors as OS6 prints them, the configuration it keeps and replays, saving,
and how its configuration reaches the switch's OVS data plane (against a
recorded OVS answer; the lab test drives it over SSH)."""

import io

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import os6_cli
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import (
    INVALID,
    Os6Cli,
    Os6CliError,
    Session,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    cli_diff,
    dell_os6,
    ovs,
)

from test_ovs_platform import FIXTURES

INTERFACES = ["Gi1/0/1", "Gi1/0/2", "Gi1/0/3"]


def run(cli, *lines):
    """Feed lines; return [(prompt before, line, reply)]."""
    seen = []
    for line in lines:
        prompt = cli.prompt()
        seen.append((prompt, line, cli.execute(line)))
    return seen


def test_prompts_of_every_mode_and_the_way_back():
    cli = Os6Cli("sw0", INTERFACES)
    seen = run(cli, "enable", "configure", "vlan database", "exit", "interface gigabitethernet 1/0/2",
               "exit", "interface Gi1/0/3", "end", "disable", "exit")
    assert [prompt for prompt, _line, _reply in seen] == [
        "sw0>", "sw0#", "sw0(config)#", "sw0(config-vlan)#", "sw0(config)#", "sw0(config-if-Gi1/0/2)#",
        "sw0(config)#", "sw0(config-if-Gi1/0/3)#", "sw0#", "sw0>"]
    assert all(reply == "" for _prompt, _line, reply in seen)
    assert cli.closed


def test_unknown_commands_answer_as_os6_with_the_caret():
    cli = Os6Cli("sw0", INTERFACES)
    reply = cli.execute("configure")  # user mode: no configure
    assert reply == " " * len("sw0>") + "^\n" + INVALID + "\n"
    cli.execute("enable")
    cli.execute("configure")
    for line in ("interface Gi1/0/9", "vlan 10", "switchport mode general", "frobnicate"):
        assert cli.execute(line).endswith(INVALID + "\n"), line
    assert cli.mode == "config"


def test_commands_os6_refuses_print_an_error_and_change_nothing():
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    run(cli, "configure", "interface Gi1/0/1")
    before = cli.running_config()
    assert cli.execute("switchport general pvid 10").startswith("% Error: Gi1/0/1 is not in general mode")
    cli.execute("switchport mode general")
    assert cli.execute("switchport general allowed vlan add 10 untagged") == "% Error: VLAN 10 is not configured.\n"
    run(cli, "exit")
    assert cli.execute("mac address-table static 0200.0000.0001 vlan 1 interface Gi1/0/2").startswith(
        "% Error: Gi1/0/2 is not a member of VLAN 1")
    assert cli.execute("no mac address-table static 0200.0000.0001 vlan 1 interface Gi1/0/1").startswith(
        "% Error: no static entry")
    assert cli.execute("mac address-table static 0100.0000.0001 vlan 1 interface Gi1/0/1").startswith(
        "% Error: 0100.0000.0001 is a multicast address")
    run(cli, "vlan database")
    assert cli.execute("no vlan 1").startswith("% Error: VLAN 1 is the default VLAN")
    # only "switchport mode general" went through
    assert cli.running_config() == before.replace("exit\n", "interface Gi1/0/1\nswitchport mode general\nexit\nexit\n")


def test_the_running_configuration_replays_into_the_same_switch():
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    run(cli, "configure", "hostname core1", "no spanning-tree", "vlan database", "vlan 10-12,20", "exit",
        "interface Gi1/0/1", "description uplink", "switchport mode general",
        "switchport general allowed vlan add 10-11 untagged", "switchport general allowed vlan add 20",
        "switchport general pvid 11", "switchport general allowed vlan remove 1", "speed 100", "shutdown",
        "exit", "mac address-table static 02:00:00:00:00:07 vlan 10 interface Gi1/0/1", "end")
    text = cli.running_config()
    assert "hostname \"core1\"" in text and "switchport general allowed vlan add 20 tagged" in text
    copy = Os6Cli("sw0", INTERFACES, running_config=text)
    assert copy.running_config() == text
    assert copy.hostname == "core1" and copy.prompt() == "core1>"
    assert dell_os6.parse(text)["ports"]["1"] == {"pvid": 11, "untagged": [10, 11], "tagged": [20],
                                                  "admin": "down", "speed_mbps": 100,
                                                  "flow_control": False}


def test_a_stored_configuration_that_does_not_replay_is_an_error_naming_the_line():
    with pytest.raises(Os6CliError, match=r"sw0: .* line 3 'interface Gi1/0/7'"):
        Os6Cli("sw0", INTERFACES, running_config="configure\nno spanning-tree\ninterface Gi1/0/7\n")


def test_deleting_a_vlan_takes_it_off_ports_and_static_entries():
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    run(cli, "configure", "vlan database", "vlan 10,20", "exit", "interface Gi1/0/1", "switchport mode general",
        "switchport general allowed vlan add 10,20 untagged", "exit",
        "mac address-table static 0200.0000.0001 vlan 10 interface Gi1/0/1", "vlan database", "no vlan 10", "end")
    parsed = dell_os6.parse(cli.running_config())
    assert parsed["vlans"] == [20] and parsed["static_macs"] == []
    # VLAN 1, a default member of a general port, is not shown (as OS6 omits defaults)
    assert parsed["ports"]["1"]["untagged"] == [20]
    assert cli.ports["Gi1/0/1"]["untagged"] == {1, 20}


def test_apply_is_due_only_after_a_change_when_configuration_mode_is_left():
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    run(cli, "configure", "interface Gi1/0/1", "exit", "end")
    assert not cli.apply_due
    run(cli, "configure", "interface Gi1/0/1", "shutdown")
    assert not cli.apply_due  # still in configuration mode
    run(cli, "end")
    assert cli.apply_due


def test_copy_running_config_startup_config_asks_and_saves_on_yes():
    cli = Os6Cli("sw0", INTERFACES, privileged=True)
    run(cli, "configure", "no spanning-tree", "end")
    assert cli.execute("copy running-config startup-config").endswith("Are you sure you want to save? (y/n) ")
    assert cli.prompt() == ""  # the question waits for its answer
    assert cli.execute("n") == "\nConfiguration Not Saved!\n" and not cli.saved
    assert cli.execute("show startup-config") == "Startup configuration file does not exist.\n"
    cli.execute("copy running-config startup-config")
    assert cli.execute("y") == "\nConfiguration Saved!\n" and cli.saved
    assert cli.execute("show startup-config") == cli.running_config()


def test_show_version_names_model_and_version():
    reply = Os6Cli("sw0", INTERFACES).execute("show version")
    assert "System Model ID................... N1548" in reply
    assert "Software Version.................. 6.6.3.10" in reply


# --------------------------------------------------------------- data plane
def ring3_sw1():
    return yaml.safe_load((FIXTURES / "ring3_intent.yml").read_text())["switches"]["sw1"]


class RecordedSwitch:
    """A shell that answers the OVS read script with the recording of the
    lab's sw1 holding the ring3 intent, and records the write scripts."""

    def __init__(self):
        self.writes = []

    def __call__(self, script, what):
        if "dump-flows" in script:
            return (FIXTURES / "ovs31_sw1_read.txt").read_text()
        self.writes.append(script)
        return ""


def test_ovs_entry_maps_interfaces_to_topology_ports():
    names = {"1": "Te1/0/5", "2": "Te1/0/6", "3": "Te1/0/7"}
    text = dell_os6.render(ring3_sw1(), "sw1", names)
    entry = os6_cli.ovs_entry(text, names, "sw1")
    assert entry["platform"] == "ovs" and set(entry["ports"]) == {"1", "2", "3"}
    assert ovs.render(entry, "sw1")["flows"] == ovs.render(dict(ring3_sw1(), platform="ovs"), "sw1")["flows"]


def test_the_intent_configured_over_the_cli_is_exactly_the_ovs_pipeline_of_the_intent():
    shell = RecordedSwitch()
    text = dell_os6.render(ring3_sw1(), "sw1")
    names = {"1": "Gi1/0/1", "2": "Gi1/0/2", "3": "Gi1/0/3"}
    assert os6_cli.apply_to_ovs(text, names, "sw1", shell=shell) == []
    assert shell.writes == []
    changed = ring3_sw1()
    changed["ports"]["2"]["admin"] = "down"
    summary = os6_cli.apply_to_ovs(dell_os6.render(changed, "sw1"), names, "sw1", shell=shell)
    assert summary == ["port 2: admin down"]
    assert "mod-port br0 2 down" in shell.writes[0]


def test_a_session_stores_the_configuration_and_applies_it_when_leaving_configuration_mode(switch_dir):
    shell = RecordedSwitch()
    session = Session(str(switch_dir), shell=shell)
    commands = cli_diff.diff_commands("dell_os6", session.cli.running_config(),
                                      dell_os6.render(ring3_sw1(), "sw1"))
    for line in ["enable", "configure"] + commands:
        assert not session.feed(line).startswith("%")
    assert not (switch_dir / "running-config").exists()
    assert session.feed("end") == "sw1#"
    stored = (switch_dir / "running-config").read_text()
    assert dell_os6.parse(stored) == dell_os6.parse(dell_os6.render(ring3_sw1(), "sw1"))
    assert shell.writes == []  # the recording already holds this pipeline
    session.feed("copy running-config startup-config")
    session.feed("y")
    assert (switch_dir / "startup-config").read_text() == stored
    # a new session starts from the stored configuration
    assert Session(str(switch_dir), shell=shell).cli.running_config() == stored


def test_a_data_plane_failure_is_reported_in_the_session(switch_dir):
    def broken(script, what):
        raise Os6CliError("%s failed (exit 1): ovs-ofctl: br0 is not a bridge" % what)
    session = Session(str(switch_dir), shell=broken)
    reply = session.feed("enable") + session.feed("configure") + session.feed("no spanning-tree") \
        + session.feed("end")
    assert "% Error: the data plane did not take the configuration: reading the OVS bridge failed" in reply


def test_main_serves_banner_prompts_and_replies_on_its_streams(switch_dir, monkeypatch):
    monkeypatch.setenv("ETHERCLUSTER_CLI_DIR", str(switch_dir))
    out = io.BytesIO()
    assert os6_cli.main(stdin=io.BytesIO(b"enable\r\nterminal length 0\r\nfoo\r\nexit\r\n"), stdout=out) == 0
    text = out.getvalue().decode()
    assert "emulated by the ethercluster.routing lab" in text
    assert text.endswith("sw1>sw1#sw1#" + " " * 4 + "^\n" + INVALID + "\nsw1#")


def test_main_without_settings_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("ETHERCLUSTER_CLI_DIR", str(tmp_path))
    out = io.BytesIO()
    assert os6_cli.main(stdin=io.BytesIO(b""), stdout=out) == 1
    assert out.getvalue().decode().startswith("% this switch has no emulated CLI")
