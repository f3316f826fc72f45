# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""UDP probes between every pair of the lab's hosts, to count the frames a
link transition loses (issue 7, item 5). Standard library only.

:func:`start` forks one agent per host; the agent enters the host's
network namespace (``setns(2)``, :mod:`.frames`), binds a UDP socket to the
host's address and, every ``interval`` (10 ms), sends one datagram to each
other host carrying (run id, source, destination, sequence number, send
time), while receiving the others' datagrams. It records per source which
sequence numbers arrived, how many came twice and how many came after a
later one. The neighbours (ARP) of every host are set permanent while the
probes run, so no ARP exchange competes with the probes or gets lost in a
transition and delays them; :func:`stop` removes them again.

:func:`start` returns once every agent has bound its socket (a barrier,
not a guess: on a busy machine an agent can take seconds to get there, and
datagrams sent to a host whose socket is not bound yet are lost), plus the
warm-up. :func:`stop` works in two phases for the same reason: every agent
first stops sending (SIGTERM) and says so; once all have, the frames in
flight get ``drain_s``; only then does every agent stop receiving
(SIGUSR1), write its record (``<host>.json`` under the probe directory) and
exit. A receiver never closes while another agent still sends to it. :func:`summarise` (pure, tested) turns the
records into per-pair sent/received/lost/duplicates/reordered, a timeline
of losses in time buckets and, given the transitions' wall-clock windows,
the losses of each transition (a lost datagram belongs to the window its
send time falls into, widened by ``margin_s``).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import EtherclusterError
from .frames import NETNS_DIR, _setns

PROBE_PORT = 47000
MAGIC = b"ECP1"
DATAGRAM = struct.Struct("!4sIHHId")  # magic, run id, source, destination, sequence, send time
PAD_TO = 64  # bytes of UDP payload
RECORD = "probes.json"
RECEIVE_BUFFER = 4 << 20
NICENESS = 10
READY, QUIET = ".ready", ".quiet"  # markers: the agent's socket is bound; it has stopped sending
LINGER_S = 120.0  # an agent told to stop sending exits this long after at the latest (no SIGUSR1)


class ProbeError(EtherclusterError):
    """The probes cannot start, stop or be read (names the lab, host or file)."""


# ------------------------------------------------------------ the agent
@dataclass(eq=False)
class _Agent:
    """One host's sender and receiver (runs in a forked child)."""

    me: str
    hosts: dict[str, dict[str, Any]]
    run_id: int
    interval: float
    port: int
    drain_s: float
    stopping: bool = False
    ticks: list[int] = field(default_factory=list)  # wall-clock send time of each sequence number, ms after start
    send_errors: dict[int, list[int]] = field(default_factory=dict)
    received: dict[int, bytearray] = field(default_factory=dict)  # source index -> one byte per sequence number
    duplicates: dict[int, int] = field(default_factory=dict)
    reordered: dict[int, int] = field(default_factory=dict)
    highest: dict[int, int] = field(default_factory=dict)
    foreign: int = 0
    skipped: int = 0  # ticks not sent because the agent woke too late for them
    finishing: bool = False
    directory: str | None = None  # where the READY and QUIET markers go (None: none written)

    def __post_init__(self) -> None:
        self.names = sorted(self.hosts)
        self.index = self.names.index(self.me)

    def run(self) -> dict[str, Any]:
        """Probe until told to stop sending (SIGTERM), receive until told to
        finish (SIGUSR1; without a controller's ``directory``, ``drain_s``
        after SIGTERM); return the record."""
        sock = self._bound_socket()
        peers = [(self.names.index(name), (self.hosts[name]["address"], self.port))
                 for name in self.names if name != self.me]
        selector = selectors.DefaultSelector()
        selector.register(sock, selectors.EVENT_READ)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGUSR1, self._finish)
        self._mark(READY)
        started_wall = time.time()
        started = time.monotonic()
        next_tick = started
        sequence = 0
        stop_at = None
        while True:
            now = time.monotonic()
            if self.stopping and stop_at is None:
                # quiet now; receive until told to finish (every other agent
                # quiet and drained), or drain_s without a controller
                stop_at = now + (LINGER_S if self.directory else self.drain_s)
                self._mark(QUIET)
            if self.finishing or (stop_at is not None and now >= stop_at):
                self._receive(sock)  # what is queued already
                break
            if stop_at is None and now >= next_tick:
                wall = time.time()
                for peer, address in peers:
                    payload = DATAGRAM.pack(MAGIC, self.run_id, self.index, peer, sequence, wall)
                    try:
                        sock.sendto(payload.ljust(PAD_TO, b"."), address)
                    except OSError:
                        self.send_errors.setdefault(peer, []).append(sequence)
                self.ticks.append(int(round((wall - started_wall) * 1000)))
                sequence += 1
                next_tick, skipped = next_tick_after(next_tick, now, self.interval)
                self.skipped += skipped
            wake = (stop_at if stop_at is not None else next_tick) - time.monotonic()
            if stop_at is not None:
                wake = min(wake, 0.05)  # a retried select(2) would not see SIGUSR1 before its timeout
            for _key, _events in selector.select(max(0.0, wake)):
                self._receive(sock)
        selector.close()
        sock.close()
        return {"host": self.me, "index": self.index, "names": self.names,
                "start": round(started_wall, 3), "interval": self.interval,
                "sent": sequence, "ticks_ms": self.ticks,
                "send_errors": {self.names[peer]: seqs for peer, seqs in self.send_errors.items()},
                "received": {self.names[source]: _ranges(marks)
                             for source, marks in self.received.items()},
                "duplicates": {self.names[s]: n for s, n in self.duplicates.items() if n},
                "reordered": {self.names[s]: n for s, n in self.reordered.items() if n},
                "foreign": self.foreign, "skipped_ticks": self.skipped}

    def _bound_socket(self) -> socket.socket:
        """The agent's UDP socket: a large receive buffer, bound, non-blocking."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
                            RECEIVE_BUFFER)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        sock.bind((self.hosts[self.me]["address"], self.port))
        sock.setblocking(False)
        return sock

    def _stop(self, _signum, _frame):
        self.stopping = True

    def _finish(self, _signum, _frame):
        self.stopping = self.finishing = True

    def _mark(self, suffix: str) -> None:
        """Tell the controller this agent's state (an empty file)."""
        if self.directory:
            with open(os.path.join(self.directory, self.me + suffix), "w", encoding="utf-8"):
                pass

    def _receive(self, sock):
        while True:
            try:
                data = sock.recv(2048)
            except (BlockingIOError, InterruptedError):
                return
            if len(data) < DATAGRAM.size:
                self.foreign += 1
                continue
            magic, run_id, source, target, sequence, _sent = DATAGRAM.unpack_from(data)
            if magic != MAGIC or run_id != self.run_id or target != self.index \
                    or source >= len(self.names):
                self.foreign += 1
                continue
            marks = self.received.setdefault(source, bytearray())
            if sequence >= len(marks):
                marks.extend(b"\0" * (sequence + 1 - len(marks) + 1024))
            if marks[sequence]:
                self.duplicates[source] = self.duplicates.get(source, 0) + 1
                continue
            marks[sequence] = 1
            if sequence < self.highest.get(source, -1):
                self.reordered[source] = self.reordered.get(source, 0) + 1
            else:
                self.highest[source] = sequence


def next_tick_after(next_tick: float, now: float, interval: float) -> tuple[float, int]:
    """When the tick after the one just sent at ``now`` (due at
    ``next_tick``) goes out, and how many ticks are skipped: an agent that
    woke late sends one tick and starts again from ``now``; it never sends
    the ticks it missed in a burst. On a loaded machine an agent (nice 10)
    can wait a second for the CPU; the 50 ticks of 15 datagrams it then
    owed, sent at once into its switch's host port, overflowed the emulated
    switch's packet socket (212,992 bytes, 256 frames: ``ss -0 -m`` showed
    every datagram lost in a run at load 20-80 dropped there, docs/lab.md,
    "Under load"). A skipped tick has no sequence number, so it is never
    counted as lost."""
    following = next_tick + interval
    if following > now:
        return following, 0
    skipped = int((now - following) // interval) + 1
    return now + interval, skipped


def _ranges(marks: bytearray) -> list[list[int]]:
    """Sequence numbers marked in ``marks`` as ``[[first, last], ...]``."""
    result, first = [], None
    for number, value in enumerate(marks):
        if value and first is None:
            first = number
        elif not value and first is not None:
            result.append([first, number - 1])
            first = None
    if first is not None:
        result.append([first, len(marks) - 1])
    return result


def _neighbours(hosts, me, add):
    """Make (``add``) or remove the permanent neighbour entries of host ``me``."""
    dev = hosts[me]["dev"]
    lines = []
    for name, host in sorted(hosts.items()):
        if name == me:
            continue
        if add:
            lines.append("neigh replace %s lladdr %s dev %s nud permanent"
                         % (host["address"], host["mac"], dev))
        else:
            lines.append("neigh del %s dev %s" % (host["address"], dev))
    subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(lines) + "\n", text=True,
                   capture_output=True, check=False, timeout=20)


def _agent_main(me, hosts, run_id, interval, port, drain_s, directory):
    """Body of a forked agent: enter the host's namespace, probe, write the record."""
    target = os.open(os.path.join(NETNS_DIR, hosts[me]["netns"]), os.O_RDONLY)
    try:
        _setns(target, hosts[me]["netns"])
    finally:
        os.close(target)
    _neighbours(hosts, me, add=True)
    # below the switches' control plane (sshd, ovs-ofctl) on a busy machine:
    # a late probe is only sent late (its send time is recorded), while a
    # starved switch would make the transition itself slow
    os.nice(NICENESS)
    try:
        probe_and_record(_Agent(me, hosts, run_id, interval, port, drain_s, directory=directory))
    finally:
        _neighbours(hosts, me, add=False)


def probe_and_record(agent: _Agent) -> None:
    """Run ``agent`` (already in its host's namespace) and write its record,
    or the error that stopped it, as ``<host>.json`` in its directory."""
    try:
        record = agent.run()
    except Exception as exc:  # pylint: disable=broad-except  # reported through the record
        record = {"host": agent.me, "error": "%s: %s" % (type(exc).__name__, exc)}
    path = os.path.join(agent.directory or ".", "%s.json" % agent.me)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.rename(path + ".tmp", path)


def _fork_agent(*args):
    pid = os.fork()
    if pid:
        return pid
    # the child: detach from the caller (an Ansible module's pipes must close)
    status = 0
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        _close_inherited(null)
        _agent_main(*args)
    except BaseException:  # pylint: disable=broad-except  # a child must never return
        status = 1
    os._exit(status)  # pylint: disable=protected-access


def _close_inherited(keep):
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass


# ------------------------------------------------------------ start/stop
def probe_directory(layout: dict[str, Any]) -> str:
    """Where the probes of the lab ``layout`` keep their records."""
    return os.path.join(layout["dir"], "probes")


def read_record(directory: str) -> dict[str, Any] | None:
    """The probe record in ``directory``, or None when there is none."""
    try:
        with open(os.path.join(directory, RECORD), "r", encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ProbeError("cannot read %s: %s" % (os.path.join(directory, RECORD), exc))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # our own child that has exited: reap it
        done, _status = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass
    try:
        with open("/proc/%d/stat" % pid, "r", encoding="utf-8") as handle:
            return handle.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def running(layout: dict[str, Any]) -> dict[str, Any] | None:
    """The record of the probes running in this lab, or None."""
    record = read_record(probe_directory(layout))
    if record and record.get("state") == "running" and any(_alive(pid) for pid in
                                                           record["pids"].values()):
        return record
    return None


def start(layout: dict[str, Any], interval: float = 0.01, port: int = PROBE_PORT, drain_s: float = 0.5,
          hosts: Iterable[str] | None = None, warmup_s: float = 1.0,
          ready_timeout_s: float = 60.0) -> dict[str, Any]:
    """Start one agent per host of the lab ``layout`` (or of ``hosts``) and
    return once every agent's socket is bound (at most ``ready_timeout_s``)
    and ``warmup_s`` has passed: the record (``pids``, ``run_id``,
    ``started``, ``measured_from``...). Refuses when probes already run in
    this lab, or when an agent does not get ready (it stops the others)."""
    if running(layout):
        raise ProbeError("lab %s: probes already run (stop them first)" % layout["lab"])
    names = sorted(hosts or layout["hosts"])
    unknown = [name for name in names if name not in layout["hosts"]]
    if unknown:
        raise ProbeError("lab %s has no host(s) %s" % (layout["lab"], ", ".join(unknown)))
    if len(names) < 2:
        raise ProbeError("probes need at least two hosts, got %s" % names)
    if not 0.001 <= float(interval) <= 10:
        raise ProbeError("interval: must be from 0.001 to 10 seconds, got %r" % (interval,))
    fields = ("netns", "dev", "mac", "address")
    chosen = {name: {key: layout["hosts"][name][key] for key in fields} for name in names}
    directory = probe_directory(layout)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith((".json", READY, QUIET)):
            os.unlink(os.path.join(directory, name))
    run_id = int.from_bytes(os.urandom(4), "big")
    pids = {}
    for name in names:
        pids[name] = _fork_agent(name, chosen, run_id, float(interval), int(port),
                                 float(drain_s), directory)
    started = time.time()
    record = {"state": "running", "lab": layout["lab"], "run_id": run_id, "pids": pids,
              "hosts": names, "interval": float(interval), "port": int(port),
              "started": round(started, 3), "drain_s": float(drain_s)}
    with open(os.path.join(directory, RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    late = wait_for_markers(directory, pids, READY, ready_timeout_s)
    if late:
        for pid in pids.values():
            _signal(pid, signal.SIGUSR1)  # finish at once (or die: no handler yet)
        record["state"] = "stopped"
        with open(os.path.join(directory, RECORD), "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        raise ProbeError("lab %s: probe agent(s) of %s not bound after %.0f s (or exited)"
                         % (layout["lab"], ", ".join(late), ready_timeout_s))
    # warm-up: every socket is bound now; the datapath caches the flows of
    # every pair on their first frames; losses before measured_from are not counted
    time.sleep(float(warmup_s))
    record["measured_from"] = round(time.time(), 3)
    with open(os.path.join(directory, RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    return record


def wait_for_markers(directory: str, pids: dict[str, int], suffix: str, timeout_s: float) -> list[str]:
    """Wait until every agent of ``pids`` has left its ``suffix`` marker in
    ``directory`` (or exited); return the hosts whose agent did neither
    within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    waiting = sorted(pids)
    while True:
        waiting = [name for name in waiting if not os.path.exists(os.path.join(directory, name + suffix))
                   and _alive(pids[name])]
        if not waiting or time.monotonic() >= deadline:
            return waiting
        time.sleep(0.02)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def stop(layout: dict[str, Any], windows: Iterable[dict[str, Any]] | None = None, bucket_s: float = 0.1,
         margin_s: float = 0.2, timeout: float = 20.0) -> dict[str, Any] | None:
    """Stop the lab's agents, collect their records and :func:`summarise`
    them. Returns None when no probes were started."""
    directory = probe_directory(layout)
    record = read_record(directory)
    if record is None:
        return None
    stopped_at = time.time()
    for pid in record["pids"].values():
        _signal(pid, signal.SIGTERM)
    # every agent quiet first, then the drain, then the receivers close
    wait_for_markers(directory, record["pids"], QUIET, timeout)
    time.sleep(record.get("drain_s", 0.5))
    for pid in record["pids"].values():
        _signal(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    results, missing = {}, list(record["hosts"])
    while missing and time.monotonic() < deadline:
        for name in list(missing):
            path = os.path.join(directory, "%s.json" % name)
            if os.path.exists(path):
                with open(path, "r", encoding="utf-8") as handle:
                    results[name] = json.load(handle)
                missing.remove(name)
            elif not _alive(record["pids"][name]):
                missing.remove(name)
        time.sleep(0.05)
    for pid in record["pids"].values():
        _alive(pid)  # reaps our own children
    record["state"] = "stopped"
    record["stopped"] = round(stopped_at, 3)
    with open(os.path.join(directory, RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    lost_agents = [name for name in record["hosts"] if name not in results]
    errors = ["%s: %s" % (name, result["error"]) for name, result in sorted(results.items())
              if "error" in result]
    if lost_agents or errors:
        raise ProbeError("lab %s: probe agent(s) failed: %s" % (
            layout["lab"], "; ".join(errors + ["%s: no record" % name for name in lost_agents])))
    summary = summarise(results, windows=windows, bucket_s=bucket_s, margin_s=margin_s,
                        since=record.get("measured_from"))
    summary["directory"] = directory
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle)
    return summary


# ------------------------------------------------------------- arithmetic
def _missing(sent: int, ranges: Iterable[list[int]], excluded: Iterable[int] = ()) -> list[int]:
    """Sequence numbers below ``sent`` not covered by ``ranges`` nor ``excluded``."""
    covered = bytearray(sent)
    for first, last in ranges:
        for number in range(first, min(last, sent - 1) + 1):
            covered[number] = 1
    for number in excluded:
        if number < sent:
            covered[number] = 1
    return [number for number in range(sent) if not covered[number]]


def _first_since(sender: dict[str, Any], since: float | None) -> int:
    """The first sequence number sent at or after ``since`` (wall clock)."""
    if since is None:
        return 0
    offset = (since - sender["start"]) * 1000.0
    for number, tick in enumerate(sender["ticks_ms"]):
        if tick >= offset - 0.5:  # ticks are whole milliseconds
            return number
    return sender["sent"]


def summarise(results: dict[str, dict[str, Any]], windows: Iterable[dict[str, Any]] | None = None,
              bucket_s: float = 0.1, margin_s: float = 0.2,
              since: float | None = None) -> dict[str, Any]:
    """Per ordered pair and in total: ``sent``, ``received``, ``lost``,
    ``duplicates``, ``reordered``, ``send_errors``; ``timeline``: lost
    datagrams per ``bucket_s`` bucket of send time (non-empty buckets,
    seconds after the first start); ``windows``: per transition window
    ``{"name", "start", "end"}`` (wall clock) the datagrams lost whose send
    time lies within it (widened by ``margin_s`` each side), and
    ``outside``: losses in no window.

    ``results``: {host: agent record}; a datagram counts as sent when its
    ``sendto`` succeeded (failures are ``send_errors``), as received once
    (further copies are ``duplicates``), as reordered when it arrived after
    a later one of the same pair. With ``since`` (wall clock), datagrams
    sent earlier are left out (the warm-up: the emulator's datapath sets up
    its flow cache on the first frames of each pair and may drop some)."""
    windows = [dict(window) for window in (windows or [])]
    for window in windows:
        window["lost"] = 0
        window["pairs"] = {}
        window["last_lost_s"] = None
        if window.get("exclude_hosts"):
            window["excluded"] = 0
    origin = min((result["start"] for result in results.values()), default=0.0)
    pairs: dict[str, dict[str, int]] = {}
    buckets: dict[int, int] = {}
    outside = 0
    totals = {"sent": 0, "received": 0, "lost": 0, "duplicates": 0, "reordered": 0,
              "send_errors": 0}
    for source, sender in sorted(results.items()):
        for target, receiver in sorted(results.items()):
            if target == source:
                continue
            entry, missing = _pair_counts(sender, receiver, source, target, since)
            pairs["%s->%s" % (source, target)] = entry
            for key in totals:
                totals[key] += entry[key]
            for number in missing:
                when = sender["start"] + sender["ticks_ms"][number] / 1000.0
                bucket = int((when - origin) / bucket_s + 1e-6)  # float error at edges
                buckets[bucket] = buckets.get(bucket, 0) + 1
                if not _count_in_window(windows, when, margin_s, source, target):
                    outside += 1
    duration = max((result["ticks_ms"][-1] / 1000.0 + result["start"] - origin
                    for result in results.values() if result["ticks_ms"]), default=0.0)
    return {"hosts": len(results), "pairs": len(pairs), "totals": totals, "since": since,
            "interval": next(iter(results.values()))["interval"] if results else None,
            "duration_s": round(duration, 3), "start": origin,
            "per_pair": pairs,
            "lossy_pairs": {key: value for key, value in pairs.items() if value["lost"]},
            "timeline": [{"t": round(bucket * bucket_s, 3), "lost": count}
                         for bucket, count in sorted(buckets.items())],
            "windows": windows, "outside": outside}


def _pair_counts(sender: dict[str, Any], receiver: dict[str, Any], source: str, target: str,
                 since: float | None) -> tuple[dict[str, int], list[int]]:
    """The counts of one ordered pair (see :func:`summarise`) and the
    sequence numbers it lost."""
    first = _first_since(sender, since)
    failed = [n for n in sender.get("send_errors", {}).get(target, []) if n >= first]
    sent = sender["sent"] - first - len(failed)
    ranges = receiver.get("received", {}).get(source, [])
    missing = [n for n in _missing(sender["sent"], ranges, failed) if n >= first]
    entry = {"sent": sent, "received": sent - len(missing), "lost": len(missing),
             "duplicates": receiver.get("duplicates", {}).get(source, 0),
             "reordered": receiver.get("reordered", {}).get(source, 0),
             "send_errors": len(failed)}
    return entry, missing


def _count_in_window(windows: list[dict[str, Any]], when: float, margin_s: float,
                     source: str, target: str) -> bool:
    """Count a datagram of pair ``source->target`` sent at ``when`` lost in
    the first window that holds it (widened by ``margin_s``); False if none
    does. A pair with a host of the window's ``exclude_hosts`` (a failed
    switch's own hosts, which nothing can reach) is counted apart
    (``excluded``). ``last_lost_s``: the send time of the window's last lost
    datagram after its start, the time its pairs took to deliver again
    (``pairs_last_lost_s``: the same per pair)."""
    for window in windows:
        if window["start"] - margin_s <= when <= window["end"] + margin_s:
            if {source, target} & set(window.get("exclude_hosts") or ()):
                window["excluded"] += 1
                return True
            key = "%s->%s" % (source, target)
            window["lost"] += 1
            window["pairs"][key] = window["pairs"].get(key, 0) + 1
            since = round(when - window["start"], 3)
            if window["last_lost_s"] is None or since > window["last_lost_s"]:
                window["last_lost_s"] = since
            last = window.setdefault("pairs_last_lost_s", {})
            last[key] = max(last.get(key, since), since)
            return True
    return False


def loss_table(summary: dict[str, Any]) -> list[str]:
    """The losses of :func:`summarise` per window as Markdown lines."""
    lines = ["| transition | seconds | datagrams lost | pairs that lost | drain step |",
             "|---|---|---|---|---|"]
    for window in summary["windows"]:
        drain = "yes (loses frames by design)" if window.get("drain") else "no"
        seconds = window["end"] - window["start"]
        lines.append("| %s | %.1f | %d | %d | %s |"
                     % (window["name"], seconds, window["lost"], len(window["pairs"]), drain))
    totals = summary["totals"]
    lines.append("%d host pairs, %d datagrams sent in %.0f s (every %g ms), %d lost (%d outside "
                 "the transitions), %d duplicates, %d reordered" % (
                     summary["pairs"], totals["sent"], summary["duration_s"],
                     1000 * (summary["interval"] or 0), totals["lost"], summary["outside"],
                     totals["duplicates"], totals["reordered"]))
    return lines
