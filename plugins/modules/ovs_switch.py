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
  - Connects to the switch over SSH (paramiko) from the controller, reads what it holds in one round trip, compares,
    and writes only when something differs, in one round trip. The pipeline is replaced atomically
    (C(ovs-ofctl --bundle replace-flows), which also flushes learned entries); ports come up before and go down
    after it.
  - On a switch of the lab (M(ethercluster.routing.lab)) with a renegotiation gap, a speed change takes the port
    down for the gap and brings it back, and the task returns after the gap.
  - O(state=rendered) returns the flows without connecting; O(state=parsed) parses given text;
    O(state=gathered) reads the switch and changes nothing.
  - The pipeline is described in docs/platforms.md of the collection.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.conn
  - ansible.builtin.action_common_attributes.flow
  - ethercluster.routing.controller
attributes:
  become:
    support: none
  check_mode:
    support: full
    details: Reads the switch and reports what would change; writes nothing.
  connection:
    support: none
    details: The module opens its own SSH session (paramiko) with the host's connection variables.
  delegation:
    support: none
  diff_mode:
    support: full
    details: A per-switch diff of bridge settings, the intent's ports (admin, speed) and the pipeline's flows.
  platform:
    platforms: posix
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
  host:
    description: Address of the switch. Default is C(ansible_host), else the inventory hostname.
    type: str
  port:
    description: SSH port. Default is C(ansible_port), else 22.
    type: int
  username:
    description: SSH user. Default is C(ansible_user), else C(root).
    type: str
  key_file:
    description: Private key file. Default is C(ansible_ssh_private_key_file) or C(ansible_private_key_file).
    type: path
  known_hosts:
    description:
      - known_hosts file to check the switch's host key against. Default is the host variable
        C(ethercluster_known_hosts) (the lab inventory sets it), else the user's known_hosts files.
    type: path
  host_key_checking:
    description: Refuse a switch whose host key is unknown or different. V(false) accepts any key.
    type: bool
    default: true
  timeout:
    description: Seconds allowed for connecting and for each of the read and the write.
    type: float
    default: 30
requirements:
  - paramiko and PyYAML on the controller
  - on the switch, C(ovs-ofctl), C(ovs-vsctl), C(tc) and C(ip) in the login shell's PATH, and C(OVS_RUNDIR) pointing at
    its OVS run directory when not the default (the lab's switches set it)
notes:
  - Ports of the switch that the intent does not name are left as they are (no flows send frames to them).
  - Flows with the pipeline's cookie are managed; learned entries (their own cookie) are ignored when comparing;
    any other flow is removed.
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
    - "flows: replace (43 to add, 0 to remove, 0 learned entries flushed)"
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

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="present",
                       choices=["present", "rendered", "parsed", "gathered"]),
            intent=dict(type="dict"),
            src=dict(type="path"),
            config=dict(type="dict"),
            switch=dict(type="str"),
            running_config=dict(type="str"),
            bridge=dict(type="str"),
            host=dict(type="str"),
            port=dict(type="int"),
            username=dict(type="str"),
            key_file=dict(type="path"),
            known_hosts=dict(type="path"),
            host_key_checking=dict(type="bool", default=True),
            timeout=dict(type="float", default=30.0),
        ),
        mutually_exclusive=[("intent", "src", "config")],
        supports_check_mode=True,
    )
    module.fail_json(msg="ethercluster.routing.ovs_switch runs on the controller through its action "
                         "plugin; it was started as a bare module, which means the collection's "
                         "plugins/action/ovs_switch.py was not found (call it by its full name "
                         "ethercluster.routing.ovs_switch from an installed collection)")


if __name__ == "__main__":
    main()
