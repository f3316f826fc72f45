#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.fabric_state; the work is done by the
action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_state
short_description: Read the fabric's link states, speeds and VLAN bank from the switches
version_added: 0.2.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads every switch of the topology over its Ansible connection (one each, in parallel) and returns the fabric's
    state as the switches hold it, compared with the topology; nothing is kept in a side file.
  - A link is down when either end is admin down; its speed is the rate of each end (C(tc tbf) on the ovs platform);
    the VLAN bank (A 100-1999, B 2100-3999) is read from the VLAN IDs of each switch's pipeline and PVIDs.
  - Switches holding different banks are an interrupted transition; the task then fails (unless
    O(fail_on_unsettled=false)) saying which switches hold which bank and that re-running the same playbook finishes
    it.
  - With O(counters=true) it also returns every port's byte and packet counters (C(ovs-ofctl dump-ports)), for the
    power_save playbook.
  - Reads C(ovs) switches over a shell connection and C(dell_os6)/C(huawei_vrp) switches with their show commands over
    C(ansible.netcommon.network_cli) (configuration and interface status; their speed is the configured one). Port
    counters (O(counters=true)) are read from C(ovs) switches only.
extends_documentation_fragment:
  - ethercluster.routing.controller
attributes:
  check_mode:
    details: It only reads.
options:
  topology:
    description: The topology file (docs/topology.md); the switches of the inventory must be its switches.
    type: path
    required: true
  switches:
    description: Switches to read. Default is every switch of the topology.
    type: list
    elements: str
  counters:
    description: Also read every port's counters.
    type: bool
    default: false
  fail_on_unsettled:
    description: Fail when the switches disagree on the bank or a link's ends on its speed, or a switch holds no
      pipeline.
    type: bool
    default: true
  host_key_checking:
    description: Refuse a switch whose host key is unknown or different.
    type: bool
    default: true
  timeout:
    description: Seconds allowed for connecting and for each read.
    type: float
    default: 30
requirements:
  - PyYAML, networkx on the controller, and what the switches' connection plugin needs (the OpenSSH client for C(ssh))
notes:
  - Each switch is reached through the connection plugin its inventory variables name (C(ansible_connection),
    default C(ssh)), set up from them as for a task on it (C(ansible_host), C(ansible_user), C(ansible_port),
    C(ansible_ssh_private_key_file), C(ansible_ssh_common_args), become, host key checking); C(ovs_bridge) names its
    bridge.
seealso:
  - module: ethercluster.routing.link_transition
  - module: ethercluster.routing.ovs_switch
"""

EXAMPLES = r"""
- name: Read the fabric's state
  ethercluster.routing.fabric_state:
    topology: inventories/default/topology.yml
  delegate_to: localhost
  run_once: true
  register: fabric

- name: Show the down links and the bank
  ansible.builtin.debug:
    msg: "down: {{ fabric.state.down_links }}, bank {{ fabric.state.bank }}"
"""

RETURN = r"""
state:
  description: The fabric's state.
  returned: always
  type: dict
  contains:
    bank:
      description: The bank every switch holds, or null when they disagree or hold none.
      type: str
    down_links:
      description: Names of the links that are admin down at either end.
      type: list
      elements: str
    speeds:
      description: Link name -> Mb/s, for links whose ends agree.
      type: dict
    links:
      description: Per topology link, admin state, carrier, the speed of each end.
      type: list
      elements: dict
    switches:
      description: Per switch, the banks its pipeline and its PVIDs use, and per port admin, carrier, speed, PVID.
      type: dict
    settled:
      description: One bank everywhere and no link with ends at different speeds.
      type: bool
    problems:
      description: What is not settled, one line each.
      type: list
      elements: str
counters:
  description: Switch -> port -> rx_bytes, tx_bytes, rx_packets, tx_packets.
  returned: O(counters=true)
  type: dict
read_at:
  description: Wall-clock time (seconds since the epoch) of the counter reading.
  returned: O(counters=true)
  type: float
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {
    "topology": {"type": "path", "required": True},
    "switches": {"type": "list", "elements": "str"},
    "counters": {"type": "bool", "default": False},
    "fail_on_unsettled": {"type": "bool", "default": True},
    **module_args.SWITCH_SESSION_SPEC,
}


def main():
    module_args.refuse_bare_run("fabric_state", ARGUMENT_SPEC)


if __name__ == "__main__":
    main()
