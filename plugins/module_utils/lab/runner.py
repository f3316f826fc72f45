# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build, check and remove a lab on this machine (needs root).

:func:`lab_up` and :func:`lab_down` are idempotent. The *record*
(``<lab dir>/lab.json``) is written before anything is created and names
everything the lab consists of; :func:`lab_down` removes exactly that, so a
lab whose build stopped halfway goes as cleanly as a complete one. Standard
library only: the ``lab`` module carries this file to the target.
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import plan as lab_plan
from .layout import MGMT_OPTION
from .plan import (
    LAB_SCHEMA,
    SSHD,
    AppendAuthorizedKey,
    Command,
    CopyFile,
    KillNetnsProcesses,
    LabError,
    MakeDirs,
    Phase,
    RemoveTree,
    WriteFile,
    WriteKnownHosts,
    all_netns,
    down_phases,
    lab_paths,
    root_devices,
    summary,
    up_phases,
)

NETNS_DIR = "/run/netns"
TOOLS = ("ip", "tc", "sysctl", "ssh-keygen", "ovsdb-tool", "ovsdb-server", "ovs-vsctl",
         "ovs-vswitchd", "ovs-appctl", "ovs-ofctl")
PACKAGES_HINT = ("openvswitch-switch, openssh-server, iproute2 and ethtool "
                 "(playbooks/lab_up.yml installs them)")
MAX_WORKERS = 8
HEALTH_WAIT = 5.0  # seconds a fresh lab may take to report healthy
DAEMON_PIDFILES = ("ovsdb-server.pid", "ovs-vswitchd.pid", "sshd.pid")
# pidfd_getfd(2) (Linux 5.6): one number on every architecture of the kernel's generic syscall table
SYS_PIDFD_GETFD = 438
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def layout_hash(layout: dict[str, Any]) -> str:
    """Fingerprint of the lab as this code builds it: the layout and every
    step of its plan, so that a lab built by another version of the plan
    (other files, other commands) is rebuilt rather than kept."""
    text = json.dumps(layout, sort_keys=True, separators=(",", ":"))
    text += repr(lab_plan.up_phases(layout))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_path(state_root: str, name: str) -> str:
    """Where lab ``name`` keeps its record."""
    return os.path.join(state_root, name, "lab.json")


def read_record(state_root: str, name: str) -> dict[str, Any] | None:
    """The record of lab ``name``, or None when there is none."""
    path = record_path(state_root, name)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            record = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise LabError("cannot read the lab record %s: %s (remove the lab's namespaces by hand "
                       "if it is damaged)" % (path, exc))
    if not isinstance(record, dict) or record.get("schema") != LAB_SCHEMA \
            or not isinstance(record.get("layout"), dict):
        raise LabError("%s is not a lab record of this collection" % path)
    return record


def _write_record(layout: dict[str, Any], state: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the lab's record (atomically) in ``state``."""
    record = {"schema": LAB_SCHEMA, "state": state, "layout_hash": layout_hash(layout),
              "layout": layout}
    record.update(extra or {})
    path = lab_paths(layout)["record"]
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return record


# ------------------------------------------------------------------ checks
def netns_exists(name: str) -> bool:
    """Whether network namespace ``name`` exists."""
    return os.path.exists(os.path.join(NETNS_DIR, name))


def device_exists(name: str) -> bool:
    """Whether interface ``name`` exists in the root namespace."""
    return os.path.exists(os.path.join("/sys/class/net", name))


def preflight(layout: dict[str, Any]) -> None:
    """Refuse to build when not root, a tool is missing, or a name or
    address the lab needs is already in use on this machine."""
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, veths, tc); run lab_up as root")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not os.path.exists(SSHD):
        missing.append(SSHD)
    if not layout["host_tx_offload"] and shutil.which("ethtool") is None:
        missing.append("ethtool")
    if not os.path.exists(layout["ovs_schema"]):
        missing.append(layout["ovs_schema"])
    if missing:
        raise LabError("missing on this machine: %s; install %s"
                       % (", ".join(missing), PACKAGES_HINT))
    if os.path.exists(layout["dir"]):
        raise LabError("%s exists but holds no lab record; it is not a lab of this collection "
                       "(remove it or choose another lab name or state_root)" % layout["dir"])
    for ns in all_netns(layout):
        if netns_exists(ns):
            raise LabError("network namespace %s already exists and is not part of lab %s "
                           "(delete it or choose another lab name)" % (ns, layout["lab"]))
    for dev in root_devices(layout):
        if device_exists(dev):
            raise LabError("interface %s already exists in the root namespace" % dev)
    _check_mgmt_network(layout)


def _check_mgmt_network(layout: dict[str, Any]) -> None:
    """Refuse a management network that overlaps an address of this machine."""
    network = ipaddress.ip_network(layout["mgmt"]["network"])
    ours = set(root_devices(layout))
    result = subprocess.run(["ip", "-j", "-4", "address", "show"], capture_output=True,
                            text=True, check=False)
    try:
        interfaces = json.loads(result.stdout or "[]")
    except ValueError:
        interfaces = []
    for interface in interfaces:
        if interface.get("ifname") in ours:
            continue
        for info in interface.get("addr_info", []):
            local = info.get("local")
            try:
                taken = ipaddress.ip_network("%s/%s" % (local, info.get("prefixlen", 32)),
                                             strict=False)
            except ValueError:
                continue
            if taken.overlaps(network):
                raise LabError("%s %s overlaps %s/%s on %s in the root namespace "
                               "(another lab, or this machine's own network: choose another)"
                               % (MGMT_OPTION, network, local, info.get("prefixlen"),
                                  interface.get("ifname")))


def _netns_ids(names: Iterable[str]) -> dict[tuple[int, int], str]:
    """(st_dev, st_ino) of each existing namespace in ``names``."""
    ids: dict[tuple[int, int], str] = {}
    for name in names:
        try:
            st = os.stat(os.path.join(NETNS_DIR, name))
        except OSError:
            continue
        ids[(st.st_dev, st.st_ino)] = name
    return ids


def netns_processes(names: Iterable[str]) -> dict[int, str]:
    """``{pid: namespace}`` of every live process inside one of the
    namespaces ``names`` (what ``ip netns pids`` tells, for many at once)."""
    ids = _netns_ids(names)
    found: dict[int, str] = {}
    if not ids:
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat("/proc/%s/ns/net" % entry)
        except OSError:
            continue
        name = ids.get((st.st_dev, st.st_ino))
        if name is not None and not _is_zombie(int(entry)):
            found[int(entry)] = name
    return found


def _is_zombie(pid: int) -> bool:
    """Whether process ``pid`` is gone or a zombie."""
    try:
        with open("/proc/%d/stat" % pid, "r", encoding="utf-8") as handle:
            return handle.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _pid_from(path: str) -> int | None:
    """The pid in a pid file (None: no file, or no pid in it)."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return int(handle.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def health(layout: dict[str, Any]) -> list[str]:
    """Problems that keep the lab of ``layout`` from working, [] when healthy:
    a namespace or management interface missing, or a daemon of a switch
    (ovsdb-server, ovs-vswitchd, sshd) not running inside its namespace."""
    problems = []
    for ns in all_netns(layout):
        if not netns_exists(ns):
            problems.append("namespace %s is missing" % ns)
    if problems:
        return problems
    running = netns_processes(all_netns(layout))
    for name, sw in layout["switches"].items():
        if not device_exists(sw["root_dev"]):
            problems.append("%s: management interface %s is missing" % (name, sw["root_dev"]))
        for pidfile in DAEMON_PIDFILES:
            pid = _pid_from(os.path.join(sw["dir"], pidfile))
            if pid is None or running.get(pid) != sw["netns"]:
                problems.append("%s: %s is not running" % (name, pidfile[:-4]))
    return problems


# ---------------------------------------------------------------- priority
def thread_ids(pid: int) -> list[int]:
    """Every thread of process ``pid`` (its main thread first); [] when it is gone."""
    try:
        tids = sorted(int(entry) for entry in os.listdir("/proc/%d/task" % pid) if entry.isdigit())
    except OSError:
        return []
    return sorted(tids, key=lambda tid: tid != pid)


def set_niceness(pid: int, niceness: int, threads: Callable[[int], list[int]] = thread_ids,
                 setpriority: Callable[[int, int, int], None] = os.setpriority) -> list[int]:
    """Give every thread of process ``pid`` the nice value ``niceness`` and
    return their ids. Linux keeps a nice value per thread: renicing the
    process id alone leaves ovs-vswitchd's other threads (handler,
    revalidator, urcu) where they were; threads started later inherit the
    value of the thread that starts them (the main thread's)."""
    done = []
    for tid in threads(pid):
        try:
            setpriority(os.PRIO_PROCESS, tid, niceness)
        except ProcessLookupError:  # a thread that ended meanwhile
            continue
        done.append(tid)
    return done


def session_leader(pid: int, proc: str = "/proc") -> bool:
    """Whether process ``pid`` leads its own session (field 6 of stat(5))."""
    try:
        with open("%s/%d/stat" % (proc, pid), "r", encoding="utf-8") as handle:
            return int(handle.read().rpartition(")")[2].split()[3]) == pid
    except (OSError, ValueError, IndexError):
        return False


def set_autogroup_niceness(pid: int, niceness: int, proc: str = "/proc") -> bool:
    """Give the autogroup of process ``pid`` the nice value ``niceness``;
    False when the kernel groups no processes so, or when ``pid`` shares its
    group (it leads no session of its own: the group is its starter's).

    A kernel with autogroups (``kernel.sched_autogroup_enabled``, Debian's
    default) puts every session in a group of its own and shares the CPUs
    between the groups first: the daemons detach into sessions of their
    own, so their threads' nice values count only inside their one-daemon
    groups, and the group's value is what weighs against other work."""
    path = "%s/%d/autogroup" % (proc, pid)
    try:
        with open("%s/sys/kernel/sched_autogroup_enabled" % proc, "r", encoding="utf-8") as handle:
            enabled = handle.read().strip() == "1"
    except OSError:
        return False
    if not enabled or not os.path.exists(path) or not session_leader(pid, proc):
        return False
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % niceness)
    return True


def prioritize_daemons(layout: dict[str, Any], renice: Callable[[int, int], list[int]] = set_niceness,
                       regroup: Callable[[int, int], bool] = set_autogroup_niceness) -> dict[str, dict[str, Any]]:
    """Run every switch daemon of the lab at the layout's
    ``daemon_niceness`` (docs/lab.md, "Under load"): every thread, and the
    daemon's autogroup where the kernel has them. Returns ``{switch: {pid
    file: {"threads": threads set, "autogroup": whether its group was}}}``;
    LabError naming the switch and daemon when one cannot be set."""
    done: dict[str, dict[str, Any]] = {}
    for name, sw in layout["switches"].items():
        for pidfile, niceness in layout.get("daemon_niceness", {}).items():
            pid = _pid_from(os.path.join(sw["dir"], pidfile))
            if pid is None:
                raise LabError("%s: %s has no pid: cannot give it nice %d" % (name, pidfile[:-4], niceness))
            try:
                threads = renice(pid, niceness)
                grouped = bool(threads) and regroup(pid, niceness)
            except OSError as exc:
                raise LabError("%s: cannot give %s (pid %d) nice %d: %s"
                               % (name, pidfile[:-4], pid, niceness, exc))
            if not threads:
                raise LabError("%s: %s (pid %d) is gone: cannot give it nice %d"
                               % (name, pidfile[:-4], pid, niceness))
            done.setdefault(name, {})[pidfile] = {"threads": len(threads), "autogroup": grouped}
    return done


# ----------------------------------------------------------- port buffers
def process_fd(pid: int, fd: int) -> int:
    """A descriptor of this process for descriptor ``fd`` of process ``pid``
    (``pidfd_getfd``, root): the same open socket, so an option set through
    it is the other process's. OSError when the kernel or its ptrace policy
    refuses."""
    import ctypes  # pylint: disable=import-outside-toplevel  # Linux only, and only here

    if not hasattr(os, "pidfd_open"):  # Python before 3.9, or not Linux
        raise OSError(errno.ENOSYS, "this Python has no os.pidfd_open")
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if copy < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))
        return int(copy)
    finally:
        os.close(pidfd)


def socket_fds(pid: int) -> list[int]:
    """The descriptors of process ``pid`` that are sockets."""
    fds = []
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return []
    for name in names:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                fds.append(int(name))
        except (OSError, ValueError):  # closed meanwhile
            continue
    return sorted(fds)


def enlarge_packet_sockets(pid: int, size: int, getfd: Callable[[int, int], int] = process_fd) -> list[str]:
    """Give every packet socket of process ``pid`` the receive buffer
    ``size`` (``SO_RCVBUFFORCE``: past ``net.core.rmem_max``, which a network
    namespace cannot change) and return the devices they are bound to."""
    devices = []
    for fd in socket_fds(pid):
        try:
            copy = getfd(pid, fd)
        except OSError as exc:
            if exc.errno == errno.EBADF:  # closed meanwhile
                continue
            raise
        try:
            sock = socket.socket(fileno=copy)
        except OSError:  # the number was reused meanwhile by something that is not a socket
            os.close(copy)
            continue
        with sock:
            if sock.family != socket.AF_PACKET:
                continue
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
            name = sock.getsockname()[0]
            if name:
                devices.append(name)
    return sorted(devices)


def enlarge_port_buffers(layout: dict[str, Any],
                         enlarge: Callable[[int, int], list[str]] = enlarge_packet_sockets,
                         wait: float = HEALTH_WAIT) -> dict[str, Any]:
    """Give the packet sockets through which each switch's ``ovs-vswitchd``
    reads its ports the layout's ``port_receive_buffer`` (layout.py says
    why). Waits up to ``wait`` seconds for a switch that has not opened all
    its ports yet. Returns ``{"bytes": size, "switches": n}``, or
    ``{"bytes": 0, "not_set": why}`` when the kernel refuses (no
    ``pidfd_getfd``, a ptrace policy): the lab works without, its host ports
    then drop what arrives while a switch commits a large change. LabError
    naming the switch and its ports when they stay unopened."""
    size = int(layout.get("port_receive_buffer") or 0)
    if not size:
        return {"bytes": 0, "not_set": "port_receive_buffer is 0"}
    deadline = time.monotonic() + wait
    for name, sw in layout["switches"].items():
        pid = _pid_from(os.path.join(sw["dir"], "ovs-vswitchd.pid"))
        if pid is None:
            raise LabError("%s: ovs-vswitchd has no pid: cannot size its port buffers" % name)
        wanted = {port["dev"] for port in sw["ports"].values()}
        while True:
            try:
                missing = wanted - set(enlarge(pid, size))
            except OSError as exc:
                return {"bytes": 0, "not_set": "%s: %s" % (name, exc)}
            if not missing:
                break
            if time.monotonic() >= deadline:
                raise LabError("%s: ovs-vswitchd (pid %d) reads no packet socket on %s"
                               % (name, pid, ", ".join(sorted(missing))))
            time.sleep(0.05)
    return {"bytes": size, "switches": len(layout["switches"])}


def memory(layout: dict[str, Any]) -> dict[str, Any]:
    """Processes of the lab and the memory they use (kB): RSS, and PSS,
    which shares the pages of common libraries fairly among processes."""
    rss = pss = 0
    by_name: dict[str, int] = {}
    processes = netns_processes(all_netns(layout))
    for pid in processes:
        values = _smaps_rollup(pid)
        rss += values.get("Rss", 0)
        pss += values.get("Pss", 0)
        try:
            with open("/proc/%d/comm" % pid, "r", encoding="utf-8") as handle:
                comm = handle.read().strip()
        except OSError:
            continue
        by_name[comm] = by_name.get(comm, 0) + values.get("Pss", 0)
    return {"processes": len(processes), "rss_kb": rss, "pss_kb": pss, "pss_kb_by_command": by_name}


def _smaps_rollup(pid: int) -> dict[str, int]:
    """Rss and Pss (kB) of process ``pid``."""
    values: dict[str, int] = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid, "r", encoding="utf-8") as handle:
            for line in handle:
                key, _sep, rest = line.partition(":")
                if key in ("Rss", "Pss"):
                    values[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return values


# --------------------------------------------------------------- execution
def run_phases(phases: Iterable[Phase], timings: dict[str, float] | None = None,
               workers: int = MAX_WORKERS) -> None:
    """Run ``phases`` in order, the jobs of each phase in parallel; raise
    LabError naming the phase and the failing step."""
    for phase in phases:
        started = time.monotonic()
        errors: list[str] = []
        if len(phase.jobs) == 1:
            _run_job(phase.name, phase.jobs[0], errors)
        else:
            with ThreadPoolExecutor(max_workers=min(workers, len(phase.jobs))) as pool:
                for job in phase.jobs:
                    pool.submit(_run_job, phase.name, job, errors)
        if timings is not None:
            timings[phase.name] = round(time.monotonic() - started, 3)
        if errors:
            more = " (and %d more)" % (len(errors) - 1) if len(errors) > 1 else ""
            raise LabError(errors[0] + more)


def _run_job(phase: str, job: list[Any], errors: list[str]) -> None:
    """Run one job's steps in order; note the first failure in ``errors``."""
    for step in job:
        try:
            run_step(step)
        except LabError as exc:
            errors.append("phase %s: %s" % (phase, exc))
            return
        except Exception as exc:  # an OS error of a file step: report it, do not lose it
            errors.append("phase %s: %s: %s" % (phase, type(step).__name__, exc))
            return


def run_step(step: Any) -> None:
    """Carry out one step of a plan (see :mod:`.plan`)."""
    if isinstance(step, Command):
        _run_command(step)
    elif isinstance(step, MakeDirs):
        if not os.path.isdir(step.path):
            os.makedirs(step.path, mode=step.mode, exist_ok=True)
            os.chmod(step.path, step.mode)
    elif isinstance(step, WriteFile):
        _write(step.path, step.content, step.mode)
    elif isinstance(step, CopyFile):
        with open(step.src, "rb") as handle:
            data = handle.read()
        _write(step.dst, data, step.mode)
    elif isinstance(step, WriteKnownHosts):
        with open(step.host_key_pub, "r", encoding="utf-8") as handle:
            key_type, key = handle.read().split()[:2]
        _write(step.path, "%s %s %s\n" % (",".join(step.addresses), key_type, key), 0o600)
    elif isinstance(step, AppendAuthorizedKey):
        with open(step.key_pub, "r", encoding="utf-8") as handle:
            key = handle.read().strip()
        with open(step.path, "a", encoding="utf-8") as handle:
            handle.write("%s %s\n" % (step.options, key))
    elif isinstance(step, KillNetnsProcesses):
        kill_netns_processes(step.netns, step.grace)
    elif isinstance(step, RemoveTree):
        shutil.rmtree(step.path, ignore_errors=True)
    else:
        raise LabError("unknown plan step %r" % (step,))


def _write(path: str, content: str | bytes, mode: int) -> None:
    """Write ``content`` to ``path`` with permissions ``mode``."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)


def _run_command(command: Command) -> subprocess.CompletedProcess | None:
    """Run ``command``; LabError when it fails and must not."""
    env = None
    if command.env:
        env = dict(os.environ)
        env.update(command.env)
    try:
        result = subprocess.run(command.full_argv(), input=command.input, env=env, text=True,
                                capture_output=True, timeout=command.timeout, check=False)
    except subprocess.TimeoutExpired:
        if command.check:
            raise LabError("`%s` did not finish in %g s" % (command, command.timeout))
        return None
    except OSError as exc:
        if command.check:
            raise LabError("`%s` could not start: %s" % (command, exc))
        return None
    if command.check and result.returncode != 0:
        output = " ".join((result.stderr or result.stdout or "").split())[:600]
        raise LabError("`%s` failed with exit code %d: %s"
                       % (_short(command), result.returncode, output or "no output"))
    return result


def _short(command: Command, limit: int = 300) -> str:
    """A command as text, cut at ``limit`` characters."""
    text = str(command)
    return text if len(text) <= limit else text[:limit] + " ..."


def kill_netns_processes(names: Iterable[str], grace: float = 3.0) -> None:
    """Stop every process inside the namespaces ``names``: SIGTERM, then
    SIGKILL to what is left after ``grace`` seconds; wait until none is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        pids = netns_processes(names)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError as exc:
                if exc.errno != errno.ESRCH:
                    raise
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not netns_processes(names):
                return
            time.sleep(0.05)
    left = netns_processes(names)
    if left:
        raise LabError("processes %s do not stop" % ", ".join(str(pid) for pid in sorted(left)))


# ------------------------------------------------------------------ public
def rebuild_reasons(record: dict[str, Any], wanted_hash: str,
                    health_check: Callable[[dict[str, Any]], list[str]], source: str) -> list[str]:
    """Why the lab recorded as ``record`` must be rebuilt for the layout whose
    hash is ``wanted_hash`` (``source``, e.g. "the topology", changed; its
    last build did not finish; ``health_check`` of the recorded layout found
    a problem); empty when it is up as wanted."""
    if record.get("layout_hash") != wanted_hash:
        return ["%s, the lab options or the way labs are built changed" % source]
    if record.get("state") != "ready":
        return ["the last build did not finish"]
    return list(health_check(record["layout"]))


def lab_up(layout: dict[str, Any], check_mode: bool = False, teardown_on_failure: bool = True) -> dict[str, Any]:
    """Make the lab of ``layout`` exist and work.

    Nothing is done when a lab of that name with the same layout is up and
    healthy. A lab of that name with another layout, or a broken one, is
    removed first and built again. Returns a dict with ``changed``,
    ``outcome`` (``unchanged``, ``created`` or ``rebuilt``), ``reasons``,
    ``timings`` (seconds per phase), ``port_buffers`` (when built:
    :func:`enlarge_port_buffers`) and ``summary``; in check mode nothing
    is touched and ``outcome`` tells what would happen.
    """
    record = read_record(layout["state_root"], layout["lab"])
    reasons: list[str] = []
    if record is not None:
        reasons = rebuild_reasons(record, layout_hash(layout), health, "the topology")
        if not reasons:
            return {"changed": False, "outcome": "unchanged", "reasons": [], "timings": {},
                    "summary": summary(layout)}
    outcome = "rebuilt" if record is not None else "created"
    if check_mode:
        return {"changed": True, "outcome": outcome, "reasons": reasons, "timings": {},
                "summary": summary(layout)}
    timings: dict[str, float] = {}
    started = time.monotonic()
    if record is not None:
        down_started = time.monotonic()
        run_phases(down_phases(record["layout"]))
        timings["teardown_old"] = round(time.monotonic() - down_started, 3)
    preflight(layout)
    os.makedirs(layout["state_root"], mode=0o755, exist_ok=True)
    os.makedirs(layout["dir"], mode=0o700)
    _write_record(layout, "building")
    try:
        run_phases(up_phases(layout), timings)
        # sshd writes its pid file after it has detached: give the last ones a moment
        deadline = time.monotonic() + HEALTH_WAIT
        problems = health(layout)
        while problems and time.monotonic() < deadline:
            time.sleep(0.05)
            problems = health(layout)
        if problems:
            raise LabError("the lab came up broken: %s" % "; ".join(problems[:5]))
        prioritize_daemons(layout)
        port_buffers = enlarge_port_buffers(layout)
    except (LabError, OSError) as exc:
        if teardown_on_failure:
            try:
                run_phases(down_phases(layout))
            except LabError as cleanup:
                raise LabError("%s; removing the half-built lab failed too: %s (run lab_down)"
                               % (exc, cleanup))
            raise LabError("%s (the half-built lab was removed)" % exc)
        raise
    timings["total"] = round(time.monotonic() - started, 3)
    _write_record(layout, "ready", {"timings": timings, "port_buffers": port_buffers})
    return {"changed": True, "outcome": outcome, "reasons": reasons, "timings": timings,
            "port_buffers": port_buffers, "summary": summary(layout)}


def lab_down(state_root: str, name: str, check_mode: bool = False) -> dict[str, Any]:
    """Remove lab ``name`` (everything its record names). Returns
    ``changed`` False when there is no such lab."""
    record = read_record(state_root, name)
    if record is None:
        return {"changed": False, "outcome": "absent", "timings": {}}
    if check_mode:
        return {"changed": True, "outcome": "removed", "timings": {}}
    timings: dict[str, float] = {}
    started = time.monotonic()
    layout = record["layout"]
    phases = down_phases(layout)
    run_phases(phases[:-1], timings)
    left = [ns for ns in all_netns(layout) if netns_exists(ns)]
    left += [dev for dev in root_devices(layout) if device_exists(dev)]
    if left:  # keep the record, so that lab_down can be run again
        raise LabError("lab %s: could not remove %s" % (name, ", ".join(left[:10])))
    run_phases(phases[-1:], timings)
    timings["total"] = round(time.monotonic() - started, 3)
    return {"changed": True, "outcome": "removed", "timings": timings}
