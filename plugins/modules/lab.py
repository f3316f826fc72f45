#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.lab: build or remove the emulated switch lab. The
action plugin of the same name reads the topology and computes the layout on
the controller; this module does the work on the lab machine."""

from __future__ import annotations

DOCUMENTATION = r"""
module: lab
short_description: Build or remove an emulated switch fabric (network namespaces and Open vSwitch)
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Builds, on the machine the task runs on, an emulator of a fabric topology. Every switch is a network
    namespace with its own C(ovsdb-server), C(ovs-vswitchd) (userspace datapath, C(fail_mode=secure), STP off,
    OpenFlow port N for topology port N) and C(sshd) on a management address; every host is a namespace with one
    NIC carrying the topology's MAC and an address; every link is a veth pair with a C(tc tbf) per direction
    emulating its speed.
  - A new switch holds no flows, so it forwards nothing until its intent is pushed
    (M(ethercluster.routing.ovs_switch)).
  - Writes an Ansible inventory of the lab (C(<state_root>/<name>/inventory.yml)) with the switches' management
    addresses, the lab's SSH key and known_hosts file.
  - A switch whose topology platform is C(dell_os6) also answers SSH with an emulated Dell OS6 CLI (a second key,
    C(cli_id_ed25519), with a forced command) that applies its configuration to the switch's OVS data plane; the
    inventory reaches it with C(ansible.netcommon.network_cli) and C(ansible_network_os=ethercluster.routing.dell_os6).
    The emulator runs with the controller's Python and this collection's path.
  - O(state=present) does nothing when a lab of that name with the same layout is up and healthy; a lab of that name
    built from another topology or options, or a broken one, is removed and built again.
    A build that fails is removed again, so no half-built lab stays behind.
  - O(state=absent) removes exactly what the lab's record (C(<state_root>/<name>/lab.json)) names, including a lab
    whose build stopped halfway.
  - Needs root on the lab machine and the packages openvswitch-switch, openssh-server, iproute2 and ethtool
    (C(playbooks/lab_up.yml) installs them). How the lab works is described in docs/lab.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller
attributes:
  check_mode:
    details: Reports whether the lab would be created, rebuilt or removed; touches nothing.
  platform:
    platforms: debian
options:
  state:
    description: Whether the lab must exist.
    type: str
    choices: [present, absent]
    default: present
  src:
    description:
      - Topology file of the fabric to emulate (the format of docs/topology.md; an inventory source file of
        P(ethercluster.routing.topology#inventory) is one).
      - A relative path is looked up like other controller files, then in the current directory.
      - With O(state=absent) it only gives the lab's default name.
    type: path
  topology:
    description: The topology as data instead of O(src).
    type: dict
  name:
    description:
      - Name of the lab (1-32 letters, digits, C(_) or C(-)); it prefixes every namespace (C(ec-<name>-<switch>)).
      - Defaults to the topology's name.
    type: str
  state_root:
    description: Directory under which each lab keeps its files, sockets, pid files and logs.
    type: path
    default: /run/ethercluster-lab
  mgmt_network:
    description:
      - IPv4 network of the management addresses. Its first address is the root-namespace side of every management
        link, the next ones go to the switches (a switch keeps the topology's C(mgmt_address) when it lies inside).
      - It must not overlap an address of this machine.
    type: str
    default: 198.51.100.0/24
  host_network:
    description: IPv4 network of the host addresses; it exists only inside the host namespaces.
    type: str
    default: 10.42.0.0/16
  host_speed_mbps:
    description: Speed of the host links (Mbit/s), emulated on both ends.
    type: int
    default: 1000
  renegotiation_gap:
    description:
      - Seconds a switch port stays down when its speed is changed, as a real switch does while it renegotiates
        (2.3-5.7 s measured, switch-tagged paper Table 6). 0 changes speeds without a gap.
      - V(profile) takes each switch's figure per speed change (1000 to 100 Mb/s, 100 to 1000 Mb/s, ...) from its
        power profile's Table 6 link timings (the topology's C(power_profile), PC5324 when it names none); a
        profile outside the built-in ones is refused.
      - M(ethercluster.routing.ovs_switch) honours it for every speed change on the lab's switches.
    type: raw
    default: 0
  bridge:
    description: Name of the OVS bridge of every switch.
    type: str
    default: br0
  userspace_tso:
    description:
      - Set C(other_config:userspace-tso-enable=true) before each C(ovs-vswitchd) starts. Without it, or
        O(host_tx_offload=false), TCP across the lab fails on bad checksums (ping still works).
    type: bool
    default: true
  host_tx_offload:
    description: Leave tx offload on for the host NICs; V(false) turns it off with C(ethtool -K eth0 tx off).
    type: bool
    default: true
  design:
    description:
      - Build the fabric of a host-routed plan instead of a topology - the plan (a mapping with the node network
        contract's C(nodes) and C(switches)) or the path of its YAML/JSON file. Needs O(name).
      - Every switch is a plain learning L2 switch (a Linux bridge, STP off, in its own namespace C(ec-<name>-<switch>)),
        every node a namespace C(ec-<name>-<node>) with one veth per NIC of the plan, cabled per the switch's
        C(attached) list, down and without address (the role C(ethercluster.routing.node_network) configures them);
        every port and NIC is shaped to O(host_speed_mbps). The inventory has the group C(nodes). docs/nodes.md.
    type: raw
  layout:
    description: Internal, set by the action plugin; do not set it.
    type: dict
requirements:
  - root on the lab machine; Open vSwitch 3.x (userspace datapath), OpenSSH server, iproute2, ethtool
notes:
  - The OVS kernel module, bridge VLAN filtering and 802.1Q devices are not needed.
  - No data port of a switch is ever in the root namespace; the only root-namespace interfaces are the management
    links C(ec<tag>m<index>).
seealso:
  - module: ethercluster.routing.ovs_switch
"""

EXAMPLES = r"""
- name: Build the lab of the default topology
  ethercluster.routing.lab:
    src: inventories/default/topology.yml
  register: lab

- name: A lab whose speed changes take the link down for 3 seconds
  ethercluster.routing.lab:
    src: fabric.yml
    name: slowlinks
    renegotiation_gap: 3

- name: Remove it
  ethercluster.routing.lab:
    name: slowlinks
    state: absent
"""

RETURN = r"""
outcome:
  description: What was done (or, in check mode, would be done).
  returned: always
  type: str
  choices: [created, rebuilt, unchanged, removed, absent]
  sample: created
reasons:
  description: Why an existing lab was rebuilt (layout changed, a daemon not running, ...).
  returned: O(state=present)
  type: list
  elements: str
timings:
  description: Seconds spent per phase (files, namespaces, ipv6-off, cables, interfaces, daemons) and in total.
  returned: when something was done
  type: dict
  sample: {files: 0.02, namespaces: 0.02, ipv6-off: 0.07, cables: 0.02, interfaces: 0.08, daemons: 0.8, total: 1.04}
port_buffers:
  description:
    - The receive buffer given to the packet socket through which each switch's C(ovs-vswitchd) reads a port
      (C(bytes), C(switches)), so that a switch committing a large flow-table change catches up on its ports
      instead of dropping what arrives meanwhile (docs/lab.md, "Under load").
    - C(bytes) 0 and C(not_set) with the reason when the kernel refused it (C(pidfd_getfd) needs Linux 5.6 and a
      ptrace policy that lets root reach the daemon); the module then warns.
  returned: when the lab was built
  type: dict
  sample: {bytes: 2097152, switches: 16}
summary:
  description: The lab's directory, inventory path, and per switch and host its namespace and address.
  returned: O(state=present)
  type: dict
  contains:
    lab:
      description: Name of the lab.
      type: str
      returned: always
    dir:
      description: The lab's directory.
      type: str
      returned: always
    inventory:
      description: Path of the inventory written for the lab.
      type: str
      returned: always
      sample: /run/ethercluster-lab/default/inventory.yml
    switches:
      description: Per switch C(mgmt_address), C(netns) and C(ports).
      type: dict
      returned: always
    hosts:
      description: Per host C(address), C(netns), C(switch) and C(port).
      type: dict
      returned: always
memory:
  description: Processes of the lab and the memory they use (kB, RSS and PSS).
  returned: O(state=present), when the lab is up
  type: dict
  sample: {processes: 48, rss_kb: 463812, pss_kb: 258866}
"""

import traceback

from ansible.module_utils.basic import AnsibleModule

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import nodes_lab
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.plan import LabError
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.runner import (
        lab_down,
        lab_up,
        memory,
    )
except ImportError:
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["present", "absent"], default="present"),
            src=dict(type="path"),
            topology=dict(type="dict"),
            name=dict(type="str"),
            state_root=dict(type="path", default="/run/ethercluster-lab"),
            mgmt_network=dict(type="str", default="198.51.100.0/24"),
            host_network=dict(type="str", default="10.42.0.0/16"),
            host_speed_mbps=dict(type="int", default=1000),
            renegotiation_gap=dict(type="raw", default=0),
            bridge=dict(type="str", default="br0"),
            userspace_tso=dict(type="bool", default=True),
            host_tx_offload=dict(type="bool", default=True),
            layout=dict(type="dict"),
            design=dict(type="raw"),
        ),
        supports_check_mode=True,
    )
    if IMPORT_ERROR is not None:
        module.fail_json(msg="cannot load the lab code of ethercluster.routing",
                         exception=IMPORT_ERROR)
    params = module.params
    try:
        if params["state"] == "present":
            layout = params["layout"]
            if layout is None:
                module.fail_json(msg="ethercluster.routing.lab runs through its action plugin, "
                                     "which computes the layout; it was started as a bare module "
                                     "(call it by its full name from an installed collection)")
            if layout.get("schema") == nodes_lab.NODES_LAB_SCHEMA:
                result = nodes_lab.nodes_lab_up(layout, check_mode=module.check_mode)
            else:
                result = lab_up(layout, check_mode=module.check_mode)
                if not module.check_mode:
                    result["memory"] = memory(layout)
                if (result.get("port_buffers") or {}).get("not_set"):
                    module.warn("the switches' port buffers keep the kernel's size (%s): a switch that commits a "
                                "large flow-table change drops what its host ports receive meanwhile"
                                % result["port_buffers"]["not_set"])
        else:
            if not params["name"]:
                module.fail_json(msg="state=absent needs name")
            record = nodes_lab.read_record(params["state_root"], params["name"])
            if record is not None:
                result = nodes_lab.nodes_lab_down(record, check_mode=module.check_mode)
            else:
                result = lab_down(params["state_root"], params["name"], check_mode=module.check_mode)
    except LabError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
