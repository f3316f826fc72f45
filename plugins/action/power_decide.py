# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.power_decide (documentation:
plugins/modules/power_decide.py; the work: module_utils/power/measure.py and
link_selection.decide)."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.modules.power_decide import ARGUMENT_SPEC

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import (
        measure,
        snmp_counters,
        transition_run,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.fabric_state import fabric_state
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.selection import DEFAULT_THRESHOLDS
    from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access
except ImportError as exc:
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


class ActionModule(CollectionAction):
    """Read the state and the counters; decide."""

    MODULE = "ethercluster.routing.power_decide"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    IMPORT_ERROR = IMPORT_ERROR
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML; pysnmp for SNMP counters"

    def run_action(self, args, task_vars, result):
        thresholds = args["thresholds"]
        samples = args["samples"] or int((thresholds or {}).get(
            "samples", DEFAULT_THRESHOLDS["samples"]))
        if samples < 1 or args["interval_s"] <= 0:
            return self.failed(result, "samples must be >= 1 and interval_s > 0")
        driver = None
        try:
            topology = fabric_access.load_fabric_topology(self, args["topology"])
            switches = topology.switch_names()
            driver, settings = fabric_access.ovs_driver(
                self, task_vars, switches, args["timeout"], args["host_key_checking"])
            state = fabric_state(topology, transition_run.read_states(driver, switches))
            if not state["settled"]:
                raise AnsibleError("the fabric is not settled, nothing decided: %s"
                                   % "; ".join(state["problems"]))
            read = self._counter_reader(args, topology, settings, driver)
            readings = []
            for number in range(samples + 1):
                if number:
                    time.sleep(args["interval_s"])
                at = time.time()
                readings.append({"at": at, "counters": read()})
            decision = measure.power_decision(
                topology, state, readings, thresholds,
                can_turn_off=measure.lossless_off(topology, state["bank"], engine=args["routing"],
                                                  assignment=args["assignment"],
                                                  engine_options=args["engine_options"]))
            result.update(decision)
            result.update(bank=state["bank"], down_links=state["down_links"],
                          speeds=state["speeds"], counters_source=args["counters_source"])
            if args["log"] and not self._task.check_mode:
                path = os.path.abspath(os.path.expanduser(args["log"]))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({
                        "decision": True, "at": round(time.time(), 3), "bank": state["bank"],
                        "down_links": state["down_links"], "actions": decision["actions"],
                        "log": decision["log"], "sample_peaks": decision["sample_peaks"]},
                        sort_keys=True) + "\n")
        finally:
            if driver is not None:
                driver.close()
        return result

    @staticmethod
    def _counter_reader(args, topology, settings, driver):
        """A function reading every switch's port counters, from the chosen source."""
        switches = topology.switch_names()
        if args["counters_source"] == "ovs":
            return lambda: transition_run.read_counters(driver, switches)
        wanted = {name: snmp_counters.port_if_names(topology, name, topology.used_ports(name),
                                                    args["snmp_if_name"]) for name in switches}

        def one(name):
            return snmp_counters.read_counters(name, settings[name]["host"], wanted[name],
                                               community=args["snmp_community"], port=args["snmp_port"],
                                               timeout=min(args["timeout"], 5.0))

        def read():
            with ThreadPoolExecutor(max_workers=min(16, len(switches))) as pool:
                return dict(zip(switches, pool.map(one, switches)))
        return read
