#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.node_planes: one node's spreading mode over its
switch planes (PMCME paper); the work: module_utils/nodes/planes_node*.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: node_planes
short_description: Spread a node's streams over its switch planes (pmcme in eBPF, l4_multipath, single)
version_added: 0.4.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - A planes design gives every node one port on each of P switches (planes) with no links between the switches. This
    module gives the node its primary address (a /32 on C(lo), what applications use), its ports' plane addresses,
    one route per peer primary address and the spreading O(mode).
  - V(single) uses port 0 only (the paper's 1Port baseline).
  - V(l4_multipath) routes each peer primary address over every plane (one nexthop per port) and sets
    C(net.ipv4.fib_multipath_hash_policy=1), so the kernel picks a port per stream from a hash of the addresses and
    TCP/UDP ports (LACP's layer3+4 policy, without switch support).
  - V(pmcme) routes through port 0 and loads the PMCME eBPF program (built with clang from O(source), loaded with
    bpftool, attached with tc as a clsact direct-action classifier on port 0's egress and every port's ingress). It
    finds high-bandwidth streams (more than O(threshold) bytes sent and not acknowledged), gives them ports round robin
    (at most O(per_port) registered streams per port, the oldest evicted) and rewrites the MAC addresses so that port X
    of the sender reaches port X of the receiver (the plan's MAC table), redirecting the frame to port X.
  - The multi-port modes set loose reverse-path filtering, C(arp_ignore=1) and C(arp_announce=2) on the ports; the
    values found before are kept in a state file and put back by O(state=absent), which also removes the
    programs, maps, qdiscs, routes and addresses the module added.
  - Reads the live state first and runs only what differs, so a second run changes nothing. Check mode runs
    nothing and returns the commands; C(--diff) shows each change's before and after.
options:
  node:
    description: The node's name in O(plan).
    type: str
    required: true
  plan:
    description:
      - The planes plan, C(nodes.<node>.interfaces) (in plane order, each with C(name), C(address) with its prefix
        length and C(mac)) and each node's primary address (C(nodes.<node>.primary) or C(primary_addresses.<node>)).
    type: dict
    required: true
  mode:
    description: The spreading mode.
    type: str
    choices: [pmcme, l4_multipath, single]
    default: pmcme
  state:
    description: V(absent) undoes every mode.
    type: str
    choices: [present, absent]
    default: present
  threshold:
    description: Unacknowledged bytes above which a stream is high-bandwidth (V(pmcme); the paper's 7,000).
    type: int
    default: 7000
  per_port:
    description: Streams registered per port before the oldest is evicted (V(pmcme); the paper's 100, at most 100).
    type: int
    default: 100
  source:
    description: The PMCME eBPF C source on the node (V(pmcme)). The role copies it there.
    type: path
  workdir:
    description: Where the node keeps the built object and the state file (C(<node>.json)).
    type: path
    default: /var/lib/ethercluster-planes
  netns:
    description: Run inside this network namespace of the machine the task runs on (a lab node; the task is
      delegated to the lab machine). Only the network namespace is entered, so the eBPF pins stay visible.
    type: str
attributes:
  check_mode:
    support: full
    description: Changes nothing; returns the commands it would run.
  diff_mode:
    support: full
    description: Shows every address, route, sysctl and eBPF item before and after.
requirements:
  - Linux, root; iproute2; for V(pmcme) also clang, bpftool and a kernel with cls_bpf and clsact.
notes:
  - docs/planes.md ("Node modes") of the collection; role C(ethercluster.routing.node_planes).
"""

EXAMPLES = r"""
- name: Spread the node's streams over its planes with PMCME
  ethercluster.routing.node_planes:
    node: n0
    plan: "{{ planes_plan }}"
    mode: pmcme
    source: /var/lib/ethercluster-planes/pmcme.bpf.c
"""

RETURN = r"""
commands:
  description: The commands run (or, in check mode, to run).
  returned: always
  type: list
  elements: str
  sample: ["ip route replace 10.97.255.2/32 proto 234 src 10.97.255.1 via 10.97.0.2 dev e0"]
changes:
  description: One entry per change (kind, what, before, after).
  returned: always
  type: list
  elements: dict
pin_dir:
  description: Where the programs and maps are pinned (V(pmcme)); read the maps with C(bpftool map dump pinned <pin_dir>/maps/<map>).
  returned: always
  type: str
  sample: /sys/fs/bpf/ethercluster_planes/n0
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args
# standard library only (and ctypes, for setns): no import guard
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes_node_apply import apply, enter_netns

ARGUMENT_SPEC = module_args.node_spec(
    node=dict(type="str", required=True),
    plan=dict(type="dict", required=True),
    mode=dict(type="str", default="pmcme", choices=["pmcme", "l4_multipath", "single"]),
    threshold=dict(type="int", default=7000),
    per_port=dict(type="int", default=100),
    source=dict(type="path"),
    workdir=dict(type="path", default="/var/lib/ethercluster-planes"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params

    def run(argv):
        return module.run_command(argv)

    try:
        if params["netns"]:
            enter_netns(params["netns"])
        result = apply(run, params, module.check_mode)
    except (EtherclusterError, OSError) as exc:
        module.fail_json(msg="node %s: %s" % (params["node"], exc))
    if not module._diff:
        result.pop("diff")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
