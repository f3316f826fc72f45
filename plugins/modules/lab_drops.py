#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.lab_drops: the drop counters of every place a lab
drops frames, to attribute the datagrams the probes lose (the work:
module_utils/lab/drops.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: lab_drops
short_description: Read where the emulated lab drops frames, and what was dropped since an earlier reading
version_added: 0.2.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads, for every switch port of the lab (M(ethercluster.routing.lab)), the frames dropped at the packet socket
    through which C(ovs-vswitchd) reads the port (C(ss -0 -m), skmem C(d)), by the veth (C(ip -s link)) and by the
    port's egress token bucket (C(tc -s qdisc)); for every host the UDP receive-buffer errors (C(/proc/net/snmp))
    and its NIC's drops; for the machine the input-backlog drops per CPU (C(/proc/net/softnet_stat)).
  - With O(since) (the C(counters) of an earlier reading), says which counters grew since, one line per place, so
    that datagrams M(ethercluster.routing.lab_probes) counts as lost in a transition can be attributed.
  - Reads only. Runs on the lab machine as root.
options:
  lab:
    description: Name of the lab.
    type: str
    required: true
  state_root:
    description: Directory holding the labs.
    type: path
    default: /run/ethercluster-lab
  since:
    description: The C(counters) an earlier run of this module returned; C(changes) and C(dropped) are counted from
      them.
    type: dict
requirements:
  - root on the lab machine (network namespaces)
attributes:
  check_mode:
    support: full
    details: It only reads; it reads in check mode too.
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: ethercluster.routing.lab_probes
"""

EXAMPLES = r"""
- name: Read the drop counters before a transition
  ethercluster.routing.lab_drops:
    lab: mol-torus4-power
  register: before

- name: What was dropped since (after the transition)
  ethercluster.routing.lab_drops:
    lab: mol-torus4-power
    since: "{{ before.counters }}"
  register: after
"""

RETURN = r"""
counters:
  description: C(time) of the reading (wall clock); C(switches) (switch, then port device, then C(socket), C(qdisc),
    C(rx_dropped), C(tx_dropped)); C(hosts) (C(udp_rcvbuf), C(udp_in_errors), C(qdisc), C(rx_dropped), C(tx_dropped));
    C(softnet) (per CPU).
  returned: always
  type: dict
changes:
  description: "With O(since), one line per place whose counters grew, e.g. C(switch sw4 port p1: socket +132)."
  returned: always
  type: list
  elements: str
dropped:
  description: With O(since), the frames dropped anywhere since (0 without it).
  returned: always
  type: int
"""

import traceback

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {"lab": {"type": "str", "required": True}, "since": {"type": "dict"},
                 "state_root": {"type": "path", "default": "/run/ethercluster-lab"}}

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import drops
except ImportError:  # pragma: no cover
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def main():
    module = module_args.started_module(ARGUMENT_SPEC, IMPORT_ERROR, "lab")
    try:
        counters = drops.read_lab(module.params["state_root"], module.params["lab"])
    except drops.EtherclusterError as exc:
        module.fail_json(msg=str(exc))
    since = module.params["since"] or counters
    module.exit_json(changed=False, counters=counters, changes=drops.changes(since, counters),
                     dropped=drops.dropped(since, counters))


if __name__ == "__main__":
    main()
