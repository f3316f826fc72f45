"""A session the switch ended before it answered (plugin_utils/cli_answers.py):
the real ``network_cli`` ``send`` over a paramiko channel that met EOF
returns the text "None"; the collection's cliconf plugins (dell_os6,
huawei_vrp, posix_shell) raise a connection error naming the command
instead and close the dead session, while an answer with its prompt
passes through unchanged; a push (edit_config) cut off that way names its
line and does not try to leave the configuration mode of a session that is
gone.

The plugins are loaded by Ansible's plugin loader, as network_cli loads
them, in a Python process of their own: the loader installs Ansible's
collection finder for the whole process, which the other tests must not
inherit."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parents[4] / ".build"    # conftest.py's symlink tree: the checkout's plugins

SCRIPT = r'''
import json, sys
import paramiko
from ansible.errors import AnsibleConnectionFailure
from ansible.playbook.play_context import PlayContext
from ansible.plugins.loader import connection_loader, init_plugin_loader, terminal_loader

init_plugin_loader([sys.argv[1]])


class Channel(paramiko.Channel):
    """A paramiko channel without a transport: it replays ``replies`` to
    ``recv``, then meets the end of the stream as paramiko does (EOF)."""

    def __init__(self, replies=()):
        super().__init__(0)
        self.replies = list(replies)
        self.sent = []

    def sendall(self, data):
        self.sent.append(data.decode())

    def settimeout(self, timeout):
        pass

    def recv(self, nbytes):
        if self.replies:
            return self.replies.pop(0)
        self._handle_eof(None)       # what paramiko's transport calls when the server ends the channel
        return b""


class Transport:
    """network_cli's SSH connection under the shell (paramiko's, never connected here)."""

    def close(self):
        pass


def network_cli(network_os, channel):
    context = PlayContext()
    context.network_os = network_os
    connection = connection_loader.get("ansible.netcommon.network_cli", context, "/dev/null")
    connection.set_options(var_options={"ansible_network_os": network_os, "ansible_buffer_read_timeout": 0})
    connection._terminal = terminal_loader.get(network_os, connection)
    connection._ssh_shell = channel
    connection._ssh_type_conn = Transport()
    connection._connected = True
    return connection


results = []
for case in json.loads(sys.stdin.read()):
    channel = Channel([reply.encode() for reply in case["replies"]])
    connection = network_cli(case["network_os"], channel)
    result = {"sent": channel.sent}
    try:
        if case["call"] == "send":
            result["answer"] = connection.send(case["command"].encode())
        elif case["call"] == "edit_config":
            result["answer"] = connection.cliconf.edit_config(candidate=case["command"])
        elif case["call"] == "run_commands":
            result["answer"] = connection.cliconf.run_commands([case["command"]])
        else:
            result["answer"] = connection.cliconf.get(command=case["command"])
    except AnsibleConnectionFailure as exc:
        result["error"] = str(exc)
    result.update(connected=connection._connected, shell_open=connection._ssh_shell is not None)
    results.append(result)
print(json.dumps(results))
'''


def run(cases):
    """Each case (network_os, call, command, replies) through the real network_cli."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(BUILD)], input=json.dumps(cases), text=True,
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


ENDED = [("ethercluster.routing.dell_os6", "get", "show reload"),
         ("ethercluster.routing.huawei_vrp", "get", "display configuration trial status"),
         ("ethercluster.routing.huawei_vrp", "run_commands", "display version"),
         ("ethercluster.routing.posix_shell", "get", "ovs-ofctl dump-flows br0")]
ANSWERED = [("ethercluster.routing.dell_os6", "show reload\r\nNo reload is scheduled.\r\nsw0#",
             "No reload is scheduled."),
            ("ethercluster.routing.huawei_vrp", "display configuration trial status\r\nNo trial is running.\r\n<sw0>",
             "No trial is running.")]


@pytest.fixture(scope="module")
def results():
    cases = [{"network_os": "ethercluster.routing.dell_os6", "call": "send", "command": "show reload", "replies": []}]
    cases += [{"network_os": os, "call": call, "command": command, "replies": []} for os, call, command in ENDED]
    cases += [{"network_os": os, "call": "get", "command": reply.split("\r\n", maxsplit=1)[0], "replies": [reply]}
              for os, reply, _output in ANSWERED]
    return run(cases)


def test_network_cli_answers_the_text_none_when_the_switch_ended_the_session(results):
    # the upstream behaviour the guard exists for: no error, the text "None"
    assert results[0]["answer"] == "None" and "error" not in results[0]


@pytest.mark.parametrize("position", range(len(ENDED)))
def test_an_ended_session_is_an_error_naming_the_command_and_is_closed(results, position):
    _network_os, _call, command = ENDED[position]
    result = results[1 + position]
    assert "answer" not in result
    assert result["error"].startswith("the switch ended the session before answering '%s'" % command)
    assert result["sent"] == [command + "\r"]
    # closed: network_cli opens a new session for the next command
    assert not result["connected"] and not result["shell_open"]


@pytest.mark.parametrize("position", range(len(ANSWERED)))
def test_an_answer_with_its_prompt_passes_through(results, position):
    result = results[1 + len(ENDED) + position]
    assert result.get("answer") == ANSWERED[position][2], result
    assert result["connected"] and result["shell_open"]


def test_a_push_the_switch_cut_off_names_its_line_and_sends_nothing_more():
    lines = ["vlan batch 10", "stp disable", "interface GigabitEthernet0/0/1"]
    [result] = run([{"network_os": "ethercluster.routing.huawei_vrp", "call": "edit_config",
                     "command": "\n".join(lines), "replies": ["system-view\r\n[sw0]", "vlan batch 10\r\n[sw0]"]}])
    assert result["error"] == ("line 2 of 3 ('stp disable') failed: the switch ended the session before answering; "
                               "the 1 line(s) before it were taken, none after it was sent")
    # no "return" on a new session: the configuration mode went with the old one
    assert result["sent"] == ["system-view\r", "vlan batch 10\r", "stp disable\r"]
    assert not result["connected"]
