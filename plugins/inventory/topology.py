# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory plugin: a fabric topology file becomes an Ansible inventory."""

from __future__ import annotations

DOCUMENTATION = r"""
name: topology
short_description: Switches and nodes of an Ethernet fabric from a topology file
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Reads an ethercluster.routing topology file (explicit form with C(switches), C(links) and C(hosts),
    or generated form with C(generate)) and adds every switch and every cluster node as an inventory host.
  - The file is the same one the routing planner reads; the only extra key is O(plugin).
    The topology format is described in docs/topology.md of the collection.
  - Switches go to the group C(switches) and to C(platform_<platform>) (for example C(platform_ovs));
    nodes go to the group C(nodes).
  - "Every switch gets the host variables C(platform), C(ports), C(neighbours) (one entry per used
    inter-switch port: C(port), C(switch), C(remote_port), C(link), C(speed_mbps), C(state)),
    C(mac_table_size), C(max_vlans), C(power_profile) and C(hosts_attached) (names of the nodes cabled to it);
    C(mgmt_address) and C(ansible_host) when the switch has a management address; C(coords) on meshes and tori
    and C(level) on fat trees."
  - "Every node gets C(mac), C(switch) and C(switch_port) (the switch port its NIC is cabled to; C(port) is a
    reserved Ansible name), and C(ip) and C(ansible_host) when the topology gives an address."
  - Every host gets C(ethercluster_topology_file), the absolute path of the topology file, so a play can load
    the same fabric with M(ethercluster.routing.topology_info).
  - An invalid topology fails with the validator's message, which names the file, the entry and the field.
  - The file name must end in C(.yml) or C(.yaml) and O(plugin) must name this plugin; enable the plugin
    in C(ansible.cfg) (C([inventory] enable_plugins)).
extends_documentation_fragment:
  - constructed
options:
  plugin:
    description: Marks the file as an inventory source for this plugin.
    required: true
    type: str
    choices:
      - ethercluster.routing.topology
  name:
    description: Name of the fabric.
    type: str
    default: fabric
  generate:
    description:
      - "Generator spec, for example C({kind: torus, dims: [4, 4], hosts_per_switch: 1})."
      - Kinds are C(mesh), C(torus), C(fat_tree), C(myri_clos), C(complete), C(tree), C(m_tree) and C(random).
      - Not allowed together with O(switches), O(links), O(hosts) or O(shape).
    type: dict
  switch_defaults:
    description: Settings every switch gets unless it sets them itself (C(platform), C(ports), C(mac_table_size), ...).
    type: dict
  switches:
    description: Explicit form. Switch name -> settings.
    type: dict
  links:
    description: 'Explicit form. List of cabled switch-to-switch links C({a: "sw0:25", b: "sw1:25"}).'
    type: list
    elements: dict
  hosts:
    description: "Explicit form. Node name -> C({switch, port, mac, ip})."
    type: dict
  shape:
    description: "Explicit form. C({kind: mesh|torus, dims: [...]}) when the switches carry C(coords)."
    type: dict
  schema:
    description: "Format marker written by the collection, C(ethercluster.routing/topology/v1)."
    type: str
"""

EXAMPLES = r"""
---
# inventories/lab/topology.yml -- a generated 4x4 torus, one node per switch
plugin: ethercluster.routing.topology
name: lab
generate:
  kind: torus
  dims: [4, 4]
  hosts_per_switch: 1
---
# An explicit fabric; switches reached over their management addresses,
# with an extra group of the switches that carry hosts.
plugin: ethercluster.routing.topology
name: rack1
switch_defaults: {platform: dell_os6, ports: 26}
switches:
  sw0: {mgmt_address: 198.51.100.10}
  sw1: {mgmt_address: 198.51.100.11}
links:
  - {a: "sw0:25", b: "sw1:25"}
  - {a: "sw0:26", b: "sw1:26"}
hosts:
  node00: {switch: sw0, port: "1", mac: "02:00:00:00:00:01", ip: 192.0.2.1}
  node01: {switch: sw1, port: "1", mac: "02:00:00:00:00:02", ip: 192.0.2.2}
groups:
  edge_switches: "'switches' in group_names and hosts_attached | length > 0"
keyed_groups:
  - key: switch
    prefix: cabled_to
"""

import os
import re

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Constructable

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.input_limits import (
        MAX_FILE_BYTES,
        read_text,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        parse_yaml,
        topology_from_data,
    )
except ImportError as exc:  # networkx, netaddr, ... missing on the controller
    IMPORT_ERROR = exc
    READ_LIMIT = 32 * 1024 * 1024 + 1
else:
    IMPORT_ERROR = None
    READ_LIMIT = MAX_FILE_BYTES + 1

PLUGIN_NAMES = ("ethercluster.routing.topology",)
TOPOLOGY_FILE_VAR = "ethercluster_topology_file"
_GROUP_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def platform_group(platform):
    """Group name of the switches of one platform: ``ovs`` -> ``platform_ovs``."""
    return "platform_" + _GROUP_UNSAFE.sub("_", platform)


def switch_vars(topology, switch):
    """Host variables of one switch."""
    sw = topology.switches[switch]
    hostvars = {
        "platform": sw.platform,
        "ports": sw.ports,
        "mac_table_size": sw.mac_table_size,
        "max_vlans": sw.max_vlans,
        "power_profile": sw.power_profile,
        "neighbours": topology.neighbours(switch),
        "hosts_attached": [host.name for host in topology.hosts_on(switch)],
    }
    if sw.mgmt_address is not None:
        hostvars["mgmt_address"] = sw.mgmt_address
        hostvars["ansible_host"] = sw.mgmt_address
    if sw.coords is not None:
        hostvars["coords"] = list(sw.coords)
    if sw.level is not None:
        hostvars["level"] = sw.level
    return hostvars


def node_vars(host):
    """Host variables of one cluster node (``port`` is a reserved Ansible
    name, so the switch port is ``switch_port``)."""
    hostvars = {"mac": host.mac, "switch": host.switch, "switch_port": host.port}
    if host.ip is not None:
        hostvars["ip"] = host.ip
        hostvars["ansible_host"] = host.ip
    return hostvars


class InventoryModule(BaseInventoryPlugin, Constructable):
    """Switches and nodes of a topology file as inventory hosts."""

    NAME = "ethercluster.routing.topology"

    def verify_file(self, path):
        """Accept readable ``.yml``/``.yaml`` files whose ``plugin`` names us.

        The file is peeked at without a full parse, so other YAML inventory
        sources in the same directory are left to their own plugins.
        """
        if not super().verify_file(path):
            return False
        if not path.endswith((".yml", ".yaml")):
            return False
        try:
            with open(path, "r", encoding="utf-8") as handle:
                # no more than a topology file may hold: parse() refuses a larger one
                text = handle.read(READ_LIMIT)
        except (OSError, UnicodeDecodeError):
            return False
        names = "|".join(re.escape(name) for name in self._accepted_names())
        if re.search(r"^plugin:\s*[\"']?(%s)[\"']?\s*(#.*)?$" % names, text, re.MULTILINE):
            return True
        if IMPORT_ERROR is not None:
            return any(name in text for name in self._accepted_names())  # parse() says what is missing
        # not in block style (say a flow mapping): parse it, within the input limits
        try:
            data = parse_yaml(text, path)
        except TopologyError:
            # too large or broken: ours if it names us, so that parse() explains why
            return any(name in text for name in self._accepted_names())
        return isinstance(data, dict) and data.get("plugin") in self._accepted_names()

    def _accepted_names(self):
        # a plugin may be reached under a redirected name; accept those too
        return tuple(getattr(self, "_redirected_names", None) or ()) + PLUGIN_NAMES

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache=cache)
        if IMPORT_ERROR is not None:
            raise AnsibleParserError(
                "ethercluster.routing.topology needs the Python packages of requirements.txt "
                "(networkx, netaddr, PyYAML) on the controller: %s" % IMPORT_ERROR)
        source = os.path.abspath(path)
        topology = self._load(source)
        # options (plugin name check, compose/groups/keyed_groups) come from
        # Ansible's own loader so their templates are trusted like any inventory config
        self._read_config_data(source)
        self._populate(topology, source)

    @staticmethod
    def _load(source):
        """The validated topology of the file ``source``. Every failure is an
        AnsibleParserError naming the file: an exception escaping here would
        reach the user as Ansible's "Unexpected Exception"."""
        try:
            return topology_from_data(parse_yaml(read_text(source), source), source)
        except TopologyError as exc:
            raise AnsibleParserError(str(exc))
        except Exception as exc:
            raise AnsibleParserError("%s: cannot load the topology (%s: %s)"
                                     % (source, type(exc).__name__, exc))

    def _populate(self, topology, source):
        inventory = self.inventory
        strict = self.get_option("strict")
        for group in ("switches", "nodes"):
            inventory.add_group(group)

        for name in topology.switch_names():
            inventory.add_host(name, group="switches")
            group = inventory.add_group(platform_group(topology.switches[name].platform))
            inventory.add_child(group, name)
            self._set_vars(name, switch_vars(topology, name), source, strict)

        for host in topology.hosts.values():
            inventory.add_host(host.name, group="nodes")
            self._set_vars(host.name, node_vars(host), source, strict)

    def _set_vars(self, name, hostvars, source, strict):
        hostvars = dict(hostvars)
        hostvars[TOPOLOGY_FILE_VAR] = source
        for key, value in hostvars.items():
            self.inventory.set_variable(name, key, value)
        # Constructable: compose, groups and keyed_groups see the host's vars
        all_vars = self.inventory.get_host(name).get_vars()
        self._set_composite_vars(self.get_option("compose"), all_vars, name, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), all_vars, name, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), all_vars, name, strict=strict)
