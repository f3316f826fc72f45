#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.failover; the work is done by the
action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: failover
short_description: Precompute link and switch failovers, apply one when a link fails, return when it is back
version_added: 0.3.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - O(action=plan) computes, for every single link and switch failure of the deployed routing, a backup routing
    in which only the routes that used the failed element detour, along turns that keep the base routing's turn
    order (segment-based routing, section 2.3; docs/failover.md). It writes C(failover.json) (the compact stored
    form, only the table entries that differ from the base) and C(failover.md) (coverage, per failure the switches
    that change) into O(intent_dir), beside the deployed intent. No switch is reached.
  - O(action=failed) applies the backup of a failed link (O(link)) or switch (O(switch)) to the switches,
    make-before-break through the other VLAN bank, the switches whose entries change flipped first, with the
    transitions' proof (the failed link is treated as dead; a failed switch is neither read nor written, frames sent
    to it are lost at the failure, and every surviving pair is proven delivered around it; docs/failover.md).
    The stored backup is used when it fits the deployed routing, else it is computed on the spot. No drain is
    ever done; when no proven order exists the task fails and says that only a halt-and-drain and a fresh plan
    recover.
  - O(action=restored) returns from that backup to the base routing once the link (every link of the switch) is
    back; a returned switch must hold what it held before it failed (the base routing).
  - The switches are read first; a run that stopped midway is resumed, a second run changes nothing.
  - With source-tree paths (the fixed assignment on C(dell_os6) and C(huawei_vrp) fabrics, one VLAN per source
    switch whose links form a tree) a link's backup repairs the trees that crossed it (the switches below the
    failed link enter their tree again over turns forward in the base turn order, the other trees stay), else takes
    the kept-order routing without the link. The sources of the changed trees are flipped first, since a frame
    travels in the bank of its source switch's host port. C(failover.json) stores each backup's fingerprint, checked
    when it is applied.
  - A switch failure is pushed only with the renamed assignment (frames travel untagged between switches, so the
    others do not depend on the VLANs the failed one holds); with the fixed assignment the task fails naming it.
  - Each switch is reached through its platform's connection, as the link transitions reach it (C(ovs) over its
    shell connection, C(dell_os6) and C(huawei_vrp) over C(ansible.netcommon.network_cli)); a fabric may mix them.
    C(linux_bridge) switches are refused before any switch is read.
extends_documentation_fragment:
  - ethercluster.routing.controller
  - ethercluster.routing.controller.deployed_fabric
attributes:
  check_mode:
    details: O(action=plan) computes and writes nothing; the other actions read the switches, plan and write nothing.
options:
  action:
    description: V(plan) precomputes and stores; V(failed) applies a failover; V(restored) returns to the base routing.
    type: str
    required: true
    choices: [plan, failed, restored]
  link:
    description: The failed link, as C(sw0:25) (either end), its name or its index.
    type: str
  switch:
    description: The failed switch (all its links).
    type: str
  intent_dir:
    description: The directory of the deployed intent, where C(failover.json) and C(failover.md) are kept.
    type: path
  plan_options:
    description:
      - The deployed plan's other settings (C(vlan_range), C(traffic), C(max_broadcast_copies), C(broadcast)); the
        role passes those of the deployed intent.
    type: dict
  wait_s:
    description: How long (seconds) old-bank frames may drain after the last switch flipped, before that bank goes.
    default: 1.0
    type: float
  max_parallel:
    description: Bound on the switches written at once by one parallel push (default all).
    type: int
  log:
    description: Controller file that gets a JSON line per step.
    type: path
seealso:
  - module: ethercluster.routing.link_transition
requirements:
  - On the controller PyYAML, networkx, numpy and scipy; for the switches what their connection plugin needs
    (OpenSSH for C(ssh)).
"""

EXAMPLES = r"""
- name: Precompute the failovers of the deployed routing
  ethercluster.routing.failover:
    topology: inventories/default/topology.yml
    action: plan
    intent_dir: intended

- name: Link sw5:4 failed
  ethercluster.routing.failover:
    topology: inventories/default/topology.yml
    action: failed
    link: sw5:4
    intent_dir: intended
"""

RETURN = r"""
reason:
  description: What the task did (fresh, resumed after step N, done already, stored).
  returned: always
  type: str
coverage:
  description: Failures with a backup over all, per kind, the pairs detoured and those disjoint from their main path.
  returned: when O(action=plan)
  type: dict
plan:
  description: The step list as text.
  returned: when O(action) is V(failed) or V(restored)
  type: list
  elements: str
steps:
  description: Per step run, C(index), C(kind), C(name), C(changed), C(seconds), C(start), C(end) (wall clock).
  returned: when O(action) is V(failed) or V(restored)
  type: list
  elements: dict
proof:
  description: The planner's numbers and the failure's stored entry (switches changing, pairs detoured).
  returned: when O(action) is V(failed) or V(restored)
  type: dict
stored:
  description: Whether the precomputed backup was used (else it was computed on the spot).
  returned: when O(action) is V(failed) or V(restored)
  type: bool
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {
    **module_args.DEPLOYED_FABRIC_SPEC,
    "action": {"type": "str", "required": True, "choices": ["plan", "failed", "restored"]},
    "link": {"type": "str"},
    "switch": {"type": "str"},
    "intent_dir": {"type": "path"},
    "plan_options": {"type": "dict"},
    "wait_s": {"type": "float", "default": 1.0},
    "max_parallel": {"type": "int"},
    "log": {"type": "path"},
    **module_args.SWITCH_SESSION_SPEC,
}
ARGUMENT_RULES = {"mutually_exclusive": [("link", "switch")]}


def main():
    module_args.refuse_bare_run("failover", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
