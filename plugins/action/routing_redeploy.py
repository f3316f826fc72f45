# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.routing_redeploy (documentation:
plugins/modules/routing_redeploy.py; the work: module_utils/power/redeploy_run.py).

Runs on the controller: reads every switch, recognises what it holds, and
moves a fabric holding another routing to the intent's, make-before-break,
printing each step as it finishes."""

from __future__ import annotations

from ansible.utils.display import Display
from ansible_collections.ethercluster.routing.plugins.action.link_transition import ActionModule as LinkTransitionAction
from ansible_collections.ethercluster.routing.plugins.action.link_transition import step_line
from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

IMPORT_ERROR = None     # the planning code's packages missing: CollectionAction.run names them
try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import redeploy_run
except ImportError as exc:
    IMPORT_ERROR = exc

display = Display()


def hint_settings(hint):
    """A ``held`` entry as plan_redeploy's settings: ``routing`` (the
    transitions' name) taken as ``engine``, ``plan_options`` spread out."""
    settings = {key: value for key, value in dict(hint).items() if key not in ("routing", "plan_options")}
    if hint.get("routing") and not settings.get("engine"):
        settings["engine"] = hint["routing"]
    settings.update(hint.get("plan_options") or {})
    return settings


def summary_lines(outcome, check_mode):
    """What was found and done, then the plan (check mode) or the steps run."""
    head = "re-deploy: %s (%s)" % (outcome["reason"], outcome["mode"])
    if outcome["mode"] != "moved":
        return [head]
    if check_mode or not outcome["steps"]:
        return [head] + list(outcome["plan"])
    return [head + "; %d steps in %.1f s, %s" % (
        len(outcome["steps"]), outcome["seconds"],
        "a DRAIN (frames lost)" if outcome["proof"].get("drain") else "no drain")] + [
        step_line(entry) for entry in outcome["steps"]]


class ActionModule(CollectionAction):
    """Recognise what the switches hold and move them to the intent."""

    MODULE = "ethercluster.routing.routing_redeploy"
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML"

    def run_action(self, args, task_vars, result):
        try:
            topology = fabric_access.load_fabric_topology(self, args["topology"])
        except redeploy_run.TransitionRunError as exc:
            # platforms without a driver: the plain push, as before (said)
            result.update(redeploy_run.unread(str(exc)))
            result["summary"] = summary_lines(result, self._task.check_mode)
            return result
        hints = [hint_settings(hint) for hint in args["held"]]
        driver, _settings = fabric_access.fabric_driver(self, task_vars, topology, args["timeout"],
                                                        args["host_key_checking"])
        try:
            def log(entry):
                display.display("  re-deploy: %s" % step_line(entry))
                self._append(args["log"], dict(entry, transition="re-deploy"))

            outcome = redeploy_run.redeploy(topology, driver, args["intent"], hints=hints,
                                            allow_drain=args["allow_drain"], check_mode=self._task.check_mode,
                                            log=log, max_parallel=args["max_parallel"], wait_s=args["wait_s"])
        except redeploy_run.TransitionRunError as exc:
            return self.failed(result, "re-deploy: %s" % exc, steps=exc.steps)
        except redeploy_run.UnreachedSwitch as exc:
            # the same words as switch_deploy's reach check: every switch is read before any write
            host = task_vars.get("hostvars", {}).get(exc.switch, {})
            return self.failed(result, "nothing pushed to any switch: switch %s (%s, platform %s) cannot be reached: %s. "
                               "Every switch is read before the first push; fix the connection (address, key, user, "
                               "host key) and run the same command again" % (
                                   exc.switch, host.get("ansible_host", exc.switch),
                                   topology.switches[exc.switch].platform, exc))
        finally:
            driver.close()
        result.update(outcome)
        result["summary"] = summary_lines(outcome, self._task.check_mode)
        if outcome["mode"] == "moved" and self._task.diff:
            result["diff"] = {"prepared": "\n".join(result["summary"])}
        if outcome["mode"] == "moved":
            self._append(args["log"], {"transition": "re-deploy", "summary": True, "changed": outcome["changed"],
                                       "reason": outcome["reason"], "start": outcome["start"],
                                       "end": outcome["end"], "drain": bool(outcome["proof"].get("drain"))})
        return result

    # one JSON line per entry, nothing in check mode: as the link transitions log
    _append = LinkTransitionAction._log
