# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.plan: plan the fabric on the
controller and write intent.json, report.md and fabric.svg
(documentation: plugins/modules/plan.py; the work: module_utils/report/outputs.py)."""

from __future__ import annotations

import os

from ansible import constants as C
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import controller_path

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import (
        FIELDS as SETTING_FIELDS,
        FabricSettingsError,
        parse_settings,
        resolve,
        topology_file_settings,
        topology_settings,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import (
        INTENT_FILE,
        PICTURE_FILE,
        REPORT_FILE,
        STALE_SUFFIX,
        PlanResult,
        changed,
        intent_text,
        plain_data,
        run_plan,
        sync_files,
        topology_source,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.report.markdown import (
        render_report,
        report_context,
    )
except ImportError as exc:  # networkx, numpy, scipy, jinja2, ... missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def settings_layers(topology, args):
    """The layers of fabric settings for this task, lowest first: the
    topology file's (or topology_data's) ``fabric:`` block, the
    ``settings`` option, the options of the same names given to the task.
    Raises FabricSettingsError naming the file/option and field."""
    if isinstance(topology, str):
        from_topology = topology_file_settings(topology)
    else:
        from_topology = topology_settings(topology, source="topology_data")
    given = parse_settings(plain_data(args["settings"]), source="", prefix="settings.")
    options = parse_settings(plain_data({field: args.get(field) for field in SETTING_FIELDS}),
                             source="", prefix="")
    return [("topology", from_topology), ("settings", given), ("options", options)]


def rejected_settings(topology, error, source):
    """The outcome of a plan whose settings are malformed: no intent, a
    report that says why (an earlier intent.json becomes stale)."""
    outcome = PlanResult(resolve()[0], error=error)
    context = report_context(None, outcome.options, error=error, source=topology_source(topology, source),
                             files={REPORT_FILE: "this report",
                                    INTENT_FILE: "not written; an earlier one, if any, is renamed "
                                                 "intent.json.stale",
                                    PICTURE_FILE: "not drawn; an earlier one, if any, is renamed "
                                                  "fabric.svg.stale"})
    outcome.contents = {REPORT_FILE: render_report(context), PICTURE_FILE: None, INTENT_FILE: None}
    return outcome


class ActionModule(CollectionAction):
    """Plan routing, VLANs and static MACs; return the intent; write the files."""

    MODULE = "ethercluster.routing.plan"
    REQUIREMENTS = "networkx, numpy, scipy, netaddr, jinja2, PyYAML, jsonschema, fastjsonschema"

    def run_action(self, args, task_vars, result):
        not_found = None
        if args["topology"] is not None:
            topology = controller_path(self, args["topology"])
            if topology is None:
                # still planned (and failing) like any bad input, so that an
                # earlier intent in `out` is marked stale
                topology = os.path.abspath(args["topology"])
                not_found = ("topology: file %r not found (looked in the role/playbook files "
                             "directories, the playbook directory and the current directory %s)"
                             % (args["topology"], os.getcwd()))
            result["topology"] = topology
        else:
            topology = plain_data(args["topology_data"])
        try:
            settings, sources = resolve(*settings_layers(topology, args))
        except FabricSettingsError as exc:
            outcome = rejected_settings(topology, exc, "topology_data")
        else:
            result.update(settings=settings, settings_sources=sources)
            outcome = run_plan(topology, source="topology_data", down_links=args["down_links"],
                               **settings)
            if outcome.accepted:
                # recorded in the intent, so that transitions reproduce this plan
                # from the deployed intent alone (fabric_settings.intent_settings)
                outcome.plan.intent["fabric"]["settings"] = plain_data(settings)
                outcome.contents[INTENT_FILE] = intent_text(outcome.plan.intent)
        result.update(outcome.returned())

        if args["out"] is not None:
            out_dir = os.path.abspath(args["out"])
            result["out"] = out_dir
            try:
                changes = sync_files(out_dir, outcome.contents, check_mode=self._task.check_mode)
            except EtherclusterError as exc:
                return self.failed(result, str(exc))
            result["changed"] = changed(changes)
            result["files"] = {change["name"]: {"path": change["path"], "state": change["state"]}
                               for change in changes}
            if self._task.diff:
                result["diff"] = self._intent_diff(changes)
        else:
            changes = []

        if not outcome.accepted:
            message = not_found or str(outcome.error)
            stale = [c for c in changes if c["name"] == INTENT_FILE and c["state"] == "stale"]
            if stale:
                message += ("\nNo intent written; the earlier %s %s renamed %s%s."
                            % (stale[0]["path"], "would be" if self._task.check_mode else "was",
                               INTENT_FILE, STALE_SUFFIX))
            elif args["out"] is not None:
                message += "\nNo intent written."
            result.update(failed=True, msg=message)
        return result

    def _intent_diff(self, changes):
        """--diff: the change of intent.json (large files are named, not shown)."""
        for change in changes:
            if change["name"] != INTENT_FILE or change["state"] in ("unchanged", "absent"):
                continue
            diff = {"before_header": change["path"], "after_header": change["path"],
                    "before": change["before"] or "", "after": change["after"] or ""}
            if len(diff["before"]) > C.MAX_FILE_SIZE_FOR_DIFF:
                diff["dst_larger"] = C.MAX_FILE_SIZE_FOR_DIFF
                diff["before"] = ""
            if len(diff["after"]) > C.MAX_FILE_SIZE_FOR_DIFF:
                diff["src_larger"] = C.MAX_FILE_SIZE_FOR_DIFF
                diff["after"] = ""
            return diff
        return {}
