# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.power_decide (documentation:
plugins/modules/power_decide.py; the work: module_utils/power/measure.py and
selection.decide, or module_utils/power/selector_mode.py in selector mode)."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.errors import AnsibleError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction


try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import (
        measure,
        selector_mode,
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


# decision fields logged besides the actions and the log lines
LOGGED = ("sample_peaks", "selector", "watts_before", "watts_after", "max_utilisation_before",
          "max_utilisation_after", "max_load_before", "max_load_after", "all_links_max_utilisation",
          "vetoed", "deferred")


class ActionModule(CollectionAction):
    """Read the state and the counters; decide."""

    MODULE = "ethercluster.routing.power_decide"
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML; pysnmp for SNMP counters"

    def run_action(self, args, task_vars, result):
        thresholds = args["thresholds"]
        samples = args["samples"] or int((thresholds or {}).get(
            "samples", DEFAULT_THRESHOLDS["samples"]))
        if samples < 1 or args["interval_s"] <= 0:
            return self.failed(result, "samples must be >= 1 and interval_s > 0")
        if (args["state"] is None) != (args["readings"] is None):
            return self.failed(result, "state and readings go together (a replay), or neither")
        topology = fabric_access.load_fabric_topology(self, args["topology"])
        if args["state"] is not None:
            state, readings = args["state"], args["readings"]
        else:
            state, readings = self._read_fabric(args, task_vars, topology, samples)
        if not state.get("settled", True):  # a replayed state may leave it out
            raise AnsibleError("the fabric is not settled, nothing decided: %s"
                               % "; ".join(state.get("problems", [])))
        decision = self._decide(args, topology, state, readings)
        result.update(decision)
        result.update(bank=state["bank"], down_links=state["down_links"],
                      speeds=state["speeds"], counters_source=args["counters_source"])
        if args["log"] and not self._task.check_mode:
            path = os.path.abspath(os.path.expanduser(args["log"]))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            entry = {"decision": True, "at": round(time.time(), 3), "bank": state["bank"],
                     "down_links": state["down_links"], "actions": decision["actions"],
                     "log": decision["log"], "mode": args["mode"]}
            entry.update({key: decision[key] for key in LOGGED if key in decision})
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
        return result

    @staticmethod
    def _decide(args, topology, state, readings):
        """The decision of the chosen mode on the fabric as read."""
        veto = measure.lossless_off(topology, state["bank"], engine=args["routing"],
                                    assignment=args["assignment"], engine_options=args["engine_options"])
        if args["mode"] == "selector":
            options = {"selector": args["selector"], "speeds": args["speeds"], "max_changes": args["max_changes"],
                       "engine": args["routing"], "engine_options": args["engine_options"]}
            return selector_mode.selector_decision(topology, state, readings, options, can_turn_off=veto)
        thresholds = args["thresholds"]
        if args["max_changes"] is not None:
            thresholds = dict(thresholds or {}, max_changes=args["max_changes"])
        decision = measure.power_decision(topology, state, readings, thresholds, can_turn_off=veto)
        decision["mode"] = "threshold"
        return decision

    def _read_fabric(self, args, task_vars, topology, samples):
        """The fabric's state and ``samples`` + 1 counter readings, from the switches."""
        driver = None
        try:
            switches = topology.switch_names()
            driver, settings = fabric_access.fabric_driver(
                self, task_vars, topology, args["timeout"], args["host_key_checking"])
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
            return state, readings
        finally:
            if driver is not None:
                driver.close()

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
