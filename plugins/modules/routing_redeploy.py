#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.routing_redeploy; the work is done
by the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: routing_redeploy
short_description: Put a new intent on a live fabric that holds another routing, make-before-break
version_added: 0.3.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Run by C(deploy_routing.yml) (role ethercluster.routing.switch_deploy, entry point C(redeploy)) before the
    switches are pushed. Reads every switch of the topology (the state is read, never remembered) and decides how
    O(intent) goes on (docs/deploy.md, "Re-deploying onto a live fabric").
  - A fresh fabric (no switch holds a pipeline) and a fabric that holds O(intent) already are left to the plain push
    (RV(mode=push)), as before.
  - A fabric that holds the intent's routing in the other VLAN bank (what an earlier re-deploy leaves), or with links
    a link transition turned off, changes nothing (RV(mode=held)).
  - A fabric that holds another routing (engine, engine options, assignment or bank) is moved to the intent's routing
    through the other VLAN bank (RV(mode=moved)) - the new routing installed beside the old one, the PVIDs flipped
    switch by switch in an order the planner proves (every window simulated with 802.1Q, every host pair delivered
    exactly once, one acyclic channel dependency graph over the whole move), the old bank removed. The held routing is
    recognised by planning candidates (O(held), then every engine's defaults) and comparing each with what every
    switch holds.
  - When no proven move exists, or the held routing is none of the candidates, the task fails before touching any
    switch, naming both routings and the pair or cycle found, unless O(allow_drain) is true - then the move drains
    (or the plain push replaces the held routing) and frames are lost; the result says so.
  - A run that stopped midway (the switches hold both banks) is recognised and resumed; a second run changes nothing.
  - Only the C(ovs) platform can be read so far; a fabric with other platforms gets the plain push (RV(mode=push),
    RV(reason) says why).
extends_documentation_fragment:
  - ethercluster.routing.controller
attributes:
  check_mode:
    details: Reads the switches and plans the move; writes nothing. RV(plan) lists the steps.
  diff_mode:
    support: full
    details: The step list of a move, as RV(plan).
options:
  topology:
    description: The topology file; the inventory must have every switch of it.
    type: path
    required: true
  intent:
    description: The intent to deploy (what M(ethercluster.routing.plan) made, with the settings it recorded).
    type: dict
    required: true
  held:
    description:
      - Routings the switches may hold, tried first (each a mapping with C(engine) or C(routing), and optionally
        C(assignment), C(engine_options) and plan options). Only candidates - the switches decide.
    type: list
    elements: dict
    default: []
  host_key_checking:
    description: Refuse a switch whose host key is unknown or different.
    type: bool
    default: true
  allow_drain:
    description: Accept a move that loses frames (a drain, or the plain push over an unrecognised routing).
    type: bool
    default: false
  timeout:
    description: Seconds allowed for connecting and for each read and write on a switch.
    type: float
    default: 30
  wait_s:
    description: Seconds old-bank frames may drain after the last PVID flip, before the old bank goes.
    type: float
    default: 1.0
  log:
    description: Controller file that gets a JSON line per step.
    type: path
  max_parallel:
    description: Bound on the switches written at once by one parallel push (default all).
    type: int
requirements:
  - PyYAML, networkx, numpy and scipy on the controller (the planning code); OpenSSH there for switches reached over
    C(ssh).
seealso:
  - module: ethercluster.routing.link_transition
  - module: ethercluster.routing.failover
"""

EXAMPLES = r"""
- name: Put the planned intent on the fabric, make-before-break when it holds another routing
  ethercluster.routing.routing_redeploy:
    topology: inventories/default/topology.yml
    intent: "{{ fabric_design_result.intent }}"
    held:
      - engine: updown
  register: redeploy
"""

RETURN = r"""
mode:
  description: V(push) (the playbook pushes the intent as before), V(held) (the switches hold the routing already) or
    V(moved) (moved make-before-break; in check mode, would be).
  returned: always
  type: str
reason:
  description: What was found and done (fresh, same, resumed after step N, done already, ...).
  returned: always
  type: str
held:
  description: The routing the switches held (engine, assignment, options).
  returned: always
  type: str
held_bank:
  description: The VLAN bank that routing was in.
  returned: always
  type: str
intent:
  description: What the switches hold after the task (RV(mode) V(held) or V(moved)); the playbook pushes this (no change).
  returned: always
  type: dict
lossy:
  description: True when a plain push replaces an unrecognised routing (O(allow_drain)) - frames are lost.
  returned: always
  type: bool
plan:
  description: The step list as text.
  returned: always
  type: list
  elements: str
steps:
  description: Per step run, C(index), C(kind), C(name), C(changed), C(seconds), C(start), C(end) (wall clock).
  returned: always
  type: list
  elements: dict
proof:
  description: The planner's numbers (windows, walks, dependency edges, order-free, drain, notes).
  returned: always
  type: dict
summary:
  description: Human lines - what was found and done, then the plan (check mode) or the steps run.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

# the options documented above; the action plugin validates them
ARGUMENT_SPEC = dict(
    module_args.SWITCH_SESSION_SPEC,
    topology={"type": "path", "required": True}, intent={"type": "dict", "required": True},
    held={"type": "list", "elements": "dict", "default": []}, allow_drain={"type": "bool", "default": False},
    wait_s={"type": "float", "default": 1.0}, log={"type": "path"}, max_parallel={"type": "int"})


def main():
    """Refuse a bare run: the module works through its action plugin, on the controller."""
    module_args.refuse_bare_run("routing_redeploy", ARGUMENT_SPEC)


if __name__ == "__main__":
    main()
