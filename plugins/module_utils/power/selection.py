# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""On/off and multispeed link selection for saving power (switch-tagged VLAN
paper, Koibuchi et al., TPDS 2010, §3.6 and §5.4.2).

**Traffic.** A traffic matrix is an ``(n, n)`` array over the switches in id
order (what :mod:`metrics` uses): entry ``[s, t]`` is the volume hosts on
``s`` send to hosts on ``t`` during one common period (bytes from an MPI
trace, or pattern units). :func:`traffic_matrix` builds it from a pattern
name, from ``{(src_host, dst_host): bytes}`` or from an array;
:func:`traffic_from_host_counters` estimates it from host-port byte
counters (gravity model); :func:`channel_loads_from_counters` turns
switch-port counters into channel loads directly.

**Load and capacity.** The *load* of a channel is the volume crossing it
during the period; its *utilisation* is load / link speed (Mb/s). Since
every comparison is against the baseline's utilisation over the same
period, the period's length cancels out: with real bytes and a period of
T seconds the figures are ``8 * load / (T * 1e6 * speed)`` of capacity.
With all links at one speed, "utilisation <= baseline maximum" is exactly
the paper's "load <= the maximum load with all links on".

**The paper's selector** (:func:`greedy_selection`, §5.4.2): 1) route with
every link on and take the maximum channel utilisation; 2) try the links
one by one, least-loaded first (baseline load of the busier of its two
channels, ties by link index), and keep a link off when the fabric stays
connected, the engine still routes it, the routing verifies (CDG acyclic,
every pair connected, :func:`cdg.verify_routing`) and every channel stays
at or below the baseline maximum. Then multispeed (§3.6 item 3): every
link still on is set to the lowest allowed speed at which both of its
channels stay at or below the baseline maximum utilisation.

**Our selector** (:func:`search_selection`): the same constraints, but it
minimises the fabric's watts *after* the speed step, so it weighs turning
a link off against keeping it on at a low speed: first-fit passes over
several orders (the paper's, re-trying the links it rejected once the
routing changed, then seeded random perturbations), then iterated local
search (turn a few links of the best set back on, first-fit the others off
again). Its budget is a number of link sets evaluated, never wall time.

Both return a :class:`SelectionResult`, whose :meth:`~SelectionResult.plan`
is the ordered list of actions for the transition planner (§3.6: each
action is carried out by re-routing around the link first).

:func:`decide` is the small rule set of the scheduled power-save playbook:
thresholds with hysteresis on measured channel utilisation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import networkx as nx
import numpy as np

from ..verify import metrics
from ..verify.cdg import verify_routing
from ..errors import EtherclusterError, TopologyError
from .model import DEFAULT_PROFILE, LinkPowerModel, resolve_link_speeds, resolve_link_states
from ..routing import RoutingError, compute_routing
from ..routing.base import RoutingFunction
from ..fabric.topology import Channel, Endpoint, Topology

DEFAULT_SPEEDS = (1000, 100, 10)
# Relative slack when comparing a utilisation with the baseline maximum:
# float sums of the same loads in another order must not count as "more".
TOLERANCE = 1e-9
PATTERN_NAMES = ("all_to_all", "nearest_neighbour", "bit_reversal", "transpose",
                 "random_permutation")
PATTERN_ALIASES = {"uniform": "all_to_all", "all-to-all": "all_to_all",
                   "nearest_neighbor": "nearest_neighbour", "matrix_transpose": "transpose",
                   "bit-reversal": "bit_reversal"}
DEFAULT_THRESHOLDS = {"off_below": 0.2, "on_above": 0.6, "samples": 3, "max_changes": 1}


class SelectionError(EtherclusterError):
    """Bad input to link selection or decide(): unknown pattern, host,
    port, link or threshold, or a baseline that cannot be routed. The
    message names the field or element at fault."""


# ---------------------------------------------------------------- traffic
def _switch_view(topology: Topology) -> Topology:
    """The topology without hosts: metrics' patterns then run over switches
    (one endpoint per switch, named after it)."""
    return Topology(topology.name, list(topology.switches.values()), topology.links, [],
                    shape=topology.shape, source=topology.source)


def nearest_neighbour(topology: Topology, level: str = "host") -> np.ndarray:
    """Nearest-neighbour exchange, one unit per ordered endpoint pair.

    ``level="host"``: hosts in host order form a ring and host ``i`` sends
    to hosts ``i - 1`` and ``i + 1`` (a 1-D halo exchange in MPI rank order).
    ``level="switch"``: every switch sends to every switch it has a cabled
    link to (a halo exchange whose domains match the fabric)."""
    if level == "switch":
        n = len(topology.switches)
        traffic = np.zeros((n, n))
        index = {name: sw.index for name, sw in topology.switches.items()}
        for link in topology.links:
            a, b = index[link.a.switch], index[link.b.switch]
            traffic[a, b] = traffic[b, a] = 1.0
        np.fill_diagonal(traffic, 0.0)
        return traffic
    names = [name for name, _switch in metrics.traffic_hosts(topology)]
    count = len(names)
    pairs = {(names[i], names[j]): 1 for i in range(count)
             for j in {(i - 1) % count, (i + 1) % count} - {i}}
    return metrics.user_matrix(topology, pairs)


def pattern_traffic(topology: Topology, name: str, level: str = "host", seed: int = 0) -> np.ndarray:
    """A synthetic pattern (§5.3) as a switch traffic matrix.

    ``name``: all_to_all, nearest_neighbour, bit_reversal, transpose,
    random_permutation (aliases: uniform, matrix_transpose, ...).
    ``level="host"`` runs the pattern over the hosts (the paper's choice;
    bit reversal needs a power-of-two host count, transpose a square one);
    ``level="switch"`` over the switches, one endpoint each."""
    key = PATTERN_ALIASES.get(name, name)
    if key not in PATTERN_NAMES:
        raise SelectionError("traffic: unknown pattern %r (patterns: %s)"
                             % (name, ", ".join(PATTERN_NAMES)))
    if level not in ("host", "switch"):
        raise SelectionError("traffic level: must be host or switch, got %r" % (level,))
    if key == "nearest_neighbour":
        return nearest_neighbour(topology, level)
    view = topology if level == "host" else _switch_view(topology)
    function: Any = {"all_to_all": metrics.uniform, "bit_reversal": metrics.bit_reversal,
                     "transpose": metrics.matrix_transpose}.get(key)
    try:
        if key == "random_permutation":
            return metrics.random_permutation(view, seed)
        return function(view)
    except metrics.MetricsError as exc:
        raise SelectionError("traffic %s (%s level): %s" % (name, level, exc)) from None


def traffic_matrix(topology: Topology, traffic: Any = None, level: str = "host") -> np.ndarray:
    """Normalise ``traffic`` into an ``(n, n)`` float array: None (all-to-all),
    a pattern name, ``{(src_host, dst_host): bytes}`` / ``{src: {dst: bytes}}``
    (e.g. summed from an MPI trace; :func:`metrics.user_matrix`), or an
    array-like already over switches. The diagonal (same-switch traffic)
    is dropped."""
    if traffic is None:
        return pattern_traffic(topology, "all_to_all", level)
    if isinstance(traffic, str):
        return pattern_traffic(topology, traffic, level)
    if isinstance(traffic, dict):
        try:
            return metrics.user_matrix(topology, traffic)
        except metrics.MetricsError as exc:
            raise SelectionError("traffic: %s" % exc) from None
    n = len(topology.switches)
    try:
        matrix = np.array(traffic, dtype=np.float64)
    except (TypeError, ValueError):
        raise SelectionError("traffic: must be a pattern name, {(src_host, dst_host): bytes} or "
                             "an (n, n) array of numbers over the switches") from None
    if matrix.shape != (n, n):
        raise SelectionError("traffic: an array must have shape (%d, %d), one row and column per "
                             "switch, got %r" % (n, n, matrix.shape))
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise SelectionError("traffic: every volume must be a finite number >= 0")
    np.fill_diagonal(matrix, 0.0)
    return matrix


def _port_endpoint(topology: Topology, ref: Any, where: str) -> Endpoint:
    """The switch port ``ref`` (``"sw:port"`` or a host name) names."""
    if isinstance(ref, str) and ref in topology.hosts:
        host = topology.hosts[ref]
        return Endpoint(host.switch, host.port)
    switch, colon, port = str(ref).partition(":")
    if not colon or switch not in topology.switches:
        raise SelectionError("%s: %r is not \"switch:port\" of the fabric (nor a host name)"
                             % (where, ref))
    return Endpoint(switch, port)


def _counter(value: Any, where: str) -> float:
    """``value`` as a byte count (a finite number >= 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not math.isfinite(value) or value < 0:
        raise SelectionError("%s: a byte count must be a number >= 0, got %r" % (where, value))
    return float(value)


def _flatten_counters(counters: Any, where: str) -> dict[Any, Any]:
    """``{"sw:port": x}`` from ``{"sw:port": x}`` or ``{sw: {port: x}}``."""
    if not isinstance(counters, dict):
        raise SelectionError("%s: must be a mapping {\"switch:port\": value} or "
                             "{switch: {port: value}}" % where)
    flat = {}
    for key, value in counters.items():
        if isinstance(value, dict) and ":" not in str(key) and not _is_counter_pair(value):
            for port, inner in value.items():
                flat["%s:%s" % (key, port)] = inner
        else:
            flat[key] = value
    return flat


def _is_counter_pair(value: dict[str, Any]) -> bool:
    """Whether ``value`` is one port's counters (not a switch's ports)."""
    return bool(set(value) & {"rx_bytes", "tx_bytes"})


def channel_loads_from_counters(topology: Topology, counters: dict[Any, Any]) -> np.ndarray:
    """Channel loads from measured switch-port counters: the bytes a port
    *transmitted* during the period are the load of the channel leaving it.
    ``counters``: ``{"sw:port": tx_bytes}`` or ``{sw: {port: tx_bytes}}``
    (deltas over one period). Ports that are no switch-to-switch link in
    the topology (host ports, unused ports, a switch's local port) are
    skipped; ports not given count 0; an unknown switch is an error."""
    loads = np.zeros(len(topology.channels))
    for ref, value in _flatten_counters(counters, "counters").items():
        where = "counters[%s]" % (ref,)
        endpoint = _port_endpoint(topology, ref, where)
        count = _counter(value, where)
        channel = topology.channel_from(endpoint.switch, endpoint.port)
        if channel is not None:
            loads[channel.id] = count
    return loads


def channel_utilisation(topology: Topology, channel_bytes: Any, interval_s: float,
                        speeds: dict[Any, Any] | None = None) -> np.ndarray:
    """Utilisation (fraction of capacity) of each channel: bytes sent during
    ``interval_s`` seconds over the link speed (topology's, or ``speeds``
    ``{link ref: Mb/s}``)."""
    if isinstance(interval_s, bool) or not isinstance(interval_s, (int, float)) \
            or not interval_s > 0:
        raise SelectionError("interval_s: must be a number of seconds > 0, got %r" % (interval_s,))
    link_speeds = np.repeat(np.array(resolve_link_speeds(topology, speeds), dtype=float), 2)
    return np.asarray(channel_bytes, dtype=float) * 8.0 / (interval_s * 1e6 * link_speeds)


def traffic_from_host_counters(topology: Topology, counters: dict[Any, Any]) -> np.ndarray:
    """Estimate a traffic matrix from host-port counters with the gravity
    model: hosts on switch ``s`` inject ``in[s]`` bytes (``rx_bytes`` of
    their switch ports), hosts on ``t`` receive ``out[t]`` (``tx_bytes``),
    and ``T[s, t] = in[s] * out[t] / sum(out[u], u != s)``. ``counters``:
    ``{host name or "sw:port": {"rx_bytes": .., "tx_bytes": ..}}``. Only an
    estimate (the counters do not say who talks to whom); an MPI trace is
    better when there is one."""
    n = len(topology.switches)
    index = {name: sw.index for name, sw in topology.switches.items()}
    host_ports = {Endpoint(h.switch, h.port) for h in topology.hosts.values()}
    injected, received = np.zeros(n), np.zeros(n)
    for ref, value in _flatten_counters(counters, "counters").items():
        where = "counters[%s]" % (ref,)
        endpoint = _port_endpoint(topology, ref, where)
        if endpoint not in host_ports:
            raise SelectionError("%s: %s is no host port" % (where, ref))
        if not isinstance(value, dict) or set(value) - {"rx_bytes", "tx_bytes"}:
            raise SelectionError("%s: must be {rx_bytes: .., tx_bytes: ..}" % where)
        injected[index[endpoint.switch]] += _counter(value.get("rx_bytes", 0), where + ".rx_bytes")
        received[index[endpoint.switch]] += _counter(value.get("tx_bytes", 0), where + ".tx_bytes")
    others = received.sum() - received
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(others[:, None] > 0, received[None, :] / others[:, None], 0.0)
    traffic = injected[:, None] * share
    np.fill_diagonal(traffic, 0.0)
    return traffic


# ------------------------------------------------------------- evaluation
class Evaluation(NamedTuple):
    """The outcome of routing the fabric with a set of links off."""

    ok: bool
    reason: str
    loads: Any = None           # numpy array per channel, or None
    routing: Any = None         # RoutingFunction, or None
    max_load: float = 0.0
    max_utilisation: float = 0.0


class LinkSelectionProblem:
    """A fabric, its traffic and a routing engine: the baseline (all links
    that are up in the topology on) and a cache of evaluated link sets, so
    several selectors can share routing work.

    ``evaluations`` counts routing computations (cache misses)."""

    def __init__(self, topology: Topology, traffic: Any, engine: str,
                 engine_options: dict[str, Any] | None = None, level: str = "host",
                 router: Callable[[list[int]], RoutingFunction] | None = None) -> None:
        if not isinstance(topology, Topology):
            raise SelectionError("expected a Topology (from load_topology or topology_from_data), "
                                 "got %s" % type(topology).__name__)
        self.topology = topology
        self.traffic = traffic_matrix(topology, traffic, level)
        self.engine = engine
        self.engine_options = dict(engine_options or {})
        # down links -> RoutingFunction; default: the engine afresh. The
        # power-saving playbook passes transition.kept_order_router, the
        # routings its transitions push.
        self.router = router
        self.capacity = np.repeat(np.array([link.speed_mbps for link in topology.links],
                                           dtype=float), 2)
        self.candidates = [link.index for link in topology.links if link.state == "up"]
        self.evaluations = 0
        self._cache: dict[frozenset[int], Evaluation] = {}
        self.baseline = self.evaluate(frozenset())
        if not self.baseline.ok:
            raise SelectionError("baseline: with every link on, %s" % self.baseline.reason)
        self.limit = self.baseline.max_utilisation

    def link_ref(self, index: int) -> str:
        """How plans name a link: ``"sw:port"`` of its first end."""
        return str(self.topology.links[index].a)

    def fits(self, utilisation: float) -> bool:
        """Whether ``utilisation`` stays within the baseline maximum."""
        return utilisation <= self.limit * (1 + TOLERANCE) + 1e-15

    def evaluate(self, off: Iterable[int]) -> Evaluation:
        """Route with the links ``off`` (a set of indexes) turned off; check
        connectivity, the routing, its CDG and the channel loads."""
        off = frozenset(off)
        if off in self._cache:
            return self._cache[off]
        result = self._evaluate(off)
        self._cache[off] = result
        return result

    def _evaluate(self, off: frozenset[int]) -> Evaluation:
        """The uncached :meth:`evaluate`."""
        topology = self.topology
        if off and not nx.is_connected(topology.switch_graph(down=off)):
            return Evaluation(False, "the fabric would split")
        self.evaluations += 1
        try:
            if self.router is not None:
                routing = self.router(sorted(off))
            else:
                routing = compute_routing(topology, self.engine, down=sorted(off),
                                          **self.engine_options)
        except (RoutingError, TopologyError) as exc:
            return Evaluation(False, "%s cannot route it: %s" % (self.engine, exc))
        report = verify_routing(routing)
        if not report["ok"]:
            if not report["acyclic"]:
                why = "its channel dependency graph has a cycle (%s)" % " => ".join(report["cycle"])
            elif not report["connected"]:
                why = "%d pairs are not connected" % report["unreachable_count"]
            else:
                why = "verification failed (down links used, U-turns or inconsistent tables)"
            return Evaluation(False, "%s routing rejected: %s" % (self.engine, why))
        loads = metrics.channel_loads(topology, routing.paths(), self.traffic)
        utilisation = loads / self.capacity
        max_util = float(utilisation.max()) if utilisation.size else 0.0
        max_load = float(loads.max()) if loads.size else 0.0
        if off and not self.fits(max_util):
            busiest = int(np.argmax(utilisation))
            return Evaluation(False, "channel %s would carry %.4g, %.3gx the baseline maximum"
                              % (topology.channels[busiest], loads[busiest],
                                 max_util / self.limit if self.limit else math.inf),
                              loads, routing, max_load, max_util)
        return Evaluation(True, "ok", loads, routing, max_load, max_util)

    def lowest_speeds(self, loads: np.ndarray, off: Any, model: LinkPowerModel,
                      speeds: Iterable[int] | None) -> dict[int, int]:
        """Multispeed step (§3.6 item 3): for every link on, the lowest speed
        of ``speeds`` (not above its own, with a power figure at both ends)
        at which both its channels stay within the baseline maximum
        utilisation. Returns ``{link index: speed}`` for the lowered ones."""
        allowed = sorted({int(s) for s in speeds or ()})
        lowered: dict[int, int] = {}
        if not allowed:
            return lowered
        for index in self.candidates:
            if index in off:
                continue
            current = self.topology.links[index].speed_mbps
            load = max(loads[2 * index], loads[2 * index + 1])
            supported = set(model.speeds(index))
            for speed in allowed:
                if speed >= current:
                    break
                if speed in supported and self.fits(load / speed):
                    lowered[index] = speed
                    break
        return lowered


def _check_speeds(speeds: Any) -> tuple[int, ...]:
    """The allowed link speeds as a tuple of whole Mb/s (``()`` for None)."""
    if speeds is None:
        return ()
    if isinstance(speeds, int):
        speeds = (speeds,)
    try:
        values = tuple(speeds)
    except TypeError:
        raise SelectionError("speeds: must be a list of Mb/s such as [1000, 100, 10], got %r"
                             % (speeds,)) from None
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise SelectionError("speeds: %r is not a whole number of Mb/s" % (value,))
    return values


# ----------------------------------------------------------------- result
class SelectionResult:
    """What a selector chose and what it saves.

    ``links_off`` (indexes, in the order turned off), ``speeds`` (``{link
    index: Mb/s}`` for lowered links), ``max_load_before/after`` (traffic
    units), ``max_utilisation_before/after`` (load per Mb/s),
    ``watts_before``, ``watts_on_off`` (after turning links off, before the
    speed step), ``watts_after``, ``saved_w``, ``saved_pct``, ``engine``,
    ``steps`` (every attempt: ``{"action", "link", "accepted", "reason"}``),
    ``evaluations`` (routings computed), ``routing`` (the final
    RoutingFunction) and ``channel_loads`` (final, per channel)."""

    def __init__(self, problem: LinkSelectionProblem, selector: str, off: Iterable[int],
                 speeds: dict[int, int], evaluation: Evaluation, model: LinkPowerModel,
                 steps: list[dict[str, Any]], evaluations: int) -> None:
        self.topology = problem.topology
        self.selector = selector
        self.engine = problem.engine
        self.engine_options = dict(problem.engine_options)
        self.links_off = list(off)
        self.speeds = dict(sorted(speeds.items()))
        self.routing = evaluation.routing
        self.channel_loads = evaluation.loads
        self.max_load_before = problem.baseline.max_load
        self.max_load_after = evaluation.max_load
        self.max_utilisation_before = problem.limit
        capacity = problem.capacity.copy()
        for index, speed in self.speeds.items():
            capacity[2 * index:2 * index + 2] = speed
        self.max_utilisation_after = float((evaluation.loads / capacity).max()) \
            if evaluation.loads.size else 0.0
        self.watts_before = model.total()
        self.watts_on_off = model.total(off)
        self.watts_after = model.total(off, self.speeds)
        self.saved_w = self.watts_before - self.watts_after
        self.saved_pct = 100.0 * self.saved_w / self.watts_before if self.watts_before else 0.0
        self.steps = steps
        self.evaluations = evaluations

    def link_ref(self, index: int) -> str:
        """How plans name a link: ``"sw:port"`` of its first end."""
        return str(self.topology.links[index].a)

    def plan(self) -> list[dict[str, Any]]:
        """Ordered actions for the transition planner: links off first (in
        the order chosen), then speed changes::

            [{"action": "off", "link": "sw0:3"},
             {"action": "speed", "link": "sw2:5", "speed_mbps": 100}]"""
        actions: list[dict[str, Any]] = [{"action": "off", "link": self.link_ref(i)}
                                         for i in self.links_off]
        actions.extend({"action": "speed", "link": self.link_ref(i), "speed_mbps": speed}
                       for i, speed in self.speeds.items())
        return actions

    def to_data(self) -> dict[str, Any]:
        """Plain data (JSON-serialisable) for reports and playbooks."""
        return {
            "selector": self.selector, "engine": self.engine,
            "engine_options": self.engine_options,
            "links_off": [self.link_ref(i) for i in self.links_off],
            "speeds": {self.link_ref(i): s for i, s in self.speeds.items()},
            "max_load_before": round(self.max_load_before, 6),
            "max_load_after": round(self.max_load_after, 6),
            "max_utilisation_before": self.max_utilisation_before,
            "max_utilisation_after": self.max_utilisation_after,
            "watts_before": round(self.watts_before, 3),
            "watts_on_off": round(self.watts_on_off, 3),
            "watts_after": round(self.watts_after, 3),
            "saved_w": round(self.saved_w, 3), "saved_pct": round(self.saved_pct, 2),
            "evaluations": self.evaluations, "steps": list(self.steps), "plan": self.plan(),
        }

    def __repr__(self) -> str:
        return "<SelectionResult %s/%s: %d links off, %d slowed, %.1f%% saved>" % (
            self.selector, self.engine, len(self.links_off), len(self.speeds), self.saved_pct)


def _problem(topology: Topology, traffic: Any, engine: str, engine_options: dict[str, Any] | None,
             problem: LinkSelectionProblem | None) -> LinkSelectionProblem:
    """``problem`` when it fits the topology and engine, else a new one."""
    if problem is not None:
        if problem.topology is not topology or problem.engine != engine:
            raise SelectionError("problem: was built for another topology or engine")
        return problem
    return LinkSelectionProblem(topology, traffic, engine, engine_options)


# ----------------------------------------------------------------- greedy
def greedy_selection(topology: Topology, traffic: Any, engine: str,
                     engine_options: dict[str, Any] | None = None, speeds: Any = DEFAULT_SPEEDS,
                     profiles: dict[str, Any] | None = None, default_profile: str = DEFAULT_PROFILE,
                     problem: LinkSelectionProblem | None = None) -> SelectionResult:
    """The paper's static on/off link selection (§5.4.2) plus the multispeed
    step (§3.6). See the module doc for the rules and the order.

    ``traffic``: see :func:`traffic_matrix`; ``engine``/``engine_options``:
    the routing engine re-run for every trial; ``speeds``: the allowed link
    speeds (``(1000,)`` or ``()`` = on/off only); ``profiles``: user power
    profiles (:func:`power.power_profiles`). ``problem``: a
    :class:`LinkSelectionProblem` to reuse (its cache), else one is built.
    """
    speeds = _check_speeds(speeds)
    problem = _problem(topology, traffic, engine, engine_options, problem)
    model = LinkPowerModel(topology, profiles, default_profile)
    baseline = problem.baseline.loads
    order = sorted(problem.candidates,
                   key=lambda i: (max(baseline[2 * i], baseline[2 * i + 1]), i))
    off, current, steps = _paper_pass(problem, order)
    lowered = problem.lowest_speeds(current.loads, set(off), model, speeds)
    speed_steps = _speed_steps(problem, lowered, current.loads)
    return SelectionResult(problem, "greedy", off, lowered, current, model, steps + speed_steps,
                           len(steps) + 1)


def _paper_pass(problem: LinkSelectionProblem, order: Iterable[int],
                evaluate: Callable[[Any], Evaluation] | None = None) -> tuple[list[int], Evaluation, list[dict[str, Any]]]:
    """§5.4.2 step 2: one pass over ``order``, keeping every link off whose
    removal stays feasible. Returns (off list, evaluation, steps)."""
    evaluate = evaluate or problem.evaluate
    off: list[int] = []
    steps: list[dict[str, Any]] = []
    current = problem.baseline
    for index in order:
        trial = evaluate(set(off) | {index})
        steps.append({"action": "off", "link": problem.link_ref(index), "accepted": trial.ok,
                      "reason": "kept off" if trial.ok else trial.reason})
        if trial.ok:
            off.append(index)
            current = trial
    return off, current, steps


def _speed_steps(problem: LinkSelectionProblem, lowered: dict[int, int],
                 loads: np.ndarray) -> list[dict[str, Any]]:
    """The steps that record the lowered speeds."""
    return [{"action": "speed", "link": problem.link_ref(i), "speed_mbps": speed, "accepted": True,
             "reason": "load %.4g per %d Mb/s stays within the baseline maximum utilisation"
                       % (max(loads[2 * i], loads[2 * i + 1]), speed)}
            for i, speed in sorted(lowered.items())]


# ----------------------------------------------------------------- search
class _Search:
    """State of :func:`search_selection`: the objective (watts after the
    speed step) of evaluated sets and the evaluation budget."""

    def __init__(self, problem: LinkSelectionProblem, model: LinkPowerModel, speeds: tuple[int, ...],
                 budget: int) -> None:
        self.problem = problem
        self.model = model
        self.speeds = speeds
        self.budget = budget
        self.seen: set[frozenset[int]] = set()
        self.steps: list[dict[str, Any]] = []

    def evaluate(self, off: Iterable[int]) -> Evaluation:
        """Every distinct set counts against the budget, cached or not, so
        the result does not depend on what earlier calls computed."""
        off = frozenset(off)
        self.seen.add(off)
        return self.problem.evaluate(off)

    def exhausted(self) -> bool:
        """Whether the budget of distinct link sets is spent."""
        return len(self.seen) >= self.budget

    def watts(self, off: frozenset[int], evaluation: Evaluation) -> float:
        """Fabric watts after the speed step (infinite when infeasible)."""
        if not evaluation.ok:
            return math.inf
        lowered = self.problem.lowest_speeds(evaluation.loads, off, self.model, self.speeds)
        return self.model.total(off, lowered)

    def try_set(self, off: frozenset[int], note: tuple[str, str]) -> tuple[Evaluation, float | None]:
        """Evaluate ``off``; ``(evaluation, watts)`` or ``(evaluation, None)``."""
        evaluation = self.evaluate(off)
        watts = self.watts(off, evaluation) if evaluation.ok else None
        self.steps.append({"action": note[0], "link": note[1], "accepted": False,
                           "reason": evaluation.reason if watts is None else
                           "%.3f W" % watts})
        return evaluation, watts

    def first_fit(self, order: Iterable[int], off: Iterable[int] = (), passes: int = 3,
                  accept_any: bool = False) -> tuple[list[int], Evaluation, float]:
        """Turn links of ``order`` off one by one when the result is feasible
        and draws less (``accept_any``: whenever it is feasible, the paper's
        rule, which never draws more with on/off only); repeat over the
        rejected ones while that helps. Returns (off, evaluation, watts)."""
        off = list(off)
        current = self.evaluate(off)
        watts = self.watts(frozenset(off), current)
        pending = [i for i in order if i not in off]
        for _pass in range(passes):
            rejected = []
            for index in pending:
                if self.exhausted():
                    return off, current, watts
                evaluation, new_watts = self.try_set(frozenset(off) | {index},
                                                     ("off", self.problem.link_ref(index)))
                if new_watts is not None and (accept_any or new_watts < watts - 1e-9):
                    off.append(index)
                    current, watts = evaluation, new_watts
                    self.steps[-1]["accepted"] = True
                else:
                    rejected.append(index)
            if len(rejected) == len(pending):
                break
            pending = rejected
        return off, current, watts


def search_selection(topology: Topology, traffic: Any, engine: str,
                     engine_options: dict[str, Any] | None = None, speeds: Any = DEFAULT_SPEEDS,
                     profiles: dict[str, Any] | None = None, default_profile: str = DEFAULT_PROFILE,
                     seed: int = 0, restarts: int = 2, kick: int = 3, max_evaluations: int = 400,
                     problem: LinkSelectionProblem | None = None) -> SelectionResult:
    """Our selector: same constraints as :func:`greedy_selection` (connected,
    routed, CDG acyclic, every channel within the baseline maximum
    utilisation), minimising the watts after the speed step.

    1. The paper's pass (least-loaded first, any feasible link off), then
       one more pass over the links it rejected, since the routing changed
       meanwhile: the search never ends above the greedy selector's watts.
    2. ``restarts`` first-fit passes from all links on, in the paper's order
       perturbed by seeded noise (``numpy.random.default_rng(seed)``).
    3. Iterated local search until the budget is spent: turn 1 to ``kick``
       random links of the best set back on, then first-fit over the links
       on, least loaded first. A move is kept when it lowers the watts.

    With several ``speeds``, passes alternate between accepting any
    feasible link off and accepting only when the watts after the speed
    step drop (turning a link off can stop others from running slower).

    ``max_evaluations`` bounds the distinct link sets evaluated by this call
    (each costs one routing unless the problem's cache has it; cached ones
    count too, so the result depends only on the inputs and the seed). The
    paper's pass always completes (one set per candidate link)."""
    speeds = _check_speeds(speeds)
    _check_search_options(seed, restarts, kick, max_evaluations)
    problem = _problem(topology, traffic, engine, engine_options, problem)
    model = LinkPowerModel(topology, profiles, default_profile)
    search = _Search(problem, model, speeds, max_evaluations)
    off, evaluation, _watts = _search_rounds(search, problem, speeds, seed, restarts, kick)
    lowered = problem.lowest_speeds(evaluation.loads, frozenset(off), model, speeds)
    steps = search.steps + _speed_steps(problem, lowered, evaluation.loads)
    return SelectionResult(problem, "search", off, lowered, evaluation, model, steps,
                           len(search.seen))


def _check_search_options(seed: Any, restarts: Any, kick: Any, max_evaluations: Any) -> None:
    """Refuse a seed or a budget that is not a whole number >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SelectionError("seed: must be a whole number >= 0, got %r" % (seed,))
    for name, value in (("restarts", restarts), ("kick", kick),
                        ("max_evaluations", max_evaluations)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SelectionError("%s: must be a whole number >= 0, got %r" % (name, value))


def _search_rounds(search: _Search, problem: LinkSelectionProblem, speeds: tuple[int, ...],
                   seed: int, restarts: int, kick: int) -> tuple[list[int], Evaluation, float]:
    """Steps 1-3 of :func:`search_selection` until the budget is spent: the
    best ``(off, evaluation, watts)`` found."""
    rng = np.random.default_rng(seed)
    baseline = problem.baseline.loads
    link_load = {i: max(baseline[2 * i], baseline[2 * i + 1]) for i in problem.candidates}
    scale = max(link_load.values(), default=0.0) or 1.0
    first = sorted(problem.candidates, key=lambda i: (link_load[i], i))

    # Start from the paper's pass (shared through the problem's cache), so
    # the search never ends worse than the greedy selector; then re-try the
    # links it rejected, the routing having changed since.
    search.evaluate(frozenset())
    paper_off, _evaluation, paper_steps = _paper_pass(problem, first, search.evaluate)
    search.steps.extend(paper_steps)
    paper = search.first_fit(first, paper_off, passes=0)
    best = search.first_fit(first, paper_off, passes=1)
    if paper[2] < best[2]:
        best = paper
    round_number = 0
    while not search.exhausted():
        # With several speeds, odd rounds build with the paper's rule (any
        # feasible link off) and even ones with the watts after the speed
        # step: turning a link off can stop others from running slower, so
        # neither rule alone finds the best sets.
        accept_any = bool(speeds) and round_number % 2 == 1
        if round_number < restarts:
            # Restart: least-loaded-first order perturbed by noise of up to
            # half the largest baseline load, from every link on.
            noise = rng.random(len(first)) * 0.5 * scale
            keyed = sorted((link_load[i] + noise[k], i) for k, i in enumerate(first))
            order = [i for _key, i in keyed]
            found = search.first_fit(order, passes=1, accept_any=accept_any)
        else:
            found = _kick(search, best, rng, kick, accept_any)
        round_number += 1
        if found[2] < best[2] - 1e-9:
            best = found
        if round_number > restarts + 4 * len(first):
            break  # budget larger than the neighbourhood: stop
    return best


def _kick(search: _Search, best: tuple[list[int], Evaluation, float], rng: np.random.Generator,
          kick: int, accept_any: bool = False) -> tuple[list[int], Evaluation, float]:
    """Iterated local search move: turn ``kick`` random links of the best set
    back on (at least one), then first-fit over the links that are on,
    least loaded first under the best set's routing (random ties)."""
    off, evaluation, _watts = best
    loads = evaluation.loads
    count = min(len(off), max(1, int(rng.integers(1, kick + 1))))
    back = set(rng.choice(off, size=count, replace=False).tolist()) if count else set()
    rest = [i for i in off if i not in back]
    on = [i for i in search.problem.candidates if i not in rest]
    jitter = rng.random(len(on))
    order = [i for _key, _j, i in sorted((max(loads[2 * i], loads[2 * i + 1]), jitter[k], i)
                                         for k, i in enumerate(on))]
    found = search.first_fit(order, rest, passes=1, accept_any=accept_any)
    return found[0], found[1], search.watts(frozenset(found[0]), found[1])


# ----------------------------------------------------------------- decide
def _thresholds(thresholds: Any) -> dict[str, Any]:
    """The thresholds of :func:`decide` over the defaults, checked."""
    values = dict(DEFAULT_THRESHOLDS)
    if thresholds is not None:
        if not isinstance(thresholds, dict):
            raise SelectionError("thresholds: must be a mapping such as {off_below: 0.2, "
                                 "on_above: 0.6, samples: 3}")
        for key in thresholds:
            if key not in DEFAULT_THRESHOLDS:
                raise SelectionError("thresholds.%s: unknown field (fields: %s)"
                                     % (key, ", ".join(DEFAULT_THRESHOLDS)))
        values.update(thresholds)
    for key in ("off_below", "on_above"):
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0 <= value <= 1:
            raise SelectionError("thresholds.%s: must be a fraction of capacity from 0 to 1, "
                                 "got %r" % (key, value))
    if values["off_below"] >= values["on_above"]:
        raise SelectionError("thresholds.off_below (%s) must be below thresholds.on_above (%s): "
                             "the gap between them is the hysteresis"
                             % (values["off_below"], values["on_above"]))
    for key in ("samples", "max_changes"):
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SelectionError("thresholds.%s: must be a whole number >= 1, got %r" % (key, value))
    return values


def _samples(topology: Topology, utilisation: Any) -> np.ndarray:
    """A (samples, channels) array from one sample or a list of samples;
    a sample is a per-channel sequence or ``{"sw:port" (sending port): util}``."""
    if isinstance(utilisation, dict) or (
            isinstance(utilisation, (list, tuple, np.ndarray)) and len(utilisation)
            and np.ndim(utilisation[0]) == 0 and not isinstance(utilisation[0], dict)):
        utilisation = [utilisation]
    if not isinstance(utilisation, (list, tuple, np.ndarray)) or not len(utilisation):
        raise SelectionError("utilisation: must be a list of samples (oldest first), each a "
                             "list per channel id or {\"switch:port\": utilisation}")
    rows = []
    for k, sample in enumerate(utilisation):
        where = "utilisation[%d]" % k
        if isinstance(sample, dict):
            row = np.zeros(len(topology.channels))
            for ref, value in sample.items():
                endpoint = _port_endpoint(topology, ref, "%s[%s]" % (where, ref))
                channel = topology.channel_from(endpoint.switch, endpoint.port)
                if channel is None:
                    raise SelectionError("%s[%s]: not a port of a switch-to-switch link"
                                         % (where, ref))
                row[channel.id] = _fraction(value, "%s[%s]" % (where, ref))
        else:
            try:
                row = np.array(sample, dtype=float)
            except (TypeError, ValueError):
                raise SelectionError("%s: must be numbers, one per channel" % where) from None
            if row.shape != (len(topology.channels),):
                raise SelectionError("%s: must hold %d values (one per channel id), got %r"
                                     % (where, len(topology.channels), row.shape))
            if not np.all(np.isfinite(row)) or np.any(row < 0):
                raise SelectionError("%s: utilisations must be finite numbers >= 0" % where)
        rows.append(row)
    return np.vstack(rows)


def _fraction(value: Any, where: str) -> float:
    """``value`` as a utilisation (a finite number >= 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not math.isfinite(value) or value < 0:
        raise SelectionError("%s: a utilisation must be a number >= 0, got %r" % (where, value))
    return float(value)


def decide(topology: Topology, link_states: dict[Any, Any] | None, speeds: dict[Any, Any] | None,
           utilisation: Any, thresholds: dict[str, Any] | None = None,
           can_turn_off: Callable[[int, set[int]], str | None] | None = None) -> dict[str, Any]:
    """One decision of the scheduled power-save run, from measured channel
    utilisation (fraction of each channel's *current* capacity).

    ``link_states``/``speeds``: the fabric now (``{link ref: state}``,
    ``{link ref: Mb/s}`` over the topology's; None = as in the topology).
    ``utilisation``: samples, oldest first (one sample alone is accepted).
    ``thresholds``: ``off_below`` (0.2), ``on_above`` (0.6), ``samples``
    (N = 3), ``max_changes`` (1 per run).

    Rules, in order:

    1. If the busiest channel of the latest sample is above ``on_above``:
       restore the full (topology) speed of busy slowed links, else turn
       on a link that is off (one parallel to the busiest channel first,
       then one touching its switches, then the lowest index). Nothing is
       turned off in that run.
    2. Else, with at least N samples: turn off links whose two channels
       stayed below ``off_below`` in each of the last N samples, quietest
       first, if the fabric stays connected and the busiest channel plus
       the link's peak stays at or below ``on_above`` (so the move cannot
       trigger rule 1 at once: the gap is the hysteresis).

    Links down in the topology file are the operator's and never turned
    on. ``can_turn_off``: optional ``function(link index, links already
    down) -> reason or None`` that vetoes an off (the power-saving playbook
    passes one that refuses links only a lossy drain could switch off). Returns
    ``{"actions": [{"action": "off"|"on"|"speed", "link",
    ["speed_mbps"], "reason"}], "log": [lines], "max_utilisation",
    "busiest"}``; actions are proposals that the planner re-routes and
    verifies before anything changes."""
    limits = _thresholds(thresholds)
    try:
        states = resolve_link_states(topology, link_states)
        current_speeds = resolve_link_speeds(topology, speeds)
    except EtherclusterError as exc:
        raise SelectionError(str(exc)) from None
    samples = _samples(topology, utilisation)
    up = [i for i, state in enumerate(states) if state == "up"]
    off = [i for i, state in enumerate(states)
           if state == "down" and topology.links[i].state == "up"]
    latest = samples[-1]
    up_channels = np.array([c for i in up for c in (2 * i, 2 * i + 1)], dtype=np.int64)
    log: list[str] = []
    if not up_channels.size:
        raise SelectionError("link_states: every link is down; nothing to measure")
    busiest = int(up_channels[np.argmax(latest[up_channels])])
    peak = float(latest[busiest])
    busy_channel = topology.channels[busiest]
    log.append("busiest channel %s at %.0f%% (on_above %.0f%%, off_below %.0f%%)"
               % (busy_channel, 100 * peak, 100 * limits["on_above"], 100 * limits["off_below"]))
    now = _Measured(states, current_speeds, up, off, samples, latest, busy_channel, peak)
    if peak > limits["on_above"]:
        actions = _decide_on(topology, limits, now, log)
    else:
        actions = _decide_off(topology, limits, now, log, can_turn_off)
    return {"actions": actions, "log": log, "max_utilisation": peak, "busiest": str(busy_channel)}


class _Measured(NamedTuple):
    """The fabric as :func:`decide` sees it: link states and speeds (per
    link index), the links on and those off (not the file's), the samples,
    the latest one and its busiest channel."""

    states: list[str]
    speeds: list[int]
    up: list[int]
    off: list[int]
    samples: np.ndarray
    latest: np.ndarray
    busy_channel: Channel
    peak: float


def _link_ref(topology: Topology, index: int) -> str:
    """How actions name a link: ``"sw:port"`` of its first end."""
    return str(topology.links[index].a)


def _decide_on(topology: Topology, limits: dict[str, Any], now: _Measured,
               log: list[str]) -> list[dict[str, Any]]:
    """Rule 1 of :func:`decide` (busiest channel above ``on_above``): restore
    the speed of busy slowed links, else turn on links that are off."""
    latest, peak, busy_channel = now.latest, now.peak, now.busy_channel
    actions: list[dict[str, Any]] = []
    slowed = [i for i in now.up if now.speeds[i] < topology.links[i].speed_mbps
              and max(latest[2 * i], latest[2 * i + 1]) > limits["on_above"]]
    slowed.sort(key=lambda i: -max(latest[2 * i], latest[2 * i + 1]))
    for index in slowed[:limits["max_changes"]]:
        full = topology.links[index].speed_mbps
        reason = ("%s at %.0f%% of %d Mb/s > on_above %.0f%%: back to %d Mb/s"
                  % (topology.links[index].name, 100 * max(latest[2 * index], latest[2 * index + 1]),
                     now.speeds[index], 100 * limits["on_above"], full))
        actions.append({"action": "speed", "link": _link_ref(topology, index), "speed_mbps": full,
                        "reason": reason})
        log.append(reason)
    room = limits["max_changes"] - len(actions)
    if room > 0 and now.off:
        pair = {busy_channel.src, busy_channel.dst}

        def preference(index: int) -> tuple[int, int]:
            link = topology.links[index]
            ends = {link.a.switch, link.b.switch}
            return (0 if ends == pair else 1 if ends & pair else 2, index)

        for index in sorted(now.off, key=preference)[:room]:
            reason = ("busiest channel %s at %.0f%% > on_above %.0f%%: turning %s on"
                      % (busy_channel, 100 * peak, 100 * limits["on_above"],
                         topology.links[index].name))
            actions.append({"action": "on", "link": _link_ref(topology, index), "reason": reason})
            log.append(reason)
    elif not actions:
        log.append("above on_above but every link is on at full speed: nothing to add")
    return actions


def _decide_off(topology: Topology, limits: dict[str, Any], now: _Measured, log: list[str],
                can_turn_off: Callable[[int, set[int]], str | None] | None) -> list[dict[str, Any]]:
    """Rule 2 of :func:`decide`: with N samples, turn off links that stayed
    quiet in each, quietest first, when the fabric stays connected, the
    hysteresis guard holds and ``can_turn_off`` does not veto. A veto with
    a ``quick`` pre-test (:class:`.measure.LosslessOff`) has the links that
    fail it tried last: they are planned only when the links that pass
    leave room under ``max_changes``."""
    actions: list[dict[str, Any]] = []
    window = limits["samples"]
    if len(now.samples) < window:
        log.append("%d of %d samples: waiting before turning links off" % (len(now.samples), window))
        return actions
    recent = now.samples[-window:]
    link_peak = {i: float(max(recent[:, 2 * i].max(), recent[:, 2 * i + 1].max())) for i in now.up}
    quiet = sorted((i for i in now.up if link_peak[i] < limits["off_below"]),
                   key=lambda i: (link_peak[i], i))
    quick = getattr(can_turn_off, "quick", None)
    chosen: set[int] = set()
    later: list[int] = []
    for second_pass in (False, True):  # the second: the links the pre-test sent back, planned in full
        for index in later if second_pass else quiet:
            if len(chosen) >= limits["max_changes"]:
                break
            down = _off_candidate(topology, limits, now, log, index, chosen, link_peak[index])
            if down is None:
                continue
            if not second_pass and quick is not None and (why := quick(index, down - {index})):
                log.append("trying %s last: %s" % (topology.links[index].name, why))
                later.append(index)
                continue
            veto = can_turn_off(index, down - {index}) if can_turn_off is not None else None
            if veto:
                log.append("keeping %s on: %s" % (topology.links[index].name, veto))
                continue
            chosen.add(index)
            reason = ("%s below off_below %.0f%% for the last %d samples (peak %.0f%%): turning off"
                      % (topology.links[index].name, 100 * limits["off_below"], window, 100 * link_peak[index]))
            actions.append({"action": "off", "link": _link_ref(topology, index), "reason": reason})
            log.append(reason)
    if not quiet:
        log.append("no link stayed below off_below for %d samples" % window)
    return actions


def _off_candidate(topology: Topology, limits: dict[str, Any], now: _Measured, log: list[str], index: int,
                   chosen: set[int], peak: float) -> set[int] | None:
    """The links down if ``index`` goes off too, or None (logged) when the
    hysteresis guard or the fabric's connectivity keeps it on."""
    name = topology.links[index].name
    if now.peak + peak > limits["on_above"]:
        log.append("keeping %s on: its %.0f%% on top of the busiest %.0f%% could pass on_above"
                   % (name, 100 * peak, 100 * now.peak))
        return None
    down = set(now.off) | chosen | {index} | {i for i, s in enumerate(now.states) if s == "down"}
    if not nx.is_connected(topology.switch_graph(down=down)):
        log.append("keeping %s on: the fabric would split" % name)
        return None
    return down
