"""CliSession's commands in two halves (plugin_utils/connections.py
``begin`` / ``PendingCommand.result``) against a stand-in for the persistent
connection process: a Unix socket served with Ansible's own framing
(``send_data``/``recv_data``) and JSON-RPC server, one thread per call."""

import os
import socket
import threading
import time

import pytest
from ansible.module_utils.connection import Connection, ConnectionError, recv_data, send_data  # noqa: A004
from ansible.utils.jsonrpc import JsonRpcServer

from ansible_collections.ethercluster.routing.plugins.module_utils.power.session_pool import answers
from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    CliSession,
    SwitchConnectionError,
)


RACED = set()


class Device:
    """What the cliconf plugin answers: ``get(command)``; "sleep S text"
    answers ``text`` after S seconds, "fail text" raises, "hang" closes
    the socket without an answer."""

    def get(self, command=None):
        if command.startswith("sleep "):
            _word, seconds, text = command.split(" ", 2)
            time.sleep(float(seconds))
            return text
        if command.startswith("fail "):
            raise ConnectionError(command[5:], code=1)
        if command.startswith("race ") and command not in RACED:
            RACED.add(command)  # network_cli's read race, on the first session only
            raise ConnectionError("release unlocked lock", code=1)
        return "answer to %s" % command

    def close(self):
        """What the persistent process does on close (ends its SSH session)."""


class Server(JsonRpcServer):
    _objects = set()


class PersistentProcess:
    """A stand-in for ansible-connection listening on ``path``."""

    def __init__(self, path):
        self.path = path
        self.server = Server()
        self.server.register(Device())
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.calls = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                client, _address = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client):
        with client:
            request = recv_data(client)
            self.calls += 1
            if b'"hang"' in request:
                return
            send_data(client, self.server.handle_request(request).encode())

    def stop(self):
        self.listener.close()
        os.unlink(self.path)


class Session(CliSession):
    """A CliSession whose persistent connections are PersistentProcess stand-ins."""

    def __init__(self, directory, host):
        super().__init__(None, host, secrets=("s3cret",))
        self.directory = directory
        self.process = None

    def _open(self):
        if self._rpc is not None and not os.path.exists(self._rpc.socket_path):
            self._rpc = None
        if self._rpc is None:
            self.opened += 1
            self.process = PersistentProcess(os.path.join(self.directory, "%s-%d" % (self.host, self.opened)))
            self._rpc = Connection(self.process.path)
        return self._rpc


@pytest.fixture
def sessions(tmp_path):
    made = [Session(str(tmp_path), "sw%d" % number) for number in range(3)]
    yield made
    for session in made:
        if session.process is not None and os.path.exists(session.process.path):
            session.process.stop()


def test_a_command_is_sent_at_once_and_answered_later(sessions):
    started = time.monotonic()
    pending = {session.host: session.begin("sleep 0.6 %s" % session.host) for session in sessions}
    assert time.monotonic() - started < 0.4
    done = answers(pending)
    assert time.monotonic() - started < 1.5                 # the three calls ran at once
    assert {host: value[0] for host, value in done.items()} == {"sw0": "sw0", "sw1": "sw1", "sw2": "sw2"}
    assert sessions[0].command("show version") == "answer to show version"


def test_an_error_answer_names_the_switch_and_masks_secrets(sessions):
    with pytest.raises(SwitchConnectionError, match=r"^sw0: read failed: refused \*\*\*\*\*\*\*\*$"):
        sessions[0].begin("fail refused s3cret", "read").result()
    with pytest.raises(SwitchConnectionError, match="sw1: write failed: the persistent connection closed "
                                                    "without an answer"):
        sessions[1].begin("hang", "write").result()


def test_a_process_gone_before_the_answer_is_asked_for_gets_the_command_again(sessions):
    session = sessions[0]
    assert session.command("one") == "answer to one"
    first = session.process
    first.stop()                                            # its idle time ran out
    pending = session.begin("two")                          # sent into a new process
    assert pending.result() == "answer to two" and session.opened == 2 and session.process is not first


def test_a_process_that_ends_under_the_call_gets_the_command_once_more(sessions):
    session = sessions[0]
    session.command("set up")
    pending = session.begin("hang")                         # the process closes the socket unanswered
    session.process.stop()                                  # and is gone
    with pytest.raises(SwitchConnectionError, match="sw0: 'hang' failed: the persistent connection closed"):
        pending.result()                                    # sent again once: the new process hangs too
    assert session.opened == 2


class Pushed:
    """A persistent connection's ``edit_config`` that fails with ``errors`` in turn, then takes the lines."""

    def __init__(self, log, errors):
        self.log, self.errors = log, errors
        self.socket_path = __file__  # exists: the process is alive

    def edit_config(self, candidate=None):
        self.log.append(("edit_config", list(candidate)))
        if self.errors:
            raise ConnectionError(self.errors.pop(0), code=1)

    def close(self):
        self.log.append(("close",))


class Over(CliSession):
    """A CliSession whose persistent connections are ``connections``, in turn."""

    def __init__(self, connections):
        super().__init__(None, "sw5")
        self.connections = connections

    def _open(self):
        if self._rpc is None:
            self._rpc = self.connections.pop(0)
        return self._rpc


def _session_over(connections):
    return Over(connections)


def test_a_push_broken_by_network_clis_read_race_is_sent_again_on_a_new_session():
    log = []
    cli = _session_over([Pushed(log, ["release unlocked lock"]), Pushed(log, [])])
    cli.configure(["interface Gi1/0/4", "switchport general pvid 12"])
    assert log == [("edit_config", ["interface Gi1/0/4", "switchport general pvid 12"]), ("close",),
                   ("edit_config", ["interface Gi1/0/4", "switchport general pvid 12"])]


def test_a_refused_line_is_not_sent_again():
    log = []
    cli = _session_over([Pushed(log, ["sw5: line 2 refused: % Invalid input"]), Pushed(log, [])])
    with pytest.raises(SwitchConnectionError, match="sw5: configuration push of 1 line.*line 2 refused"):
        cli.configure(["vlan 12"])
    assert log == [("edit_config", ["vlan 12"])]


def test_the_race_twice_fails_naming_the_switch():
    log = []
    cli = _session_over([Pushed(log, ["release unlocked lock"]), Pushed(log, ["release unlocked lock"])])
    with pytest.raises(SwitchConnectionError, match="sw5: configuration push of 1 line.*release unlocked lock"):
        cli.configure(["vlan 12"])
    assert [entry[0] for entry in log] == ["edit_config", "close", "edit_config"]


def test_a_read_broken_by_network_clis_read_race_is_asked_again_on_a_new_session(sessions):
    session = sessions[0]
    assert session.command("race show vlan") == "answer to race show vlan"
    assert session.opened == 2
