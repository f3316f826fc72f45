# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch intent (schema ``ethercluster.routing/intent/v1``; fields in
docs/plan.md and docs/vlans.md): what every switch must hold, planned from
a topology and a routing engine, and checked before anything is rendered.

:func:`plan` runs the whole offline pipeline::

    topology -> routing engine -> CDG verification (cdg.py)
             -> VLAN assignment (vlans.py: fixed §3.2.1 | renamed §3.2.2)
             -> static MAC tables or the self-learning plan (macs.py, §3.3)
             -> intent -> checks (check_intent) -> Plan, or PlanError

and returns a :class:`Plan` (intent, every check, metrics, host limit)
or raises :class:`PlanError` carrying the failed checks (each names the
switch) and the partial plan. The intent is plain data (dicts, lists,
strings, ints, booleans): switches in id order, ports in port order,
hosts by name, static entries by VLAN, host switch and MAC, so two plans
of the same input are identical and a changed one diffs line by line.

Beyond docs/intent.md's required fields the intent carries: ``fabric.name``,
``fabric.engine_options``, ``fabric.vlan_ids``, ``fabric.bank`` and
``fabric.vlan_range`` (the bank's IDs), ``fabric.mac_learning``,
``fabric.down_links`` and ``fabric.blocked_links`` (link names the
routing does not use: asked/file-down, and left idle by the engine);
per switch ``limits`` (max_vlans, mac_table_size) and ``mgmt_address``;
per port ``role`` (host | link), ``host`` or ``peer`` and ``link``; and,
with ``mac_learning: self``, a top-level ``mac_learning`` block (the
host-side plan of macs.self_learning_plan). A link the plan takes down
(``down``) has ``state: down`` and both its ports ``admin: down``.
"""

from __future__ import annotations

import time
from typing import Any
from operator import itemgetter

import numpy as np

from ..verify import cdg
from ..verify.dot1q import Dot1qFabric
from ..errors import EtherclusterError
from ..assign.macs import effective_aging_time, self_learning_plan, static_mac_table, switch_mac_aging
from ..verify.metrics import busiest_channels, hop_distances, traffic_pattern, uniform
from ..platforms.capabilities import BROADCAST_TREE_PLATFORMS, require_renderable
from ..assign.flood_tree import flood_tree
from ..routing import compute_routing, in_paths_form
from ..fabric.topology import DEFAULT_SPEED_MBPS, Topology
from ..assign.vlans import ALWAYS_RESERVED, KINDS, PLATFORM_RESERVED_VLANS, assign_vlans

SCHEMA = "ethercluster.routing/intent/v1"
MAC_LEARNING = ("static", "self")
ASSIGNMENTS = ("auto",) + KINDS
# contained: a broadcast reaches each host once over a flood tree;
# bounded: it may cost up to max_broadcast_copies link crossings.
BROADCAST = ("contained", "bounded")
# Frames one broadcast may put on switch links before the plan is refused:
# a renamed assignment floods along every path of the routing, and on an
# 8x8 torus with segment routing one ARP request would make ~2e8 copies.
DEFAULT_MAX_BROADCAST_COPIES = 100000

# Above this many endpoint switches the unicast check walks a sample of
# pairs (every source to every destination would be n^2 walks).
UNICAST_CHECK_ALL_PAIRS = 96
UNICAST_CHECK_SAMPLE = 16
# Static entries port_config checks one by one; above, every k-th of each switch.
STATIC_CHECK_LIMIT = 4_000_000
# How many offenders a check's detail lists.
DETAIL_LIMIT = 5
_VLAN_PORT = itemgetter("vlan", "port")


class PlanError(EtherclusterError):
    """The plan was rejected. ``checks``: the failed checks (dicts with
    name, ok, detail, switch); ``plan``: the partial :class:`Plan` (routing,
    metrics, every check; ``intent`` the rejected intent when it was built,
    for the report only -- never render or push it)."""

    def __init__(self, message, checks=(), plan=None):
        super().__init__(message)
        self.checks = list(checks)
        self.plan = plan


class Plan:
    """A checked plan: ``intent`` (docs/intent.md v1), ``checks`` (every check
    run, ``{"name", "ok", "detail", "switch"}``), ``routing`` (the
    RoutingFunction), ``assignment`` (vlans.Assignment), ``verification``
    (cdg.verify_routing report), ``metrics`` (max_channel_load,
    average_hops, stretch, busiest_channels, ``channel_loads`` per channel
    id, vlans_used) and ``host_limit`` (§3.7 eq. 1: per switch T, V,
    H = T // V and the fabric minimum); ``timings``: seconds per stage
    (routing, verification, assignment, metrics, macs, intent, checks)."""

    def __init__(self, topology, routing=None, assignment=None, intent=None, checks=(),
                 verification=None, metrics=None, host_limit=None):
        self.topology = topology
        self.routing = routing
        self.assignment = assignment
        self.intent = intent
        self.checks = list(checks)
        self.verification = verification
        self.metrics = metrics or {}
        self.host_limit = host_limit or {}
        self.timings = {}

    @property
    def ok(self) -> bool:
        return all(check["ok"] for check in self.checks)

    def failed(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if not check["ok"]]


def _check(name, ok, detail, switch=None):
    return {"name": name, "ok": bool(ok), "detail": detail, "switch": switch}


def _listing(items, limit=DETAIL_LIMIT):
    items = list(items)
    shown = "; ".join(items[:limit])
    return shown + ("; and %d more" % (len(items) - limit) if len(items) > limit else "")


# ------------------------------------------------------------------ intent
def _intent_links(topology, taken_down):
    """The intent's ``links`` and, per (switch, port) of a link, (link,
    the far end, state)."""
    links = []
    port_link = {}
    for link in topology.links:
        state = "down" if link.index in taken_down else "up"
        links.append({"a": str(link.a), "b": str(link.b), "state": state,
                      "speed_mbps": link.speed_mbps})
        port_link[(link.a.switch, link.a.port)] = (link, str(link.b), state)
        port_link[(link.b.switch, link.b.port)] = (link, str(link.a), state)
    return links, port_link


def _intent_hosts(topology):
    """The intent's ``hosts`` and the host name at each (switch, port)."""
    hosts = {}
    host_at = {}
    for name in sorted(topology.hosts):
        host = topology.hosts[name]
        entry = {"mac": host.mac, "switch": host.switch, "port": host.port}
        if host.ip is not None:
            entry["ip"] = host.ip
        hosts[name] = entry
        host_at[(host.switch, host.port)] = name
    return hosts, host_at


def _intent_switch(sw, planned, host_at, port_link, static_macs):
    """One switch's intent entry from its VLAN assignment ``planned``."""
    ports = {}
    for port, config in planned["ports"].items():
        entry = {}
        if (sw.name, port) in host_at:
            entry.update(role="host", host=host_at[(sw.name, port)])
            admin, speed = "up", DEFAULT_SPEED_MBPS
        else:
            link, peer, state = port_link[(sw.name, port)]
            entry.update(role="link", peer=peer, link=link.name)
            admin, speed = state, link.speed_mbps
        entry.update(pvid=config["pvid"], untagged=list(config["untagged"]),
                     tagged=list(config["tagged"]), admin=admin, speed_mbps=speed,
                     flow_control=sw.flow_control_on(port))
        ports[port] = entry
    switch = {"platform": sw.platform, "stp": False, "vlans": list(planned["vlans"]),
              "ports": ports, "static_macs": static_macs,
              "limits": {"max_vlans": sw.max_vlans, "mac_table_size": sw.mac_table_size}}
    if sw.mgmt_address is not None:
        switch["mgmt_address"] = sw.mgmt_address
    named = {port: sw.interface_name(port) for port in ports}
    if any(named.values()):
        # the platform's interface names of the ports in use (topology
        # interface_names / interface_pattern); ports left out keep the
        # renderer's default pattern
        switch["interface_names"] = {port: value for port, value in named.items() if value}
    return switch


def build_intent(topology: Topology, routing: Any, assignment: Any, static_macs: dict[str, list] | None = None,
                 learning: dict[str, Any] | None = None, mac_aging: dict[str, int] | None = None) -> dict[str, Any]:
    """The intent of ``assignment`` (made from ``routing`` on ``topology``):
    docs/intent.md v1 plus the fields listed in the module doc. ``static_macs``:
    :func:`macs.static_mac_table` (``mac_learning: static``); ``learning``:
    :func:`macs.self_learning_plan` (``mac_learning: self``); ``mac_aging``:
    :func:`macs.switch_mac_aging` (each switch's ``mac_aging_s``)."""
    taken_down = set(routing.down) - set(routing.blocked)
    links, port_link = _intent_links(topology, taken_down)
    hosts, host_at = _intent_hosts(topology)
    switches = {name: _intent_switch(sw, assignment.switches[name], host_at, port_link,
                                     static_macs.get(name, []) if static_macs is not None else [])
                for name, sw in topology.switches.items()}
    for name, seconds in (mac_aging or {}).items():
        switches[name]["mac_aging_s"] = seconds
    names = {link.index: link.name for link in topology.links}
    tree = getattr(assignment, "broadcast_tree", None)
    if tree is not None:
        for name, entry in switches.items():
            entry["broadcast_ports"] = list(tree["ports"][name])
    fabric = {
        "name": topology.name,
        "assignment": assignment.kind,
        "routing": routing.engine,
        "engine_options": _plain(routing.options),
        "vlans_used": assignment.vlans_used,
        "vlan_ids": list(assignment.vlan_ids),
        "bank": assignment.bank,
        "vlan_range": list(assignment.bank_range),
        "mac_learning": "self" if learning is not None else "static",
        "down_links": [names[i] for i in sorted(taken_down)],
        "blocked_links": [names[i] for i in sorted(routing.blocked)],
    }
    if tree is not None:
        fabric["broadcast_tree"] = {"root": tree["root"], "links": [names[i] for i in tree["links"]]}
    intent = {"schema": SCHEMA, "fabric": fabric, "links": links, "hosts": hosts,
              "switches": switches}
    if learning is not None:
        intent["mac_learning"] = learning
    return intent


def _plain(value):
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# ------------------------------------------------------------------ checks
def host_limits(intent: dict[str, Any]) -> dict[str, Any]:
    """§3.7 eq. 1 from the intent: per switch ``{"T", "V", "H"}`` with T its
    MAC table size, V its VLANs and H = T // V, plus ``fabric``: the
    smallest H, its switch and the number of hosts."""
    per_switch = {}
    smallest = None
    for name, entry in intent["switches"].items():
        table = entry.get("limits", {}).get("mac_table_size")
        vlans = len(entry.get("vlans", ()))
        if table is None or not vlans:
            continue
        limit = table // vlans
        per_switch[name] = {"T": table, "V": vlans, "H": limit}
        if smallest is None or limit < smallest["H"]:
            smallest = {"H": limit, "switch": name, "T": table, "V": vlans}
    fabric = {"hosts": len(intent.get("hosts", {})),
              "limit": smallest["H"] if smallest else None,
              "switch": smallest["switch"] if smallest else None}
    return {"switches": per_switch, "fabric": fabric}


def _check_platforms(intent):
    """Every switch's platform can run switch-tagged routing (general or
    hybrid ports, a VLAN-filtering bridge, OpenFlow) and has a renderer:
    the capability table, platforms/capabilities.py."""
    by_platform = {}
    for name, entry in intent["switches"].items():
        by_platform.setdefault(entry.get("platform"), []).append(name)
    problems = []
    for platform, names in by_platform.items():
        try:
            require_renderable(platform, names[0])
        except EtherclusterError as exc:
            also = " (the same for %s)" % _listing(names[1:]) if len(names) > 1 else ""
            problems.append((names[0], "%s%s" % (exc, also)))
    if problems:
        return _check("platform_ports", False, _listing(p for _n, p in problems), problems[0][0])
    return _check("platform_ports", True, "every platform has general/hybrid ports (or "
                  "equivalent) and a renderer")


def _check_vlan_ids(intent):
    problems = []
    for name, entry in intent["switches"].items():
        reserved = ALWAYS_RESERVED | PLATFORM_RESERVED_VLANS.get(entry.get("platform"), frozenset())
        for vid in entry.get("vlans", ()):
            if isinstance(vid, bool) or not isinstance(vid, int) or not 2 <= vid <= 4094:
                problems.append((name, "%s: VLAN %r is outside 2-4094" % (name, vid)))
            elif vid in reserved:
                problems.append((name, "%s: VLAN %d is reserved on platform %s"
                                 % (name, vid, entry.get("platform"))))
    if problems:
        return _check("vlan_ids", False, _listing(p for _n, p in problems), problems[0][0])
    return _check("vlan_ids", True, "every VLAN ID is in 2-4094 and not reserved")


def _check_ports(intent):
    problems = []
    total = sum(len(entry.get("static_macs", ())) for entry in intent["switches"].values())
    stride = max(1, -(-total // STATIC_CHECK_LIMIT))
    for name, entry in intent["switches"].items():
        held = set(entry.get("vlans", ()))
        for port, config in entry.get("ports", {}).items():
            untagged, tagged = set(config.get("untagged", ())), set(config.get("tagged", ()))
            missing = sorted(({config.get("pvid")} | untagged | tagged) - held, key=str)
            if missing:
                problems.append((name, "%s:%s uses VLAN %s, which the switch does not hold"
                                 % (name, port, missing[0])))
            if untagged & tagged:
                problems.append((name, "%s:%s is both tagged and untagged in VLAN %d"
                                 % (name, port, min(untagged & tagged))))
            if config.get("role") == "host" and config.get("pvid") not in untagged:
                problems.append((name, "host port %s:%s is no untagged member of its PVID %s"
                                 % (name, port, config.get("pvid"))))
        ports = entry.get("ports", {})
        # (vlan, port) pairs first; above STATIC_CHECK_LIMIT entries in all,
        # every stride-th entry of each switch (a block of one destination's
        # hosts is longer than the stride, so a wrong block is still seen)
        for vid, port in set(map(_VLAN_PORT, entry.get("static_macs", ())[::stride])):
            config = ports.get(str(port))
            if config is None or vid not in (set(config.get("untagged", ()))
                                             | set(config.get("tagged", ()))):
                problems.append((name, "%s: static entries of VLAN %s name port %s, which is no "
                                 "member of that VLAN" % (name, vid, port)))
                break
    if problems:
        return _check("port_config", False, _listing(p for _n, p in problems), problems[0][0])
    return _check("port_config", True, "every PVID and membership is a VLAN the switch holds; "
                  "every static entry%s names a member port"
                  % ("" if stride == 1 else " (1 in %d of %d)" % (stride, total)))


def _check_max_vlans(intent):
    over = []
    for name, entry in intent["switches"].items():
        limit = entry.get("limits", {}).get("max_vlans")
        count = len(entry.get("vlans", ()))
        if limit is not None and count > limit:
            over.append((name, "%s needs %d VLANs, max_vlans is %d" % (name, count, limit)))
    if over:
        return _check("max_vlans", False, _listing(p for _n, p in over), over[0][0])
    busiest = max((len(e.get("vlans", ())) for e in intent["switches"].values()), default=0)
    return _check("max_vlans", True, "at most %d VLANs on a switch, within every max_vlans"
                  % busiest)


def _check_mac_tables(intent, learned_counts=None):
    over = []
    busiest = 0
    for name, entry in intent["switches"].items():
        limit = entry.get("limits", {}).get("mac_table_size")
        count = learned_counts[name] if learned_counts is not None \
            else len(entry.get("static_macs", ()))
        busiest = max(busiest, count)
        if limit is not None and count > limit:
            over.append((name, "%s needs %d %s MAC entries, mac_table_size is %d"
                         % (name, count, "learned" if learned_counts is not None else "static",
                            limit)))
    if over:
        return _check("mac_table", False, _listing(p for _n, p in over), over[0][0])
    return _check("mac_table", True, "at most %d %s MAC entries on a switch, within every "
                  "mac_table_size" % (busiest, "learned" if learned_counts is not None
                                      else "static"))


def _check_host_limit(intent):
    limits = host_limits(intent)
    hosts = limits["fabric"]["hosts"]
    below = [(name, row) for name, row in limits["switches"].items() if hosts > row["H"]]
    if below:
        below.sort(key=lambda item: item[1]["H"])
        text = ["%s: T=%d, V=%d, H=T/V=%d" % (name, row["T"], row["V"], row["H"])
                for name, row in below]
        return _check("host_limit", False, "%d hosts exceed H = T/V (§3.7 eq. 1) on %s"
                      % (hosts, _listing(text)), below[0][0])
    fabric = limits["fabric"]
    if fabric["limit"] is None:
        return _check("host_limit", True, "%d hosts; no switch holds a VLAN" % hosts)
    return _check("host_limit", True, "%d hosts <= H = T/V = %s (smallest, at %s; §3.7 eq. 1)"
                  % (hosts, fabric["limit"], fabric["switch"]))


def _check_storms(intent, fabric):
    """storm_free (Theorem 1: every flood ends) and broadcast_copies (how
    much one broadcast costs until it ends)."""
    self_learning = intent.get("fabric", {}).get("mac_learning") == "self"
    cycle = fabric.storm_cycle(tagged_sources=self_learning)
    if cycle:
        return [_check("storm_free", False, "a flooded frame (broadcast or unknown unicast) "
                       "loops forever through the states %s (Theorem 1 needs an acyclic flood "
                       "graph)" % " => ".join(cycle[:12]), cycle[0].split(":")[0])]
    checks = [_check("storm_free", True, "every flood (broadcast, unknown unicast) dies out: the "
                     "flood graph across VLANs has no cycle (§3.4, Theorem 1)")]
    if intent.get("fabric", {}).get("broadcast", "contained") == "contained":
        checks.append(_check_broadcast_once(fabric))
    limit = intent.get("fabric", {}).get("max_broadcast_copies", DEFAULT_MAX_BROADCAST_COPIES)
    copies, switch, vlan = fabric.broadcast_copies(tagged_sources=self_learning)
    if copies > limit:
        checks.append(_check(
            "broadcast_copies", False,
            "one broadcast (an ARP request) from a host on %s (VLAN %s) crosses switch links "
            "%d times before it dies out, over the limit of %d (max_broadcast_copies): a renamed "
            "assignment floods along every path of the routing. Use assignment auto (or fixed "
            "with the engine option paths: source_tree), broadcast: contained (the flood tree, "
            "on platforms that hold it), or raise max_broadcast_copies"
            % (switch, vlan, copies, limit), switch))
    else:
        checks.append(_check("broadcast_copies", True,
                             "one broadcast crosses switch links at most %d times (from %s, "
                             "VLAN %s; limit %d)" % (copies, switch, vlan, limit)))
    return checks


def _check_broadcast_once(fabric):
    """broadcast_once: one broadcast from any host reaches every other host
    exactly once and enters every switch once (a flood tree), as the
    intent's VLANs, PVIDs and memberships make it flood (fabric.broadcast:
    contained, the default)."""
    found = fabric.broadcast_containment()
    problem = found["problem"]
    if found["contained"]:
        return _check("broadcast_once", True, "a broadcast from any of the %d sending (switch, "
                      "VLAN) pairs reaches every host exactly once over a flood tree"
                      % found["sources"])
    if problem is None:
        return _check("broadcast_once", False, "the flood graph has a cycle (see storm_free)")
    where = ("switch %s is entered by %d copies" if problem["what"] == "switch"
             else "host %s receives %d copies") % (problem["where"], problem["copies"])
    return _check("broadcast_once", False,
                  "one broadcast from a host on %s (VLAN %s) is not contained: %s. A renamed "
                  "assignment floods along every path of the routing; use assignment auto or "
                  "fixed (with engine option paths: source_tree), or accept bounded floods with "
                  "fabric broadcast: bounded" % (problem["source"], problem["vlan"], where),
                  problem["source"])


def _check_vlan_trees(intent):
    """Fixed assignment: every VLAN's topology (links whose both ends are
    members) is a forest (§3.4: a VLAN topology is a tree)."""
    import networkx as nx

    graphs = {}
    for link in intent.get("links", ()):
        if link.get("state", "up") != "up":
            continue
        (sa, pa), (sb, pb) = (str(link[k]).rpartition(":")[::2] for k in ("a", "b"))
        ca = intent["switches"][sa]["ports"].get(pa, {})
        cb = intent["switches"][sb]["ports"].get(pb, {})
        if ca.get("admin", "up") != "up" or cb.get("admin", "up") != "up":
            continue
        va = set(ca.get("untagged", ())) | set(ca.get("tagged", ()))
        vb = set(cb.get("untagged", ())) | set(cb.get("tagged", ()))
        for vid in va & vb:
            key = "%s--%s" % (link["a"], link["b"])
            graphs.setdefault(vid, nx.MultiGraph()).add_edge(sa, sb, key=key)
    bad = []
    for vid in sorted(graphs):
        if not nx.is_forest(graphs[vid]):
            cycle = nx.find_cycle(graphs[vid])
            bad.append((cycle[0][0], "VLAN %d has the cycle %s" % (
                vid, " - ".join([u for u, _v, _k in cycle] + [cycle[0][0]]))))
    if bad:
        return _check("vlan_trees", False, _listing(p for _n, p in bad), bad[0][0])
    return _check("vlan_trees", True, "the links of every VLAN form a tree (§3.4)")


def _unicast_pairs(intent, topology):
    """Representative host pairs: the first host (by MAC) of every endpoint
    switch to that of every other; a sample when there are many."""
    first = {}
    for name, host in sorted(intent["hosts"].items(), key=lambda item: item[1]["mac"]):
        first.setdefault(host["switch"], name)
    order = [name for name in topology.switch_names() if name in first]
    if len(order) <= UNICAST_CHECK_ALL_PAIRS:
        sources = destinations = order
        sampled = False
    else:
        step = len(order) / UNICAST_CHECK_SAMPLE
        picked = [order[int(i * step)] for i in range(UNICAST_CHECK_SAMPLE)]
        sources = destinations = picked
        sampled = True
    pairs = [(first[s], first[t], s, t) for s in sources for t in destinations if s != t]
    return pairs, sampled


def _check_unicast(intent, topology, routing, fabric):
    """Every representative pair is delivered, untagged, by static entries
    only, along the path the routing chose (docs/intent.md: "A correct intent
    delivers every unicast frame ... along the path the routing chose").
    With ``mac_learning: self`` the destinations first send their learning
    pings (a tagged broadcast from each VLAN interface, §3.3 step 3) and
    the frames follow the learned entries."""
    pairs, sampled = _unicast_pairs(intent, topology)
    learning = intent.get("mac_learning") if intent.get("fabric", {}).get("mac_learning") \
        == "self" else None
    wanted = {intent["hosts"][dst]["mac"] for _src, dst, _s, _t in pairs}
    fabric.restrict_static(wanted)
    if learning is not None:
        fabric = Dot1qFabric(intent, learning=True)
        for name in sorted({dst for _src, dst, _s, _t in pairs}):
            for interface in learning["hosts"][name]["interfaces"]:
                fabric.send(name, "broadcast", vlan_tag=interface["vlan"])
    problems = []
    for src, dst, s, t in pairs:
        trace = fabric.walk_unicast(src, dst, learned=learning is not None)
        if trace["error"]:
            problems.append((trace["switch"] or s, "%s -> %s: %s" % (src, dst, trace["error"])))
        elif routing is not None:
            taken = [topology.channel_from(switch, port).id for switch, port in trace["hops"]]
            if taken != routing.path(s, t):
                problems.append((s, "%s -> %s leaves the planned path (%s)" % (
                    src, dst, " ".join("%s:%s" % hop for hop in trace["hops"]))))
        if len(problems) > DETAIL_LIMIT:
            break
    fabric.restrict_static(None)
    what = "%d host pairs%s" % (len(pairs), " (a sample of the endpoint switches)"
                                if sampled else " (one per ordered pair of switches)")
    how = "entries learned from the hosts' pings" if learning is not None else "static entries"
    if problems:
        return _check("unicast_paths", False, _listing(p for _n, p in problems), problems[0][0])
    return _check("unicast_paths", True, "%s delivered untagged by %s along the planned paths"
                  % (what, how))


def check_intent(topology: Topology, intent: dict[str, Any], routing: Any = None,
                 verification: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run every check on ``intent`` (the intent alone, plus ``topology``
    and, when given, the ``routing`` it implements) and return them all:
    ``[{"name", "ok", "detail", "switch"}]`` -- ``switch`` names the first
    switch at fault. Checks: schema, platform_ports, vlan_ids,
    port_config, max_vlans, mac_table, host_limit (§3.7 eq. 1),
    storm_free (flood graph acyclic, Theorem 1), vlan_trees (fixed),
    deadlock_free and routing_complete (cdg.verify_routing, when
    ``routing`` is given; ``verification`` reuses a report already made),
    unicast_paths (frames follow the planned paths, through
    :mod:`dot1q`)."""
    checks = []
    schema_ok = isinstance(intent, dict) and intent.get("schema") == SCHEMA \
        and isinstance(intent.get("switches"), dict)
    checks.append(_check("schema", schema_ok, "schema %s" % SCHEMA if schema_ok else
                         "the intent must be a mapping with schema %s and switches" % SCHEMA))
    if not schema_ok:
        return checks
    missing = [name for name in topology.switches if name not in intent["switches"]]
    if missing:
        checks.append(_check("switches", False, "the intent has no entry for %s"
                             % _listing(missing), missing[0]))
        return checks
    checks.append(_check_platforms(intent))
    checks.append(_check_vlan_ids(intent))
    checks.append(_check_ports(intent))
    checks.append(_check_max_vlans(intent))
    learned = None
    if intent.get("fabric", {}).get("mac_learning") == "self":
        learned = _learned_counts_from_intent(intent)
    checks.append(_check_mac_tables(intent, learned))
    checks.append(_check_host_limit(intent))
    fabric = Dot1qFabric(intent)
    checks.extend(_check_storms(intent, fabric))
    if intent.get("fabric", {}).get("assignment") == "fixed":
        checks.append(_check_vlan_trees(intent))
    if routing is not None:
        report = verification if verification is not None else cdg.verify_routing(routing)
        checks.extend(routing_checks(report))
    checks.append(_check_unicast(intent, topology, routing, fabric))
    return checks


def _learned_counts_from_intent(intent):
    hosts = len(intent.get("hosts", {}))
    counts = {}
    for name, entry in intent["switches"].items():
        member = set()
        for port in entry.get("ports", {}).values():
            if port.get("role") == "link" and port.get("admin", "up") == "up":
                member.update(port.get("tagged", ()))
                member.update(port.get("untagged", ()))
            elif port.get("role") == "host":
                member.update(port.get("untagged", ()))
        counts[name] = hosts * len(member)
    return counts


def routing_checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks of a cdg.verify_routing report: deadlock_free (the
    channel dependency graph has no cycle) and routing_complete."""
    checks = []
    if report["acyclic"]:
        checks.append(_check("deadlock_free", True, "the channel dependency graph of %s has no "
                             "cycle (%d dependencies)" % (report["engine"],
                                                          report["dependencies"])))
    else:
        first = report["cycle"][0] if report["cycle"] else None
        checks.append(_check("deadlock_free", False, "the channel dependency graph has the "
                             "cycle %s" % " => ".join(report["cycle"]),
                             first.split(":")[0] if first else None))
    problems: list[str] = []
    if not report["connected"]:
        problems.extend("%s cannot reach %s: %s" % tuple(item) for item in report["unreachable"])
    problems.extend("a path uses down link %s" % name for name in report["down_links_used"])
    problems.extend("U-turn %s" % turn for turn in report["u_turns"])
    if not report["consistent"]:
        problems.extend("inconsistent table from %s to %s" % tuple(item)
                        for item in report["inconsistent"])
    if problems:
        switch = report["unreachable"][0][0] if report["unreachable"] else None
        checks.append(_check("routing_complete", False, _listing(problems), switch))
    else:
        checks.append(_check("routing_complete", True, "every pair of switches is connected, "
                             "no U-turn, no down link used"))
    return checks


# -------------------------------------------------------------------- plan
def _traffic_matrix(topology, traffic):
    if traffic is None or (isinstance(traffic, str) and traffic == "uniform"):
        return uniform(topology)
    if isinstance(traffic, str):
        return traffic_pattern(topology, traffic)
    return np.asarray(traffic, dtype=np.float64)


def path_metrics(routing: Any, traffic: Any = "uniform", busiest: int = 5) -> dict[str, Any]:
    """The routing's quality under ``traffic`` (a pattern name or a switch
    matrix), as metrics.routing_report gives it -- ``max_channel_load``,
    ``average_hops``, ``stretch``, ``busiest_channels`` -- plus
    ``channel_loads`` (one float per channel id) and ``traffic``.

    Walks the routing table for all switch pairs with traffic at once
    (numpy) instead of building every path as a list, so a 1,024-switch
    fabric takes seconds; the figures equal routing_report's."""
    topology = routing.topology
    matrix = _traffic_matrix(topology, traffic)
    n, C = len(routing.switch_names), len(topology.channels)
    src, dst = np.nonzero(matrix)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    weight = matrix[src, dst]
    loads = np.zeros(C, dtype=np.float64)
    lengths = np.zeros(len(src), dtype=np.int64)
    chan_dst = np.array([routing.index[ch.dst] for ch in topology.channels], dtype=np.int64)
    state_switch = np.concatenate([np.arange(n, dtype=np.int64), chan_dst])
    active = np.arange(len(src))
    state = src.copy()
    for _step in range(n + C + 1):
        if not len(active):
            break
        out = routing.hop(src[active], state, dst[active]).astype(np.int64)
        moving = out >= 0
        stuck = ~moving & (state_switch[state] != dst[active])
        if stuck.any():
            i = active[np.flatnonzero(stuck)[0]]
            raise PlanError("%s: no route from %s to %s" % (
                routing.engine, routing.switch_names[src[i]], routing.switch_names[dst[i]]))
        loads += np.bincount(out[moving], weights=weight[active[moving]], minlength=C)
        lengths[active[moving]] += 1
        active, state = active[moving], n + out[moving]
    total = float(weight.sum())
    report = {
        "engine": routing.engine,
        "traffic": traffic if isinstance(traffic, str) else "matrix",
        "max_channel_load": _number(loads.max() if C else 0.0),
        "average_hops": round(float(np.dot(lengths, weight) / total), 6) if total else 0.0,
    }
    if len(src):
        shortest = hop_distances(topology, down=routing.down)[src, dst]
        ratios = lengths / shortest
        report["stretch"] = {"average": round(float(np.dot(ratios, weight) / total), 6),
                             "max": round(float(ratios.max()), 6)}
    else:
        report["stretch"] = {"average": 1.0, "max": 1.0}
    report["busiest_channels"] = ["%s = %s" % item
                                  for item in busiest_channels(topology, loads, busiest)]
    report["channel_loads"] = loads.tolist()
    return report


def _number(value):
    value = float(value)
    return int(round(value)) if abs(value - round(value)) < 1e-9 else round(value, 6)


def _metrics(routing, traffic, assignment, made_routing=None):
    cached = (made_routing or {}).get("metrics")
    if cached is not None and cached[0] is routing:
        report = dict(cached[1])   # auto's next candidate with the same routing
    else:
        report = path_metrics(routing, traffic)
        if made_routing is not None:
            made_routing["metrics"] = (routing, dict(report))
    if assignment is not None:
        report["vlans_used"] = assignment.vlans_used
    return report


def _reject(checks, plan):
    failed = [check for check in checks if not check["ok"]]
    lines = ["%s: %s" % (check["name"], check["detail"]) for check in failed]
    return PlanError("plan rejected (%d failed check%s): %s"
                     % (len(failed), "" if len(failed) == 1 else "s", "; ".join(lines)),
                     failed, plan)


def plan(topology: Topology, engine: str = "segment", assignment: str = "auto",
         engine_options: dict[str, Any] | None = None, down: Any = (), bank: str = "A",
         vlan_range: Any = None, mac_learning: str = "static", traffic: Any = "uniform", reserved: Any = (),
         learning_network: str | None = None, aging_time: int | None = None,
         max_broadcast_copies: int = DEFAULT_MAX_BROADCAST_COPIES,
         broadcast: str = "contained") -> Plan:
    """Plan ``topology`` (a :class:`~.topology.Topology`): route it with
    ``engine`` (``engine_options``, avoiding the links ``down``), verify the
    routing, assign VLANs (``assignment`` auto | fixed | renamed, from
    ``bank`` A | B within ``vlan_range``, never the ``reserved`` IDs), make
    the MAC tables (``mac_learning`` static | self; ``learning_network``
    and ``aging_time`` tune self), build the intent and run every check.
    ``broadcast``: ``contained`` (every broadcast must reach each host
    exactly once over a flood tree) or ``bounded`` (it may cost up to
    ``max_broadcast_copies`` link crossings); both kept in the intent's
    ``fabric``.

    ``auto`` tries, in order, the fixed assignment of the engine's paths
    (when the paths from every source already form trees), the renamed
    assignment with the broadcast flood tree (when every platform holds
    it, or broadcasts may be bounded), the fixed assignment of source-tree
    paths (engine option ``paths: source_tree``), and the renamed
    assignment without the tree, and keeps the first whose every check
    passes -- limits (max_vlans, mac_table_size, H = T/V §3.7) and
    broadcast containment included; the ``assignment_choice`` check and
    ``intent.fabric.assignment_choice`` say why.

    Returns a :class:`Plan`; raises :class:`PlanError` (with ``.checks``
    and the partial ``.plan``) when a check fails or a stage refuses, the
    message naming the switch, link or option at fault."""
    _check_plan_options(topology, assignment, mac_learning, engine_options, max_broadcast_copies,
                        broadcast)
    settings = {"bank": bank, "vlan_range": vlan_range, "mac_learning": mac_learning,
                "traffic": traffic, "reserved": reserved, "learning_network": learning_network,
                "aging_time": aging_time, "max_broadcast_copies": max_broadcast_copies,
                "broadcast": broadcast, "down": down}
    if assignment != "auto":
        return _plan_once(topology, engine, assignment, engine_options, settings)
    return _plan_auto(topology, engine, engine_options, settings)


# Why auto tries each (assignment, paths form).
AUTO_WHY = {
    ("fixed", "per_destination"): "the engine's paths from every source already form trees",
    ("renamed", "per_destination"): "a VLAN per input port (C x N -> C) keeps the engine's "
                                    "paths; broadcasts follow the fabric's flood tree",
    ("fixed", "source_tree"): "a tree of legal paths per source (engine option paths: "
                              "source_tree) carried by one VLAN each",
    ("fixed", "paper"): "the switch-tagged paper's own path sets (engine option paths: paper) "
                        "form a tree from every source",
    ("renamed", "paper"): "a VLAN per input port (C x N -> C) keeps the paper's path sets; "
                          "broadcasts follow the fabric's flood tree",
}


def flood_tree_possible(topology: Topology, broadcast: str = "contained",
                        mac_learning: str = "static") -> tuple[bool, str]:
    """Whether a renamed plan gets the broadcast flood tree
    (:mod:`..assign.flood_tree`): broadcasts contained, static MACs (the
    self-learning pings must flood per VLAN) and every switch on a
    platform that can hold it. ``(possible, why not)``."""
    if broadcast != "contained":
        return False, "broadcast: bounded lets renamed flood per VLAN"
    if mac_learning != "static":
        return False, "mac_learning self needs per-VLAN floods for its learning pings"
    unable = sorted({sw.platform for sw in topology.switches.values()}
                    - BROADCAST_TREE_PLATFORMS)
    if unable:
        return False, ("platform %s cannot hold a flood tree across VLANs (only %s can)"
                       % (", ".join(unable), ", ".join(sorted(BROADCAST_TREE_PLATFORMS))))
    return True, ""


def add_flood_tree(topology: Topology, routing: Any, assignment: Any, broadcast: str = "contained",
                   mac_learning: str = "static") -> None:
    """Give a renamed ``assignment`` the broadcast flood tree of the links
    ``routing`` uses, when :func:`flood_tree_possible` says it can hold it
    (plan() and the transitions' own plans both build it here)."""
    if assignment.kind == "renamed" and flood_tree_possible(topology, broadcast, mac_learning)[0]:
        assignment.broadcast_tree = flood_tree(topology, routing.down)


def _auto_candidates(asked, renamed_first):
    """auto's (assignment, paths) in order: keep the engine's paths when
    broadcasts can be contained (or need not be), else source trees."""
    if asked == "paper":
        return [("fixed", "paper"), ("renamed", "paper")]
    order = [("fixed", "per_destination")]
    order += [("renamed", "per_destination")] if renamed_first else []
    order += [("fixed", "source_tree")]
    order += [] if renamed_first else [("renamed", "per_destination")]
    return [(kind, paths) for kind, paths in order if asked is None or paths == asked]


def _plan_auto(topology, engine, engine_options, settings):
    """``assignment: auto`` (see :func:`plan`): the first candidate whose
    plan passes every check; the engine runs once."""
    options = dict(engine_options or {})
    tree, why_not = flood_tree_possible(topology, settings["broadcast"], settings["mac_learning"])
    candidates = _auto_candidates(options.get("paths"),
                                  tree or settings["broadcast"] == "bounded")
    base_options = {key: value for key, value in options.items() if key != "paths"}
    made_routing: dict[str, Any] = {}
    spent: dict[str, float] = {}
    refused = []
    last = None
    for kind, paths in candidates:
        why = AUTO_WHY[(kind, paths)] if kind != "renamed" or tree \
            else "a VLAN per input port (C x N -> C) keeps the engine's paths; no flood tree: " \
            + why_not
        try:
            result = _plan_once(topology, engine, kind, dict(base_options, paths=paths), settings,
                                made_routing)
        except PlanError as exc:
            _add_timings(spent, exc.plan)
            if not made_routing:
                raise   # the engine itself failed: no candidate can do better
            failed = "; ".join("%s: %s" % (c["name"], c["detail"]) for c in exc.checks
                               if not c["ok"]) or str(exc)
            refused.append("%s with %s paths: %s" % (kind, paths.replace("_", "-"), failed))
            last = exc
            continue
        result.timings = _add_timings(spent, result)   # every candidate's time, the engine's once
        detail = "auto picked %s assignment with %s paths (%s)" % (kind, paths.replace("_", "-"), why)
        if refused:
            detail += "; refused before it: " + " | ".join(refused)
        result.checks.insert(0, _check("assignment_choice", True, detail))
        result.intent["fabric"]["assignment_choice"] = {
            "asked": "auto", "picked": kind, "paths": paths, "why": detail}
        return result
    message = "assignment auto: no candidate passes every check: " + " | ".join(refused)
    checks = [_check("assignment_choice", False, message)] + (last.checks if last else [])
    raise PlanError("plan rejected: " + message, checks, last.plan if last else None)


def _add_timings(total: dict[str, float], made: Any) -> dict[str, float]:
    """Add the stage times of ``made`` (a Plan or None) to ``total``."""
    for stage, seconds in (getattr(made, "timings", None) or {}).items():
        total[stage] = round(total.get(stage, 0.0) + seconds, 4)
    return total


def _plan_once(topology, engine, assignment, engine_options, settings, made_routing=None):
    """One plan with a fixed ``assignment`` (see :func:`plan`);
    ``made_routing`` caches the engine's per-destination routing across
    auto's candidates."""
    partial = Plan(topology)
    clock = _Clock(partial.timings)
    routing, verification, assignment_made, checks = _route_and_assign(
        partial, clock, engine, engine_options, assignment, settings, made_routing)
    mac_learning = settings["mac_learning"]
    add_flood_tree(topology, routing, assignment_made, settings["broadcast"], mac_learning)
    learning_network, aging_time = settings["learning_network"], settings["aging_time"]
    max_broadcast_copies = settings["max_broadcast_copies"]
    try:
        static, learning, aging = _mac_tables(topology, routing, assignment_made, mac_learning,
                                              learning_network, aging_time)
    except EtherclusterError as exc:
        checks.append(_check("mac_learning", False, str(exc)))
        raise _reject(checks, partial) from exc
    clock.lap("macs")
    intent = build_intent(topology, routing, assignment_made, static_macs=static,
                          learning=learning, mac_aging=aging)
    intent["fabric"]["max_broadcast_copies"] = max_broadcast_copies
    intent["fabric"]["broadcast"] = settings["broadcast"]
    partial.intent = intent
    clock.lap("intent")
    checks.extend(check_intent(topology, intent, routing=routing, verification=verification))
    # the routing checks come twice (before the assignment, and in check_intent): keep one
    seen, unique = set(), []
    for check in checks:
        if check["name"] in seen:
            continue
        seen.add(check["name"])
        unique.append(check)
    partial.checks = unique
    partial.host_limit = host_limits(intent)
    clock.lap("checks")
    if not partial.ok:
        raise _reject(unique, partial)   # partial.intent stays for the report; never push it
    return partial


def _check_plan_options(topology, assignment, mac_learning, engine_options, max_broadcast_copies,
                        broadcast="contained"):
    """Refuse the plan's options before any work, naming the option."""
    if not isinstance(topology, Topology):
        raise PlanError("plan: topology must be a Topology (load it with load_topology), got %s"
                        % type(topology).__name__)
    if assignment not in ASSIGNMENTS:
        raise PlanError("assignment: must be one of %s, got %r"
                        % (", ".join(ASSIGNMENTS), assignment),
                        [_check("options", False, "unknown assignment %r" % (assignment,))])
    if broadcast not in BROADCAST:
        raise PlanError("broadcast: must be one of %s, got %r" % (", ".join(BROADCAST), broadcast),
                        [_check("options", False, "unknown broadcast %r" % (broadcast,))])
    if mac_learning not in MAC_LEARNING:
        raise PlanError("mac_learning: must be one of %s, got %r"
                        % (", ".join(MAC_LEARNING), mac_learning),
                        [_check("options", False, "unknown mac_learning %r" % (mac_learning,))])
    if engine_options is not None and not isinstance(engine_options, dict):
        raise PlanError("engine_options: must be a mapping, got %r" % (engine_options,),
                        [_check("options", False, "engine_options is not a mapping")])
    if isinstance(max_broadcast_copies, bool) or not isinstance(max_broadcast_copies, int) \
            or max_broadcast_copies < 0:
        raise PlanError("max_broadcast_copies: must be a whole number >= 0, got %r"
                        % (max_broadcast_copies,),
                        [_check("options", False, "bad max_broadcast_copies")])


def _route(topology, engine, engine_options, down, made_routing):
    """The routing of ``engine_options`` (``paths`` included); with
    ``made_routing`` (a dict), the per-destination routing is computed once
    and source trees are derived from it."""
    options = dict(engine_options or {})
    if made_routing is None:
        return compute_routing(topology, engine, down=down, **options)
    paths = options.pop("paths", "per_destination")
    if paths == "paper":
        if made_routing.get("paper") is None:
            made_routing["paper"] = compute_routing(topology, engine, down=down, paths=paths, **options)
        return made_routing["paper"]
    if made_routing.get("per_destination") is None:
        made_routing["per_destination"] = compute_routing(topology, engine, down=down, **options)
    return in_paths_form(made_routing["per_destination"], paths, options.get("balance", True))


def _route_and_assign(partial, clock, engine, engine_options, assignment, settings,
                      made_routing=None):
    """Route, verify, assign VLANs and measure, filling ``partial``;
    (routing, verification, assignment, checks), or the rejection."""
    topology = partial.topology
    bank, vlan_range, reserved = settings["bank"], settings["vlan_range"], settings["reserved"]
    traffic = settings["traffic"]
    checks = []
    try:
        routing = _route(topology, engine, engine_options, settings["down"], made_routing)
    except EtherclusterError as exc:
        checks.append(_check("routing", False, str(exc)))
        raise PlanError("plan rejected: %s" % exc, checks, partial) from exc
    partial.routing = routing
    clock.lap("routing")
    verified = (made_routing or {}).get("verified")
    if verified is not None and verified[0] is routing:
        verification = verified[1]   # auto's next candidate with the same routing
    else:
        verification = cdg.verify_routing(routing)
        if made_routing is not None:
            made_routing["verified"] = (routing, verification)
    partial.verification = verification
    checks.extend(routing_checks(verification))
    clock.lap("verification")
    assignment_made = None
    try:
        assignment_made = assign_vlans(routing, assignment, bank=bank, vlan_range=vlan_range,
                                       reserved=reserved)
        checks.append(_check("vlan_assignment", True, "%s assignment: %d VLANs over the fabric "
                             "(bank %s, IDs %d-%d)" % (assignment, assignment_made.vlans_used,
                                                       bank, *assignment_made.bank_range)))
    except EtherclusterError as exc:
        checks.append(_check("vlan_assignment", False, str(exc), getattr(exc, "switch", None)))
    partial.assignment = assignment_made
    clock.lap("assignment")
    try:
        partial.metrics = _metrics(routing, traffic, assignment_made, made_routing)
    except EtherclusterError as exc:
        checks.append(_check("traffic", False, str(exc)))
    clock.lap("metrics")
    partial.checks = checks
    if assignment_made is None or not all(check["ok"] for check in checks):
        raise _reject(checks, partial)
    return routing, verification, assignment_made, checks


def _mac_tables(topology, routing, assignment, mac_learning, learning_network, aging_time):
    """(static MAC table, None, None) or (None, self-learning plan, MAC
    aging time per switch): with self-learning every switch gets an aging
    time (``aging_time``; None: as long as its platform allows) and the
    pings repeat before the shortest one runs out."""
    if mac_learning != "self":
        return static_mac_table(topology, routing, assignment), None, None
    options: dict[str, Any] = {}
    if learning_network is not None:
        options["network"] = learning_network
    aging = switch_mac_aging(topology, aging_time)
    options["aging_time"] = effective_aging_time(aging)
    return None, self_learning_plan(topology, assignment, **options), aging


class _Clock:
    """Seconds per planning stage, into ``Plan.timings``."""

    def __init__(self, timings):
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, stage):
        now = time.perf_counter()
        self.timings[stage] = round(now - self.last, 4)
        self.last = now


def simulate_8021q(intent: dict[str, Any], src_host: str, dst_host: str, learning: bool = False,
                   vlan_tag: int | None = None) -> Any:
    """IEEE 802.1Q forwarding of one frame from ``src_host`` to ``dst_host``
    (a host name, a MAC or ``"broadcast"``) from the intent alone; see
    :meth:`dot1q.Dot1qFabric.send` for the trace."""
    return Dot1qFabric(intent, learning=learning).send(src_host, dst_host, vlan_tag=vlan_tag)


__all__ = ["SCHEMA", "MAC_LEARNING", "PlanError", "Plan", "plan", "build_intent",
           "check_intent", "host_limits", "path_metrics", "routing_checks", "simulate_8021q"]
