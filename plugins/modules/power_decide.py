#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.power_decide; the work is done by the
action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: power_decide
short_description: Measure channel utilisation from the switches' counters and decide which links to switch
version_added: 0.2.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads the fabric's state from the switches (link states, speeds, bank; see M(ethercluster.routing.fabric_state)),
    then the byte counters of every port O(samples)+1 times, O(interval_s) apart (C(ovs-ofctl dump-ports) on the ovs
    platform). The bytes each switch port sent between two readings over the link's capacity at its current speed
    is one utilisation sample per channel.
  - Applies the collection's power-save rule (docs/power.md, C(decide)) with O(thresholds) and hysteresis (a link
    goes off only when both its channels stayed below C(off_below) in each of the last C(samples) samples; a link
    comes on, or back to full speed, when the busiest channel exceeds C(on_above)), and returns the actions with
    their reasons. It changes nothing itself; playbooks/power_save.yml runs the actions with
    M(ethercluster.routing.link_transition).
  - With O(mode=selector) the switch-tagged paper's selector (docs/power.md, §5.4.2) decides instead; the traffic
    matrix is estimated from the host ports' counters, O(selector) picks the links to turn off and the lower
    O(speeds) that keep every channel at or under the maximum utilisation with every link on, and every change
    from the fabric as read is proposed, ordered so that each step keeps the busiest channel at or under that
    maximum. It reports the watts and the busiest channel before and after, and what was vetoed and why.
  - Each decision is appended to O(log) as one JSON line (not in check mode).
extends_documentation_fragment:
  - ethercluster.routing.controller
  - ethercluster.routing.controller.deployed_fabric
attributes:
  check_mode:
    details: It only reads and decides.
options:
  routing:
    description:
      - Routing engine of the deployed routing (as for M(ethercluster.routing.link_transition)).
      - A link is proposed for switching off only if the transition planner finds a step list for it without a
        drain step (docs/transitions.md), which would lose frames.
    type: str
    default: segment
  mode:
    description:
      - V(threshold) is the threshold rule with hysteresis (O(thresholds)).
      - V(selector) is the paper's link selection on the measured traffic (O(selector), O(speeds)).
    type: str
    choices: [threshold, selector]
    default: threshold
  selector:
    description: With O(mode=selector), the paper's greedy pass (V(greedy)) or the collection's search
      (V(search)), which minimises the watts after the speed step.
    type: str
    choices: [greedy, search]
    default: greedy
  speeds:
    description: With O(mode=selector), the link speeds (Mb/s) a link may be lowered to instead of going off;
      C([]) is on/off only.
    type: list
    elements: int
    default: [1000, 100, 10]
  max_changes:
    description:
      - Actions per run at most. The default is C(thresholds.max_changes) (1) with O(mode=threshold) and every
        action with O(mode=selector); the actions beyond it are returned as RV(deferred).
    type: int
  thresholds:
    description: C(off_below) (fraction of capacity, default 0.2), C(on_above) (0.6), C(samples) (3),
      C(max_changes) (actions per run, 1).
    type: dict
  state:
    description:
      - A fabric state already read (the fields C(links), C(speeds), C(bank) and C(down_links) of
        M(ethercluster.routing.fabric_state)), with O(readings); then nothing is read from the switches (a replay).
    type: dict
  readings:
    description:
      - "Counter readings already taken, C([{at: seconds, counters: {switch: {port: {rx_bytes, tx_bytes}}}}]),
        with O(state)."
    type: list
    elements: dict
  interval_s:
    description: Seconds between two counter readings.
    type: float
    default: 10
  samples:
    description: Samples to take (readings minus one). Default is C(thresholds.samples).
    type: int
  counters_source:
    description:
      - Where the port counters come from. V(ovs) reads C(ovs-ofctl dump-ports) over the switch's SSH session.
        V(snmp) reads IF-MIB C(ifHCInOctets)/C(ifHCOutOctets) (SNMP v2c, pysnmp on the controller) from the switch's
        address, the port found by its C(ifName) (the topology's interface name, else O(snmp_if_name)).
      - The link states, speeds and bank are read over SSH either way.
    type: str
    choices: [ovs, snmp]
    default: ovs
  snmp_community:
    description: SNMP v2c community, with O(counters_source=snmp).
    type: str
    default: public
  snmp_port:
    description: UDP port of the switches' SNMP agents.
    type: int
    default: 161
  snmp_if_name:
    description: Interface name of a port when the topology gives none, a pattern with C({port}) (C(p{port}) in the
      lab). Default is the port itself.
    type: str
  log:
    description: A file on the controller to which the decision is appended as one JSON line.
    type: path
requirements:
  - PyYAML, networkx, numpy on the controller; pysnmp for O(counters_source=snmp); what the switches' connection
    plugin needs (the OpenSSH client for C(ssh))
notes:
  - The link states are read from C(ovs), C(dell_os6) and C(huawei_vrp) switches (the CLI ones over
    C(ansible.netcommon.network_cli)); the port counters of CLI switches come from SNMP (O(counters_source=snmp)).
seealso:
  - module: ethercluster.routing.fabric_state
  - module: ethercluster.routing.link_transition
"""

EXAMPLES = r"""
- name: Measure for 3 x 60 s and decide
  ethercluster.routing.power_decide:
    topology: inventories/default/topology.yml
    interval_s: 60
    thresholds: {off_below: 0.1, on_above: 0.5, samples: 3}
    log: /var/log/ethercluster/power.jsonl
  register: decision

- name: The paper's selector on the measured traffic, at most 4 changes
  ethercluster.routing.power_decide:
    topology: inventories/default/topology.yml
    mode: selector
    speeds: [1000, 100]
    max_changes: 4
  register: decision
"""

RETURN = r"""
actions:
  description: What to do, in order, each C(action) (off, on, speed), C(link), C(speed_mbps) for a speed change, and
    C(reason).
  returned: always
  type: list
  elements: dict
log:
  description: The decision's reasoning, one line each.
  returned: always
  type: list
  elements: str
max_utilisation:
  description: The busiest channel's utilisation in the latest sample.
  returned: always
  type: float
busiest:
  description: The busiest channel.
  returned: always
  type: str
sample_peaks:
  description: The busiest channel's utilisation of each sample.
  returned: with O(mode=threshold)
  type: list
  elements: float
mode:
  description: The mode that decided.
  returned: always
  type: str
watts_before:
  description: The fabric's watts as read (power model, docs/power.md).
  returned: with O(mode=selector)
  type: float
watts_after:
  description: The fabric's watts after RV(actions).
  returned: with O(mode=selector)
  type: float
max_utilisation_before:
  description: The busiest channel's utilisation on the measured traffic, as the fabric is.
  returned: with O(mode=selector)
  type: float
max_utilisation_after:
  description: The busiest channel's utilisation after RV(actions).
  returned: with O(mode=selector)
  type: float
max_load_before:
  description: The busiest channel's load (bytes/s) as the fabric is.
  returned: with O(mode=selector)
  type: float
max_load_after:
  description: The busiest channel's load (bytes/s) after RV(actions).
  returned: with O(mode=selector)
  type: float
all_links_max_utilisation:
  description: The busiest channel's utilisation with every link on at full speed (the selector's bound).
  returned: with O(mode=selector)
  type: float
vetoed:
  description: The changes not proposed, each with C(action), C(link), C(reason) and C(by) (C(selector), C(transition)
    when only a drain could do it, C(order) when no order keeps the busiest channel within the bound).
  returned: with O(mode=selector)
  type: list
  elements: dict
deferred:
  description: The actions beyond O(max_changes), for a later run.
  returned: with O(mode=selector)
  type: list
  elements: dict
bank:
  description: The bank the switches hold.
  returned: always
  type: str
down_links:
  description: The links down now.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {
    **module_args.DEPLOYED_FABRIC_SPEC,
    "mode": {"type": "str", "default": "threshold", "choices": ["threshold", "selector"]},
    "selector": {"type": "str", "default": "greedy", "choices": ["greedy", "search"]},
    "speeds": {"type": "list", "elements": "int", "default": [1000, 100, 10]},
    "max_changes": {"type": "int"},
    "thresholds": {"type": "dict"},
    "state": {"type": "dict"},
    "readings": {"type": "list", "elements": "dict"},
    "interval_s": {"type": "float", "default": 10.0},
    "samples": {"type": "int"},
    "counters_source": {"type": "str", "default": "ovs", "choices": ["ovs", "snmp"]},
    "snmp_community": {"type": "str", "default": "public", "no_log": True},
    "snmp_port": {"type": "int", "default": 161},
    "snmp_if_name": {"type": "str"},
    "log": {"type": "path"},
    **module_args.SWITCH_SESSION_SPEC,
}


def main():
    module_args.refuse_bare_run("power_decide", ARGUMENT_SPEC)


if __name__ == "__main__":
    main()
