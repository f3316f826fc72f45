"""The lab's emulated Huawei VRP CLI (lab/vrp_cli.py): views and prompts,
the commands the huawei_vrp renderer and the CLI diff write (undo forms
included), VRP's errors, the display commands, and the session that
applies the configuration to the switch's OVS data plane (a recorded OVS
read stands in for the switch)."""

import io
import json

import pytest

from ansible_collections.ethercluster.routing.plugins.cliconf.huawei_vrp import Cliconf
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import cli_emulator, vrp_cli
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.vrp_cli import UNRECOGNIZED, WRONG, VrpCli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_diff, huawei_vrp, ovs

from test_os6_cli import RecordedSwitch, ring3_sw1, run
from test_ovs_platform import FIXTURES

INTERFACES = ["GigabitEthernet0/0/1", "GigabitEthernet0/0/2", "GigabitEthernet0/0/3"]


@pytest.fixture(name="vrp_dir")
def fixture_vrp_dir(tmp_path):
    """An emulated VRP switch's directory: sw1 on br0, ports 1-3 as GigabitEthernet0/0/1-3."""
    (tmp_path / "cli.json").write_text(json.dumps({
        "hostname": "sw1", "platform": "huawei_vrp", "bridge": "br0",
        "interfaces": {str(port): "GigabitEthernet0/0/%d" % port for port in (1, 2, 3)}}))
    return tmp_path


def configured(*lines):
    """A switch sw0 in the system view after ``lines`` (each must be taken)."""
    cli = VrpCli("sw0", INTERFACES)
    for _prompt, line, reply in run(cli, "system-view", *lines):
        assert "Error" not in reply, (line, reply)
    return cli


def test_prompts_of_every_view_and_the_way_back():
    cli = VrpCli("sw0", INTERFACES)
    seen = run(cli, "system-view", "vlan 10", "quit", "interface GigabitEthernet0/0/2", "quit",
               "interface GigabitEthernet 0/0/3", "return", "system-view", "vlan 20", "return", "quit")
    assert [prompt for prompt, _line, _reply in seen] == [
        "<sw0>", "[sw0]", "[sw0-vlan10]", "[sw0]", "[sw0-GigabitEthernet0/0/2]", "[sw0]",
        "[sw0-GigabitEthernet0/0/3]", "<sw0>", "[sw0]", "[sw0-vlan20]", "<sw0>"]
    assert cli.closed


def test_unknown_commands_answer_unrecognized_under_a_caret_and_change_nothing():
    cli = VrpCli("sw0", INTERFACES)
    assert cli.execute("vlan batch 10") == " " * len("<sw0>") + "^\n" + UNRECOGNIZED + "\n"  # user view
    cli.execute("system-view")
    before = cli.running_config()
    for line in ("frobnicate", "port hybrid pvid vlan 10", "vlan", "show running-config"):
        assert cli.execute(line).endswith(UNRECOGNIZED + "\n"), line
    assert cli.running_config() == before and cli.mode == "system"


def test_a_value_out_of_range_answers_wrong_parameter_under_the_word():
    cli = configured()
    assert cli.execute("vlan batch 10 4095") == " " * len("[sw0]vlan batch 10 ") + "^\n" + WRONG + "\n"
    for line in ("vlan batch 1 2 3 4 5 6 7 8 9 10 11", "mac-address aging-time 5", "interface GigabitEthernet0/0/9",
                 "mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan x"):
        reply = cli.execute(line)
        assert reply.endswith((WRONG + "\n", UNRECOGNIZED + "\n")), line
    assert cli.vlans == {1} and cli.mac_aging_s is None


def test_commands_vrp_refuses_in_this_state_print_an_error_and_change_nothing():
    cli = configured("vlan batch 10", "interface GigabitEthernet0/0/1")
    assert cli.execute("port hybrid untagged vlan 10").startswith("Error: The link type of the port")
    cli.execute("port link-type hybrid")
    assert cli.execute("port hybrid untagged vlan 11") == "Error: The VLAN 11 does not exist.\n"
    assert cli.execute("speed 100").startswith("Error: The speed cannot be configured when auto-negotiation")
    cli.execute("undo negotiation auto")
    assert cli.execute("speed 10000").endswith(WRONG + "\n")  # a GE port runs at 10/100/1000
    cli.execute("quit")
    assert cli.execute("mac-address static 0200-0000-0001 GigabitEthernet0/0/2 vlan 10") == \
        "Error: The interface GigabitEthernet0/0/2 does not belong to VLAN 10.\n"
    assert cli.execute("undo mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan 10") == \
        "Error: The MAC address entry does not exist.\n"
    port = cli.ports["GigabitEthernet0/0/1"]
    assert port["speed"] is None and port["untagged"] == {1} and not cli.statics
    cli.execute("interface GigabitEthernet0/0/1")
    cli.execute("port hybrid untagged vlan 10")
    assert cli.execute("port link-type trunk") == "Error: Please renew the default configurations.\n"
    assert port["link_type"] == "hybrid"


def test_the_renderers_configuration_pushed_with_the_cli_diff_is_held_and_replays():
    for fixture in ("sw0", "sw1"):
        text = (FIXTURES.parent / "platforms" / "huawei_vrp" / ("%s.txt" % fixture)).read_text()
        text = text.replace("speed 10000", "speed 1000")  # GigabitEthernet ports (see test above)
        interfaces = sorted(set(INTERFACES) | set(cli_diff.candidate_interfaces(text, "huawei_vrp")))
        cli = VrpCli(fixture, interfaces)
        commands = cli_diff.diff_commands("huawei_vrp", cli.running_config(), text)
        for _prompt, line, reply in run(cli, "system-view", *commands, "return"):
            assert reply in ("", "Enter system view, return user view with Ctrl+Z.\n"), (line, reply)
        assert cli.apply_due
        held = cli.running_config()
        assert huawei_vrp.parse(held, strict=False) == huawei_vrp.parse(text)
        assert cli_diff.diff_commands("huawei_vrp", held, text) == []
        assert VrpCli(fixture, interfaces, running_config=held).running_config() == held


def test_undo_forms_take_away_what_they_name():
    cli = configured("vlan batch 10 to 12", "interface GigabitEthernet0/0/1", "port link-type hybrid",
                     "undo port hybrid vlan 1", "port hybrid untagged vlan 10 11", "port hybrid tagged vlan 12",
                     "port hybrid pvid vlan 10", "quit",
                     "mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan 10",
                     "mac-address static 0200-0000-0002 GigabitEthernet0/0/1 vlan 11",
                     "stp disable", "mac-address aging-time 600")
    port = cli.ports["GigabitEthernet0/0/1"]
    run(cli, "interface GigabitEthernet0/0/1", "undo port hybrid vlan 10", "undo port hybrid pvid vlan", "quit")
    assert port["untagged"] == {11} and port["pvid"] == 1
    assert [entry[0] for entry in cli.statics] == [11]  # the entry in VLAN 10 went with the membership
    run(cli, "undo vlan batch 11 to 12", "stp enable", "undo stp enable", "undo mac-address aging-time")
    assert cli.vlans == {1, 10} and port["untagged"] == set() and port["tagged"] == set() and not cli.statics
    assert not cli.stp and cli.mac_aging_s is None
    assert "undo port hybrid vlan 1" in cli.running_config()


def test_keywords_may_be_shortened_and_interfaces_abbreviated():
    cli = VrpCli("sw0", INTERFACES)
    seen = run(cli, "sys", "int GE0/0/2", "undo shut", "dis this", "quit", "vlan bat 10", "dis cur")
    assert [prompt for prompt, _line, _reply in seen][:3] == ["<sw0>", "[sw0]", "[sw0-GigabitEthernet0/0/2]"]
    assert "interface GigabitEthernet0/0/2" in seen[3][2]
    assert "vlan batch 10" in seen[-1][2]
    assert cli.execute("un").endswith(UNRECOGNIZED + "\n")  # undo or untagged: ambiguous


def test_a_system_view_command_typed_in_an_interface_view_runs_there_and_leaves_it():
    cli = configured("vlan batch 10", "interface GigabitEthernet0/0/1", "port link-type hybrid",
                     "port hybrid untagged vlan 10")
    assert cli.execute("mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan 10") == ""
    assert cli.prompt() == "[sw0]" and cli.statics
    cli.execute("interface GigabitEthernet0/0/1")
    assert cli.execute("interface GigabitEthernet0/0/2") == "" and cli.prompt() == "[sw0-GigabitEthernet0/0/2]"
    assert cli.execute("frobnicate").endswith(UNRECOGNIZED + "\n")
    assert cli.prompt() == "[sw0-GigabitEthernet0/0/2]"  # an unknown command leaves the view as it was


def test_save_asks_y_n_and_saves_on_y():
    cli = configured("stp disable", "return")
    assert cli.execute("save").endswith("Are you sure to continue?[Y/N]")
    assert cli.prompt() == ""
    assert cli.execute("n") == "\n" and not cli.saved and cli.execute("display saved-configuration") == ""
    cli.execute("save")
    assert "Save the configuration successfully." in cli.execute("y") and cli.saved
    assert cli.execute("display saved-configuration") == cli.running_config()


def test_display_version_is_what_the_cliconf_plugin_reads():
    reply = VrpCli("sw0", INTERFACES).execute("display version")
    assert Cliconf.VERSION_RE.search(reply).group(1) == "5.170"
    assert Cliconf.MODEL_RE.search(reply).group(1) == "S5700-28C-HI"


def test_display_interface_brief_shows_the_data_planes_carrier_and_shutdown(vrp_dir):
    session = cli_emulator.Session(str(vrp_dir), shell=RecordedSwitch())
    for line in ("system-view", "interface GigabitEthernet0/0/2", "shutdown", "return"):
        session.feed(line)
    rows = {line.split()[0]: line.split()[1:3] for line in session.feed("display interface brief").splitlines()
            if line.startswith("GigabitEthernet")}
    # the recording: ports 1-3 LIVE; port 2 is shut down in the configuration
    assert rows == {"GigabitEthernet0/0/1": ["up", "up"], "GigabitEthernet0/0/2": ["*down", "down"],
                    "GigabitEthernet0/0/3": ["up", "up"]}
    detail = session.feed("display interface GigabitEthernet0/0/1")
    assert "current state : UP" in detail and "Speed : 1000," in detail  # the tc rate of p1: 1Gbit


def test_display_interface_brief_without_a_data_plane_shows_the_ports_down():
    rows = [line.split()[:3] for line in VrpCli("sw0", INTERFACES).execute("display interface brief").splitlines()
            if line.startswith("GigabitEthernet")]
    assert rows == [[name, "down", "down"] for name in INTERFACES]


def test_a_session_stores_the_configuration_and_applies_it_when_leaving_the_system_view(vrp_dir):
    shell = RecordedSwitch()
    session = cli_emulator.Session(str(vrp_dir), shell=shell)
    commands = cli_diff.diff_commands("huawei_vrp", session.cli.running_config(),
                                      huawei_vrp.render(ring3_sw1(), "sw1"))
    for line in ["system-view"] + commands:
        assert "Error" not in session.feed(line), line
    assert not (vrp_dir / "running-config").exists()
    assert session.feed("return") == "<sw1>"
    stored = (vrp_dir / "running-config").read_text()
    assert huawei_vrp.parse(stored, strict=False) == huawei_vrp.parse(huawei_vrp.render(ring3_sw1(), "sw1"))
    assert shell.writes == []  # the recording already holds this pipeline
    names = {str(port): "GigabitEthernet0/0/%d" % port for port in (1, 2, 3)}
    assert ovs.render(vrp_cli.ovs_entry(stored, names, "sw1"), "sw1")["flows"] == \
        ovs.render(dict(ring3_sw1(), platform="ovs"), "sw1")["flows"]
    assert cli_emulator.Session(str(vrp_dir), shell=shell).cli.running_config() == stored


def test_a_changed_port_reaches_the_data_plane(vrp_dir):
    shell = RecordedSwitch()
    (vrp_dir / "running-config").write_text(huawei_vrp.render(ring3_sw1(), "sw1"))
    session = cli_emulator.Session(str(vrp_dir), shell=shell)
    for line in ("system-view", "interface GigabitEthernet0/0/2", "shutdown", "return"):
        assert "Error" not in session.feed(line)
    assert len(shell.writes) == 1 and "mod-port br0 2 down" in shell.writes[0]


def test_the_lab_faults_apply_to_the_vrp_views(vrp_dir):
    (vrp_dir / "faults.json").write_text(json.dumps({"reject": ["vlan batch 100"], "drop_after": 2}))
    session = cli_emulator.Session(str(vrp_dir), shell=RecordedSwitch())
    session.feed("system-view")
    assert UNRECOGNIZED in session.feed("vlan batch 100") and 100 not in session.cli.vlans
    assert session.feed("vlan batch 101") == "[sw1]"
    assert session.feed("vlan batch 102") == "" and session.dropped  # the third line in the system view


def test_main_serves_the_vrp_banner_prompts_and_replies(vrp_dir, monkeypatch):
    monkeypatch.setenv("ETHERCLUSTER_CLI_DIR", str(vrp_dir))
    monkeypatch.setattr(cli_emulator, "_shell", RecordedSwitch())
    out = io.BytesIO()
    assert cli_emulator.main([], stdin=io.BytesIO(b"screen-length 0 temporary\r\nfoo\r\nquit\r\n"), stdout=out) == 0
    text = out.getvalue().decode()
    assert "emulated by the ethercluster.routing lab" in text
    assert text.endswith("<sw1>" + "Info: The configuration takes effect on the current user terminal interface only.\n"
                         "<sw1>" + " " * 5 + "^\n" + UNRECOGNIZED + "\n<sw1>")


def test_an_unknown_platform_has_no_emulated_cli(tmp_path):
    (tmp_path / "cli.json").write_text(json.dumps({"hostname": "sw9", "platform": "linux_bridge", "interfaces": {}}))
    with pytest.raises(cli_emulator.CliEmulatorError, match="no emulated CLI for platform 'linux_bridge'"):
        cli_emulator.Session(str(tmp_path))
