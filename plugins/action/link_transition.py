# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.link_transition (documentation:
plugins/modules/link_transition.py; the planner: module_utils/power/transition.py;
the executor: module_utils/power/transition_run.py).

Runs on the controller: reads every switch, plans (or finds the interrupted)
transition, runs its steps over one SSH session per switch, and prints
each step as it finishes."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction
from ansible.utils.display import Display


try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import (
        held_intent,
        plan_transition,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import (
        TransitionRunError,
        execute,
    )
    from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access
except ImportError as exc:
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

display = Display()
PLAN_OPTIONS = ("vlan_range", "traffic", "max_broadcast_copies", "broadcast", "reserved")


def step_line(entry):
    """One line for a step run."""
    return "step %s %s (%s): %s in %.2f s" % (
        entry["index"], entry["kind"], entry["name"],
        "changed " + ", ".join(entry["changed"]) if entry.get("changed") else "no change",
        entry.get("seconds", 0))


def summary_lines(what, outcome, check_mode):
    """The task's human summary: what happened, then the plan (check mode,
    or nothing ran) or the steps run."""
    head = "%s: %s" % (what, outcome["reason"])
    if outcome.get("bank_after") and outcome["changed"]:
        head += "; bank %s -> %s" % (outcome["bank_before"], outcome["bank_after"])
    if check_mode or not outcome["steps"]:
        if outcome["changed"]:
            head += " (check mode: nothing changed)" if check_mode else ""
            return [head] + list(outcome["plan"])
        return [head]
    return [head + "; %d steps in %.1f s" % (len(outcome["steps"]), outcome["seconds"])] + [
        step_line(entry) for entry in outcome["steps"]]


class ActionModule(CollectionAction):
    """Plan and run one link transition against every switch."""

    MODULE = "ethercluster.routing.link_transition"
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML"

    def run_action(self, args, task_vars, result):
        plan_options = dict(args["plan_options"] or {})
        unknown = sorted(set(plan_options) - set(PLAN_OPTIONS))
        if unknown:
            return self.failed(result, "plan_options: unknown option(s) %s (known: %s)"
                               % (", ".join(unknown), ", ".join(PLAN_OPTIONS)))
        options = dict(plan_options, engine=args["routing"], assignment=args["assignment"],
                       engine_options=args["engine_options"], wait_s=args["wait_s"],
                       carrier_timeout_s=args["carrier_timeout_s"],
                       allow_drain=args["allow_drain"])
        if args["renegotiation_s"] is not None:
            options["renegotiation_s"] = args["renegotiation_s"]

        def settled_intent(topology, down, bank):
            # the routing the transitions leave a fabric in (kept turn order)
            return held_intent(topology, down=down, bank=bank, engine=args["routing"],
                               assignment=args["assignment"],
                               engine_options=args["engine_options"], **plan_options)

        what = "link %s %s%s" % (args["link"], args["action"], " to %s Mb/s" % args["speed_mbps"]
                                 if args["action"] == "speed" else "")
        driver = None
        try:
            topology = fabric_access.load_fabric_topology(self, args["topology"])
            driver, _settings = fabric_access.fabric_driver(
                self, task_vars, topology, args["timeout"], args["host_key_checking"])

            def log(entry):
                display.display("  %s: %s" % (what, step_line(entry)))
                self._log(args["log"], dict(entry, transition=what))

            outcome = execute(topology, args["action"], args["link"], driver, plan_transition,
                              settled_intent, speed_mbps=args["speed_mbps"],
                              planner_options=options, check_mode=self._task.check_mode, log=log,
                              max_parallel=args["max_parallel"])
            result.update(outcome)
            result["transition"] = what
            result["rewritten"] = list(driver.retried)
            result["summary"] = summary_lines(what, outcome, self._task.check_mode)
            self._log(args["log"], {"transition": what, "summary": True,
                                    "changed": outcome["changed"], "reason": outcome["reason"],
                                    "check_mode": bool(self._task.check_mode),
                                    "start": outcome["start"], "end": outcome["end"],
                                    "seconds": outcome["seconds"],
                                    "steps": len(outcome["steps"]),
                                    "drain": bool(outcome["proof"].get("drain"))})
        except TransitionRunError as exc:
            result.update(failed=True, msg="%s: %s" % (what, exc), steps=exc.steps)
            result["rewritten"] = list(driver.retried) if driver is not None else []
            self._log(args["log"], {"transition": what, "failed": True, "msg": str(exc)})
        except (EtherclusterError, AnsibleError) as exc:
            result.update(failed=True, msg="%s: %s" % (what, exc))
        finally:
            if driver is not None:
                driver.close()
        return result

    def _log(self, path, entry):
        if not path or self._task.check_mode:
            return
        path = os.path.abspath(os.path.expanduser(path))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")
