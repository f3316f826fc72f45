#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation and argument spec of ethercluster.routing.stack_plan; the
work is done by the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_plan
short_description: Plan a host-routed Stack-Ring or Stack-Mesh fabric (addresses, static routes, SSB cabling), offline
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Plans, on the controller, a Stack-Ring or Stack-Mesh cluster (the Stack-Ring/Stack-Mesh paper, sections 3.3
    and 3.4) - stages or groups of nodes between stacked switch boxes (SSBs), the nodes forwarding between
    SSBs in software - and returns the plan.
  - "The plan: every node's NICs (C(east), C(west), and for the mesh C(north), C(south)), their addresses (the
    paper's 10.10.i.x / 10.j.i.x, or from O(design) field C(base_prefix)), its static routes chosen by the
    paper's interface selection (Fig. 5, Fig. 7 X then Y, fixed where the printed algorithm is wrong), node x
    forwarding through node x of the neighbouring stage or through an extra forwarder per stage; each SSB and
    the NICs cabled to it; the forwarding tables in the paper's Table 1 form; the scalability figures of
    Table 2 for this hardware."
  - The plan proves itself by walking every source node to every address through the planned tables like
    Linux does (own addresses, then the longest prefix) - every address reached, no loop, no more software
    forwards than the fabric needs. A plan that fails this fails the task, naming the failing walks.
  - With O(out), writes C(nodes.yml) (the node network contract - C(nodes) and C(switches) - that the role
    ethercluster.routing.node_network and the host-routed lab read), C(stack_plan.json) (the whole plan) and
    C(report.md), and reports C(changed) only when a file's content changed.
  - A bad design fails the task with a message naming the file and the field (C(design.<field>)).
  - Contacts no device. The design file and the plan are described in docs/stack.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller.local
  - ethercluster.routing.controller.plan_files
  - ethercluster.routing.controller
  - ethercluster.routing.controller.design
options:
  design_data:
    description:
      - "The design as data, the mapping of the file's C(design:) - for example
        C({kind: stack_ring, stages: 4, nodes_per_stage: 3})."
    type: dict
  out:
    description:
      - Directory to write C(nodes.yml), C(stack_plan.json) and C(report.md) into; created when missing.
      - Without it nothing is written and the task never reports a change.
    type: path
requirements:
  - PyYAML on the controller (the collection's requirements.txt)
notes:
  - Exactly one of O(design) and O(design_data) is required.
  - Files are replaced atomically, and only when their content changes.
seealso:
  - module: ethercluster.routing.node_network
"""

EXAMPLES = r"""
- name: Plan the paper's 4-stage Stack-Ring of Table 1 with 3 nodes per stage
  ethercluster.routing.stack_plan:
    design_data:
      kind: stack_ring
      stages: 4
      nodes_per_stage: 3
    out: out/stack
  register: ring

- name: Plan a 3 x 3 Stack-Mesh from a file
  ethercluster.routing.stack_plan:
    design: designs/mesh3.yml
    out: out/mesh
  register: mesh

- name: Show the most software forwards between two nodes
  ansible.builtin.debug:
    msg: "{{ ring.checks.most_forwards.pairs }} forward(s) at most, {{ ring.plan.nodes | length }} nodes"
"""

RETURN = r"""
plan:
  description:
    - The plan - C(design) (validated, defaults filled in), C(nodes) and C(switches) (the node network
      contract), C(subnets) (per SSB), C(forwarding_table) (per stage or group, Table 1's rows), C(checks) and
      C(capacity). The same data as C(stack_plan.json).
  returned: success
  type: dict
  sample:
    design: {kind: stack_ring, stages: 4, nodes_per_stage: 3, switches_per_stack: 1, switch_ports: 48}
    nodes:
      s1n1:
        interfaces:
          - {name: east, switch: ssb1, address: 10.10.1.2/24}
          - {name: west, switch: ssb0, address: 10.10.0.129/24}
        routes:
          - {to: 10.10.2.0/24, via: 10.10.1.129, dev: east}
          - {to: 10.10.3.0/24, via: 10.10.0.2, dev: west}
        forwarding: true
        rp_filter: 2
        sysctls: {}
    switches:
      ssb0: {ports: 48, attached: [[s0n0, east], [s1n0, west]]}
checks:
  description:
    - The walk of the planned tables - C(passed), C(delivered), C(loops), C(most_forwards) (C(pairs), C(addresses)),
      C(expected_forwards), C(shortest), C(walks), C(sources), C(complete), C(failures), C(transit) per forwarding node.
  returned: success
  type: dict
  sample: {passed: true, delivered: true, loops: 0, most_forwards: {pairs: 1, addresses: 1}, shortest: true}
capacity:
  description: Table 2 of the paper for the design's hardware (star, tree, ring, mesh) and the planned design's figures.
  returned: success
  type: dict
files:
  description:
    - Per output file (C(nodes.yml), C(stack_plan.json), C(report.md)) its C(path) and C(state) - C(created),
      C(updated) or C(unchanged). In check mode, what would happen.
  returned: when O(out) is given
  type: dict
  sample:
    nodes.yml: {path: /srv/out/stack/nodes.yml, state: created}
out:
  description: Absolute path of the output directory.
  returned: when O(out) is given
  type: str
  sample: /srv/out/stack
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_RULES = module_args.file_or_data("design")
ARGUMENT_SPEC = module_args.file_or_data_spec("design", out={"type": "path"})


def main():
    module_args.refuse_bare_run("stack_plan", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
