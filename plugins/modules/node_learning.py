#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.node_learning: make the switches learn a host in
every VLAN (mac_learning self, switch-tagged VLAN paper section 3.3); the
work: module_utils/assign/learning.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: node_learning
short_description: Make every switch learn this host in every VLAN (mac_learning self)
version_added: 0.3.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - With C(mac_learning=self) (the fixed VLAN assignment) the switches hold no static MAC entries; each host sends one
    broadcast in every VLAN so that every switch learns, in every VLAN, the port towards it (switch-tagged VLAN paper,
    section 3.3). The VLANs, devices and addresses come from the intent's C(mac_learning.hosts.<host>) block.
  - O(method=vlan_interfaces) (the paper's way, for real Linux nodes) gives O(parent) one 802.1Q VLAN interface per
    VLAN with its learning address (iproute2), then sends a broadcast ping from each. It reads what the host holds
    first and runs only the missing commands, so a second run changes nothing; O(state=absent) removes the
    interfaces. A broadcast ping that nobody answers is normal (Linux ignores broadcast pings by default).
  - O(method=tagged_frames) changes no host configuration - it sends, from O(parent), one 802.1Q-tagged broadcast per
    VLAN (a gratuitous ARP request with O(mac) and the VLAN's learning address as sender) with a raw socket. It
    reports no change (frames are not configuration). This is what the lab uses, whose kernel has no VLAN devices.
  - Check mode runs nothing and returns the commands (or frames) it would send; C(--diff) shows the commands.
options:
  host:
    description: The host's name, for messages.
    type: str
    required: true
  method:
    description: How the broadcasts are sent.
    type: str
    choices: [vlan_interfaces, tagged_frames]
    required: true
  state:
    description: V(absent) removes the VLAN interfaces (O(method=vlan_interfaces)); with O(method=tagged_frames) nothing is
      left to remove and nothing is sent.
    type: str
    choices: [present, absent]
    default: present
  parent:
    description: The host's NIC towards its switch.
    type: str
    default: eth0
  mac:
    description: The MAC of O(parent) (the source of the tagged frames). Required with O(method=tagged_frames).
    type: str
  vlans:
    description: One entry per VLAN, from the intent's C(mac_learning) block.
    type: list
    elements: dict
    required: true
    suboptions:
      vlan:
        description: The VLAN ID.
        type: int
        required: true
      device:
        description: The VLAN interface's name (C(eth0.<vid>)).
        type: str
        required: true
      address:
        description: The host's learning address in the VLAN's subnet, with its prefix length.
        type: str
        required: true
      broadcast:
        description: The VLAN subnet's broadcast address. Default is the broadcast of O(vlans[].address)'s subnet.
        type: str
  count:
    description: Broadcasts per VLAN.
    type: int
    default: 1
  netns:
    description: Run inside this network namespace of the machine the task runs on (the lab's host namespaces; the
      task is delegated to the lab machine).
    type: str
attributes:
  check_mode:
    support: full
    description: Sends and changes nothing; returns the commands or frames it would send.
  diff_mode:
    support: full
    description: Shows the iproute2 commands O(method=vlan_interfaces) runs.
requirements:
  - Linux; root (VLAN devices, raw sockets, network namespaces); iproute2 and ping for O(method=vlan_interfaces)
notes:
  - docs/vlans.md and docs/roles.md (role C(ethercluster.routing.node_learning)) of the collection.
"""

EXAMPLES = r"""
- name: Send the learning broadcasts of one lab host
  ethercluster.routing.node_learning:
    host: node00
    method: tagged_frames
    mac: "02:00:00:00:00:01"
    netns: ec-lab-node00
    vlans:
      - {vlan: 2, device: eth0.2, address: 10.254.0.1/28, broadcast: 10.254.0.15}
  delegate_to: localhost
"""

RETURN = r"""
commands:
  description: The iproute2 commands run (or, in check mode, to run).
  returned: always
  type: list
  elements: str
  sample: ["ip link add link eth0 name eth0.2 type vlan id 2"]
sent:
  description: Broadcasts sent (pings or frames), per VLAN.
  returned: always
  type: dict
  sample: {"2": 1}
vlans:
  description: How many VLANs the host covers.
  returned: always
  type: int
  sample: 3
"""

import socket
import traceback

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = module_args.node_spec(
    host=dict(type="str", required=True),
    method=dict(type="str", required=True, choices=["vlan_interfaces", "tagged_frames"]),
    parent=dict(type="str", default="eth0"),
    mac=dict(type="str"),
    vlans=dict(type="list", elements="dict", required=True, options=dict(
        vlan=dict(type="int", required=True), device=dict(type="str", required=True),
        address=dict(type="str", required=True), broadcast=dict(type="str"))),
    count=dict(type="int", default=1),
)

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.assign.learning import (
        LearningError,
        changes_diff,
        check_vlans,
        interface_changes,
        parse_ip_json,
        pings,
        tagged_garp,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.frames import Netns
except ImportError:
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def _prefix(params):
    return ["ip", "netns", "exec", params["netns"]] if params["netns"] else []


def _vlan_interfaces(module, params, vlans):
    rc, out, err = module.run_command(_prefix(params) + ["ip", "-j", "-d", "address", "show"])
    if rc != 0:
        raise LearningError("host %s: ip -j -d address show failed: %s" % (params["host"], err.strip()))
    commands = interface_changes(parse_ip_json(out), vlans, params["parent"], params["host"], params["state"])
    sent = {}
    if not module.check_mode:
        for command in commands:
            rc, out, err = module.run_command(_prefix(params) + command.split())
            if rc != 0:
                raise LearningError("host %s: %s failed: %s (the kernel needs 802.1Q VLAN devices: "
                                    "modprobe 8021q)" % (params["host"], command, err.strip()))
        if params["state"] == "present":
            for entry, argv in zip(vlans, pings(vlans, params["count"])):
                rc, out, err = module.run_command(_prefix(params) + argv)
                if rc not in (0, 1):  # 1: nobody answered, the broadcast left all the same
                    raise LearningError("host %s VLAN %d interface %s: %s failed: %s"
                                        % (params["host"], entry["vlan"], entry["device"], " ".join(argv),
                                           (err or out).strip()))
                sent[str(entry["vlan"])] = params["count"]
    return commands, sent


def _open_socket(params):
    def opened():
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        try:
            sock.bind((params["parent"], 0))
        except OSError as exc:
            sock.close()
            raise LearningError("host %s: cannot send from %s: %s" % (params["host"], params["parent"], exc.strerror))
        return sock
    if params["netns"]:
        with Netns(params["netns"]):
            return opened()
    return opened()


def _tagged_frames(module, params, vlans):
    if not params["mac"]:
        raise LearningError("host %s: method tagged_frames needs mac (the source MAC of the frames)" % params["host"])
    frames = [(entry, tagged_garp(params["mac"].lower(), entry["vlan"], entry["address"])) for entry in vlans]
    sent = {}
    if module.check_mode or params["state"] == "absent":
        return [], sent
    sock = _open_socket(params)
    try:
        for entry, data in frames:
            for _unused in range(params["count"]):
                sock.send(data)
            sent[str(entry["vlan"])] = params["count"]
    except OSError as exc:
        raise LearningError("host %s VLAN %d: sending from %s failed: %s"
                            % (params["host"], entry["vlan"], params["parent"], exc.strerror))
    finally:
        sock.close()
    return [], sent


def main():
    module = module_args.started_module(ARGUMENT_SPEC, IMPORT_ERROR, "learning")
    params = module.params
    try:
        if params["count"] < 1:
            raise LearningError("host %s: count must be at least 1" % params["host"])
        vlans = check_vlans(params["vlans"], params["host"])
        if params["method"] == "vlan_interfaces":
            commands, sent = _vlan_interfaces(module, params, vlans)
        else:
            commands, sent = _tagged_frames(module, params, vlans)
    except (EtherclusterError, OSError) as exc:
        module.fail_json(msg=str(exc))
    result = dict(changed=bool(commands), commands=commands, sent=sent, vlans=len(vlans))
    if module._diff and commands:
        result["diff"] = changes_diff(commands, params["host"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
