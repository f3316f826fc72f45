# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.failover (documentation:
plugins/modules/failover.py; the work: module_utils/power/failover.py and
failover_run.py)."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleError
from ansible.utils.display import Display
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.action.link_transition import PLAN_OPTIONS
from ansible_collections.ethercluster.routing.plugins.action.link_transition import ActionModule as LinkTransitionAction
from ansible_collections.ethercluster.routing.plugins.modules.failover import ARGUMENT_RULES, ARGUMENT_SPEC

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_run
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import resolve_failure
    from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access
except ImportError as exc:
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

display = Display()


class ActionModule(CollectionAction):
    """Precompute failovers, or apply / undo one against every switch."""

    MODULE = "ethercluster.routing.failover"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ARGUMENT_RULES = ARGUMENT_RULES
    IMPORT_ERROR = IMPORT_ERROR
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML"

    def run_action(self, args, task_vars, result):
        given = dict(args["plan_options"] or {})
        for key in sorted(given):
            if key not in PLAN_OPTIONS:
                return self.failed(result, "plan_options: %s is no plan option (known: %s)"
                                   % (key, ", ".join(PLAN_OPTIONS)))
        options = dict(given, engine=args["routing"], assignment=args["assignment"],
                       engine_options=args["engine_options"])
        topology = fabric_access.load_fabric_topology(self, args["topology"])
        directory = os.path.abspath(os.path.expanduser(args["intent_dir"])) if args["intent_dir"] else None
        if args["action"] == "plan":
            return self._plan(topology, options, directory, result)
        if not args["link"] and not args["switch"]:
            return self.failed(result, "failover: give the failed link (link=sw0:2) or switch (switch=sw5)")
        failure = resolve_failure(topology, link=args["link"], switch=args["switch"])
        document = self._read(directory)
        entry = failover_run.stored_entry(topology, options, document, failure)
        planner = failover_run.plan_restore if args["action"] == "restored" else failover_run.plan_failover

        def plan(bank):
            return planner(topology, options, failure, bank, stored=entry, wait_s=args["wait_s"])

        what = "%s %s" % (failure.name, args["action"])
        # each switch through its platform's driver (ovs, dell_os6, huawei_vrp; one fabric may mix them)
        driver, _settings = fabric_access.fabric_driver(self, task_vars, topology, args["timeout"],
                                                        args["host_key_checking"])
        try:
            def log(step):
                display.display("  %s: step %s %s (%s) in %.2f s" % (
                    what, step["index"], step["kind"], step["name"], step.get("seconds", 0)))
                self._append(args["log"], dict(step, failover=what))

            outcome = failover_run.execute(topology, driver, plan, check_mode=self._task.check_mode, log=log,
                                           max_parallel=args["max_parallel"], failure=failure)
        finally:
            driver.close()
        result.update(outcome, stored=entry is not None, failure=what)
        result["msg"] = "%s: %s; %s" % (what, outcome["reason"], "precomputed backup" if entry is not None
                                        else "backup computed now (no stored failover.json for this routing)")
        self._append(args["log"], {"failover": what, "summary": True, "changed": outcome["changed"],
                                   "reason": outcome["reason"], "start": outcome["start"], "end": outcome["end"]})
        return result

    def _plan(self, topology, options, directory, result):
        document = failover_run.failover_document(topology, options)
        # the file changes only when the backups do (a second run changes nothing)
        result.update(coverage=document["coverage"], seconds=document.pop("seconds"))
        result["msg"] = "failover: %d of %d single failures covered (links %d/%d, switches %d/%d)" % (
            document["coverage"]["covered"], document["coverage"]["total"], document["coverage"]["link"]["covered"],
            document["coverage"]["link"]["total"], document["coverage"]["switch"]["covered"],
            document["coverage"]["switch"]["total"])
        if directory is None:
            result["reason"] = "computed (no intent_dir: nothing stored)"
            return result
        texts = {failover_run.FAILOVER_FILE: json.dumps(document, sort_keys=True, indent=1) + "\n",
                 failover_run.FAILOVER_REPORT: failover_run.failover_report(document)}
        for name, text in texts.items():
            path = os.path.join(directory, name)
            old = None
            if os.path.exists(path):
                with open(path, encoding="utf-8") as handle:
                    old = handle.read()
            if old != text:
                result["changed"] = True
                if not self._task.check_mode:
                    os.makedirs(directory, exist_ok=True)
                    with open(path, "w", encoding="utf-8") as handle:
                        handle.write(text)
        result["reason"] = "stored in %s" % directory
        return result

    @staticmethod
    def _read(directory):
        if directory is None:
            return None
        path = os.path.join(directory, failover_run.FAILOVER_FILE)
        if not os.path.exists(path):
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError) as exc:
            raise AnsibleError("%s: not a stored failover: %s" % (path, exc)) from None

    # one JSON line per entry, nothing in check mode: as the link transitions log
    _append = LinkTransitionAction._log
