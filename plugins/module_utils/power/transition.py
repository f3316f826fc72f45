# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make-before-break transitions: a link off, a link on, a speed change,
planned as a list of steps that loses no frame and cannot deadlock
(issue 7 item 3; docs/transitions.md).

The switch-tagged paper's on/off procedure (§3.6) computes the routing that
avoids (or uses) the link, implements it (§3.2) and switches the link; it
updates the PVIDs switch after switch by hand and warns that the old and
the new path sets may deadlock while both are in the network (§4.4). The
on/off dynamic-reconfiguration paper names the cure for lossless networks:
*dynamic* reconfiguration instead of static (§3.1: static reconfiguration
stops injection and empties the network), and among the dynamic schemes the
Double Scheme, which runs the old and the new routing in two disjoint
virtual-channel layers. Ethernet has no virtual channels, but 802.1Q gives
us the same two layers: two disjoint VLAN **banks** (vlans.py, A and B).

Method
------
1. Plan the old routing (``current_bank``) and the new one (the other
   bank) with :func:`intent.plan` -- each checked on its own.
2. **Install** the new bank beside the old on every switch: VLAN IDs of the
   banks are disjoint, so memberships and static entries merge without
   conflict; every PVID still points into the old bank, so no frame can
   enter a new VLAN yet. The merged VLAN count is checked against every
   switch's ``max_vlans`` (and static entries against ``mac_table_size``).
3. **Flip** the PVIDs switch by switch (one push per switch, all its PVIDs)
   in an order found by search (greedy, bounded backtracking).
4. **Wait** ``wait_s`` so frames of the old bank still in flight drain.
5. **Clean up**: every switch gets the new plan's entry (old bank removed).
6. Link off: shut the port at both ends. Link on: the ports were brought
   up (and the carrier awaited) before step 1. Speed: detour (steps 1-5
   with the link avoided), set the speed, wait for the carrier after the
   renegotiation, route back over the link in the other bank (1-5 again).

Why it is safe (the proof the planner runs)
-------------------------------------------
*Fixed assignment* (§3.2.1): frames travel tagged between switches, so the
VLAN a frame gets at its source host port stays with it to the
destination: every frame is wholly old or wholly new, a true Double Scheme,
and the dependencies during the transition are exactly the union of the
old and new channel dependency graphs.

*Renamed assignment* (§3.2.2): frames travel untagged and each switch
re-classifies them by the PVID of the input port, so a frame crossing a
flipped and an unflipped switch follows the old routing on some hops and
the new routing on others. Two things can then go wrong that the union of
the two CDGs does not show: a row (VLAN) may have no static entry for a
destination the other routing sends through its input port (the frame
floods: duplicates or a loop), and the mixed paths add dependencies of
their own. We therefore (a) **complete** the rows of both banks: every
(VLAN, destination) pair without an entry gets one, towards the port most
states of that switch use for that destination (never an input port of
the VLAN), with the port added as untagged member; and (b) **simulate**.

The proof is exhaustive simulation with the 802.1Q simulator
(:class:`dot1q.Dot1qFabric`, which reads nothing but the intents), over
*windows*: a window is two consecutive states of the step list, and at a
switch where they differ every arrival may be handled by either state
(any interleaving with the frame, also a push that a switch applies port
by port). For every window, every representative host pair (one host per
switch as source and destination, plus a pair inside each switch with two
hosts) the graph of every possible walk must be acyclic and every walk
must end at the destination host, untagged, by static entries only (no
flood, no drop): so each frame is delivered exactly once. Every broadcast
flood of the window must die out (no storm, Theorem 1). The channel
pairs of all those walks, over all windows, form one dependency graph,
which must be acyclic (Dally and Seitz; §4.4's warning): frames of any
windows may then wait on each other without a cycle, so there is no
deadlock. The assumption: a frame spends less time in the fabric than one
push takes (microseconds per hop against a management round trip), so a
frame sees at most two consecutive states; the wait after the last flip
gives the same guarantee before the old bank is removed.

If the old and new CDGs together are acyclic (the Double Scheme condition),
completions are limited to turns forward in a topological order of that
union: every state of any flip order then stays inside one acyclic turn
graph (``proof.order_free``). If no flip order passes, a *bridge* routing
is tried (turns forward in both a topological order of the old CDG and one
of the new; old -> bridge -> new, each hop order-free, the banks alternating
twice), and as a last resort a **drain** step (static reconfiguration:
injection stops at the host ports,
the fabric empties, all PVIDs flip, injection resumes): it loses the frames
hosts send meanwhile, and the step says so.

Layout
------
This module only re-exports the public names (importers keep using
``.transition``); the work is split in three modules beside it:
:mod:`.transition_planner` (the request checks, the routings and the order
of the phases: :func:`plan_transition`, :func:`held_intent`,
:func:`kept_order_router`), :mod:`.transition_phases` (the merged
configurations, row completion, the flip-order search and the steps of one
phase; :class:`Transition`) and :mod:`.transition_proof` (the 802.1Q
simulation of every window and the dependency graph; :class:`TransitionError`).
"""

from __future__ import annotations

from .transition_phases import Transition
from .transition_planner import (
    ACTIONS,
    DEFAULT_CARRIER_TIMEOUT_S,
    DEFAULT_RENEGOTIATION_S,
    DEFAULT_WAIT_S,
    SEARCH_BUDGET_PER_SWITCH,
    held_intent,
    kept_order_router,
    plan_transition,
)
# the tests rebuild a plan from a kept-order routing the way the planner does
from .transition_planner import _plan_from_routing  # noqa: F401  pylint: disable=unused-import
from .transition_proof import TransitionError

__all__ = ["ACTIONS", "DEFAULT_CARRIER_TIMEOUT_S", "DEFAULT_RENEGOTIATION_S", "DEFAULT_WAIT_S",
           "SEARCH_BUDGET_PER_SWITCH", "Transition", "TransitionError", "held_intent",
           "kept_order_router", "plan_transition"]
