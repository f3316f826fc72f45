# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.stack_plan: plan a Stack-Ring or
Stack-Mesh design on the controller and write nodes.yml, stack_plan.json
and report.md (documentation: plugins/modules/stack_plan.py; the work:
module_utils/nodes/stack.py and stack_report.py)."""

from __future__ import annotations

import os

from ansible import constants as C
from ansible_collections.ethercluster.routing.plugins.plugin_utils.design_action import (
    DesignAction,
    stack,
    stack_design,
    stack_report,
)


class ActionModule(DesignAction):
    """Plan a Stack-Ring/Stack-Mesh fabric; return the plan; write the files."""

    MODULE = "ethercluster.routing.stack_plan"

    def run_action(self, args, task_vars, result):
        path, data = self.design_source(args, result)
        design = stack_design.load_design(path) if path else \
            stack_design.validate_design(data, source="design_data")
        try:
            plan = stack.plan_stack(design)
        except stack_design.StackDesignError as exc:
            return self.failed(result, "%s: %s" % (result.get("design", "design_data"), exc))
        result.update(plan=plan, checks=plan["checks"], capacity=plan["capacity"])
        if not plan["checks"]["passed"]:
            return self.failed(result, "the plan does not reach every address in the fewest forwards "
                                       "(%d failures): %s" % (plan["checks"]["failure_count"],
                                                              "; ".join(plan["checks"]["failures"])))
        if args["out"] is None:
            return result
        out_dir = os.path.abspath(args["out"])
        result["out"] = out_dir
        changes = stack_report.write_files(out_dir, stack_report.plan_files(plan), check_mode=self._task.check_mode)
        result["changed"] = any(change["state"] != "unchanged" for change in changes)
        result["files"] = {change["name"]: {"path": change["path"], "state": change["state"]}
                           for change in changes}
        if self._task.diff:
            result["diff"] = [self._diff(change) for change in changes
                              if change["name"] == stack_report.NODES_FILE and change["state"] != "unchanged"]
        return result

    @staticmethod
    def _diff(change):
        """--diff of nodes.yml (a large file is named, not shown)."""
        diff = {"before_header": change["path"], "after_header": change["path"],
                "before": change["before"] or "", "after": change["after"]}
        for side, flag in (("before", "dst_larger"), ("after", "src_larger")):
            if len(diff[side]) > C.MAX_FILE_SIZE_FOR_DIFF:
                diff[flag] = C.MAX_FILE_SIZE_FOR_DIFF
                diff[side] = ""
        return diff
