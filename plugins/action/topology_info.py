# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.topology_info: load and validate a
topology on the controller (documentation: plugins/modules/topology_info.py)."""

from __future__ import annotations

from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import plain_data
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
        load_topology,
        topology_from_data,
    )
except ImportError as exc:  # networkx, netaddr, ... missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


class ActionModule(CollectionAction):
    """Validate a topology and return it in explicit form with a summary."""

    MODULE = "ethercluster.routing.topology_info"

    def run_action(self, args, task_vars, result):
        try:
            if args["src"] is not None:
                path = self.controller_file("src", args["src"], "topology file")
                topology = load_topology(path)
                result["src"] = path
            else:
                topology = topology_from_data(plain_data(args["topology"]), source="topology")
        except TopologyError as exc:
            return self.failed(result, str(exc), problems=exc.problems)
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # a clear failure naming the input, never a traceback
            return self.failed(result, "%s: cannot load the topology (%s: %s)"
                               % (args["src"] or "topology", type(exc).__name__, exc))
        result["topology"] = topology.to_data()
        result["summary"] = topology.summary()
        return result
