# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.planes_plan: plan a multi-port
planes design on the controller (documentation: plugins/modules/planes_plan.py;
the work: module_utils/nodes/planes.py)."""

from __future__ import annotations

from ansible_collections.ethercluster.routing.plugins.plugin_utils.design_action import DesignAction, planes


class ActionModule(DesignAction):
    """Plan a multi-port planes design; return the plan."""

    MODULE = "ethercluster.routing.planes_plan"

    def run_action(self, args, task_vars, result):
        path, data = self.design_source(args, result)
        plan = planes.plan_file(path) if path else planes.plan_planes(data, source="design_data")
        result.update(plan=plan, summary=plan["summary"])
        return result
