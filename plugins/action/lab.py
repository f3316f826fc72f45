# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.lab (documentation:
plugins/modules/lab.py).

The topology is read and the lab's layout computed here, on the controller
(networkx, netaddr); the module of the same name then builds or removes the
lab on the target with the standard library only, honouring become and
check mode.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import controller_path

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import (
        DEFAULT_BRIDGE,
        DEFAULT_HOST_NETWORK,
        DEFAULT_HOST_SPEED_MBPS,
        DEFAULT_MGMT_NETWORK,
        STATE_ROOT,
        lab_layout,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.nodes_lab import nodes_layout
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.input_limits import load_yaml_text, read_text
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        load_topology,
        topology_from_data,
    )
except ImportError as exc:  # networkx, netaddr, ... missing on the controller
    IMPORT_ERROR = exc
    STATE_ROOT = "/run/ethercluster-lab"
    DEFAULT_BRIDGE, DEFAULT_HOST_NETWORK, DEFAULT_MGMT_NETWORK = "br0", "10.42.0.0/16", \
        "198.51.100.0/24"
    DEFAULT_HOST_SPEED_MBPS = 1000
else:
    IMPORT_ERROR = None

MODULE = "ethercluster.routing.lab"
ARGUMENT_SPEC = {
    "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    "src": {"type": "path"},
    "topology": {"type": "dict"},
    "name": {"type": "str"},
    "state_root": {"type": "path", "default": STATE_ROOT},
    "mgmt_network": {"type": "str", "default": DEFAULT_MGMT_NETWORK},
    "host_network": {"type": "str", "default": DEFAULT_HOST_NETWORK},
    "host_speed_mbps": {"type": "int", "default": DEFAULT_HOST_SPEED_MBPS},
    "renegotiation_gap": {"type": "raw", "default": 0},
    "bridge": {"type": "str", "default": DEFAULT_BRIDGE},
    "userspace_tso": {"type": "bool", "default": True},
    "host_tx_offload": {"type": "bool", "default": True},
    "design": {"type": "raw"},
}


class ActionModule(CollectionAction):
    """Compute the lab's layout on the controller, then run the module."""

    MODULE = MODULE
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = {"mutually_exclusive": [("src", "topology", "design")]}
    _requires_connection = True  # the module runs on the lab machine

    def run_action(self, args, task_vars, result):
        module_args = {"state": args["state"], "state_root": args["state_root"]}
        if args["design"] is not None and args["state"] == "present":
            # a host-routed plan: its switches and nodes (lab/nodes_lab.py, docs/nodes.md)
            if not args["name"]:
                return self.failed(result, "design needs name (the lab's name)")
            layout = nodes_layout(self._design(args["design"]), args["name"], args["state_root"],
                                  args["host_speed_mbps"])
            module_args.update(name=layout["lab"], layout=layout)
            result.update(self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars))
            return result
        topology = self._topology(args) if args["design"] is None else None
        if args["state"] == "present":
            if topology is None:
                return self.failed(result, "state=present needs the fabric: give src "
                                   "(a topology file) or topology (its data)")
            layout = lab_layout(
                topology, name=args["name"], state_root=args["state_root"],
                mgmt_network=args["mgmt_network"], host_network=args["host_network"],
                host_speed_mbps=args["host_speed_mbps"],
                renegotiation_gap=args["renegotiation_gap"], bridge=args["bridge"],
                userspace_tso=args["userspace_tso"], host_tx_offload=args["host_tx_offload"])
            module_args.update(name=layout["lab"], layout=layout)
        else:
            name = args["name"] or (topology.name if topology is not None else None)
            if not name:
                return self.failed(result, "state=absent needs the lab's name: give name, "
                                   "or src/topology to take the fabric's name")
            module_args["name"] = name
        result.update(self._execute_module(module_name=MODULE, module_args=module_args,
                                           task_vars=task_vars))
        return result

    def _design(self, design):
        """The host-routed plan: data, or a YAML/JSON file's path."""
        if isinstance(design, dict):
            return design
        path = controller_path(self, str(design))
        if path is None:
            raise AnsibleError("design: plan file %r not found" % (design,))
        return load_yaml_text(read_text(path), source=path)

    def _topology(self, args):
        if args["topology"] is not None:
            return topology_from_data(args["topology"], source="topology")
        if args["src"] is None:
            return None
        path = controller_path(self, args["src"])
        if path is None:
            raise AnsibleError("src: topology file %r not found (looked in the playbook's "
                               "files directories, the playbook directory and %s)"
                               % (args["src"], os.getcwd()))
        return load_topology(path)
