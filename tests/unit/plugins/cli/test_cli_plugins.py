"""The cliconf and terminal plugins of dell_os6 and huawei_vrp
(plugins/cliconf, plugins/terminal): prompt and error patterns against what
the switches print, and the OS6 cliconf driven against the lab's OS6
emulator through a stand-in for network_cli's connection (send -> reply,
an error pattern in the reply -> AnsibleConnectionFailure, as network_cli
does)."""

import json

import pytest
from ansible.errors import AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.ethercluster.routing.plugins.cliconf import dell_os6 as os6_cliconf
from ansible_collections.ethercluster.routing.plugins.cliconf import huawei_vrp as vrp_cliconf
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import INVALID, Os6Cli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    dell_os6,
    huawei_vrp,
)
from ansible_collections.ethercluster.routing.plugins.terminal import dell_os6 as os6_terminal
from ansible_collections.ethercluster.routing.plugins.terminal import huawei_vrp as vrp_terminal

INTENT = {"platform": "dell_os6", "stp": False, "vlans": [10, 20],
          "ports": {"1": {"pvid": 10, "untagged": [10], "tagged": [20], "admin": "up", "speed_mbps": 1000},
                    "2": {"pvid": 20, "untagged": [20], "tagged": [], "admin": "up", "speed_mbps": 1000}},
          "static_macs": [{"mac": "02:00:00:00:00:01", "vlan": 10, "port": "1"}]}


def matches(patterns, text):
    return any(pattern.search(to_bytes(text)) for pattern in patterns)


# ------------------------------------------------------------------ terminal
@pytest.mark.parametrize("prompt", ["sw0>", "sw0#", "sw0(config)#", "sw0(config-vlan)#",
                                    "sw0(config-if-Gi1/0/1)#", "leaf-3.dc1#", "\r\nsw0# "])
def test_os6_prompts_are_recognised(prompt):
    assert matches(os6_terminal.TerminalModule.terminal_stdout_re, prompt)


def test_os6_output_is_not_taken_for_a_prompt_and_errors_are_errors():
    cli = Os6Cli("sw0", ["Gi1/0/1"], privileged=True)
    cli.execute("configure")
    cli.execute("no spanning-tree")
    for line in cli.running_config().splitlines() + cli.show_version().splitlines():
        assert not matches(os6_terminal.TerminalModule.terminal_stdout_re, line), line
        assert not matches(os6_terminal.TerminalModule.terminal_stderr_re, line), line
    assert matches(os6_terminal.TerminalModule.terminal_stderr_re, cli.execute("bogus"))
    cli.execute("interface Gi1/0/1")
    refused = cli.execute("switchport general pvid 10")
    assert refused.startswith("% Error") and matches(os6_terminal.TerminalModule.terminal_stderr_re, refused)


@pytest.mark.parametrize("prompt", ["<HUAWEI>", "[HUAWEI]", "[HUAWEI-GigabitEthernet0/0/1]", "[sw0-vlan10]",
                                    "[~HUAWEI]", "[*HUAWEI-GigabitEthernet0/0/1]"])
def test_vrp_prompts_are_recognised(prompt):
    assert matches(vrp_terminal.TerminalModule.terminal_stdout_re, prompt)


def test_vrp_errors_and_plain_lines():
    errors = vrp_terminal.TerminalModule.terminal_stderr_re
    assert matches(errors, "                ^\nError: Unrecognized command found at '^' position.")
    assert matches(errors, "Error: Wrong parameter found at '^' position.")
    for line in huawei_vrp.render(INTENT, "sw0").splitlines():
        assert not matches(errors, line), line
        assert not matches(vrp_terminal.TerminalModule.terminal_stdout_re, line), line


class FakeTerminalConnection:
    def __init__(self, prompt):
        self.prompt = prompt
        self.sent = []

    def exec_command(self, command):
        self.sent.append(command)
        if command.startswith(b"{") and json.loads(command)["command"] == "enable":
            self.prompt = b"sw0#"
        return b""

    def get_prompt(self):
        return self.prompt


def test_os6_terminal_turns_paging_off_and_enables():
    connection = FakeTerminalConnection(b"sw0>")
    terminal = os6_terminal.TerminalModule(connection)
    terminal.on_open_shell()
    terminal.on_become(passwd="secret")
    assert connection.sent[0] == b"terminal length 0"
    enable = json.loads(connection.sent[1])
    assert enable["command"] == "enable" and enable["answer"] == "secret" and "assword" in enable["prompt"]
    terminal.on_unbecome()
    assert connection.sent[-1] == b"disable"


def test_os6_terminal_fails_when_enable_does_not_reach_privileged_mode():
    connection = FakeTerminalConnection(b"sw0>")
    connection.exec_command = lambda command: connection.sent.append(command) or b""
    with pytest.raises(AnsibleConnectionFailure, match=r"still at prompt \[sw0>\]"):
        os6_terminal.TerminalModule(connection).on_become()


# ------------------------------------------------------------------- cliconf
class EmulatorConnection:
    """What network_cli gives a cliconf plugin, over the OS6 emulator."""

    def __init__(self, cli):
        self.cli = cli
        self.sent = []
        self.errors = os6_terminal.TerminalModule.terminal_stderr_re

    def send(self, command, prompt=None, answer=None, **kwargs):
        command = to_text(command)
        self.sent.append(command)
        reply = self.cli.execute(command)
        if prompt is not None and self.cli.prompt() == "":
            reply += self.cli.execute(to_text(answer))
        if matches(self.errors, reply):
            raise AnsibleConnectionFailure(reply.strip())
        return reply

    def get_prompt(self):
        return to_bytes(self.cli.prompt())

    def queue_message(self, *args):
        pass


@pytest.fixture
def switch():
    cli = Os6Cli("sw0", ["Gi1/0/1", "Gi1/0/2", "Gi1/0/3"], privileged=True)
    return cli, EmulatorConnection(cli)


def test_os6_cliconf_pushes_the_diff_and_then_finds_nothing_to_do(switch):
    cli, connection = switch
    cliconf = os6_cliconf.Cliconf(connection)
    candidate = dell_os6.render(INTENT, "sw0")
    diff = cliconf.get_diff(candidate=candidate, running=cliconf.get_config())
    commands = diff["config_diff"].split("\n")
    assert commands[0] == "no spanning-tree" and diff["banner_diff"] == {}
    result = cliconf.edit_config(candidate=commands)
    assert result["request"] == commands
    assert connection.sent[len(connection.sent) - len(commands) - 2] == "configure"
    assert connection.sent[-1] == "end" and cli.mode == "exec"
    assert dell_os6.parse(cliconf.get_config()) == dell_os6.parse(candidate)
    assert cliconf.get_diff(candidate=candidate, running=cliconf.get_config())["config_diff"] == ""


def test_os6_cliconf_returns_to_exec_mode_when_a_line_is_refused(switch):
    cli, connection = switch
    cliconf = os6_cliconf.Cliconf(connection)
    with pytest.raises(AnsibleConnectionFailure, match="Invalid input"):
        cliconf.edit_config(candidate="no spanning-tree\ninterface Gi1/0/9\n")
    assert connection.sent[-1] == "end" and cli.mode == "exec"


def test_os6_cliconf_needs_enable_for_the_configuration(switch):
    cli, connection = switch
    cli.mode = "user"
    with pytest.raises(Exception, match="privilege escalation"):
        os6_cliconf.Cliconf(connection).get_config()


def test_os6_cliconf_capabilities_and_device_info(switch):
    cliconf = os6_cliconf.Cliconf(switch[1])
    capabilities = json.loads(cliconf.get_capabilities())
    assert capabilities["device_operations"]["supports_generate_diff"] is True
    assert capabilities["device_operations"]["supports_onbox_diff"] is False
    assert {"get_diff", "run_commands", "edit_config", "get_config"} <= set(capabilities["rpc"])
    assert capabilities["device_info"] == {"network_os": "ethercluster.routing.dell_os6",
                                           "network_os_version": "6.6.3.10", "network_os_model": "N1548",
                                           "network_os_hostname": "sw0"}


def test_os6_cliconf_saving_answers_the_question(switch):
    cli, connection = switch
    cliconf = os6_cliconf.Cliconf(connection)
    reply = cliconf.run_commands([{"command": "copy running-config startup-config", "prompt": r"\(y/n\)",
                                   "answer": "y"}])
    assert "Configuration Saved!" in reply[0] and cli.startup_config == cli.running_config()


def test_get_diff_with_diff_match_none_sends_the_candidate_as_is(switch):
    cliconf = os6_cliconf.Cliconf(switch[1])
    diff = cliconf.get_diff(candidate="! comment\nno spanning-tree\n\n", running="", diff_match="none")
    assert diff["config_diff"] == "no spanning-tree"


def test_get_diff_of_unreadable_text_is_a_value_error_naming_the_line(switch):
    cliconf = os6_cliconf.Cliconf(switch[1])
    with pytest.raises(ValueError, match="line 2"):
        cliconf.get_diff(candidate="vlan database\nvlan 9-3\nexit\n", running="")


def test_vrp_cliconf_diffs_with_vrp_commands_in_the_system_view():
    sent = []

    class VrpConnection:
        def send(self, command, **kwargs):
            sent.append(to_text(command))
            return b""

        def get_prompt(self):
            return b"<HUAWEI>"

    cliconf = vrp_cliconf.Cliconf(VrpConnection())
    candidate = huawei_vrp.render(INTENT, "sw0")
    commands = cliconf.get_diff(candidate=candidate, running="")["config_diff"].split("\n")
    assert commands[:2] == ["stp disable", "vlan batch 10 20"]
    cliconf.edit_config(candidate=commands)
    assert sent[0] == "system-view" and sent[-1] == "return" and sent[1:-1] == commands
    cliconf.get_config()
    assert sent[-1] == "display current-configuration"
    assert cliconf.get_diff(candidate=candidate, running=candidate)["config_diff"] == ""
    assert INVALID not in " ".join(sent)


def test_vrp_device_info_reads_display_version_and_the_prompt():
    asked = []

    class VrpConnection:
        def send(self, command, **kwargs):
            asked.append(to_text(command))
            return (b"Huawei Versatile Routing Platform Software\n"
                    b"VRP (R) software, Version 5.170 (S5720 V200R019C10SPC500)\n"
                    b"HUAWEI S5720-28X-SI-AC Routing Switch uptime is 0 week, 1 day\n")

        def get_prompt(self):
            return b"<coresw1>"

    info = vrp_cliconf.Cliconf(VrpConnection()).get_device_info()
    assert asked == ["display version"]
    assert info == {"network_os": "ethercluster.routing.huawei_vrp", "network_os_version": "5.170",
                    "network_os_model": "S5720-28X-SI-AC", "network_os_hostname": "coresw1"}
