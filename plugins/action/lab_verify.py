# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.lab_verify (documentation:
plugins/modules/lab_verify.py).

The expectations (planned paths, broadcast copies, chosen pairs) are
computed here, on the controller, from the intent alone with the
collection's 802.1Q simulator (networkx); the module of the same name runs
the checks on the lab machine with the standard library only.
"""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import (
    task_intent,
    task_var,
)

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.expect import verification_plan
except ImportError as exc:  # networkx, PyYAML missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

MODULE = "ethercluster.routing.lab_verify"
PASSED_ON = ("lab", "state_root", "checks")


class ActionModule(CollectionAction):
    """Compute what the lab must do from the intent, then run the module."""

    MODULE = MODULE
    ARGUMENT_RULES = {"mutually_exclusive": [("intent", "src")], "required_one_of": [("intent", "src")]}
    REQUIREMENTS = "networkx, PyYAML"
    FAILED_RESULT = {"passed": False}
    _requires_connection = True  # the module runs on the lab machine

    def run_action(self, args, task_vars, result):
        if args["plan"] is not None:
            return self.failed(result, "plan is set by the action plugin; give intent or src")
        try:
            intent = task_intent(self, args["intent"], args["src"])
            lab = args["lab"] or task_var(self, task_vars, "ethercluster_lab") \
                or (intent.get("fabric") or {}).get("name")
            if not lab:
                raise AnsibleError("give lab (the lab's name): neither the variable "
                                   "ethercluster_lab nor the intent's fabric.name is set")
            plan = verification_plan(
                intent, bursts=args["bursts"], burst_pairs=args["burst_pairs"],
                broadcast_sources=args["broadcast_sources"], tcp_pair=args["tcp_pair"],
                tcp_bytes=args["tcp_bytes"], burst_frames=args["burst_frames"],
                storm_window_s=args["storm_window"])
        except (EtherclusterError, AnsibleError) as exc:
            return self.failed(result, str(exc), summary="not run: %s" % exc)
        module_args = {key: args[key] for key in PASSED_ON}
        module_args.update(lab=str(lab), plan=plan)
        result.update(self._execute_module(module_name=MODULE, module_args=module_args,
                                           task_vars=task_vars))
        return result
