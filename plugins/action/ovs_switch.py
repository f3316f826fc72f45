# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.ovs_switch (documentation:
plugins/modules/ovs_switch.py).

Runs on the controller: renders the switch's intent, reads what the switch
holds in one round trip over the task's own Ansible connection to it (or,
when delegated or given another switch, over that switch's inventory
connection: plugin_utils/connections.py), and, unless in check mode or
nothing differs, writes the difference in one round trip.
"""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import (
    task_intent,
    task_var,
)

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
    from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
        connection_session,
        task_session,
    )
except ImportError as exc:
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

MODULE = "ethercluster.routing.ovs_switch"


class ActionModule(CollectionAction):
    """Render, read, compare and write one OVS switch."""

    MODULE = MODULE
    REQUIREMENTS = "PyYAML"

    def run_action(self, args, task_vars, result):
        switch = args["switch"] or task_vars.get("inventory_hostname")
        result["switch"] = switch
        bridge = args["bridge"] or task_var(self, task_vars, "ovs_bridge") or ovs.DEFAULT_BRIDGE
        if args["state"] == "parsed":
            if args["running_config"] is None:
                raise AnsibleError("state=parsed needs running_config (the output of "
                                   "ovs-ofctl dump-flows, or of the module's read script)")
            result["parsed"] = self._parse_text(args["running_config"])
            return result
        if args["state"] == "gathered":
            with self._session(args, task_vars, switch) as session:
                current = ovs.parse_state(session.run(ovs.read_script(bridge), "read"))
            result["gathered"] = ovs.state_to_data(current)
            return result
        desired = ovs.render(self._switch_config(args, switch), switch)
        if args["state"] == "rendered":
            result["rendered"] = ovs.state_to_data(desired)
            result["rendered"]["flows_text"] = ovs.flows_text(desired["flows"])
            return result
        with self._session(args, task_vars, switch) as session:
            current = ovs.parse_state(session.run(ovs.read_script(bridge), "read"))
            changes = ovs.compare(current, desired, switch)
            result["commands"] = ovs.change_summary(changes, current, desired)
            result["changed"] = changes.changed
            if changes.changed and self._task.diff:
                result["diff"] = dict(
                    ovs.diff(current, desired),
                    before_header="%s: on the switch" % switch,
                    after_header="%s: intent" % switch)
            if changes.changed and not self._task.check_mode:
                session.run(ovs.write_script(changes, desired, current, bridge), "write",
                            timeout=args["timeout"] + float(current.get("gap") or 0))
        result["flows"] = len(desired["flows"])
        return result

    # ----------------------------------------------------------- helpers
    def _session(self, args, task_vars, switch):
        """The task's own connection when the switch is the task's host (not
        delegated); else the switch's inventory connection."""
        if switch == task_vars.get("inventory_hostname") and not self._task.delegate_to:
            session = task_session(self, switch, args["timeout"], task_vars)
            if not args["host_key_checking"] and "host_key_checking" in session.connection.get_options():
                session.connection.set_option("host_key_checking", False)
            return session
        return connection_session(self, task_vars, switch, args["timeout"],
                                  host_key_checking=None if args["host_key_checking"] else False)

    def _switch_config(self, args, switch):
        if args["config"] is not None:
            return args["config"]
        intent = task_intent(self, args["intent"], args["src"])
        if intent is None:
            raise AnsibleError("give the switch's intent: intent (the whole intent), src (its "
                               "file, intent.json) or config (this switch's entry)")
        switches = intent.get("switches") if isinstance(intent, dict) else None
        if not isinstance(switches, dict) or switch not in switches:
            raise AnsibleError("the intent has no entry switches.%s" % switch)
        return switches[switch]

    @staticmethod
    def _parse_text(text):
        if ovs.SECTION in text:
            return ovs.state_to_data(ovs.parse_state(text))
        flows = ovs.parse_flows(text)
        return {"flows": [flow.text() for flow in flows if flow.cookie != ovs.LEARNED_COOKIE],
                "learned_flows": sum(1 for flow in flows if flow.cookie == ovs.LEARNED_COOKIE)}
