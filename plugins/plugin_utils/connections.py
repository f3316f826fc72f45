# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shell scripts on a switch through Ansible's own connection plugins.

The OVS and Linux platforms are driven by shell scripts (one read, one
write). An action plugin reaches a switch the way Ansible reaches any host:
the connection plugin the inventory names (``ansible_connection``, default
``ssh``), set up from that host's variables as ``TaskExecutor`` sets up the
connection of a task on it, so ``ansible_user``, ``ansible_password``,
``ansible_port``, ``ansible_ssh_private_key_file``, ``ansible_ssh_common_args``
(ProxyJump, known hosts files), ``ansible_become*`` and host key checking
mean what they mean for any task.

:func:`connection_session` opens a session to any inventory host (the
fabric-wide actions: one per switch, used from worker threads);
:func:`task_session` wraps the connection Ansible already opened for the
task's own host (``ovs_switch``). Both return a :class:`ScriptSession`:
``run(script, what, timeout=None) -> stdout`` and ``close()``.

CLI switches (``dell_os6``, ``huawei_vrp``) are reached the same way over
the connection their inventory names, ``ansible.netcommon.network_cli``
with the collection's cliconf and terminal plugins (``ansible_network_os``):
:func:`cli_session` sets it up in the controller's process, as
a task's connection is set up, and returns a :class:`CliSession`:
``command(text) -> output``, ``configure(lines)`` and ``close()``.

:func:`shell_session` keeps a shell open on an ``ssh`` host over that same
``network_cli`` machinery (the ``posix_shell`` terminal and cliconf
plugins) and returns a :class:`ShellSession` with ``run`` and ``close``
as a :class:`ScriptSession` has them: a script is then a line over an
open channel, not an SSH session (the failover responder's pushes).

A script goes in on the standard input of ``/bin/sh -s``, not on the
command line, so its size is not bound by the 128 KiB limit of one
argument (a switch's flow table can be larger). When a become method
cannot take standard input (``su``, or any become without pipelining, as
for Ansible's own modules) the script is copied to a private temporary
directory with the connection's ``put_file`` and run from there.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shlex
import socket
import tempfile
import threading
import uuid
from typing import Any

from ansible import constants as C
from ansible.errors import AnsibleError, AnsibleValueOmittedError
from ansible.module_utils.connection import Connection, ConnectionError  # pylint: disable=redefined-builtin
from ansible.module_utils.connection import recv_data, request_builder, send_data
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.playbook.play_context import PlayContext
from ansible.plugins.loader import become_loader, connection_loader

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError

# connection plugins that talk to a device's CLI or API, not to a shell
NOT_A_SHELL = ("network_cli", "httpapi", "netconf", "libssh")
# exit status of coreutils/busybox timeout when the time limit ran out
TIMED_OUT = 124
# stderr kept in an error message
STDERR_CHARS = 800
MASK = "********"
# how long a CLI switch's persistent connection may stay idle (seconds) at least
CLI_IDLE_S = 600
# a kept shell's persistent connection: idle between failures for hours (the responder pings it)
SHELL_IDLE_S = 3600
# how much longer network_cli waits for a kept shell's answer than the script may run (seconds)
SHELL_TIMEOUT_MARGIN_S = 30
# connection plugins whose host a kept shell reaches the same way (network_cli over paramiko)
KEPT_SHELL_TRANSPORTS = ("ssh", "paramiko_ssh", "paramiko")
# a terminal in canonical mode holds at most 4095 bytes of one line
MAX_SHELL_LINE = 4000

# Plugin loading and option resolution go through process-wide caches of
# Ansible's loader and config manager: set up one connection at a time.
# Running scripts needs no lock (one connection object per switch).
_SETUP_LOCK = threading.Lock()


class SwitchConnectionError(EtherclusterError):
    """A switch cannot be reached, refuses the login or become, or a script
    fails on it (the message names the switch and the step; no secrets)."""


class _TaskKeywords:
    """The action's task as TaskExecutor reads it to set up a connection,
    without its delegation: the switch is the target, not the host the task
    is delegated to (``delegate_to`` would make the play context read that
    host's variables)."""

    delegate_to = None

    def __init__(self, task: Any) -> None:
        self._task = task

    def __getattr__(self, name: str) -> Any:
        return getattr(self._task, name)

    def dump_attrs(self) -> dict:
        attrs = self._task.dump_attrs()
        attrs["delegate_to"] = None
        return attrs


class ScriptSession:
    """Shell scripts on one host over an Ansible connection plugin.

    ``connection`` is a set-up connection plugin (options, shell and become
    plugins set); ``host`` names the switch in messages; ``timeout`` is the
    default time limit of one script in seconds; ``secrets`` are masked in
    every message; ``owned=False`` leaves closing the connection to Ansible
    (the task's own). One session is used by one thread at a time."""

    def __init__(self, connection: Any, host: str, timeout: float = 30.0,
                 secrets: tuple = (), owned: bool = True) -> None:
        self.connection = connection
        self.host = host
        self.timeout = float(timeout)
        self.owned = owned
        self._secrets = sorted({to_text(value) for value in secrets if value}, key=len, reverse=True)

    def __enter__(self) -> ScriptSession:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # ------------------------------------------------------------ public
    def run(self, script: str, what: str = "script", timeout: float | None = None) -> str:
        """Run ``script`` with ``/bin/sh`` on the host; return its standard
        output. Raise SwitchConnectionError naming the host and ``what``
        when the host cannot be reached, become fails, the script exits
        non-zero or runs longer than ``timeout`` seconds (default: the
        session's)."""
        limit = float(timeout or self.timeout)
        try:
            if self._use_stdin():
                rc, out, err = self._execute(self._time_limited("/bin/sh -s", limit),
                                             to_bytes(script))
            else:
                rc, out, err = self._run_copied(script, limit)
        except (AnsibleError, OSError) as exc:
            raise SwitchConnectionError(self._masked("%s: %s failed: %s" % (self.host, what, exc)))
        if rc == TIMED_OUT:
            raise SwitchConnectionError(self._masked(
                "%s: %s failed: no answer within %g s (exit code %d): %s"
                % (self.host, what, limit, rc, self._condensed(err))))
        if rc != 0:
            raise SwitchConnectionError(self._masked("%s: %s failed with exit code %d: %s"
                                                     % (self.host, what, rc, self._condensed(err))))
        return out

    def close(self) -> None:
        """Close the connection when the session opened it (an ssh
        ControlPersist master stays, as after any task)."""
        if self.owned:
            self.connection.close()

    # ----------------------------------------------------------- helpers
    def _become_active(self) -> bool:
        # the rule of ActionBase._low_level_execute_command: become applies when
        # the users differ (or become_allow_same_user) and the transport is a shell
        become = self.connection.become
        if not become:
            return False
        remote_user = self._remote_user()
        become_user = become.get_option("become_user")
        return bool(C.BECOME_ALLOW_SAME_USER or become_user != remote_user
                    or not any((remote_user, become_user)))

    def _remote_user(self) -> str | None:
        try:
            return self.connection.get_option("remote_user")
        except KeyError:
            return getattr(self.connection, "default_user", None) \
                or self.connection._play_context.remote_user  # pylint: disable=protected-access

    def _use_stdin(self) -> bool:
        # as for Ansible's modules: standard input under become only with pipelining
        # (a become password prompt or su's terminal would take the script's bytes)
        return not self._become_active() or self.connection.is_pipelining_enabled()

    @staticmethod
    def _time_limited(command: str, limit: float) -> str:
        # the remote end stops the script: the connection plugins bound only
        # connecting. "timeout 1 true" tells coreutils/modern busybox from
        # hosts without timeout(1) or with old busybox's "timeout -t SECS"
        return ("if timeout 1 true >/dev/null 2>&1; then exec timeout %s %s; else exec %s; fi"
                % (_seconds(limit), command, command))

    def _execute(self, command: str, in_data: bytes | None = None, sudoable: bool = True) -> tuple:
        """``exec_command`` wrapped as ``ActionBase._low_level_execute_command``
        wraps it: become, then the shell executable; BECOME-SUCCESS stripped."""
        connection = self.connection
        shell = connection._shell  # pylint: disable=protected-access
        if sudoable and self._become_active():
            command = connection.become.build_become_command(command, shell)
        if connection.allow_executable:
            executable = connection._play_context.executable  # pylint: disable=protected-access
            # ActionBase's mitigation of the ssh race that can drop stdout (ansible#13876)
            command = shell.append_command(command, "sleep 0")
            if executable:
                command = "%s -c %s" % (executable, shlex.quote(command))
        rc, out, err = connection.exec_command(command, in_data=in_data, sudoable=sudoable)
        out = _text(out)
        if out.strip().startswith("BECOME-SUCCESS-"):
            out = re.sub(r"^((\r)?\n)?BECOME-SUCCESS.*(\r)?\n", "", out)
        return (0 if rc is None else rc), out, _text(err)

    def _run_copied(self, script: str, limit: float) -> tuple:
        """Copy the script into a private temporary directory (as the login
        user), run it with become, remove the directory."""
        become = self.connection.become
        shell = self.connection._shell  # pylint: disable=protected-access
        become_user = become.get_option("become_user")
        admins = shell.get_option("admin_users") if "admin_users" in shell.get_options() else ["root"]
        if become_user not in admins:
            # the private directory is not readable by another unprivileged user
            raise SwitchConnectionError(
                "%s: become_method %s cannot take the script on its standard input and "
                "become_user %s cannot read the login user's private temporary files: enable "
                "pipelining for this host (ansible_pipelining: true) with a become method that "
                "supports it (sudo), or become root" % (self.host, become.name, become_user))
        base = "ethercluster-%s" % uuid.uuid4().hex
        rc, out, err = self._execute(shell.mkdtemp(basefile=base, system=False), sudoable=False)
        found = re.search(r"^%s=(.+)$" % re.escape(base), out, re.MULTILINE)
        if rc != 0 or not found:
            raise AnsibleError("cannot create a temporary directory: %s" % self._condensed(err or out))
        directory = found.group(1).strip()
        try:
            remote = shell.join_path(directory, "script.sh")
            handle, local = tempfile.mkstemp(prefix="ethercluster-script-")
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(to_bytes(script))
                self.connection.put_file(local, remote)
            finally:
                os.unlink(local)
            return self._execute(self._time_limited("/bin/sh %s" % shlex.quote(remote), limit))
        finally:
            try:
                self._execute(shell.remove(directory, recurse=True), sudoable=False)
            except AnsibleError:
                pass  # best effort: the script's own outcome is what the caller needs

    def _masked(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    @staticmethod
    def _condensed(text: str) -> str:
        return " ".join(text.split())[:STDERR_CHARS] or "no output"


def _seconds(value: float) -> str:
    return ("%.3f" % value).rstrip("0").rstrip(".")


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return to_text(value, errors="surrogate_then_replace")
    if isinstance(value, str):
        return value
    return to_text(b"".join(value.readlines()), errors="surrogate_then_replace")


# ----------------------------------------------------------------- opening
def host_variables(task_vars: dict, host: str) -> dict:
    """The variables Ansible would give a task on inventory host ``host``:
    the current host's task variables when it is the task's host, else its
    ``hostvars`` entry untemplated (inventory, group_vars/host_vars, facts,
    extra vars). Raises SwitchConnectionError when the inventory lacks it."""
    if host == task_vars.get("inventory_hostname"):
        return dict(task_vars)
    hostvars = task_vars.get("hostvars") or {}
    if host not in hostvars:
        raise SwitchConnectionError("%s: not a host of the inventory; give the inventory (-i) that "
                                    "holds the switch and its connection variables" % host)
    raw_get = getattr(hostvars, "raw_get", None)
    return dict(raw_get(host) if raw_get is not None else hostvars[host])


def connection_session(action: Any, task_vars: dict, host: str, timeout: float = 30.0,
                       host_key_checking: bool | None = None) -> ScriptSession:
    """A :class:`ScriptSession` to inventory host ``host`` over the
    connection plugin its variables name (``ansible_connection``, default
    Ansible's default transport, ``ssh``), set up from its variables and
    the task's keywords (``remote_user``, ``become``...) the way
    ``TaskExecutor`` sets up a task's connection. ``action`` is the calling
    action plugin; ``timeout`` the time limit of one script;
    ``host_key_checking=False`` turns host key checking off (None keeps
    Ansible's setting). Nothing is connected until the first script."""
    variables = host_variables(task_vars, host)
    templar = action._templar.copy_with_new_env(available_variables=variables)  # pylint: disable=protected-access
    task = _TaskKeywords(action._task)  # pylint: disable=protected-access
    with _SETUP_LOCK:
        try:
            connection, play_context = _set_up(action, task, templar, variables, host, task_vars)
        except SwitchConnectionError:
            raise
        except AnsibleError as exc:
            raise SwitchConnectionError("%s: cannot set up its connection: %s" % (host, exc))
        if host_key_checking is not None and "host_key_checking" in connection.get_options():
            connection.set_option("host_key_checking", host_key_checking)
    return ScriptSession(connection, host, timeout, secrets=_secrets(connection, play_context))


class CliSession:
    """Commands on a CLI switch over a set-up ``network_cli`` connection,
    run as Ansible runs it for a task: in a persistent connection process
    (``ansible-connection``, started on first use with the connection's
    options and play context) whose cliconf plugin answers ``get`` (a
    command) and ``edit_config`` (configuration lines) over its socket, so
    sessions may be used from worker threads. ``secrets`` are masked in
    every message. One session is used by one thread at a time."""

    def __init__(self, connection: Any, host: str, secrets: tuple = (), task_uuid: str = "") -> None:
        self.connection = connection
        self.host = host
        self.task_uuid = task_uuid
        self._rpc: Any = None
        self.opened = 0   # persistent connections started (a new one is a new shell)
        self._secrets = sorted({to_text(value) for value in secrets if value}, key=len, reverse=True)

    def _open(self) -> Any:
        if self._rpc is not None and not os.path.exists(self._rpc.socket_path):
            # the persistent process ended after its idle time (persistent_connect_timeout)
            # while the transition was being planned: start another, as the next task would
            self._rpc = None
        if self._rpc is None:
            # TaskExecutor's way to a persistent connection (loaded when used: controller only)
            from ansible.executor.task_executor import start_connection  # pylint: disable=import-outside-toplevel
            socket_path = start_connection(self.connection._play_context,  # pylint: disable=protected-access
                                           self.connection.get_options(), self.task_uuid)
            self._rpc = Connection(socket_path)
            self.opened += 1
        return self._rpc

    def command(self, text: str, what: str | None = None) -> str:
        """Run one exec-mode command; its output. SwitchConnectionError
        naming the host and the command when it fails."""
        return self.begin(text, what).result()

    def begin(self, text: str, what: str | None = None) -> PendingCommand:
        """Send one exec-mode command and return at once: its
        :meth:`PendingCommand.result` waits for the output (so commands
        on several switches run at once from one thread). Errors as
        :meth:`command`'s."""
        return PendingCommand(self, text, what)

    def configure(self, lines: list) -> None:
        """Send ``lines`` in configuration mode (the cliconf plugin enters
        and leaves it, and names a refused line). When network_cli's own
        read was broken by its timer (:func:`read_interrupted`), the lines
        are sent once more on a new SSH session: they are whole statements,
        so those already applied apply again unchanged."""
        try:
            try:
                self._open().edit_config(candidate=list(lines))
            except ConnectionError as exc:
                if not read_interrupted(exc):
                    raise
                self.close()
                self._open().edit_config(candidate=list(lines))
        except (AnsibleError, ConnectionError, OSError, ValueError) as exc:
            raise SwitchConnectionError(self._masked("%s: configuration push of %d line(s) failed: %s"
                                                     % (self.host, len(lines), exc)))

    def close(self) -> None:
        """Close the CLI session (the persistent process ends with it)."""
        rpc, self._rpc = self._rpc, None
        if rpc is not None:
            rpc.close()

    def _masked(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text


# What the persistent process answers when network_cli's wait for more output
# after a prompt (a SIGALRM timer of persistent_buffer_read_timeout whose handler
# raises inside paramiko's Channel.recv) lands while paramiko re-takes its buffer
# lock: the lock's ``finally`` then releases a lock it does not hold and this
# RuntimeError replaces the timer's exception. Seen once in 16 CLI pushes of a
# link-off under load (CI, 2026-11-28); the SSH channel is left in an unknown state.
# The same timer can also leave that lock held, and the session then hangs (no
# answer at all: ansible/ansible#47965). A buffer read timeout of 0 arms no timer
# (the lab's CLIs use it; docs/platforms.md); this answer is retried for switches
# that need one.
NETWORK_CLI_READ_RACE = "release unlocked lock"


def read_interrupted(exc: BaseException) -> bool:
    """Whether a persistent connection's error is network_cli's read race
    (:data:`NETWORK_CLI_READ_RACE`), not the switch's answer."""
    return str(exc).strip() == NETWORK_CLI_READ_RACE


class _RpcCall:
    """One JSON-RPC call to a persistent connection process, in two halves:
    the request is sent when made, :meth:`result` reads the response
    (``Connection.__rpc__``'s protocol: the same framing, id check and
    error). ``fileno()``: the socket, for waiting on several calls."""

    def __init__(self, socket_path: str, method: str, **params: Any) -> None:
        self.request = request_builder(method, **params)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(socket_path)
            send_data(self.sock, to_bytes(json.dumps(self.request)))
        except OSError:
            self.sock.close()
            raise

    def fileno(self) -> int:
        return self.sock.fileno()

    def result(self) -> Any:
        try:
            raw = recv_data(self.sock)
        finally:
            self.sock.close()
        if raw is None:
            raise ConnectionError("the persistent connection closed without an answer")
        response = json.loads(to_text(raw, errors="surrogate_or_strict"))
        if response.get("id") != self.request["id"]:
            raise ConnectionError("invalid json-rpc id received")
        if "error" in response:
            error = response["error"]
            raise ConnectionError(to_text(error.get("data") or error["message"], errors="surrogate_then_replace"),
                                  code=error["code"])
        if "result_type" in response:
            return pickle.loads(to_bytes(response["result"], errors="surrogateescape"))
        return response["result"]


class PendingCommand:
    """A command sent to a :class:`CliSession` whose output is not read
    yet (:meth:`CliSession.begin`); ``fileno()`` becomes readable when the
    answer is there, :meth:`result` reads it."""

    def __init__(self, cli: CliSession, text: str, what: str | None) -> None:
        self.cli, self.text, self.what = cli, text, what
        self._call: _RpcCall | None = None
        try:
            self._call = self._send()
        except (AnsibleError, ConnectionError, OSError, ValueError) as exc:
            if not self._ended():
                raise self._failed(exc) from None
            # the process ended when it was reached (its idle time ran out): result() sends again

    def _send(self) -> _RpcCall:
        return _RpcCall(self.cli._open().socket_path, "get", command=self.text)  # pylint: disable=protected-access

    def _ended(self) -> bool:
        rpc = self.cli._rpc  # pylint: disable=protected-access
        return rpc is not None and not os.path.exists(rpc.socket_path)

    def _failed(self, exc: BaseException) -> SwitchConnectionError:
        return SwitchConnectionError(self.cli._masked(  # pylint: disable=protected-access
            "%s: %s failed: %s" % (self.cli.host, self.what or repr(self.text), exc)))

    def fileno(self) -> int:
        """The socket the answer comes on (-1 when it is sent again by :meth:`result`)."""
        return self._call.fileno() if self._call is not None else -1

    def result(self) -> str:
        """The command's output (waits for it)."""
        try:
            try:
                if self._call is None:
                    self._call = self._send()
                return to_text(self._call.result(), errors="surrogate_then_replace")
            except (ConnectionError, OSError) as exc:
                if read_interrupted(exc):
                    self.cli.close()  # its SSH channel is in an unknown state
                elif not self._ended():
                    raise
                # the process ended under the call (its idle time ran out), or network_cli's
                # read race broke it: a command only reads, so it runs once more on a new connection
                self._call = self._send()
                return to_text(self._call.result(), errors="surrogate_then_replace")
        except (AnsibleError, ConnectionError, OSError, ValueError) as exc:
            raise self._failed(exc) from None


class ShellSession:
    """Shell scripts on one host through a kept shell: a :class:`CliSession`
    over ``ansible.netcommon.network_cli`` with the ``posix_shell`` plugins
    (:func:`shell_session`). ``run(script, what, timeout)`` means what
    :meth:`ScriptSession.run` means (standard output; SwitchConnectionError
    naming the host and ``what`` on a non-zero exit status or a timeout),
    but costs a line over an open channel instead of an SSH session (on a
    loaded lab switch 0.01-0.06 s against 0.15-0.3 s). Each script runs in
    its own ``sh -s`` (its ``set -e`` or ``exit`` ends that shell, not the
    kept one), fed as a here-document, under ``timeout`` where the host has
    it; its standard error goes to a private file, printed after the exit
    status when it failed. Thread-safe (one script at a time). After a
    failure the shell is closed and the next script opens another, so an
    interrupted script cannot leave the stream out of step."""

    NETWORK_OS = "ethercluster.routing.posix_shell"

    def __init__(self, cli: CliSession, host: str, timeout: float = 30.0) -> None:
        self.cli = cli
        self.host = host
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        # the CliSession connection (its count of opened ones) the set-up ran in; -1: none.
        # A new connection is a new shell, which needs the set-up again.
        self._set_up_in = -1
        self._has_timeout = False

    def run(self, script: str, what: str = "script", timeout: float | None = None) -> str:
        """Run ``script`` with ``/bin/sh`` in the kept shell; its standard output."""
        return self.begin(script, what, timeout).result()

    def begin(self, script: str, what: str = "script", timeout: float | None = None) -> PendingScript:
        """Send ``script`` and return at once; :meth:`PendingScript.result`
        waits for its output (errors as :meth:`run`'s). The session runs
        nothing else until then."""
        limit = float(timeout or self.timeout)
        long_line = next((line for line in script.splitlines() if len(line) >= MAX_SHELL_LINE), None)
        if long_line is not None:
            # a terminal in canonical mode cuts a line at 4096 bytes
            raise SwitchConnectionError("%s: %s: a line of %d characters does not fit a terminal line "
                                        "(fewer than %d)" % (self.host, what, len(long_line), MAX_SHELL_LINE))
        self._lock.acquire()  # pylint: disable=consider-using-with  # released by PendingScript.result
        try:
            if self._set_up_in != self.cli.opened:
                self._set_up()
            tag = uuid.uuid4().hex
            # when the persistent connection ended meanwhile, CliSession runs the command again
            # in a new shell, without this set-up (see _wrapped); the next script sets it up
            return PendingScript(self, self.cli.begin(self._wrapped(script, tag, limit), what), tag, what, limit)
        except SwitchConnectionError:
            self._dropped()
            self._lock.release()
            raise
        except BaseException:
            self._lock.release()
            raise

    def _dropped(self) -> None:
        """After a failure: close the shell; the next script opens another."""
        self._set_up_in = -1
        self.cli.close()

    def close(self) -> None:
        """Close the kept shell."""
        with self._lock:
            self._set_up_in = -1
            self.cli.close()

    def _set_up(self) -> None:
        # the environment a command session gets before its command: bash runs $BASH_ENV
        # for a command, not for an interactive shell (the lab sets the session's priority there)
        answer = self.cli.command(
            'ec_err=$(mktemp) && trap \'rm -f "$ec_err"\' EXIT && trap \'rm -f "$ec_err"; exit 129\' HUP TERM '
            '&& [ -n "$BASH_ENV" ] && [ -r "$BASH_ENV" ] && . "$BASH_ENV"; '
            'if timeout 1 true >/dev/null 2>&1; then echo ec_timeout=yes; else echo ec_timeout=no; fi; '
            'echo "ec_err=$ec_err"', "kept shell set-up")
        lines = answer.splitlines()
        if "ec_timeout=yes" not in lines and "ec_timeout=no" not in lines \
                or not any(line.startswith("ec_err=/") for line in lines):
            raise SwitchConnectionError("%s: the kept shell did not answer as a POSIX shell with echo off: %s"
                                        % (self.host, " ".join(answer.split())[:STDERR_CHARS]))
        self._has_timeout = "ec_timeout=yes" in lines
        self._set_up_in = self.cli.opened

    def _wrapped(self, script: str, tag: str, limit: float) -> str:
        end = "EC_SCRIPT_%s" % tag
        body = script if script.endswith("\n") else script + "\n"
        runner = "timeout %s " % _seconds(limit) if self._has_timeout else ""
        # one command line (its here-document follows it): the shell prompts once, after all of it
        # ${ec_err:-/dev/null}: a shell that lost its set-up (a new connection) still runs it
        return ("%ssh -s 2>\"${ec_err:-/dev/null}\" <<'%s'; ec_rc=$?; echo; echo \"EC_RC_%s=$ec_rc\"; "
                "[ $ec_rc -eq 0 ] || cat \"${ec_err:-/dev/null}\"\n%s%s" % (runner, end, tag, body, end))

    def _parsed(self, answer: str, tag: str, what: str, limit: float) -> str:
        marker = "EC_RC_%s=" % tag
        head, found, tail = answer.rpartition(marker)
        if not found:
            raise SwitchConnectionError("%s: %s failed: the kept shell's answer has no exit status: %s"
                                        % (self.host, what, " ".join(answer.split())[-STDERR_CHARS:]))
        code, _newline, err = tail.partition("\n")
        try:
            rc = int(code.strip())
        except ValueError:
            raise SwitchConnectionError("%s: %s failed: the kept shell's exit status %r is no number"
                                        % (self.host, what, code.strip()[:40])) from None
        out = head[:-1] if head.endswith("\n") else head   # the line break the echo before the marker adds
        if rc == TIMED_OUT and self._has_timeout:
            raise SwitchConnectionError("%s: %s failed: no answer within %g s (exit code %d): %s"
                                        % (self.host, what, limit, rc, self.cli._masked(ScriptSession._condensed(err))))
        if rc != 0:
            raise SwitchConnectionError("%s: %s failed with exit code %d: %s"
                                        % (self.host, what, rc, self.cli._masked(ScriptSession._condensed(err))))
        return out


class PendingScript:
    """A script sent to a :class:`ShellSession` whose output is not read
    yet (:meth:`ShellSession.begin`); ``fileno()`` becomes readable when
    its answer is there."""

    def __init__(self, session: ShellSession, command: PendingCommand, tag: str, what: str, limit: float) -> None:
        self.session, self.command = session, command
        self.tag, self.what, self.limit = tag, what, limit

    def fileno(self) -> int:
        """The socket the answer comes on."""
        return self.command.fileno()

    def result(self) -> str:
        """The script's standard output (waits for it; SwitchConnectionError
        as :meth:`ShellSession.run` raises it). Call it once."""
        session = self.session
        try:
            return session._parsed(self.command.result(), self.tag, self.what, self.limit)  # pylint: disable=protected-access
        except SwitchConnectionError:
            session._dropped()  # pylint: disable=protected-access
            raise
        finally:
            session._lock.release()  # pylint: disable=protected-access


def cli_session(action: Any, task_vars: dict, host: str, host_key_checking: bool | None = None) -> CliSession:
    """A :class:`CliSession` to inventory host ``host``, whose
    ``ansible_connection`` must be ``ansible.netcommon.network_cli`` (with
    ``ansible_network_os`` naming the cliconf/terminal plugins), set up from
    its variables and the task's keywords as :func:`connection_session`
    sets up a shell connection (``ansible_become`` with
    ``ansible.netcommon.enable`` for the privileged mode). Nothing is
    connected until the first command."""
    return _cli_session(action, task_vars, host, host_variables(task_vars, host), host_key_checking)


def _cli_session(action: Any, task_vars: dict, host: str, variables: dict,
                 host_key_checking: bool | None, idle_s: int = CLI_IDLE_S) -> CliSession:
    """:func:`cli_session` with the host's ``variables`` given."""
    templar = action._templar.copy_with_new_env(available_variables=variables)  # pylint: disable=protected-access
    task = _TaskKeywords(action._task)  # pylint: disable=protected-access
    with _SETUP_LOCK:
        try:
            connection, play_context = _set_up(action, task, templar, variables, host, task_vars, shell=False)
        except SwitchConnectionError:
            raise
        except AnsibleError as exc:
            raise SwitchConnectionError("%s: cannot set up its connection: %s" % (host, exc))
        name = getattr(connection, "_load_name", "") or ""
        if name.rpartition(".")[2] != "network_cli":
            raise SwitchConnectionError(
                "%s: its platform is a CLI platform, reached over ansible.netcommon.network_cli; its "
                "connection is %s: set ansible_connection=ansible.netcommon.network_cli and "
                "ansible_network_os (docs/platforms.md)" % (host, name or "unknown"))
        if host_key_checking is not None and "host_key_checking" in connection.get_options():
            connection.set_option("host_key_checking", host_key_checking)
        # the persistent process ends after this long idle; a transition is planned between its
        # first read and its first write (minutes on a big fabric) and closes its sessions itself
        idle = connection.get_option("persistent_connect_timeout")
        connection.set_option("persistent_connect_timeout", max(int(idle or 0), idle_s))
    return CliSession(connection, host, secrets=_secrets(connection, play_context),
                      task_uuid=action._task._uuid)  # pylint: disable=protected-access


def shell_session(action: Any, task_vars: dict, host: str, timeout: float = 30.0,
                  host_key_checking: bool | None = None) -> ShellSession:
    """A :class:`ShellSession` to inventory host ``host``: a shell kept open
    over ``ansible.netcommon.network_cli`` (paramiko) with the collection's
    ``posix_shell`` terminal and cliconf plugins, set up from the host's
    variables as its ``ssh`` connection is (address, port, user, key,
    password). Host keys are checked as paramiko checks them (its
    ``known_hosts`` files, not the ssh client's ``UserKnownHostsFile``),
    unless ``host_key_checking`` is False or the host sets
    ``ansible_paramiko_host_key_checking`` (the variable of Ansible's
    paramiko connection). A host reached through another connection plugin
    or with ``become`` is refused (SwitchConnectionError): use
    :func:`connection_session` for it."""
    variables = host_variables(task_vars, host)
    templar = action._templar.copy_with_new_env(available_variables=variables)  # pylint: disable=protected-access
    name = variables.get("ansible_connection")
    name = to_text(templar.template(name) if name is not None else C.DEFAULT_TRANSPORT)
    if name.rpartition(".")[2] not in KEPT_SHELL_TRANSPORTS:
        raise SwitchConnectionError("%s: a kept shell needs an ssh connection; the host's is %s" % (host, name))
    task_become = action._task.become  # pylint: disable=protected-access
    if boolean(templar.template(variables.get("ansible_become", False)), strict=False) or task_become:
        raise SwitchConnectionError("%s: a kept shell does not become another user (ansible_become)" % host)
    paramiko_checking = variables.get("ansible_paramiko_host_key_checking")
    if host_key_checking is None and paramiko_checking is not None:
        host_key_checking = boolean(templar.template(paramiko_checking), strict=False)
    kept = dict(variables, ansible_connection="ansible.netcommon.network_cli",
                ansible_network_os=ShellSession.NETWORK_OS, ansible_network_cli_ssh_type="paramiko",
                # the prompt is unique and nothing follows it: no wait for more output after it
                ansible_buffer_read_timeout=0.0,
                # network_cli's wait for an answer outlasts the script's own time limit (timeout(1)
                # on the switch), so a slow script fails with its own message, not a dropped shell
                ansible_command_timeout=max(int(float(timeout)) + SHELL_TIMEOUT_MARGIN_S,
                                            int(templar.template(variables.get("ansible_command_timeout") or 0))))
    cli = _cli_session(action, task_vars, host, kept, host_key_checking, idle_s=SHELL_IDLE_S)
    return ShellSession(cli, host, timeout)


def task_session(action: Any, host: str, timeout: float = 30.0,
                 task_vars: dict | None = None) -> ScriptSession:
    """A :class:`ScriptSession` over the connection Ansible opened for the
    task's own host (``action._connection``, already set up from the
    host's variables); closing it is left to Ansible. With ``task_vars``, a
    host whose ``ansible_connection`` is a CLI/API plugin (for which
    Ansible hands a controller-side action a ``local`` stand-in) is
    refused."""
    connection = action._connection  # pylint: disable=protected-access
    _refuse_non_shell(connection, host)
    wanted = (task_vars or {}).get("ansible_connection")
    if wanted is not None:
        _refuse_non_shell_name(str(action._templar.template(wanted)), host)  # pylint: disable=protected-access
    return ScriptSession(connection, host, timeout, owned=False,
                         secrets=_secrets(connection, action._play_context))  # pylint: disable=protected-access


def _set_up(action: Any, task: Any, templar: Any, variables: dict, host: str, task_vars: dict,
            shell: bool = True) -> tuple:
    """TaskExecutor._execute_internal / _get_connection /
    _set_connection_options for one host, as if the task ran on it
    (``shell=False``: a CLI connection, not refused)."""
    current = action._play_context  # pylint: disable=protected-access
    # a fresh play context holds what the command line gave (-u, -T, --private-key...);
    # passwords from -k/-K are carried over, the task's own host's are not
    play_context = PlayContext()
    if not _has_any(task_vars, "password"):
        play_context.password = current.password
    if not _has_any(task_vars, "become_pass"):
        play_context.become_pass = current.become_pass
    play_context = play_context.set_task_and_variable_override(task=task, variables=variables,
                                                               templar=templar)
    play_context.post_validate(templar=templar)
    if not play_context.remote_addr:
        play_context.remote_addr = variables.get("ansible_host") or host

    name = variables.get("ansible_connection")
    name = templar.template(name) if name is not None else C.DEFAULT_TRANSPORT
    play_context.connection = name
    connection = connection_loader.get_with_context(
        name, play_context, new_stdin=None, task_uuid=task._uuid,  # pylint: disable=protected-access
        ansible_playbook_pid=to_text(os.getppid())).object
    if not connection:
        raise SwitchConnectionError("%s: the connection plugin %r (ansible_connection) was not found"
                                    % (host, name))
    if shell:
        _refuse_non_shell(connection, host)
    _set_become(connection, task, templar, variables, play_context, host)
    play_context.set_attributes_from_plugin(connection)

    task_keys = task.dump_attrs()
    task_keys["timeout"] = play_context.timeout  # the connect timeout, not the task's
    if play_context.password:
        task_keys["password"] = play_context.password
    task_keys.pop("retries", None)
    connection.set_options(task_keys=task_keys,
                           var_options=connection._resolve_option_variables(variables, templar))  # pylint: disable=protected-access
    transport = None if shell else getattr(connection, "ssh_type_conn", None)
    if transport is not None:
        # network_cli's ssh (paramiko or libssh) plugin reads the ssh variables itself
        # (ansible_ssh_private_key_file, ...), as ansible-connection hands them on
        transport.set_options(task_keys=task_keys,
                              var_options=transport._resolve_option_variables(variables, templar))  # pylint: disable=protected-access
    _set_plugin_options(connection._shell, "shell", variables, templar, task_keys)  # pylint: disable=protected-access
    if connection.become is not None:
        if play_context.become_pass:
            task_keys["become_pass"] = play_context.become_pass
        _set_plugin_options(connection.become, "become", variables, templar, task_keys)
        for option in ("become_user", "become_flags", "become_exe", "become_pass"):
            try:
                setattr(play_context, option, connection.become.get_option(option))
            except KeyError:
                pass
        play_context.prompt = connection.become.prompt
    # plugins that still read the play context see the final values
    final = dict(variables)
    connection.update_vars(final)
    connection._play_context = play_context.set_task_and_variable_override(  # pylint: disable=protected-access
        task=task, variables=final, templar=templar)
    return connection, play_context


def _set_become(connection, task, templar, variables, play_context, host):
    """TaskExecutor._set_become_plugin: ``ansible_become*`` over the task's keywords."""
    if variables.get("ansible_become") is not None:
        become = boolean(templar.template(variables["ansible_become"]))
    else:
        become = task.become
    plugin = None
    if become:
        method = variables.get("ansible_become_method")
        method = templar.template(method) if method else task.become_method
        plugin = become_loader.get(method)
        if not plugin:
            raise SwitchConnectionError("%s: the become plugin %r (ansible_become_method) was not found"
                                        % (host, method))
    connection.set_become_plugin(plugin)
    if plugin is not None:
        if getattr(plugin, "require_tty", False) and not getattr(connection, "has_tty", False):
            raise SwitchConnectionError("%s: the %s connection gives no terminal, which become method "
                                        "%s needs" % (host, connection._load_name, plugin.name))  # pylint: disable=protected-access
        play_context.set_become_plugin(plugin.name)


def _set_plugin_options(plugin, plugin_type, variables, templar, task_keys):
    """TaskExecutor._set_plugin_options for the shell or become plugin."""
    options = {}
    for name in C.config.get_plugin_vars(plugin_type, plugin._load_name):  # pylint: disable=protected-access
        if name in variables:
            try:
                options[name] = templar.template(variables[name])
            except AnsibleValueOmittedError:
                pass
    plugin.set_options(task_keys=task_keys, var_options=options)


def _refuse_non_shell(connection, host):
    name = getattr(connection, "ansible_name", None) or getattr(connection, "_load_name", "") or ""
    _refuse_non_shell_name(name, host, always=getattr(connection, "force_persistence", False))


def _refuse_non_shell_name(name, host, always=False):
    if always or name.rpartition(".")[2] in NOT_A_SHELL:
        raise SwitchConnectionError(
            "%s: its connection %s talks to a device CLI or API, not a shell; the switch's platform "
            "needs a shell connection (ssh, paramiko_ssh, local...): set ansible_connection "
            "accordingly" % (host, name))


def _has_any(variables, attribute):
    return any(name in variables for name in C.MAGIC_VARIABLE_MAPPING.get(attribute, ()))


def _secrets(connection, play_context):
    """Passwords this connection may use, to mask in messages."""
    found = [getattr(play_context, "password", None), getattr(play_context, "become_pass", None)]
    for plugin, option in ((connection, "password"), (connection.become, "become_pass")):
        if plugin is None:
            continue
        try:
            found.append(plugin.get_option(option))
        except KeyError:
            pass
    return tuple(value for value in found if value)
