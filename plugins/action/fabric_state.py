# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.fabric_state (documentation:
plugins/modules/fabric_state.py; the work: module_utils/power/fabric_state.py).

Runs on the controller: one SSH session per switch (in parallel), one read
each, the fabric's state computed from what they hold."""

from __future__ import annotations

import time

from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction


try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import fabric_state as fs
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import transition_run
    from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access
except ImportError as exc:
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


class ActionModule(CollectionAction):
    """Read every switch; return the fabric's state."""

    MODULE = "ethercluster.routing.fabric_state"
    REQUIREMENTS = "networkx, PyYAML"

    def run_action(self, args, task_vars, result):
        driver = None
        try:
            topology = fabric_access.load_fabric_topology(self, args["topology"])
            switches = args["switches"] or topology.switch_names()
            driver, _settings = fabric_access.fabric_driver(
                self, task_vars, topology, args["timeout"], args["host_key_checking"], switches)
            states = transition_run.read_states(driver, switches)
            if args["counters"]:
                result["read_at"] = round(time.time(), 3)
                result["counters"] = transition_run.read_counters(driver, switches)
            if set(switches) == set(topology.switch_names()):
                state = fs.fabric_state(topology, states)
            else:
                state = {"switches": {name: fs.switch_state(name, states[name])
                                      for name in switches}, "problems": [], "settled": True}
            result["state"] = state
            if args["fail_on_unsettled"] and not state["settled"]:
                result.update(failed=True, msg="; ".join(state["problems"]))
        finally:
            if driver is not None:
                driver.close()
        return result
