#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.topology_info; the work is done by
the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: topology_info
short_description: Load and validate an Ethernet fabric topology
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads a topology file (O(src)) or topology data (O(topology)) in the explicit form
    (C(switches), C(links), C(hosts)) or the generated form (C(generate)), validates it
    and returns it in the explicit form together with a short summary.
  - "Every problem found is reported at once, each naming the file, the entry and the field,
    for example C(links[3].b: unknown switch 'sw9')."
  - Runs on the controller only; it contacts no device and changes nothing.
  - The file format is described in docs/topology.md of the collection.
    An inventory source file of P(ethercluster.routing.topology#inventory) is a valid O(src).
extends_documentation_fragment:
  - ethercluster.routing.controller.local
  - ethercluster.routing.controller
attributes:
  check_mode:
    details: It only reads the topology file.
options:
  src:
    description:
      - Path of the topology file (YAML).
    type: path
  topology:
    description:
      - The topology as data, in the same form as the file.
    type: dict
requirements:
  - networkx, netaddr and PyYAML on the controller (the collection's requirements.txt)
notes:
  - Exactly one of O(src) and O(topology) is required.
  - Errors are reported as a failed task whose message lists every problem found.
seealso:
  - plugin: ethercluster.routing.topology
    plugin_type: inventory
"""

EXAMPLES = r"""
- name: Load the fabric of the default inventory
  ethercluster.routing.topology_info:
    src: inventories/default/topology.yml
  register: fabric

- name: Show how big it is
  ansible.builtin.debug:
    msg: "{{ fabric.summary.switches }} switches, {{ fabric.summary.links }} links"

- name: Validate a generated fabric given as data
  ethercluster.routing.topology_info:
    topology:
      name: lab
      generate: {kind: mesh, dims: [3, 3], hosts_per_switch: 2}
  register: lab

- name: The topology file an inventory host came from
  ethercluster.routing.topology_info:
    src: "{{ hostvars[groups['switches'][0]].ethercluster_topology_file }}"
  run_once: true
"""

RETURN = r"""
src:
  description: Absolute path of the file that was read.
  returned: when O(src) was given
  type: str
  sample: /srv/fabric/inventories/default/topology.yml
topology:
  description:
    - The validated topology in the explicit form (C(schema), C(name), C(switches), C(links), C(hosts)
      and, for meshes and tori, C(shape)); reading it back gives the same fabric.
  returned: success
  type: dict
  sample:
    schema: ethercluster.routing/topology/v1
    name: ring
    switches:
      sw0: {platform: ovs, ports: 3, mac_table_size: 8192, max_vlans: 256}
      sw1: {platform: ovs, ports: 3, mac_table_size: 8192, max_vlans: 256}
    links:
      - {a: "sw0:2", b: "sw1:2", speed_mbps: 1000, state: up}
      - {a: "sw0:3", b: "sw1:3", speed_mbps: 1000, state: up}
    hosts:
      node00: {switch: sw0, port: "1", mac: "02:00:00:00:00:01"}
      node01: {switch: sw1, port: "1", mac: "02:00:00:00:00:02"}
summary:
  description: Counts that describe the fabric.
  returned: success
  type: dict
  contains:
    name:
      description: Name of the fabric.
      type: str
      returned: success
      sample: default
    switches:
      description: Number of switches.
      type: int
      returned: success
      sample: 16
    links:
      description: Number of cabled switch-to-switch links, parallel links counted one by one.
      type: int
      returned: success
      sample: 32
    links_down:
      description: Number of links whose state in the topology is C(down).
      type: int
      returned: success
      sample: 0
    channels:
      description: Number of directed channels (two per link).
      type: int
      returned: success
      sample: 64
    hosts:
      description: Number of cluster nodes.
      type: int
      returned: success
      sample: 16
    shape:
      description: C(kind) (C(mesh) or C(torus)) and C(dims) of a mesh or torus, otherwise null.
      type: dict
      returned: success
      sample: {kind: torus, dims: [4, 4]}
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args


ARGUMENT_SPEC = {
    "src": {"type": "path"},
    "topology": {"type": "dict"},
}
ARGUMENT_RULES = {"mutually_exclusive": [("src", "topology")], "required_one_of": [("src", "topology")]}


def main():
    module_args.refuse_bare_run("topology_info", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
