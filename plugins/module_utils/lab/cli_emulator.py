# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform-neutral half of the lab's emulated switch CLIs: the SSH
forced command's I/O loop, the session (files, data plane, faults), the
settings and the scheduled-reload timer.

A lab switch whose topology platform is a CLI platform answers SSH with
the lab's CLI key (docs/lab.md) with :func:`main`, which reads the
switch's ``cli.json`` (hostname, platform, ``{port: interface}`` map,
bridge) and serves the interpreter of that platform: :class:`.os6_cli.Os6Cli`
(``dell_os6``) or :class:`.vrp_cli.VrpCli` (``huawei_vrp``). An interpreter
is pure (lines in, text out); its platform module describes it with an
:class:`Emulation`: how to build it, how its running configuration becomes
the ``ovs`` intent entry of the switch's OVS data plane, which of its modes
are configuration modes and how it prints an error.

The running configuration is kept as text in the switch's directory
(``running-config``; saving writes ``startup-config``) and read back by
replaying it. When the interpreter says a change is due (``apply_due``:
configuration mode was left with changes) and when the session ends, the
configuration is applied to the switch's OVS bridge with the ``ovs``
platform's read/compare/write scripts, run locally inside the switch's
namespace (the SSH session has the switch's ``OVS_RUNDIR``).

A scheduled reload (``reload in`` on OS6) is a timer process of its own
(``--reload-after SECONDS``): when it fires, the switch's sessions end, the
saved configuration becomes the running one and reaches the data plane
(docs/reliability.md). A VRP trial commit (``commit trial``, a two-stage
VRP switch: :mod:`.vrp_commit`) is one too (``--trial-after SECONDS``,
``trial.json``): unless confirmed, the configuration the switch ran before
the trial becomes the running one again, the same way.

Faults for the lab's tests (lab only): ``faults.json`` in the switch's
directory, read when a session opens: ``reject`` (configuration commands
answered as unknown), ``drop_after`` (the session ends without an answer
when configuration line N + 1 arrives), ``lose_management`` (after a
change, new sessions are refused until a scheduled reload or the end of a
trial puts the old configuration back; ``"until_cleared"``: until the
fault is removed from ``faults.json``, so that a test's controller cannot
win a race against that timer on a starved machine),
``minute_seconds`` (the length of a reload minute), ``trial_seconds``
(how long a VRP trial runs, whatever ``commit trial`` asked) and, not a
fault, ``enable_password`` (OS6's ``enable`` asks for it).

Run as ``python -m ansible_collections.ethercluster.routing.plugins.module_utils.lab.cli_emulator``
with the switch's directory in ``ETHERCLUSTER_CLI_DIR`` (else ``OVS_RUNDIR``).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any

from ..errors import EtherclusterError
from ..platforms import cli_state, ovs

# the files of a switch's directory
SETTINGS_FILE, RUNNING_FILE, STARTUP_FILE = "cli.json", "running-config", "startup-config"
FAULTS_FILE, RELOAD_FILE, MGMT_LOST_FILE = "faults.json", "reload.json", "management-lost"
# the first line of MGMT_LOST_FILE when the fault holds until it is cleared (lose_management: until_cleared)
UNTIL_CLEARED = "until_cleared"
TRIAL_FILE = "trial.json"
# the timer processes: the flag naming each on the command line, and its file
TIMERS = {"--reload-after": RELOAD_FILE, "--trial-after": TRIAL_FILE}
MODULE = "ansible_collections.ethercluster.routing.plugins.module_utils.lab.cli_emulator"
# the module of each CLI platform's interpreter; each has EMULATION (imported when needed)
PLATFORM_MODULES = {"dell_os6": "os6_cli", "huawei_vrp": "vrp_cli"}
DEFAULT_PLATFORM = "dell_os6"


class CliEmulatorError(EtherclusterError):
    """The emulated CLI cannot start (no settings, a stored configuration
    that does not replay) or cannot apply its configuration to OVS."""


@dataclass(frozen=True)
class Emulation:
    """What the session needs to know of one platform's interpreter.

    ``interpreter(hostname, interfaces, running_config=, startup_config=)``
    builds it; ``ovs_entry(running_config, interface_names, switch)`` is
    the ``ovs`` intent entry its configuration text forwards as;
    ``config_modes`` are the modes in which a line counts as configuration
    (faults ``reject`` and ``drop_after``); ``error`` formats a message as
    the platform prints errors; ``options(settings)``: the interpreter's
    keyword arguments from the switch's ``cli.json`` (its model)."""

    platform: str
    interpreter: Callable[..., Any]
    ovs_entry: Callable[[str, Mapping[Any, str] | None, str], dict[str, Any]]
    config_modes: tuple[str, ...]
    error: Callable[[str], str]
    options: Callable[[Mapping[str, Any]], dict[str, Any]] = lambda settings: {}


def emulation_of(platform: str | None) -> Emulation:
    """The :class:`Emulation` of CLI platform ``platform`` (None: dell_os6)."""
    name = PLATFORM_MODULES.get(platform or DEFAULT_PLATFORM)
    if name is None:
        raise CliEmulatorError("no emulated CLI for platform %r (emulated: %s)"
                               % (platform, ", ".join(sorted(PLATFORM_MODULES))))
    return importlib.import_module("%s.%s" % (__package__, name)).EMULATION


# ------------------------------------------------------------ data plane
def ovs_entry_of(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ovs`` intent entry of a CLI configuration parsed into the
    canonical intent form (:func:`..platforms.cli_state.ovs_entry`, the
    form the link transitions read a CLI switch in); ports not in
    general/hybrid mode are not in it: the pipeline drops their frames."""
    return cli_state.ovs_entry(parsed)


def _shell(script: str, what: str) -> str:
    """Run ``script`` with sh; its output, or CliEmulatorError naming ``what``."""
    result = subprocess.run(["sh", "-s"], input=script, capture_output=True, text=True, check=False,
                            timeout=60)
    if result.returncode != 0:
        detail = " ".join(result.stderr.split())[:400]
        raise CliEmulatorError("%s failed (exit %d): %s" % (what, result.returncode, detail))
    return result.stdout


def apply_entry(entry: Mapping[str, Any], switch: str, bridge: str = ovs.DEFAULT_BRIDGE,
                shell: Callable[[str, str], str] | None = None) -> list[str]:
    """Make the switch's OVS bridge hold the ``ovs`` intent entry ``entry``:
    read, compare, write only the difference (:mod:`..platforms.ovs`).
    Returns the change lines (empty when nothing differed)."""
    shell = shell or _shell
    desired = ovs.render(entry, switch)
    current = ovs.parse_state(shell(ovs.read_script(bridge), "reading the OVS bridge"))
    changes = ovs.compare(current, desired, switch)
    if changes.changed:
        shell(ovs.write_script(changes, desired, current, bridge), "writing the OVS bridge")
    return ovs.change_summary(changes, current, desired)


# ------------------------------------------------------------------ files
def _read(path: str) -> str:
    """A file's text ('' when there is none)."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def _lost_until_cleared(directory: str) -> bool:
    """True when a push cut the switch in ``directory`` off with the lab
    fault ``lose_management: until_cleared`` (no timer gives it back)."""
    return _read(os.path.join(directory, MGMT_LOST_FILE)).startswith(UNTIL_CLEARED)


def _write(path: str, text: str) -> None:
    """Replace ``path`` by ``text`` (through a temporary file)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def load_settings(directory: str) -> dict[str, Any]:
    """``cli.json`` of the switch directory ``directory``."""
    path = os.path.join(directory, SETTINGS_FILE)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            settings = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CliEmulatorError("this switch has no emulated CLI (%s: %s)" % (path, exc))
    if not isinstance(settings, dict) or not isinstance(settings.get("interfaces"), dict):
        raise CliEmulatorError("%s: not the settings of an emulated CLI" % path)
    return settings


def _read_json(path: str) -> dict[str, Any]:
    """A JSON object file ({} when there is none or it is not an object)."""
    try:
        data = json.loads(_read(path) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def reload_shown(at: int | None) -> str:
    """What the interpreters show of a scheduled reload (None: none)."""
    return "No reload is scheduled.\n" if at is None else "Reload scheduled at %s (Unix time).\n" % at


# ---------------------------------------------------------------- session
class Session:
    """One SSH session: the platform's interpreter plus the files, the data
    plane, the scheduled reload and the lab's faults (``faults.json``)."""

    def __init__(self, directory: str, shell: Callable[[str, str], str] | None = None) -> None:
        self.directory = directory
        self.settings = load_settings(directory)
        self.emulation = emulation_of(self.settings.get("platform"))
        self.switch = self.settings.get("hostname") or os.path.basename(directory)
        self.shell = shell or _shell
        self.faults = _read_json(os.path.join(directory, FAULTS_FILE))
        self.config_lines = 0
        self.dropped = False
        self.cli = self.emulation.interpreter(
            self.switch, list(self.settings["interfaces"].values()),
            running_config=_read(os.path.join(directory, RUNNING_FILE)),
            startup_config=_read(os.path.join(directory, STARTUP_FILE)), **self.emulation.options(self.settings))
        self.cli.enable_password = self.faults.get("enable_password") or None
        self.cli.reject = {" ".join(str(command).lower().split()) for command in self.faults.get("reject") or ()}
        scheduled = _read_json(os.path.join(directory, RELOAD_FILE))
        if scheduled.get("at"):
            self.cli.reload_shown = reload_shown(scheduled["at"])
        trial = _read_json(os.path.join(directory, TRIAL_FILE))
        if trial.get("pid") and hasattr(self.cli, "trial"):  # a trial run another session started
            self.cli.trial = {"at": trial.get("at", 0), "persist": trial.get("persist"), "mine": False}
        self.cli.status = self.port_status

    def port_status(self) -> dict[str, dict[str, Any]]:
        """``{interface: {"link", "admin", "speed_mbps"}}`` of the lab ports
        as the OVS bridge has them now (the carrier, the emulated speed);
        {} when the bridge cannot be read."""
        try:
            read = self.shell(ovs.read_script(self.settings.get("bridge") or ovs.DEFAULT_BRIDGE),
                              "reading the OVS bridge")
            ports = ovs.parse_state(read)["ports"]
        except EtherclusterError:
            return {}
        names = self.settings["interfaces"]
        return {names[port]: {"link": entry.get("link"), "admin": entry.get("admin"),
                              "speed_mbps": entry.get("speed_mbps")}
                for port, entry in ports.items() if port in names}

    def refused(self) -> bool:
        """The lab fault ``lose_management`` cut this switch off: the session
        is refused. A loss ``until_cleared`` ends when the fault is no longer
        in ``faults.json``."""
        path = os.path.join(self.directory, MGMT_LOST_FILE)
        if not os.path.exists(path):
            return False
        if _lost_until_cleared(self.directory) and self.faults.get("lose_management") != UNTIL_CLEARED:
            os.remove(path)
            return False
        return True

    def commit(self) -> str:
        """Store the running configuration and apply it to OVS; returns an
        error line for the session, or ''."""
        self.cli.apply_due = False
        text = self.cli.running_config()
        _write(os.path.join(self.directory, RUNNING_FILE), text)
        lost = self.faults.get("lose_management")
        if lost:
            _write(os.path.join(self.directory, MGMT_LOST_FILE),
                   "%slost by a push (lab fault)\n" % ("%s: " % UNTIL_CLEARED if lost == UNTIL_CLEARED else ""))
        try:
            entry = self.emulation.ovs_entry(text, self.settings["interfaces"], self.switch)
            apply_entry(entry, self.switch, self.settings.get("bridge") or ovs.DEFAULT_BRIDGE, self.shell)
        except EtherclusterError as exc:
            return self.emulation.error("the data plane did not take the configuration: %s" % exc)
        return ""

    def _drop_due(self) -> bool:
        """The lab fault ``drop_after``: True when this configuration line is one too many."""
        if self.cli.mode not in self.emulation.config_modes or self.faults.get("drop_after") is None:
            return False
        self.config_lines += 1
        return self.config_lines > int(self.faults["drop_after"])

    def feed(self, line: str) -> str:
        """Run one line; return the text to send back (output, then the
        next prompt)."""
        if self._drop_due():
            self.dropped = True
            return ""
        output = self.cli.execute(line)
        if self.cli.reload_request is not None:
            output += self.schedule_reload(self.cli.reload_request)
        if self.cli.reload_cancel:
            self.cancel_reload()
        if getattr(self.cli, "trial_request", None):
            self.start_trial(self.cli.trial_request)
        if getattr(self.cli, "trial_confirm", False):
            self.cli.trial_confirm = False
            self.stop_timer("--trial-after")
        if self.cli.apply_due:
            output += self.commit()
        if self.cli.saved:
            self.cli.saved = False
            _write(os.path.join(self.directory, STARTUP_FILE), self.cli.startup_config)
        if self.cli.closed:
            return output
        return output + self.cli.prompt()

    def start_timer(self, flag: str, seconds: float, record: Mapping[str, Any]) -> int:
        """Start the timer process ``flag`` (one of :data:`TIMERS`, one of
        each per switch) and write its file: ``record`` with the timer's
        ``pid`` and ``at`` (when it fires). Returns ``at``."""
        self.stop_timer(flag)
        process = subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, "-m", MODULE, flag, str(seconds)],
            env=dict(os.environ, ETHERCLUSTER_CLI_DIR=self.directory), start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        at = int(time.time() + seconds)
        _write(os.path.join(self.directory, TIMERS[flag]), json.dumps(dict(record, pid=process.pid, at=at)))
        return at

    def stop_timer(self, flag: str) -> None:
        """Stop the timer process ``flag``, if one runs, and remove its file."""
        path = os.path.join(self.directory, TIMERS[flag])
        pid = _read_json(path).get("pid")
        if isinstance(pid, int) and flag in _read("/proc/%d/cmdline" % pid):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if os.path.exists(path):
            os.remove(path)

    def schedule_reload(self, minutes: int) -> str:
        """A scheduled reload: start the timer process (one per switch)."""
        self.cli.reload_request = None
        seconds = minutes * float(self.faults.get("minute_seconds") or 60)
        self.cli.reload_shown = reload_shown(self.start_timer("--reload-after", seconds, {}))
        return ""

    def cancel_reload(self) -> None:
        """Cancel the scheduled reload: stop the timer process, if there is one."""
        self.cli.reload_cancel = False
        self.cli.reload_shown = reload_shown(None)
        self.stop_timer("--reload-after")

    def start_trial(self, request: Mapping[str, Any]) -> None:
        """A VRP trial run: the timer that puts ``request["rollback"]`` (the
        configuration before the trial) back unless the trial is confirmed
        first (lab fault ``trial_seconds``: its length)."""
        self.cli.trial_request = None
        seconds = float(self.faults.get("trial_seconds") or request["seconds"])
        at = self.start_timer("--trial-after", seconds,
                              {"persist": request.get("persist"), "rollback": request["rollback"]})
        self.cli.trial = dict(self.cli.trial or {}, at=at, persist=request.get("persist"), mine=True)

    def close(self) -> None:
        """End the session: store and apply what changed."""
        if self.cli.changed or self.cli.apply_due:
            self.commit()


def end_sessions(directory: str) -> list[int]:
    """A reload drops every CLI session of the switch in ``directory``
    without storing what it changed (SIGKILL); returns their process ids."""
    ended = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                argv = handle.read().split(b"\0")
            with open("/proc/%s/environ" % entry, "rb") as handle:
                env = handle.read().split(b"\0")
        except OSError:
            continue
        if MODULE.encode() not in argv or any(flag.encode() in argv for flag in TIMERS):
            continue
        wanted = {("%s=%s" % (name, directory)).encode() for name in ("ETHERCLUSTER_CLI_DIR", "OVS_RUNDIR")}
        if wanted & set(env):
            try:
                os.kill(int(entry), signal.SIGKILL)
                ended.append(int(entry))
            except ProcessLookupError:
                pass
    return ended


def reload_after(directory: str, seconds: float, shell: Callable[[str, str], str] | None = None) -> bool:
    """The timer of a scheduled reload: after ``seconds``, unless cancelled,
    the switch "reloads": its CLI sessions end, the startup configuration
    (none: the factory defaults) becomes the running one and reaches the
    data plane, and a management path a push had cut (lab fault) is back.
    True when it fired."""
    return _fire(directory, seconds, "--reload-after",
                 lambda record: _read(os.path.join(directory, STARTUP_FILE)), shell)


def trial_after(directory: str, seconds: float, shell: Callable[[str, str], str] | None = None) -> bool:
    """The timer of a VRP trial run: after ``seconds``, unless confirmed,
    the configuration the switch ran before the trial becomes the running
    one again, as :func:`reload_after` does with the saved one (the
    switch's CLI sessions end, so that none holds the trial's). True when
    it fired."""
    return _fire(directory, seconds, "--trial-after", lambda record: str(record.get("rollback") or ""), shell)


def _fire(directory: str, seconds: float, flag: str, text_of: Callable[[dict[str, Any]], str],
          shell: Callable[[str, str], str] | None) -> bool:
    """After ``seconds``, if the timer file of ``flag`` still names this
    process: end the switch's sessions, make ``text_of(record)`` the running
    configuration and the data plane's, give back a management path a push
    cut (lab fault; not one lost ``until_cleared``) and remove the timer's file. True when it fired."""
    time.sleep(seconds)
    path = os.path.join(directory, TIMERS[flag])
    record = _read_json(path)
    if record.get("pid") != os.getpid():
        return False
    end_sessions(directory)
    settings = load_settings(directory)
    emulation = emulation_of(settings.get("platform"))
    switch = settings.get("hostname") or os.path.basename(directory)
    text = emulation.interpreter(switch, list(settings["interfaces"].values()), running_config=text_of(record),
                                 **emulation.options(settings)).running_config()
    _write(os.path.join(directory, RUNNING_FILE), text)
    apply_entry(emulation.ovs_entry(text, settings["interfaces"], switch), switch,
                settings.get("bridge") or ovs.DEFAULT_BRIDGE, shell)
    lost = os.path.join(directory, MGMT_LOST_FILE)
    if os.path.exists(lost) and not _lost_until_cleared(directory):
        os.remove(lost)
    if os.path.exists(path):
        os.remove(path)
    return True


# -------------------------------------------------------------------- I/O
def _echo(stream: IO[bytes], on: bool) -> None:
    """Turn the session terminal's echo on or off (off while a password is
    asked); nothing when the stream is not a terminal."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    if not os.isatty(fd):
        return
    attributes = termios.tcgetattr(fd)
    wanted = attributes[3] | termios.ECHO if on else attributes[3] & ~termios.ECHO
    if wanted != attributes[3]:
        attributes[3] = wanted
        termios.tcsetattr(fd, termios.TCSANOW, attributes)


def main(argv: list[str] | None = None, stdin: IO[bytes] | None = None,
         stdout: IO[bytes] | None = None) -> int:
    """The SSH forced command: serve one CLI session on stdin/stdout
    (``--reload-after SECONDS``, ``--trial-after SECONDS``: the timer of a
    scheduled reload, of a VRP trial run)."""
    argv = sys.argv[1:] if argv is None else argv
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    directory = os.environ.get("ETHERCLUSTER_CLI_DIR") or os.environ.get("OVS_RUNDIR") or ""
    if argv[:1] == ["--reload-after"] and len(argv) == 2:
        return 0 if reload_after(directory, float(argv[1])) else 1
    if argv[:1] == ["--trial-after"] and len(argv) == 2:
        return 0 if trial_after(directory, float(argv[1])) else 1

    def send(text: str) -> None:
        # the SSH session's terminal turns "\n" into "\r\n" (ONLCR)
        stdout.write(text.encode("utf-8"))
        stdout.flush()

    try:
        session = Session(directory)
    except EtherclusterError as exc:
        send("%% %s\n" % exc)
        return 1
    if session.refused():
        return 1
    send(session.cli.banner() + session.cli.prompt())
    try:
        for raw in iter(stdin.readline, b""):
            send(session.feed(raw.decode("utf-8", "replace").rstrip("\r\n")))
            _echo(stdin, session.cli.prompt() != "" or not session.cli.enable_password)
            if session.cli.closed or session.dropped:
                break
    finally:
        session.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
