#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.link_transition; the work is done by
the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: link_transition
short_description: Switch a link off or on, or change its speed, make-before-break
version_added: 0.2.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads every switch of the topology (link states, speeds, VLAN bank; see M(ethercluster.routing.fabric_state)), plans
    the transition with the collection's transition planner (the new routing built in the other VLAN bank beside the
    old one, PVIDs flipped switch by switch in a proven order, the old bank removed, then the link shut; docs/transitions.md)
    and runs its steps against the switches over SSH, in order; pushes of one step in parallel when the step allows it.
  - Each push reads the switch, compares and writes only the difference (as M(ethercluster.routing.ovs_switch)).
    C(wait_carrier) steps poll the carrier of both ends and fail naming the link after the timeout.
  - The state is read from the switches, not kept anywhere. A run that stopped midway (a failed push, an interrupted
    play) leaves the switches in a state of the transition; running the same task again finds that state and resumes
    with the next step. A link already as asked, with the switches holding the routing planned for it, changes
    nothing.
  - Check mode plans only, returns the whole step list and changes nothing.
  - Runs on C(ovs), C(dell_os6) and C(huawei_vrp) switches, also mixed in one fabric; a CLI switch is read with its
    show commands and written with the lines that differ (the declarative CLI diff, as M(ansible.netcommon.cli_config)
    pushes a deploy) over its C(ansible.netcommon.network_cli) connection (docs/platforms.md, "Link transitions over the
    CLI"). C(linux_bridge) is refused before any switch is read.
extends_documentation_fragment:
  - ethercluster.routing.controller
  - ethercluster.routing.controller.deployed_fabric
attributes:
  check_mode:
    details: Reads the switches and plans; writes nothing.
options:
  action:
    description: V(off) switches the link off, V(on) switches it on, V(speed) changes its speed.
    type: str
    required: true
    choices: ['off', 'on', speed]
  link:
    description: The link, as C(sw0:25) (either end), its name C(sw0:25--sw1:25) or its index.
    type: str
    required: true
  speed_mbps:
    description: The new speed, for O(action=speed).
    type: int
  plan_options:
    description: More options of the plan (C(vlan_range), C(traffic), C(max_broadcast_copies), C(broadcast)), as deployed.
    type: dict
  wait_s:
    description: Seconds to wait after the last PVID flip before the old bank is removed.
    type: float
    default: 1.0
  carrier_timeout_s:
    description: Seconds to wait for carrier after a link comes up or changes speed.
    type: float
    default: 30
  renegotiation_s:
    description:
      - Seconds a speed change takes before the carrier is polled.
      - Default is the link's Table 6 figure for that change (switch-tagged paper, section 4.3), the longer of its two
        ends' power profiles (the topology's C(power_profile), PC5324 when a switch names none), or 3 s when a
        profile has no figure.
    type: float
  max_parallel:
    description:
      - At most this many switches of a parallel push step are written at once. Default is all of them.
      - In the lab, pushes that rewrite many flows of every switch at once make the emulator's userspace datapath
        re-learn its flow cache everywhere at the same time; under load it drops a few frames then
        (docs/benchmarks.md, "Frames lost per link transition").
    type: int
  allow_drain:
    description:
      - Accept a transition that needs a drain step (static reconfiguration; docs/transitions.md).
      - A drain shuts the hosts' ports while every switch flips, so the frames hosts send meanwhile are lost. When
        no lossless step list exists (for example the 3 of 32 links of a 4x4 torus with segment routing whose
        kept-turn-order routing has no path), the task fails and changes nothing unless this is true.
    type: bool
    default: false
  log:
    description: A file on the controller to which one JSON line is appended per step run (and one for the whole
      transition).
    type: path
requirements:
  - PyYAML, networkx, numpy, scipy on the controller, and what the switches' connection plugin needs (the OpenSSH
    client for C(ssh))
notes:
  - Connection settings per switch come from its inventory variables, as for M(ethercluster.routing.fabric_state).
seealso:
  - module: ethercluster.routing.fabric_state
  - module: ethercluster.routing.ovs_switch
"""

EXAMPLES = r"""
- name: Switch link sw0:2 off
  ethercluster.routing.link_transition:
    topology: inventories/default/topology.yml
    action: "off"
    link: sw0:2
  delegate_to: localhost
  run_once: true

- name: Run link sw0:2 at 100 Mb/s
  ethercluster.routing.link_transition:
    topology: inventories/default/topology.yml
    action: speed
    link: sw0:2
    speed_mbps: 100
"""

RETURN = r"""
reason:
  description: Why the task did what it did (fresh transition, resuming after step N, nothing to do).
  returned: always
  type: str
plan:
  description: The transition's step list as text (one line per step, one per switch it changes).
  returned: always
  type: list
  elements: str
steps:
  description: Per step run, C(index), C(kind), C(name), C(changed) (switches written), C(seconds), C(start) and
    C(end) (wall clock).
  returned: always
  type: list
  elements: dict
steps_planned:
  description: Number of steps of the transition.
  returned: always
  type: int
resumed_after:
  description: Steps found already done on the switches (an earlier run stopped after them).
  returned: always
  type: int
bank_before:
  description: The bank the switches held before.
  returned: always
  type: str
bank_after:
  description: The bank the switches hold after the transition.
  returned: when a transition was planned
  type: str
down_before:
  description: Links down before.
  returned: always
  type: list
  elements: str
proof:
  description: The planner's numbers (windows and walks simulated, dependency edges, acyclic, flip orders).
  returned: when a transition was planned
  type: dict
seconds:
  description: Wall time of the task.
  returned: always
  type: float
rewritten:
  description:
    - Writes done twice because ovs-vswitchd closed the OpenFlow connection under a command (C(ovs-ofctl ...
      (End of file))). The switch was read again and what still differed was written; one line per such write,
      naming the switch and the first error. A second drop fails the step.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {
    **module_args.DEPLOYED_FABRIC_SPEC,
    "action": {"type": "str", "required": True, "choices": ["off", "on", "speed"]},
    "link": {"type": "str", "required": True},
    "speed_mbps": {"type": "int"},
    "plan_options": {"type": "dict"},
    "wait_s": {"type": "float", "default": 1.0},
    "carrier_timeout_s": {"type": "float", "default": 30.0},
    "renegotiation_s": {"type": "float"},
    "max_parallel": {"type": "int"},
    "allow_drain": {"type": "bool", "default": False},
    "log": {"type": "path"},
    **module_args.SWITCH_SESSION_SPEC,
}
ARGUMENT_RULES = {"required_if": [("action", "speed", ("speed_mbps",))]}


def main():
    module_args.refuse_bare_run("link_transition", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
