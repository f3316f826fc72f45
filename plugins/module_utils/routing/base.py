# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every routing engine shares: the routing function, balanced path
selection under turn restrictions, and the set of links to avoid.

Ethernet forwarding is deterministic and has no virtual channels
(segment-based routing paper §1.1), so a routing is a *function*
``C x N -> C`` (switch-tagged paper §3.2: the renamed VLAN assignment can
implement exactly this relation; segment-based paper §4: an (input port,
destination) table per switch). :class:`RoutingFunction` stores it as one
dense table over *states*:

* state ``s < n`` is "injected by a host at switch ``s``" (no turn
  restriction applies to it),
* state ``n + c`` is "arrived at ``channels[c].dst`` over channel ``c``".

Deadlock freedom comes from turn prohibitions: an engine says which turns
``(in_channel, out_channel)`` are forbidden so that the channels with the
allowed turns form an acyclic graph (up*/down*, turn model, dimension
order, segments), and :func:`select_paths` picks, per destination, a
shortest *legal* path from every state, balancing channel load across
destinations the way DFSSSP does (accumulated weights; parallel links are
distinct channels, so they share the load too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from ..errors import EtherclusterError, TopologyError
from ..fabric.topology import Link

if TYPE_CHECKING:
    from ..fabric.topology import Topology


# Sweeps over the destinations when balancing (see select_paths).
DEFAULT_BALANCE_PASSES = 2
# Destinations routed one after the other per sweep; beyond this many
# switches, destinations go in batches sharing one weight snapshot.
SEQUENTIAL_STEPS = 32
# Up to this many (set x destination x channel) cells, the legal distances
# of every destination are computed once per routing, not once per batch.
DISTANCE_CACHE_CELLS = 1 << 22
# Up to this many (set x destination x state) cells, the shortest-path
# candidates of every batch are kept from the first sweep for the next.
LEVEL_CACHE_CELLS = 1 << 19


class RoutingError(EtherclusterError):
    """A routing cannot be computed, or a computed one is wrong. The message
    names the engine and the switch, link, option or pair at fault;
    ``pair`` is ``(source, destination)`` switch names when a pair has no
    legal path, else None."""

    pair: tuple[str, str] | None = None


def down_set(topology: Topology, down: Any = ()) -> frozenset[int]:
    """The links a routing must not use: ``down`` (link indexes, ``"sw:port"``
    of either end, link names ``"swA:p--swB:q"`` or :class:`Link` objects)
    plus every link whose state in the topology is ``down``.

    Returns a frozenset of link indexes; raises RoutingError naming a
    reference that is no link of the fabric.
    """
    if down is None:
        down = ()
    elif isinstance(down, (str, int, np.integer, Link)):
        down = [down]
    result = set(topology.down_links())
    for ref in down:
        if isinstance(ref, Link):
            ref = ref.index
        elif isinstance(ref, np.integer):
            ref = int(ref)
        try:
            result.add(topology.link(ref).index)
        except TopologyError as exc:
            raise RoutingError("down: %s" % "; ".join(exc.problems)) from None
    return frozenset(result)


def check_options(engine: str, options: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Raise RoutingError naming the first option ``engine`` does not take."""
    unknown = sorted(str(key) for key in options if key not in allowed)
    if unknown:
        raise RoutingError("%s: unknown option %r (options: %s)"
                           % (engine, unknown[0], ", ".join(sorted(allowed)) or "none"))


def switch_option(topology: Topology, engine: str, field: str, value: Any) -> int:
    """The switch index named by option ``field`` (a switch name)."""
    if isinstance(value, str) and value in topology.switches:
        return topology.switches[value].index
    names = topology.switch_names()
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    raise RoutingError("%s: option %s=%r is not a switch of the fabric (switches: %s)"
                       % (engine, field, value, shown))


def balance_passes(balance: bool | int | None, engine: str = "routing") -> int:
    """Number of balancing sweeps for option ``balance`` (bool or int >= 0)."""
    if balance is True:
        return DEFAULT_BALANCE_PASSES
    if balance is False or balance is None:
        return 0
    if isinstance(balance, (int, np.integer)) and 0 <= balance <= 16:
        return int(balance)
    raise RoutingError("%s: option balance must be true, false or a number of sweeps from 0 "
                       "to 16, got %r" % (engine, balance))


# --------------------------------------------------------------- arrays
class _Arrays:
    """Index arrays of a topology: per channel its source/destination switch
    index and link, and which channels may be used."""

    def __init__(self, topology: Topology, avoided: frozenset[int]) -> None:
        self.names = topology.switch_names()
        index = {name: i for i, name in enumerate(self.names)}
        channels = topology.channels
        self.n = len(self.names)
        self.C = len(channels)
        self.src = np.fromiter((index[ch.src] for ch in channels), np.int64, self.C)
        self.dst = np.fromiter((index[ch.dst] for ch in channels), np.int64, self.C)
        self.link = np.arange(self.C, dtype=np.int64) >> 1
        self.usable = np.ones(self.C, dtype=bool)
        if avoided:
            self.usable[np.isin(self.link, np.fromiter(avoided, np.int64, len(avoided)))] = False
        usable_ids = np.flatnonzero(self.usable)
        # Usable channels grouped by source switch: out_ids[out_ptr[s]:out_ptr[s+1]].
        self.out_ids = usable_ids[np.argsort(self.src[usable_ids], kind="stable")]
        self.out_ptr = np.searchsorted(self.src[self.out_ids], np.arange(self.n + 1))

    def turns(self) -> tuple[np.ndarray, np.ndarray]:
        """Every turn between usable channels except U-turns, as two arrays
        (in_channel, out_channel), sorted by in_channel then out_channel."""
        ins = np.flatnonzero(self.usable)
        starts = self.out_ptr[self.dst[ins]]
        counts = self.out_ptr[self.dst[ins] + 1] - starts
        rows = np.repeat(ins, counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        cols = self.out_ids[np.repeat(starts, counts) + offsets]
        keep = cols != (rows ^ 1)
        rows, cols = rows[keep], cols[keep]
        order = np.lexsort((cols, rows))
        return rows[order], cols[order]


def turns(topology: Topology, down: Any = ()) -> tuple[np.ndarray, np.ndarray]:
    """All turns ``(in_channel, out_channel)`` a frame could make between
    usable channels (links not down), U-turns excluded: two int arrays.
    Engines compute their prohibited turns as a mask over these."""
    arrays = _Arrays(topology, down_set(topology, down))
    return arrays.turns()


def _prohibited_keys(prohibited: Any, C: int) -> np.ndarray:
    """Encode prohibited turns as sorted int64 keys ``in * C + out``."""
    if prohibited is None:
        return np.empty(0, np.int64)
    if isinstance(prohibited, np.ndarray):
        pairs = prohibited.astype(np.int64).reshape(-1, 2)
    else:
        pairs = np.array([(int(a), int(b)) for a, b in prohibited], dtype=np.int64).reshape(-1, 2)
    return np.unique(pairs[:, 0] * C + pairs[:, 1])


def _host_counts(topology: Topology, names: list[str]) -> np.ndarray:
    """Hosts per switch, at least 1: every switch is a source and a destination."""
    return np.array([max(1, len(topology.hosts_on(name))) for name in names], dtype=np.float64)


# ------------------------------------------------------- routing function
class RoutingFunction:
    """A deterministic routing ``C x N -> C`` over states (see module doc).

    ``next_hop[state, dest]`` is the output channel id, or -1 where the
    frame is delivered (the state's switch is ``dest``) or where no frame
    for ``dest`` ever is in that state. ``down`` holds every link the
    routing avoids (operator's and file's down links, plus ``blocked``:
    links the engine chose to leave unused, e.g. STP's non-tree links).
    """

    # Set by the engines that make them (segment, tbtp), absent otherwise.
    segmentation: Any
    turn_prohibition: Any
    # The paths' form: one next hop per (input channel, destination), or
    # per (source, destination) in a tree per source (source_tree.py).
    paths_form = "per_destination"
    # The turns path selection was forbidden (sorted keys ``in * C + out``),
    # set by select_paths; what source trees must respect too.
    prohibited_keys: Any = None

    def __init__(self, topology: Topology, engine: str, next_hop: Any, down: Iterable[int] = (),
                 options: Mapping[str, Any] | None = None, blocked: Iterable[int] = ()) -> None:
        self.topology = topology
        self.engine = engine
        self.blocked = frozenset(int(i) for i in blocked)
        self.down = frozenset(int(i) for i in down) | self.blocked
        self.options = dict(options or {})
        self.switch_names = topology.switch_names()
        self.index = {name: i for i, name in enumerate(self.switch_names)}
        self.next_hop = np.asarray(next_hop, dtype=np.int32)
        n, C = len(self.switch_names), len(topology.channels)
        if self.next_hop.shape != (n + C, n):
            raise RoutingError("%s: next_hop must have shape (%d, %d) (states x switches), got %r"
                               % (engine, n + C, n, self.next_hop.shape))
        self._src = np.array([self.index[ch.src] for ch in topology.channels], dtype=np.int64)
        self._dst = np.array([self.index[ch.dst] for ch in topology.channels], dtype=np.int64)

    def __repr__(self) -> str:
        return "<RoutingFunction %s on %s>" % (self.engine, self.topology.name)

    # ------------------------------------------------------------ lookups
    def _switch(self, name: str, what: str = "switch") -> int:
        try:
            return self.index[name]
        except (KeyError, TypeError):
            raise RoutingError("%s: %s %r is not a switch of the fabric"
                               % (self.engine, what, name)) from None

    def state_switch(self, state: int) -> int:
        """Index of the switch a state is at."""
        n = len(self.switch_names)
        return state if state < n else int(self._dst[state - n])

    def hop(self, sources: np.ndarray, states: np.ndarray, dests: np.ndarray) -> np.ndarray:
        """The output channel of frames from source switch ``sources[i]`` in
        state ``states[i]`` towards switch ``dests[i]`` (int arrays of one
        length): -1 where the frame is delivered or no such frame exists.
        Here the source does not matter (``C x N -> C``); a source-tree
        routing's answer depends on it."""
        return self.next_hop[states, dests]

    def same_paths(self, other: Any) -> bool:
        """True if ``other`` routes every frame as this routing does."""
        if other is self:
            return True
        return (isinstance(other, RoutingFunction) and other.paths_form == self.paths_form
                and other.engine == self.engine and other.next_hop.shape == self.next_hop.shape
                and bool(np.array_equal(other.next_hop, self.next_hop)))

    def next_channel(self, switch: str, in_channel: int | None, dest: str) -> int | None:
        """The channel a frame for ``dest`` leaves ``switch`` on, having come
        in over ``in_channel`` (None: from a host). None if it is delivered
        here or no frame for ``dest`` arrives that way."""
        at = self._switch(switch)
        to = self._switch(dest, "destination")
        n = len(self.switch_names)
        if in_channel is None:
            state = at
        else:
            if not 0 <= int(in_channel) < len(self.topology.channels) \
                    or self._dst[int(in_channel)] != at:
                raise RoutingError("%s: channel %r does not enter switch %s"
                                   % (self.engine, in_channel, switch))
            state = n + int(in_channel)
        out = int(self.next_hop[state, to])
        return None if out < 0 else out

    def walk(self, dest: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Follow the table from every source switch to destination index
        ``dest`` at once (vectorised; what verification and paths() use).

        Returns ``(sources, hops, status)``: ``hops[i]`` lists the channels
        (padded with -1) from ``sources[i]``; ``status[i]`` is 1 delivered,
        2 dead end (no entry before reaching dest), 3 loop, 4 an entry
        names a channel that does not leave the switch the frame is at.
        """
        n, C = len(self.switch_names), len(self.topology.channels)
        sources = np.array([s for s in range(n) if s != dest], dtype=np.int64)
        state = sources.copy()
        status = np.zeros(len(sources), dtype=np.int8)
        steps = []
        for _step in range(n + C + 1):
            walking = np.flatnonzero(status == 0)
            if not len(walking):
                break
            at_state = state[walking]
            here = at_state.copy()
            arrived = at_state >= n
            here[arrived] = self._dst[at_state[arrived] - n]
            out = self.hop(sources[walking], at_state,
                           np.full(len(walking), dest, dtype=np.int64)).astype(np.int64)
            stopped = out < 0
            status[walking[stopped & (here == dest)]] = 1
            status[walking[stopped & (here != dest)]] = 2
            moving = ~stopped
            bad = moving & (out >= C)
            bad[moving & ~bad] = self._src[out[moving & ~bad]] != here[moving & ~bad]
            status[walking[bad]] = 4
            moving &= ~bad
            hop = np.full(len(sources), -1, dtype=np.int64)
            hop[walking[moving]] = out[moving]
            if moving.any():
                steps.append(hop)
            state[walking[moving]] = n + out[moving]
        status[status == 0] = 3
        hops = np.stack(steps, axis=1) if steps else np.empty((len(sources), 0), np.int64)
        return sources, hops, status

    # Why a walk did not deliver, by its status code.
    WALK_PROBLEMS = {2: "the table has no entry before the destination",
                     3: "the table loops",
                     4: "an entry names a channel that does not leave the switch"}

    def path(self, src: str, dst: str) -> list[int]:
        """Channel ids from switch ``src`` to switch ``dst`` ([] if equal)."""
        s, t = self._switch(src, "source"), self._switch(dst, "destination")
        if s == t:
            return []
        n = len(self.switch_names)
        result: list[int] = []
        state = s
        for _step in range(n + len(self.topology.channels) + 1):
            out = int(self.hop(np.array([s]), np.array([state]), np.array([t]))[0])
            here = self.state_switch(state)
            if out < 0:
                if here == t:
                    return result
                raise RoutingError("%s: no route from %s to %s: %s at switch %s"
                                   % (self.engine, src, dst, self.WALK_PROBLEMS[2],
                                      self.switch_names[here]))
            if not 0 <= out < len(self.topology.channels) or self._src[out] != here:
                raise RoutingError("%s: no route from %s to %s: %s (%s, channel %d)"
                                   % (self.engine, src, dst, self.WALK_PROBLEMS[4],
                                      self.switch_names[here], out))
            result.append(out)
            state = n + out
        raise RoutingError("%s: no route from %s to %s: %s" % (self.engine, src, dst,
                                                               self.WALK_PROBLEMS[3]))

    def paths(self) -> dict[tuple[str, str], list[int]]:
        """``{(src, dst): [channel ids]}`` for every ordered pair src != dst."""
        result = {}
        names = self.switch_names
        for t, dest in enumerate(names):
            sources, hops, status = self.walk(t)
            broken = np.flatnonzero(status != 1)
            if len(broken):
                i = broken[0]
                raise RoutingError("%s: no route from %s to %s: %s"
                                   % (self.engine, names[sources[i]], dest,
                                      self.WALK_PROBLEMS[int(status[i])]))
            lengths = (hops >= 0).sum(axis=1).tolist()
            for s, row, length in zip(sources.tolist(), hops.tolist(), lengths):
                result[(names[s], dest)] = row[:length]
        return result

    def tables(self) -> dict[str, dict[str, dict[str, str]]]:
        """Per switch ``{input: {dest_switch: output_port}}``; ``input`` is
        ``"host"`` or the name of the input port. Only entries some frame
        uses are listed (segment-based paper §4: input port x destination)."""
        n = len(self.switch_names)
        channels = self.topology.channels
        result: dict[str, dict[str, dict[str, str]]] = {name: {} for name in self.switch_names}
        states, dests = np.nonzero(self.next_hop >= 0)
        outs = self.next_hop[states, dests]
        for state, dest, out in zip(states.tolist(), dests.tolist(), outs.tolist()):
            if state < n:
                switch, port = self.switch_names[state], "host"
            else:
                channel = channels[state - n]
                switch, port = channel.dst, channel.dst_port
            result[switch].setdefault(port, {})[self.switch_names[dest]] = channels[out].src_port
        return result

    def to_data(self) -> dict[str, Any]:
        """JSON-serialisable form: engine, options, avoided links, tables."""
        return {
            "engine": self.engine,
            "options": dict(self.options),
            "down": sorted(self.down),
            "blocked": sorted(self.blocked),
            "switches": list(self.switch_names),
            "tables": self.tables(),
        }


# --------------------------------------------------------- path selection
def select_paths(topology: Topology, prohibited: Any, engine: str, down: Any = (),
                 options: Mapping[str, Any] | None = None, balance: bool | int | None = True,
                 blocked: Iterable[int] = ()) -> RoutingFunction:
    """Shortest legal paths under turn restrictions, balanced.

    ``prohibited``: turns ``(in_channel_id, out_channel_id)`` forbidden at
    ``in_channel``'s destination switch (a set of pairs, or an ``(k, 2)``
    int array). U-turns ``(c, c ^ 1)`` are always forbidden; a frame
    injected by a host may leave on any channel. ``down`` are links not
    used (see :func:`down_set`); ``blocked`` are links the engine leaves
    unused on purpose (recorded as :attr:`RoutingFunction.blocked`).

    Per destination, every state follows a shortest path of the *turn
    graph* (channels as nodes, allowed turns as edges); among equally short
    choices, the one whose remaining path has the least accumulated load,
    as DFSSSP does with its edge weights (:func:`_balanced_tables` tells
    how).

    ``balance``: True (the default) makes ``DEFAULT_BALANCE_PASSES`` sweeps
    over the destinations -- each later sweep reroutes every destination
    against the load of all the others, which lowers the maximum channel
    load by up to ~15 % on meshes and tori --; an int makes that many
    sweeps (1 is about twice as fast, for a search that routes many
    candidates); False (or 0) balances nothing: every tie goes to the
    lowest channel id (fastest). Only states some frame reaches get table
    entries.

    Raises RoutingError naming a pair that has no legal path.
    """
    return select_paths_many(topology, [prohibited], engine, down, options, balance, blocked)[0]


def select_paths_many(topology: Topology, prohibited_sets: Sequence[Any], engine: str,
                      down: Any = (), options: Mapping[str, Any] | None = None,
                      balance: bool | int | None = True,
                      blocked: Iterable[int] = ()) -> list[RoutingFunction]:
    """:func:`select_paths` for several candidate sets of prohibited turns
    on one fabric at once: the routing of ``prohibited_sets[k]`` is entry
    ``k``, exactly what ``select_paths`` makes of that set alone.

    Why: a search (segment-based routing's restarts and local moves) routes
    many candidates that differ only in their turns; routed side by side as
    one flat problem (:class:`_TurnSets`), the per-step numpy overhead,
    which dominates on fabrics of tens of switches, is paid once per batch
    instead of once per candidate. Memory grows with the number of sets
    (``len(prohibited_sets) x switches x (switches + channels)`` cells), so
    callers batch a few dozen small fabrics, not large ones.
    """
    passes = balance_passes(balance, engine)
    requested = down_set(topology, down)
    left_unused = frozenset(int(i) for i in blocked) - requested
    arrays = _Arrays(topology, requested | left_unused)
    n, C = arrays.n, arrays.C
    if n <= 1:
        return [RoutingFunction(topology, engine, np.full((n + C, n), -1, dtype=np.int32),
                                requested, dict(options or {}), left_unused)
                for _unused in prohibited_sets]
    every_turn = arrays.turns()
    legal = [_LegalTurns(arrays, prohibited, every_turn) for prohibited in prohibited_sets]
    tables = _balanced_tables(_TurnSets(legal), _host_counts(topology, arrays.names), engine,
                              passes)
    result = []
    for number, turns in enumerate(legal):
        routing = RoutingFunction(topology, engine, np.ascontiguousarray(tables[number].T),
                                  requested, dict(options or {}), left_unused)
        routing.prohibited_keys = turns.prohibited_keys
        result.append(routing)
    return result


class _LegalTurns:
    """What path selection may do in a fabric: the successor entries of
    every state and the reversed turn graph that gives legal distances."""

    def __init__(self, arrays: _Arrays, prohibited: Any,
                 every_turn: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        n, C = arrays.n, arrays.C
        self.n, self.C, self.names = n, C, arrays.names
        in_ids, out_ids = arrays.turns() if every_turn is None else every_turn
        keys = _prohibited_keys(prohibited, C)
        self.prohibited_keys = keys
        if len(keys):
            allowed = ~np.isin(in_ids * C + out_ids, keys)
            in_ids, out_ids = in_ids[allowed], out_ids[allowed]

        # Successor lists over states, CSR-like: injection rows first (any usable
        # out channel), then one row per channel state (its allowed turns).
        inj_rows = arrays.src[arrays.out_ids]
        rows = np.concatenate([inj_rows, n + in_ids])
        cols = np.concatenate([arrays.out_ids, out_ids])
        order = np.lexsort((cols, rows))
        self.rows, self.cols = rows[order], cols[order]
        self.row_starts = _run_starts(self.rows)
        self.state_switch = np.concatenate([np.arange(n), arrays.dst])

        # Reversed turn graph plus one virtual node per destination pointing at
        # the channels that enter it: BFS from the virtual node gives, for every
        # channel, 1 + the legal hops still needed after it.
        enter = np.flatnonzero(arrays.usable)
        self.graph = sparse.csr_matrix(
            (np.ones(len(out_ids) + len(enter), dtype=np.float64),
             (np.concatenate([out_ids, C + arrays.dst[enter]]), np.concatenate([in_ids, enter]))),
            shape=(C + n, C + n))

    def distances(self, dests: np.ndarray) -> np.ndarray:
        """``[b, c]``: the legal hops left after channel ``c`` towards
        ``dests[b]`` (inf: unreachable legally)."""
        return csgraph.shortest_path(self.graph, method="D", directed=True, unweighted=True,
                                     indices=self.C + dests)[:, :self.C] - 1.0


class _TurnSets:
    """Several :class:`_LegalTurns` of one fabric routed side by side
    (:func:`select_paths_many`). A batch of ``B`` destinations becomes
    ``K x B`` *members*, member ``k * B + b`` routing ``dests[b]`` under set
    ``k``; every per-member array is flat as in :func:`_route_batch`, each
    member's successor entries taken from its own set."""

    def __init__(self, sets: list[_LegalTurns]) -> None:
        first = sets[0]
        self.sets, self.K = sets, len(sets)
        self.n, self.C, self.names = first.n, first.C, first.names
        self.state_switch = first.state_switch
        self._layouts: dict[int, tuple[np.ndarray, ...]] = {}
        # Legal distances do not depend on the weights: on small fabrics one
        # shortest-path call per set serves every batch and sweep.
        self._all: np.ndarray | None = None
        if self.K * self.n * self.C <= DISTANCE_CACHE_CELLS:
            every = np.arange(self.n)
            self._all = np.stack([legal.distances(every) for legal in sets])

    def distances(self, dests: np.ndarray) -> np.ndarray:
        """``[k * B + b, c]``: :meth:`_LegalTurns.distances` of set ``k``."""
        if self._all is not None:
            return self._all[:, dests].reshape(-1, self.C)
        return np.concatenate([legal.distances(dests) for legal in self.sets])

    def layout(self, B: int) -> tuple[np.ndarray, ...]:
        """The successor entries of all ``K x B`` members, flat: ``(rows,
        cols, member, flat_row, flat_col, row_starts)``, sorted by member
        then state (``flat_row = member * S + state``, ``flat_col = member *
        C + channel``, ``row_starts`` where each flat row's entries start)."""
        if B not in self._layouts:
            S, C = self.n + self.C, self.C
            rows = np.concatenate([legal.rows for legal in self.sets for _b in range(B)])
            cols = np.concatenate([legal.cols for legal in self.sets for _b in range(B)])
            sizes = np.repeat([len(legal.rows) for legal in self.sets], B)
            member = np.repeat(np.arange(self.K * B), sizes)
            flat_row = member * S + rows
            self._layouts[B] = (rows, cols, member, flat_row, member * C + cols,
                                _run_starts(flat_row))
        return self._layouts[B]


def _balanced_tables(turns: _TurnSets, host_counts: np.ndarray, engine: str,
                     passes: int) -> np.ndarray:
    """The next hop tables transposed (``[set, dest, state]``) after
    ``passes`` balancing sweeps (at least one routing of every destination);
    every set of turns is balanced on its own, against its own weights.

    After each destination, every channel's weight grows by the number of
    host pairs routed over it (sources x destination hosts, at least 1 per
    switch), as DFSSSP does with its edge weights, restricted here to
    minimal legal paths so no engine's hop count suffers. Beyond
    ``SEQUENTIAL_STEPS`` switches, destinations are taken in interleaved
    batches that share one weight snapshot (speed; the balance measured the
    same within ~5 %). Since a table is indexed by input port, frames for
    one destination entering a switch on different ports may leave on
    different channels: the states of a switch share its candidates,
    heaviest first (this is what spreads one destination's traffic over
    parallel links).
    """
    n = turns.n
    # next_hop transposed while filling it, per set
    by_dest = np.full((turns.K, n, n + turns.C), -1, dtype=np.int32)
    weight = np.zeros((turns.K, turns.C), dtype=np.float64)
    # Destinations are routed in batches that share one weight snapshot, so
    # a sweep takes at most SEQUENTIAL_STEPS vectorised steps whatever the
    # size; a batch takes every steps-th switch, spread over the fabric, so
    # its members rarely compete for the same links.
    steps = min(n, SEQUENTIAL_STEPS)
    batches = [np.arange(first, n, steps) for first in range(steps)]
    own_load: list[np.ndarray | None] = [None] * steps  # per batch: the load it put on every channel
    # A batch's shortest-path candidates do not depend on the weights: later
    # sweeps reuse the first sweep's when they fit in LEVEL_CACHE_CELLS.
    plans: list[_Levels | None] = [None] * steps
    keep = passes > 1 and turns.K * n * (n + turns.C) <= LEVEL_CACHE_CELLS
    for _sweep in range(max(1, passes)):
        for number, dests in enumerate(batches):
            previous = own_load[number]
            if previous is not None:  # a later sweep: reroute against all others
                weight -= previous
            chosen, flow, levels = _route_batch(dests, turns, weight, host_counts, engine,
                                                split=bool(passes), levels=plans[number])
            if keep:
                plans[number] = levels
            by_dest[:, dests] = np.where(flow > 0, chosen, -1)
            if passes:
                # Loads are whole numbers of host pairs: every sum is exact.
                load = (flow[:, :, n:] * host_counts[dests][None, :, None]).sum(axis=1)
                own_load[number] = load
                weight += load
    return by_dest


def _route_batch(dests: np.ndarray, turns: _TurnSets, weight: np.ndarray,
                 host_counts: np.ndarray, engine: str, split: bool = True,
                 levels: _Levels | None = None) -> tuple[np.ndarray, np.ndarray, _Levels]:
    """Choose every state's next channel towards each destination of the
    batch ``dests`` under every set of turns, and propagate the source
    counts down the chosen trees.

    ``weight[k]`` is set ``k``'s accumulated channel load; ``levels``: the
    batch's :class:`_Levels` if known. Returns ``(chosen, flow, levels)``,
    the first two ``(K, len(dests), n + C)``: the chosen output channel per
    state (-1 none) and the number of source hosts whose frames to that
    destination pass the state.

    The batch is handled as one flat problem: state ``s`` of member ``m``
    (set ``k``, destination ``b``: ``m = k * B + b``) is flat row
    ``m * S + s``, channel ``c`` is flat ``m * C + c``.
    """
    B, S, C = len(dests), turns.n + turns.C, turns.C
    members = np.tile(dests, turns.K)
    dist = turns.distances(dests)
    if levels is None:
        levels = _shortest_candidates(members, dist, turns, engine)
    chosen, cost = _cheapest_choices(levels, dist, np.repeat(weight, B, axis=0), turns.n)
    flow = _propagate_flow(chosen, cost, levels, members, (turns.n, C), host_counts, split)
    chosen = np.where(chosen >= 0, chosen % max(C, 1), -1)
    return chosen.reshape((turns.K, B, S)), flow.reshape((turns.K, B, S)), levels


class _Levels(NamedTuple):
    """The successor entries that start a shortest legal path, grouped by
    flat row into *runs* (a row's entries all share one level: the legal
    hops left after their channel), runs sorted by level then row. Fixed
    before the weights are read, so the level loops of
    :func:`_cheapest_choices` and :func:`_propagate_flow` only slice it.
    Flat channel ids: ``m * C + c``; ``M * C`` is a scratch slot, ``M * C +
    1`` a padding slot whose cost is always infinite."""

    pad: np.ndarray         # [run, k]: the run's k-th entry's flat channel, padded
    run_bounds: list        # run index where each level starts, and the end
    run_rows: np.ndarray    # flat row of each run
    owner: np.ndarray       # member of each run
    arrive: np.ndarray      # flat channel a run's row arrived over (scratch: injected)
    group: np.ndarray       # member * n + the run's switch (see _split_level)
    multi: np.ndarray       # the run has more than one entry


def _shortest_candidates(dests: np.ndarray, dist: np.ndarray, turns: _TurnSets,
                         engine: str) -> _Levels:
    """The successor entries that start a shortest legal path
    (:class:`_Levels`). ``dests[m]`` and ``dist[m]``: member ``m``'s
    destination and legal distances. Raises RoutingError naming a source
    switch with no legal path to a destination of the batch."""
    n, S = turns.n, turns.n + turns.C
    M = len(dests)
    rows, _cols, member, flat_row, flat_col, row_starts = turns.layout(M // turns.K)
    dcol = dist.ravel()[flat_col]
    # Each row's best remaining distance after its next hop.
    row_best = np.full(M * S, np.inf)
    row_best[flat_row[row_starts]] = np.minimum.reduceat(dcol, row_starts)
    stranded = np.isinf(row_best.reshape(M, S)[:, :n])
    stranded[np.arange(M), dests] = False
    if stranded.any():
        b, source = np.argwhere(stranded)[0]
        more = int(stranded.sum()) - 1
        error = RoutingError(
            "%s: no legal path from %s to %s under the engine's turn restrictions and "
            "down links%s" % (engine, turns.names[source], turns.names[dests[b]],
                              " (and %d more pairs)" % more if more else ""))
        # the pair, for callers that search around it (the transitions' hop chains)
        error.pair = (turns.names[source], turns.names[dests[b]])
        raise error

    active = turns.state_switch[rows] != dests[member]
    candidate = np.flatnonzero(active & (dcol == row_best[flat_row]) & np.isfinite(dcol))
    levels = dcol[candidate]
    # Rows stay sorted inside a level (a stable sort: a radix sort on small ints).
    small = np.int16 if not len(levels) or levels.max() < 1 << 15 else np.int64
    by_level = np.argsort(levels.astype(small), kind="stable")
    candidate, levels = candidate[by_level], levels[by_level]
    return _levels_of(flat_row[candidate], flat_col[candidate], levels, turns, M)


def _levels_of(cand_rows: np.ndarray, cand_cols: np.ndarray, levels: np.ndarray,
               turns: _TurnSets, M: int) -> _Levels:
    """:class:`_Levels` of the candidate entries (flat rows and channels,
    sorted by level, then row) of ``M`` members."""
    n, C = turns.n, turns.C
    top = int(levels[-1]) if len(levels) else -1
    runs = _run_starts(cand_rows)
    run_len = np.diff(runs, append=len(cand_rows))
    run_rows = cand_rows[runs]
    owner, local = np.divmod(run_rows, n + C)
    # A padded row per run (few entries each: at most a switch's degree), so
    # a level's choices are one argmin along an axis, ties to the first.
    pad = np.full((len(runs), int(run_len.max()) if len(runs) else 1), M * C + 1, dtype=np.int64)
    run_of = np.repeat(np.arange(len(runs)), run_len)
    pad[run_of, np.arange(len(cand_rows)) - runs[run_of]] = cand_cols
    run_bounds = np.searchsorted(runs, np.searchsorted(levels, np.arange(top + 2)))
    return _Levels(pad, run_bounds.tolist(), run_rows, owner,
                   np.where(local >= n, owner * C + local - n, M * C),
                   owner * n + turns.state_switch[local], run_len > 1)


def _cheapest_choices(levels: _Levels, dist: np.ndarray, weight: np.ndarray,
                      n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's cheapest candidate, level by level from the destination.

    ``weight[m]``: the channel weights member ``m`` balances against.
    Returns ``(chosen, cost)``: the chosen flat channel per flat row (-1
    none) and ``cost`` per flat channel (and the two slots of
    :class:`_Levels` at the end).
    """
    M, C = dist.shape
    S = n + C
    # The scratch slot takes the costs of injection rows, which no channel
    # arrives by (one assignment per level serves every run); the padding
    # slot stays infinite, so padding is never chosen.
    flat_weight = np.append(weight.ravel(), [0.0, 0.0])
    # cost[b, c]: accumulated weight of the cheapest shortest legal path
    # that starts with channel c; computed outward from the destination, one
    # level at a time (a row at level k chooses among channels k hops away).
    cost = np.append(np.where(dist == 0, weight, np.inf).ravel(), [np.inf, np.inf])
    chosen = np.full(M * S, -1, dtype=np.int64)  # flat channel ids
    run_bounds = levels.run_bounds
    for level in range(len(run_bounds) - 1):
        first, end = run_bounds[level], run_bounds[level + 1]
        if first == end:
            continue
        options = levels.pad[first:end]
        values = cost[options]
        pick = values.argmin(axis=1)  # the first of equal minima: the lowest column
        here = np.arange(end - first)
        chosen[levels.run_rows[first:end]] = options[here, pick]
        at = levels.arrive[first:end]
        cost[at] = flat_weight[at] + values[here, pick]
    return chosen, cost


def _propagate_flow(chosen: np.ndarray, cost: np.ndarray, levels: _Levels, dests: np.ndarray,
                    sizes: tuple[int, int], host_counts: np.ndarray, split: bool) -> np.ndarray:
    """Source hosts passing each flat state (``[m * S + s]``; ``sizes``:
    switches and channels); with ``split``, the states of one switch share
    its candidates first (:func:`_split_level`, which updates ``chosen``)."""
    M = len(dests)
    n, C = sizes
    S = n + C
    # Sources inject at every switch but the destination; a row at level k
    # feeds rows at level k - 1, so walking the levels from the farthest
    # down is exact.
    flow: np.ndarray = np.zeros((M, S), dtype=np.float64)
    flow[:, :n] = host_counts
    flow[np.arange(M), dests] = 0.0
    flow = flow.ravel()
    dest_hosts = host_counts[dests][levels.owner]
    # Flat channel m * C + c enters flat state m * S + n + c.
    shift = (levels.owner + 1) * n
    run_bounds = levels.run_bounds
    for level in range(len(run_bounds) - 2, -1, -1):
        first, end = run_bounds[level], run_bounds[level + 1]
        if first == end:
            continue
        seg_rows = levels.run_rows[first:end]
        carried = flow[seg_rows]
        if split:
            _split_level(chosen, cost, levels.pad[first:end], levels.multi[first:end], seg_rows,
                         carried, carried > 0, levels.group[first:end], dest_hosts[first:end])
        # Rows no frame reaches add nothing (every run has a choice).
        flow += np.bincount(chosen[seg_rows] + shift[first:end], weights=carried,
                            minlength=M * S)
    return flow


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Positions where a run of equal values starts in a sorted array."""
    if not len(values):
        return np.empty(0, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    return np.concatenate(([0], change))


def _split_level(chosen: np.ndarray, cost: np.ndarray, pad: np.ndarray, multi: np.ndarray,
                 seg_rows: np.ndarray, carried: np.ndarray, live: np.ndarray, group: np.ndarray,
                 dest_hosts: np.ndarray) -> None:
    """Let the states of one switch at one level share its output channels.

    A routing table is indexed by input port, so frames for one destination
    arriving on different ports may leave on different channels (e.g. on
    both of two parallel links). The states with a choice are served in
    rounds, heaviest flow first within each ``group`` (switch and batch
    member); each takes the candidate with the least ``cost + load this
    destination already put on it``. States of different groups never
    compete (their candidates differ), so one round serves all groups.
    """
    choosy = live & multi
    if not choosy.any():
        return
    # A state alone at its switch needs no rounds, but serving it with the
    # others costs less than finding it: nothing else puts load on its
    # candidates, so it takes the plain cheapest choice all the same.
    fixed = live & ~multi
    # (float even when nothing is fixed: bincount of nothing counts in ints)
    extra = np.bincount(chosen[seg_rows[fixed]], weights=carried[fixed] * dest_hosts[fixed],
                        minlength=len(cost)).astype(np.float64, copy=False)
    members = np.flatnonzero(choosy)
    # Group, then heaviest first, then position: loads are whole numbers,
    # so one float key sorts exactly as a lexsort would.
    key = group[members] * (float(carried.max()) + 1.0) - carried[members]
    members = members[np.argsort(key, kind="stable")]
    ordered = group[members]
    rank = np.arange(len(members)) - np.searchsorted(ordered, ordered)
    # Rounds become consecutive slices (group order kept inside a round).
    by_round = np.argsort(rank, kind="stable")
    members, rank = members[by_round], rank[by_round]
    rounds = np.searchsorted(rank, np.arange(int(rank[-1]) + 2)).tolist()
    options = pad[members]
    demand = carried[members] * dest_hosts[members]
    rows = seg_rows[members]
    for first, end in zip(rounds[:-1], rounds[1:]):
        these = options[first:end]
        picked = these[np.arange(end - first), (cost[these] + extra[these]).argmin(axis=1)]
        chosen[rows[first:end]] = picked
        extra[picked] += demand[first:end]
