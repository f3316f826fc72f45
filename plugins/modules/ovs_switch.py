#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.ovs_switch; the work is done by the
action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: ovs_switch
short_description: Push a switch's intent to an Open vSwitch switch as an 802.1Q general-mode OpenFlow pipeline
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Renders one switch's entry of the intent (VLANs, per-port PVID and untagged/tagged membership, admin state,
    speed, static MAC entries, STP) into an OpenFlow 1.3 pipeline that behaves like an IEEE 802.1Q switch with
    general/hybrid ports (PVID classification, ingress filtering, per-VLAN learning, static entries above learned
    ones, flooding to VLAN members with per-port tag/untag), plus port admin state (C(ovs-ofctl mod-port)) and
    speed (C(tc tbf) on the port's device, egress).
  - Reaches the switch through the task's own Ansible connection (the host's C(ansible_connection), default
    C(ssh), with its connection variables C(ansible_host), C(ansible_user), C(ansible_password), C(ansible_port),
    C(ansible_ssh_private_key_file), C(ansible_ssh_common_args) for jump hosts and known hosts files, become and host
    key checking as for any task), reads what it holds in one round trip, compares, and writes only when something
    differs, in one round trip. Each round trip is one shell script given on the standard input of C(/bin/sh).
    The pipeline is made the intent's atomically. The switch compares its flows with the intent's
    (C(ovs-ofctl diff-flows)) and the differences go in one bundle (C(ovs-ofctl --bundle add-flows)); learned entries
    stay when the pipeline has static MAC entries (they decide for every planned host) and are flushed when it has
    none (C(mac_learning=self)); ports come up before and go down after it.
  - On a switch of the lab (M(ethercluster.routing.lab)) with a renegotiation gap, a speed change takes the port
    down for the gap (the switch's figure for that change, when the lab was built with
    O(ethercluster.routing.lab#module:renegotiation_gap=profile)) and brings it back, and the task returns after
    the gap.
  - O(state=rendered) returns the flows without connecting; O(state=parsed) parses given text;
    O(state=gathered) reads the switch and changes nothing.
  - The pipeline is described in docs/platforms.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller
attributes:
  become:
    description: Whether become keywords apply to the task.
    support: full
    details: The scripts run with become when the switch's connection has it (C(ansible_become) or the task's keyword).
  check_mode:
    details: Reads the switch and reports what would change; writes nothing.
  connection:
    description: Whether the task uses the host's connection.
    support: full
    details:
      - The scripts run over the task's connection plugin (C(ssh), C(paramiko_ssh), C(local)...); CLI and API
        connections (C(network_cli), C(httpapi), C(netconf)) are refused.
  delegation:
    description: Whether C(delegate_to) changes where the task runs.
    support: partial
    details:
      - Delegated (for example to C(localhost)), or with O(switch) naming another inventory host, the task reaches the
        switch over that switch's own inventory connection, not the delegated host's.
  diff_mode:
    support: full
    details: A per-switch diff of bridge settings, the intent's ports (admin, speed) and the pipeline's flows.
options:
  state:
    description:
      - V(present) makes the switch hold the intent; V(rendered) returns the flows and port settings without
        connecting; V(parsed) parses O(running_config); V(gathered) returns what the switch holds.
    type: str
    choices: [present, rendered, parsed, gathered]
    default: present
  intent:
    description: The whole intent (schema C(ethercluster.routing/intent/v1)); the entry C(switches.<switch>) is used.
    type: dict
  src:
    description: Path of the intent file (C(intent.json), or YAML) instead of O(intent).
    type: path
  config:
    description: This switch's entry of the intent (C(platform), C(stp), C(vlans), C(ports), C(static_macs)).
    type: dict
  switch:
    description: Name of the switch in the intent. Default is the inventory hostname.
    type: str
  running_config:
    description:
      - With O(state=parsed), text to parse. Either C(ovs-ofctl dump-flows) output or the whole answer of the
        module's read script.
    type: str
  bridge:
    description: The OVS bridge. Default is the host variable C(ovs_bridge), else C(br0).
    type: str
  host_key_checking:
    description:
      - V(false) turns host key checking off for this task's connection. V(true) leaves it to Ansible's setting
        (C(ansible_host_key_checking), C(ANSIBLE_HOST_KEY_CHECKING), on by default). Known hosts files and other
        SSH settings come from the inventory (C(ansible_ssh_common_args)).
    type: bool
    default: true
  timeout:
    description:
      - Seconds allowed for each of the read and the write on the switch (the script is stopped with C(timeout)
        when the switch has it). The time allowed for connecting is Ansible's connection timeout
        (C(ansible_timeout), C(-T), C(ANSIBLE_TIMEOUT)).
    type: float
    default: 30
requirements:
  - PyYAML on the controller, and what the connection plugin needs (the OpenSSH client for C(ssh))
  - on the switch, C(/bin/sh), C(ovs-ofctl), C(ovs-vsctl), C(tc) and C(ip) in the login shell's PATH, and C(OVS_RUNDIR) pointing at
    its OVS run directory when not the default (the lab's switches set it)
notes:
  - The options C(host), C(port), C(username), C(key_file) and C(known_hosts) of earlier development versions were
    removed; set the inventory's connection variables instead (C(ansible_host), C(ansible_port), C(ansible_user),
    C(ansible_ssh_private_key_file), C(ansible_ssh_common_args) with C(-o UserKnownHostsFile=FILE)).
  - Ports of the switch that the intent does not name are left as they are (no flows send frames to them).
  - Flows with the pipeline's cookie are managed; learned entries (their own cookie) are ignored when comparing and
    kept by a write unless the pipeline has no static MAC entry; any other flow is removed.
seealso:
  - module: ethercluster.routing.lab
"""

EXAMPLES = r"""
- name: Push the intent to every switch of the lab
  ethercluster.routing.ovs_switch:
    src: "{{ playbook_dir }}/out/intent.json"

- name: Show the flows of sw0 without connecting
  ethercluster.routing.ovs_switch:
    src: out/intent.json
    switch: sw0
    state: rendered
  delegate_to: localhost
  register: sw0_flows

- name: What does the switch hold now
  ethercluster.routing.ovs_switch:
    state: gathered
  register: held
"""

RETURN = r"""
switch:
  description: Name of the switch.
  returned: always
  type: str
  sample: sw0
commands:
  description: The changes made (or that would be made in check mode), one line each.
  returned: O(state=present)
  type: list
  elements: str
  sample:
    - "flows: 43 to add, 0 to remove, learned entries kept"
    - "port 3: speed 1000 -> 100 Mb/s"
flows:
  description: Number of flows of the rendered pipeline.
  returned: O(state=present)
  type: int
rendered:
  description: The switch's flows (as C(ovs-ofctl replace-flows) reads them, in C(flows) and C(flows_text)), ports and
    bridge settings.
  returned: O(state=rendered)
  type: dict
parsed:
  description: The flows (and ports and bridge settings when given the read script's answer) in the rendered form.
  returned: O(state=parsed)
  type: dict
gathered:
  description: What the switch holds, in the rendered form, with the counts of learned and foreign flows.
  returned: O(state=gathered)
  type: dict
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args


ARGUMENT_SPEC = {
    "state": {"type": "str", "default": "present",
              "choices": ["present", "rendered", "parsed", "gathered"]},
    "intent": {"type": "dict"},
    "src": {"type": "path"},
    "config": {"type": "dict"},
    "switch": {"type": "str"},
    "running_config": {"type": "str"},
    "bridge": {"type": "str"},
    **module_args.SWITCH_SESSION_SPEC,
}
ARGUMENT_RULES = {"mutually_exclusive": [("intent", "src", "config")]}


def main():
    module_args.refuse_bare_run("ovs_switch", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
