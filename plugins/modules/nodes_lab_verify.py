#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.nodes_lab_verify: check a host-routed lab on the wire
against its plan; the work: module_utils/lab/nodes_lab.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: nodes_lab_verify
short_description: Check a host-routed lab on the wire against its plan (pings, forwarding hops, iperf3)
version_added: 0.4.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Runs on the lab machine, after the role C(ethercluster.routing.node_network) configured the nodes of a lab that
    C(playbooks/lab_up.yml -e design=...) built (docs/nodes.md of the collection).
  - From every node to every address of every other node, a ping whose TTL allows exactly the forwards the plan's routes
    take (so a longer path fails), whose reply's TTL must show the planned forwards of the way back; and, for each
    planned forward, a ping with a smaller TTL that must die at the planned forwarding node (its time-exceeded answer
    names it) - the gateways of every path, hop by hop, as a traceroute would show them.
  - Then, unless O(iperf_seconds=0), iperf3 from every node to the node half the sorted list away, all at once; the
    throughput is recorded, not judged (the lab shares the machine's cores).
  - Changes nothing; fails when a check fails, listing them.
options:
  lab:
    description: The lab's name.
    type: str
    required: true
  design:
    description: The host-routed plan the lab was built from and the nodes configured with (its C(nodes) are used).
    type: dict
    required: true
  state_root:
    description: Directory of the labs' records.
    type: path
    default: /run/ethercluster-lab
  iperf_seconds:
    description: Seconds of the many-to-many iperf3 run; 0 skips it.
    type: float
    default: 3
attributes:
  check_mode:
    support: full
    description: Changes nothing in any mode; it only sends probes.
  diff_mode:
    support: none
    description: It changes nothing, so there is nothing to show.
requirements:
  - root on the lab machine; iproute2, iputils ping, iperf3
notes:
  - The probes and what each failure means - docs/nodes.md of the collection, section "The verification".
  - Every probe names the pair, the address, its owner and the TTL it was sent with.
"""

EXAMPLES = r"""
- name: Check the Stack-Ring lab
  ethercluster.routing.nodes_lab_verify:
    lab: stackring
    design: "{{ lookup('ansible.builtin.file', 'plan.yml') | from_yaml }}"
  register: check
"""

RETURN = r"""
passed:
  description: Whether every probe behaved as planned (and iperf3 ran between every pair).
  returned: always
  type: bool
pairs:
  description: Node pairs checked.
  returned: always
  type: int
pings:
  description: Pings sent (one per node and address of another node).
  returned: always
  type: int
hop_checks:
  description: Time-exceeded probes sent (one per planned forward).
  returned: always
  type: int
max_forwards:
  description: The most software forwards of any path in the plan.
  returned: always
  type: int
forward_histogram:
  description: Planned forwards -> how many pings take that many.
  returned: always
  type: dict
failures:
  description: What did not behave as planned, one line each.
  returned: always
  type: list
  elements: str
iperf3:
  description: The many-to-many run - C(pairs) (C(src), C(dst), C(mbps), C(forwards)), C(total_mbps), C(min_mbps),
    C(max_mbps), C(errors).
  returned: when O(iperf_seconds) > 0
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

# standard library only below: no import guard
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import nodes_lab


def main():
    module = AnsibleModule(supports_check_mode=True, argument_spec=dict(
        lab=dict(type="str", required=True),
        design=dict(type="dict", required=True),
        state_root=dict(type="path", default="/run/ethercluster-lab"),
        iperf_seconds=dict(type="float", default=3.0),
    ))
    params = module.params
    record = nodes_lab.read_record(params["state_root"], params["lab"])
    if record is None:
        module.fail_json(msg="no host-routed lab %s under %s (playbooks/lab_up.yml -e design=...)"
                             % (params["lab"], params["state_root"]))
    nodes = params["design"].get("nodes")
    if not isinstance(nodes, dict):
        module.fail_json(msg="design: needs the plan's nodes")
    try:
        result = nodes_lab.verify(record["layout"], nodes, params["iperf_seconds"])
    except nodes_lab.LabError as exc:
        module.fail_json(msg=str(exc))
    if not result["passed"]:
        problems = result["failures"] + result.get("iperf3", {}).get("errors", [])
        module.fail_json(msg="%d checks failed: %s" % (len(problems), "; ".join(problems[:5])), **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
