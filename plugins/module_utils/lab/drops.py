# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a lab drops frames: the counters of every place a frame between
two lab hosts can be dropped, read at once, so that a datagram the probes
(:mod:`.probes`) count as lost is attributed to a place (docs/lab.md,
"Under load"). Standard library only (the ``lab_drops`` module carries it
to the lab machine).

Per switch port (the veth ``pN`` in the switch's namespace):

* ``socket``: frames the kernel dropped at the packet socket through which
  ``ovs-vswitchd`` reads the port (``ss -0 -m``, skmem ``d``): the socket's
  receive buffer was full because the switch's main loop did not read it in
  time (the lab asks 2 MiB for it, ``runner.enlarge_port_buffers``; the
  kernel's 212,992 bytes, about 256 small frames, where that was refused);
* ``rx_dropped``, ``tx_dropped``: the veth's own counters (``ip -s link``;
  a veth counts a frame its peer could not take in ``tx_dropped``);
* ``qdisc``: frames the port's egress ``tbf`` (the emulated link speed)
  dropped (``tc -s qdisc``).

Per host: ``udp_rcvbuf`` (``RcvbufErrors`` of ``/proc/net/snmp``: the
probe agent's socket was full), ``udp_in_errors``, and the NIC's
``rx_dropped``, ``tx_dropped`` and ``qdisc`` drops. For the machine:
``softnet`` (the second column of ``/proc/net/softnet_stat``, per CPU:
frames dropped because the CPU's input backlog, which every veth of every
namespace feeds, was full).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import EtherclusterError
from .wire import load_layout

WORKERS = 8
SEPARATOR = "=====ethercluster-drops====="
# one shell per namespace: the three reads, separated
SWITCH_READ = "ss -0 -m -n; echo %s; ip -j -s link show; echo %s; tc -j -s qdisc show" % (SEPARATOR, SEPARATOR)
HOST_READ = "cat /proc/net/snmp; echo %s; ip -j -s link show; echo %s; tc -j -s qdisc show" % (SEPARATOR, SEPARATOR)
_SOCKET = re.compile(r"^\S+\s+\d+\s+\d+\s+\*:(\S+)\s.*?skmem:\(([^)]*)\)", re.M)


class DropsError(EtherclusterError):
    """The counters of a lab cannot be read (names the switch or host)."""


# ------------------------------------------------------------------ parsing
def socket_drops(text: str) -> dict[str, int]:
    """``{device: drops}`` of the packet sockets in ``ss -0 -m -n``
    output (the skmem ``d`` field; sockets bound to no device are left out)."""
    drops: dict[str, int] = {}
    for found in _SOCKET.finditer(text):
        field = re.search(r"(?:^|,)d(\d+)", found.group(2))
        if field:
            drops[found.group(1)] = drops.get(found.group(1), 0) + int(field.group(1))
    return drops


def link_drops(text: str) -> dict[str, dict[str, int]]:
    """``{device: {"rx_dropped", "tx_dropped"}}`` from ``ip -j -s link show``."""
    result = {}
    for link in json.loads(text or "[]"):
        stats = link.get("stats64") or link.get("stats") or {}
        result[link["ifname"]] = {"rx_dropped": int(stats.get("rx", {}).get("dropped", 0)),
                                  "tx_dropped": int(stats.get("tx", {}).get("dropped", 0))}
    return result


def qdisc_drops(text: str) -> dict[str, int]:
    """``{device: drops}`` of the root qdiscs in ``tc -j -s qdisc show``."""
    result: dict[str, int] = {}
    for qdisc in json.loads(text or "[]"):
        if qdisc.get("root"):
            result[qdisc["dev"]] = result.get(qdisc["dev"], 0) + int(qdisc.get("drops", 0))
    return result


def udp_errors(snmp: str) -> dict[str, int]:
    """``udp_rcvbuf`` and ``udp_in_errors`` of a ``/proc/net/snmp`` text."""
    rows = [line.split()[1:] for line in snmp.splitlines() if line.startswith("Udp:")]
    if len(rows) < 2:
        return {"udp_rcvbuf": 0, "udp_in_errors": 0}
    values = dict(zip(rows[0], rows[1]))
    return {"udp_rcvbuf": int(values.get("RcvbufErrors", 0)), "udp_in_errors": int(values.get("InErrors", 0))}


def softnet_drops(text: str) -> list[int]:
    """Per CPU, the frames dropped at the input backlog (the second
    column of ``/proc/net/softnet_stat``, hexadecimal)."""
    return [int(line.split()[1], 16) for line in text.splitlines() if len(line.split()) > 1]


def _parts(text: str, what: str) -> list[str]:
    parts = text.split(SEPARATOR + "\n")
    if len(parts) != 3:
        raise DropsError("%s: the counters could not be read (got %r)" % (what, text[-300:]))
    return parts


def switch_counters(text: str, ports: Iterable[str], what: str) -> dict[str, dict[str, int]]:
    """``{device: counters}`` of the switch ports ``ports`` from the output of :data:`SWITCH_READ`."""
    ss, links, qdiscs = _parts(text, what)
    sockets, veths, tbfs = socket_drops(ss), link_drops(links), qdisc_drops(qdiscs)
    return {dev: dict(socket=sockets.get(dev, 0), qdisc=tbfs.get(dev, 0),
                      **veths.get(dev, {"rx_dropped": 0, "tx_dropped": 0})) for dev in ports}


def host_counters(text: str, dev: str, what: str) -> dict[str, int]:
    """The counters of a host from the output of :data:`HOST_READ`."""
    snmp, links, qdiscs = _parts(text, what)
    return dict(udp_errors(snmp), qdisc=qdisc_drops(qdiscs).get(dev, 0),
                **link_drops(links).get(dev, {"rx_dropped": 0, "tx_dropped": 0}))


# ------------------------------------------------------------------ reading
def _netns_read(netns: str, script: str, what: str, timeout: float = 60) -> str:
    try:
        result = subprocess.run(["ip", "netns", "exec", netns, "sh", "-c", script], capture_output=True,
                                text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DropsError("%s: the counters could not be read: %s" % (what, exc))
    if result.returncode != 0:
        raise DropsError("%s: the counters could not be read: %s" % (what, " ".join(result.stderr.split())[:300]))
    return result.stdout


def read(layout: Mapping[str, Any], netns_read: Callable[[str, str, str], str] = _netns_read,
         softnet: Callable[[], str] | None = None) -> dict[str, Any]:
    """Every drop counter of the lab ``layout`` (module docstring), with the
    wall-clock ``time`` of the reading."""
    started = time.time()

    def switch(item: tuple[str, Mapping[str, Any]]) -> tuple[str, dict[str, dict[str, int]]]:
        name, sw = item
        text = netns_read(sw["netns"], SWITCH_READ, "switch %s" % name)
        return name, switch_counters(text, [port["dev"] for port in sw["ports"].values()], "switch %s" % name)

    def host(item: tuple[str, Mapping[str, Any]]) -> tuple[str, dict[str, int]]:
        name, entry = item
        return name, host_counters(netns_read(entry["netns"], HOST_READ, "host %s" % name), entry["dev"],
                                   "host %s" % name)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        switches = dict(pool.map(switch, sorted(layout["switches"].items())))
        hosts = dict(pool.map(host, sorted(layout["hosts"].items())))
    if softnet is None:
        with open("/proc/net/softnet_stat", "r", encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = softnet()
    return {"time": round(started, 3), "switches": switches, "hosts": hosts, "softnet": softnet_drops(text)}


def read_lab(state_root: str, name: str) -> dict[str, Any]:
    """:func:`read` of the ready lab ``name`` (its record under ``state_root``)."""
    return read(load_layout(state_root, name))


# ---------------------------------------------------------------- changes
def gains(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """``(place, counter, frames)`` for each counter that grew from
    ``before`` to ``after`` (two :func:`read` results); a place is
    ``switch SW port DEV``, ``host H`` or ``input backlog cpuN``."""
    found = []
    for name, ports in sorted(after.get("switches", {}).items()):
        for dev, counters in sorted(ports.items()):
            old = before.get("switches", {}).get(name, {}).get(dev, {})
            found += [("switch %s port %s" % (name, dev), key, value - old.get(key, 0))
                      for key, value in sorted(counters.items()) if value > old.get(key, 0)]
    for name, counters in sorted(after.get("hosts", {}).items()):
        old = before.get("hosts", {}).get(name, {})
        found += [("host %s" % name, key, value - old.get(key, 0))
                  for key, value in sorted(counters.items()) if value > old.get(key, 0)]
    for cpu, (now, then) in enumerate(zip(after.get("softnet", []), before.get("softnet", []))):
        if now > then:
            found.append(("input backlog cpu%d" % cpu, "softnet", now - then))
    return found


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """:func:`gains` as lines, one per place that dropped frames, e.g.
    ``switch sw4 port p1: socket +132``; [] when nothing was dropped."""
    places: dict[str, list[str]] = {}
    for place, key, frames in gains(before, after):
        places.setdefault(place, []).append("%s +%d" % (key, frames))
    return ["%s: %s" % (place, ", ".join(counters)) for place, counters in places.items()]


def dropped(before: Mapping[str, Any], after: Mapping[str, Any]) -> int:
    """The frames dropped anywhere from ``before`` to ``after``."""
    return sum(frames for _place, _key, frames in gains(before, after))
