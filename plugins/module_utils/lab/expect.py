# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What frames must do on the wire, computed from the intent alone.

The on-the-wire verification (:mod:`.wire`, run by the ``lab_verify``
module on the lab machine) compares the lab with these expectations. They
come from the IEEE 802.1Q simulator :mod:`..dot1q`, which reads nothing but
the intent; the plan's ``unicast_paths`` check has already shown that the
intent's paths are the routing's paths, so "the path the intent walks" is
"the path the routing planned".

* :func:`planned_path`: the (switch, in port, out port) hops of a unicast
  frame from one host to another, host ports included;
* :func:`choose_burst_pairs`: a few host pairs whose paths together cover
  as many inter-switch channels as possible, the longest path first;
* :func:`expected_broadcast`: how many copies of one broadcast each host
  receives (switch-tagged VLAN paper §3.4: exactly one);
* :func:`verification_plan`: all of it as the plain data the module takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..verify.dot1q import Dot1qError, Dot1qFabric
from ..errors import EtherclusterError

DEFAULT_BURSTS = 3
MAX_CANDIDATE_PAIRS = 4096


class ExpectError(EtherclusterError):
    """The intent does not say what the lab should do (a host unknown, a
    pair not delivered, a broadcast that storms); names the hosts."""


def self_learning(intent: Any) -> bool:
    """Whether ``intent`` was planned with ``mac_learning: self``."""
    return isinstance(intent, dict) and (intent.get("fabric") or {}).get("mac_learning") == "self" \
        and isinstance(intent.get("mac_learning"), dict)


def _fabric(intent: Any) -> Dot1qFabric:
    """The intent's switches ready to forward, or ExpectError. With
    ``mac_learning: self`` every host has first sent its tagged learning
    broadcast in every VLAN (what ``node_learning`` does before the
    checks), so unicast frames follow learned entries."""
    try:
        if not self_learning(intent):
            return Dot1qFabric(intent)
        fabric = Dot1qFabric(intent, learning=True)
        for name, host in sorted(intent["mac_learning"]["hosts"].items()):
            for interface in host["interfaces"]:
                fabric.send(name, "broadcast", vlan_tag=interface["vlan"])
        return fabric
    except (Dot1qError, KeyError, TypeError) as exc:
        raise ExpectError("the intent cannot be simulated: %s" % (exc,))


def _vlan_trees(intent: dict[str, Any]) -> dict[int, dict[str, dict[str, str]]]:
    """Per VLAN, its tree as ``{switch: {neighbour switch: own port}}``: the
    links whose two ports are tagged members of the VLAN (§3.4)."""
    trees: dict[int, dict[str, dict[str, str]]] = {}
    for name, sw in intent["switches"].items():
        for port, entry in sw["ports"].items():
            if entry.get("role") != "link" or entry.get("admin", "up") != "up":
                continue
            peer, peer_port = str(entry["peer"]).rsplit(":", 1)
            theirs = intent["switches"].get(peer, {}).get("ports", {}).get(peer_port, {})
            for vlan in set(entry.get("tagged", [])) & set(theirs.get("tagged", [])):
                trees.setdefault(vlan, {}).setdefault(name, {})[peer] = port
    return trees


def _tree_path(tree: dict[str, dict[str, str]], src: str, dst: str) -> list[str] | None:
    """The switches from ``src`` to ``dst`` in ``tree`` (None: not connected)."""
    before = {src: src}
    queue = [src]
    while queue and dst not in before:
        here = queue.pop(0)
        for there in sorted(tree.get(here, {})):
            if there not in before:
                before[there] = here
                queue.append(there)
    if dst not in before:
        return None
    path = [dst]
    while path[-1] != src:
        path.append(before[path[-1]])
    return path[::-1]


def expected_learned(intent: dict[str, Any]) -> dict[str, list[list[Any]]]:
    """``mac_learning: self``: per switch the entries ``[mac, vlan, port]``
    the static plan (:func:`..assign.macs.static_mac_table` on the same
    routing and assignment) would have installed -- what the switches must
    have learned. With the fixed assignment the paths of a VLAN's sources
    form the VLAN's tree, so a frame of VLAN ``v`` to host ``h`` reaches
    exactly the switches on the tree paths from ``v``'s source switches
    (whose host ports have PVID ``v``) to ``h``'s switch, and leaves each
    by the tree's port towards it (the host's own port on its switch)."""
    trees = _vlan_trees(intent)
    sources: dict[int, set[str]] = {}
    for name, sw in intent["switches"].items():
        for entry in sw["ports"].values():
            if entry.get("role") == "host" and entry.get("pvid") is not None:
                sources.setdefault(entry["pvid"], set()).add(name)
    table: dict[str, set[tuple[str, int, str]]] = {name: set() for name in intent["switches"]}
    for host in intent["hosts"].values():
        mac, home = str(host["mac"]).lower(), host["switch"]
        for vlan, starts in sources.items():
            for start in starts:
                path = [home] if start == home else _tree_path(trees.get(vlan, {}), start, home)
                if path is None:
                    raise ExpectError("VLAN %d does not connect %s to %s in the intent" % (vlan, start, home))
                for here, there in zip(path, path[1:]):
                    table[here].add((mac, vlan, trees[vlan][here][there]))
                table[home].add((mac, vlan, str(host["port"])))
    return {name: [list(entry) for entry in sorted(entries)] for name, entries in sorted(table.items())}


def _known(fabric: Dot1qFabric, host: Any, field: str) -> str:
    """``host`` if the intent has it, else ExpectError naming ``field``."""
    if host not in fabric.hosts:
        raise ExpectError("%s: unknown host %r (the intent's hosts: %s)"
                          % (field, host, ", ".join(sorted(fabric.hosts)[:10])
                             + (", ..." if len(fabric.hosts) > 10 else "")))
    return host


def planned_path(fabric: Dot1qFabric, src: str, dst: str) -> list[dict[str, str]]:
    """Hops ``[{"switch", "in_port", "out_port"}]`` of a unicast frame from
    host ``src`` to host ``dst``, from the source's switch port to the
    destination's. Raises ExpectError when the intent does not deliver it
    untagged by static entries alone."""
    trace = fabric.send(src, dst)
    if not trace["received"] or not trace["untagged"] or trace["flooded"]:
        why = "; ".join(drop["reason"] for drop in trace["dropped"][:3]) or (
            "flooded" if trace["flooded"] else "delivered tagged" if trace["received"]
            else "not delivered")
        raise ExpectError("the intent does not deliver %s -> %s by static entries: %s"
                          % (src, dst, why))
    return [{"switch": hop["switch"], "in_port": str(hop["in_port"]),
             "out_port": str(hop["out_port"])} for hop in trace["path"]]


def choose_burst_pairs(fabric: Dot1qFabric, count: int = DEFAULT_BURSTS) -> list[tuple[str, str]]:
    """Up to ``count`` (src, dst) host pairs on different switches, chosen
    greedily so their paths cover the most inter-switch channels: first
    the pair with the longest path, then each time the pair adding the
    most channels not yet covered (ties: longer path, then names)."""
    first_host: dict[str, str] = {}
    for name in sorted(fabric.hosts):
        first_host.setdefault(fabric.hosts[name][0], name)
    reps = [first_host[switch] for switch in sorted(first_host)]
    candidates = [(a, b) for a in reps for b in reps if a != b]
    if len(candidates) > MAX_CANDIDATE_PAIRS:
        step = len(candidates) / MAX_CANDIDATE_PAIRS
        candidates = [candidates[int(i * step)] for i in range(MAX_CANDIDATE_PAIRS)]
    channels: dict[tuple[str, str], frozenset[tuple]] = {}
    for pair in candidates:
        walk = fabric.walk_unicast(*pair)
        if walk["error"] is None:
            channels[pair] = frozenset(tuple(hop) for hop in walk["hops"])
    chosen: list[tuple[str, str]] = []
    covered: set[tuple] = set()
    while len(chosen) < count and channels:
        pair = min(channels, key=lambda p: (-len(channels[p] - covered), -len(channels[p]), p))
        if chosen and not channels[pair] - covered:
            break
        chosen.append(pair)
        covered |= channels.pop(pair)
    return chosen


def expected_broadcast(fabric: Dot1qFabric, source: str) -> dict[str, int | None]:
    """``{host: copies}``: how many copies of one broadcast from ``source``
    every host receives, per the intent. Storm freedom (switch-tagged VLAN
    paper §3.4) bounds the copies, it does not make them one: with the
    renamed assignment a flood follows every path of the routing, so a
    host may receive several copies, the sender included."""
    trace = fabric.send(source, "broadcast")
    if trace["storm"]:
        raise ExpectError("a broadcast from %s loops forever in the intent (%s)"
                          % (source, " -> ".join(trace["cycle"][:6])))
    missing = sorted(set(fabric.hosts) - set(trace["delivered"]) - {source})
    if missing:
        raise ExpectError("the intent does not deliver a broadcast from %s to %s"
                          % (source, ", ".join(missing[:10])))
    return {host: record["copies"] for host, record in sorted(trace["delivered"].items())}


def verification_plan(intent: dict[str, Any], bursts: int = DEFAULT_BURSTS,
                      burst_pairs: Sequence[Any] | None = None, broadcast_sources: Iterable[str] | None = None,
                      tcp_pair: Sequence[str] | None = None, tcp_bytes: int = 8 << 20, burst_frames: int = 400,
                      storm_window_s: float = 2.0) -> dict[str, Any]:
    """The expectations of every on-the-wire check, as plain data.

    ``burst_pairs``: ``[[src, dst], ...]`` (default: :func:`choose_burst_pairs`
    with ``bursts`` pairs); ``broadcast_sources``: hosts that each send one
    broadcast (default: every host); ``tcp_pair``: ``[client, server]``
    (default: the first burst pair, the longest path)."""
    fabric = _fabric(intent)
    if len(fabric.hosts) < 2:
        raise ExpectError("the intent has %d host(s); the checks need at least 2"
                          % len(fabric.hosts))
    if burst_pairs:
        pairs = []
        for position, pair in enumerate(burst_pairs):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2 or pair[0] == pair[1]:
                raise ExpectError("burst_pairs[%d]: give [source host, destination host], two "
                                  "different hosts, got %r" % (position, pair))
            pairs.append((_known(fabric, pair[0], "burst_pairs[%d]" % position),
                          _known(fabric, pair[1], "burst_pairs[%d]" % position)))
    else:
        pairs = choose_burst_pairs(fabric, bursts)
        if not pairs:  # every host on one switch
            names = sorted(fabric.hosts)
            pairs = [(names[0], names[1])]
    sources = sorted(fabric.hosts) if broadcast_sources is None else [
        _known(fabric, host, "broadcast_sources") for host in broadcast_sources]
    if tcp_pair:
        if len(tcp_pair) != 2 or tcp_pair[0] == tcp_pair[1]:
            raise ExpectError("tcp_pair: give [client host, server host], got %r" % (tcp_pair,))
        client, server = (_known(fabric, host, "tcp_pair") for host in tcp_pair)
    else:
        client, server = pairs[0]
    plan = {
        "hosts": {name: mac for name, (_switch, _port, mac) in sorted(fabric.hosts.items())},
        "stp": {name: bool(entry.get("stp", False))
                for name, entry in sorted(intent["switches"].items())},
        "broadcast": {source: expected_broadcast(fabric, source) for source in sources},
        "bursts": [{"src": src, "dst": dst, "path": planned_path(fabric, src, dst)}
                   for src, dst in pairs],
        "burst_frames": burst_frames,
        "storm_window_s": storm_window_s,
        "tcp": {"client": client, "server": server, "bytes": tcp_bytes},
    }
    if self_learning(intent):
        plan["learned"] = expected_learned(intent)
    return plan
