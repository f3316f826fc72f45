# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.planes_plan: plan a multi-port
planes design on the controller (documentation: plugins/modules/planes_plan.py;
the work: module_utils/nodes/planes.py)."""

from __future__ import annotations

from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes import plan_file, plan_planes
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import plain_data
except ImportError as exc:  # PyYAML missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


class ActionModule(CollectionAction):
    """Plan a multi-port planes design; return the plan."""

    MODULE = "ethercluster.routing.planes_plan"
    REQUIREMENTS = "PyYAML"

    def run_action(self, args, task_vars, result):
        if args["design"] is not None:
            path = result["design"] = self.controller_file("design", args["design"])
            plan = plan_file(path)
        else:
            plan = plan_planes(plain_data(args["design_data"]), source="design_data")
        result["plan"] = plan
        result["summary"] = plan["summary"]
        return result
