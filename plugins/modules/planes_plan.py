#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation and argument spec of ethercluster.routing.planes_plan; the
work is done by the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: planes_plan
short_description: Plan a multi-port planes cluster (PMCME) - per-plane subnets, MAC table, node network - offline
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Plans, on the controller, a cluster of N nodes with P Ethernet ports each, port X of every node cabled to
    switch X (plane X), the switches not linked to each other (the PMCME paper, section 1, Fig. 1 (b)), and
    returns the plan.
  - "The plan: one IPv4 subnet per plane cut from the design's C(base_prefix); per node its address on every
    plane, a fixed locally administered MAC per port and its primary address (port 0's, the address the
    applications use); the MAC table in the paper's Table 2 form (destination master MAC and Eport X to the
    destination's port-X MAC, so port X of a sender always reaches port X of the receiver); the node network
    contract's C(nodes) and C(switches) blocks (routes per C(mode): none for C(pmcme) and C(single), one /32
    multipath route per peer for C(l4_multipath))."
  - A bad design fails the task listing every problem, each naming the file and the field
    (for example C(switch_ports), C(nodes[2].interfaces)).
  - Contacts no device and writes nothing; playbooks/plan_planes.yml writes the plan's files.
    The design and the plan are described in docs/planes.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller.local
  - ethercluster.routing.controller
  - ethercluster.routing.controller.design
attributes:
  check_mode:
    details: It only plans and writes nothing; playbooks/plan_planes.yml writes the plan's files.
options:
  design_data:
    description:
      - "The design as data - for example C({kind: planes, nodes: 4, ports: 4})."
    type: dict
requirements:
  - PyYAML on the controller (the collection's requirements.txt)
notes:
  - Exactly one of O(design) and O(design_data) is required.
seealso:
  - module: ethercluster.routing.node_planes
  - module: ethercluster.routing.node_network
"""

EXAMPLES = r"""
- name: Plan 4 nodes with 4 ports on 4 plane switches
  ethercluster.routing.planes_plan:
    design_data:
      kind: planes
      nodes: 4
      ports: 4
      base_prefix: 10.97.0.0/16
  register: planes

- name: Plan a design file
  ethercluster.routing.planes_plan:
    design: designs/planes8.yml
  register: planes8

- name: Show where port 2 of node n1 is cabled
  ansible.builtin.debug:
    msg: "{{ planes.plan.node_planes.n1.ports[2] }}"
"""

RETURN = r"""
plan:
  description:
    - The plan - C(schema), C(design) (validated, defaults filled in), C(summary), C(planes), C(nodes) and
      C(switches) (the node network contract), C(node_planes) (per node C(primary) and C(ports)), C(mac_table)
      (Table 2) and C(pmcme) (C(threshold_bytes), C(streams_per_port)).
  returned: success
  type: dict
  sample:
    schema: ethercluster.routing/planes-plan/v1
    planes:
      - {plane: 0, switch: plane0, subnet: 10.97.0.0/24, ports: 48, speed_mbps: 1000}
    nodes:
      n0:
        interfaces:
          - {name: e0, switch: plane0, address: 10.97.0.1/24, mac: "02:00:0a:61:00:01"}
        routes: []
        forwarding: false
        rp_filter: 2
        sysctls: {net.ipv4.conf.all.arp_ignore: 1, net.ipv4.conf.all.arp_announce: 2}
    switches:
      plane0: {ports: 48, attached: [[n0, e0], [n1, e0]]}
    mac_table:
      - {destination_node: "02:00:0a:61:00:02", destination_port: 1, new_mac: "02:01:0a:61:01:02",
         node: n1, address: 10.97.0.2}
summary:
  description: C(name), C(nodes), C(ports), C(switches), C(mode) and C(node_mbps) (a node's total port speed).
  returned: success
  type: dict
  sample: {name: planes, nodes: 4, ports: 4, switches: 4, mode: pmcme, node_mbps: 4000}
design:
  description: Absolute path of the design file that was read.
  returned: when O(design) was given
  type: str
  sample: /srv/designs/planes8.yml
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_RULES = module_args.file_or_data("design")
ARGUMENT_SPEC = module_args.file_or_data_spec("design")


def main():
    module_args.refuse_bare_run("planes_plan", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
