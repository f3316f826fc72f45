# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ethercluster.routing.failover_watch (documentation:
plugins/modules/failover_watch.py; the work: module_utils/power/failover_watch.py)."""

from __future__ import annotations

import gc
import json
import os
import threading
import time

from ansible.utils.display import Display
from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

from ansible_collections.ethercluster.routing.plugins.action.failover import ActionModule as FailoverAction
from ansible_collections.ethercluster.routing.plugins.action.link_transition import PLAN_OPTIONS
from ansible_collections.ethercluster.routing.plugins.modules.failover_watch import ARGUMENT_SPEC
from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access

display = Display()
# how often the kept shells are used when no failure uses them (their idle limit is an hour)
KEEP_ALIVE_S = 300.0
try:   # the planning code (networkx, numpy): its absence is reported by the task
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_watch, snmp_traps
    IMPORT_ERROR = None
except ImportError as exc:
    IMPORT_ERROR = exc


class ActionModule(CollectionAction):
    """Watch every fabric port's carrier and fail over (module doc)."""

    MODULE = "ethercluster.routing.failover_watch"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    IMPORT_ERROR = IMPORT_ERROR
    REQUIREMENTS = "networkx, numpy, scipy, PyYAML"

    def run_action(self, args, task_vars, result):
        given = dict(args["plan_options"] or {})
        unknown = sorted(key for key in given if key not in PLAN_OPTIONS)
        if unknown:
            return self.failed(result, "plan_options: %s is no plan option (known: %s)"
                               % (unknown[0], ", ".join(PLAN_OPTIONS)))
        options = dict(given, engine=args["routing"], assignment=args["assignment"],
                       engine_options=args["engine_options"])
        topology = fabric_access.load_fabric_topology(self, args["topology"])
        directory = os.path.abspath(os.path.expanduser(args["intent_dir"])) if args["intent_dir"] else None
        document = FailoverAction._read(directory)
        log = _JsonLines(args["log"])
        names = topology.switch_names()
        fallbacks = {}
        listener = wake = None
        polled = [name for name in names if topology.switches[name].platform != "ovs"]
        if polled:
            # CLI switches (dell_os6, huawei_vrp) send no port status message to wait for: every switch is
            # polled (its interface status every cli_interval_s), through its platform's driver, one call
            # per switch at a time (a network_cli session serves one command at a time)
            kept_shell = False
            fabric, settings = fabric_access.fabric_driver(self, task_vars, topology, args["timeout"],
                                                           args["host_key_checking"])
            driver = poller = failover_watch.OneAtATime(fabric)
            if args["traps_listen"]:
                # a linkDown/linkUp trap from a switch makes its read happen now; the poll is the fallback
                wake = failover_watch.Wakeups(names)
                listener = snmp_traps.TrapListener(
                    args["traps_listen"], args["traps_community"],
                    snmp_traps.addresses_of({name: value["host"] for name, value in settings.items()}),
                    lambda switch, found: (log.write(dict(found, event="trap", name=switch, at=round(time.time(), 3))),
                                           wake.trap(switch)))
            reader = failover_watch.status_reader(poller, topology, args["cli_interval_s"], wake=wake)
        else:
            kept_shell = args["kept_shell"]
            settings = fabric_access.switch_settings(self, task_vars, names)
            bridges = {name: value["bridge"] for name, value in settings.items()}
            opener = fabric_access.session_opener(settings, args["timeout"], args["host_key_checking"])
            pusher = fabric_access.kept_shell_opener(settings, args["timeout"], args["host_key_checking"],
                                                     fallbacks) if kept_shell else opener
            # two sessions per switch: the long poll holds one, the pushes use the other (a kept shell)
            driver = failover_watch.WatchDriver(pusher, bridges, timeout=args["timeout"])
            poller = failover_watch.WatchDriver(opener, bridges, timeout=args["timeout"])
            reader = _reader(poller, args["hold_s"], args["interval_s"])
        responder = failover_watch.Responder(topology, options, driver, document, log=log.write,
                                             check_mode=self._task.check_mode, wait_s=args["wait_s"],
                                             max_parallel=args["max_parallel"], atomic=not polled)
        stopped = threading.Event()
        try:
            ready = responder.ready(args["preplan"])
            # the plans and proofs just made are millions of objects that live to the end: out of the
            # collector's reach, a full collection no longer stops every thread in a failover's pushes
            gc.collect()
            gc.freeze()
            display.display("failover_watch: ready in %.1f s, %d failures planned, %d switches armed, watching %d "
                            "switches" % (ready["seconds"], len(ready["planned"]), len(ready["armed"]), len(names)))
            if ready["resumed"]:
                display.display("failover_watch: the fabric holds the backup of %s (a responder before this one "
                                "failed it over): held, restored when it is back" % ready["resumed"])
            for reason in fallbacks.values():
                display.warning("failover_watch: %s; its pushes open an SSH session each" % reason)
            if kept_shell:
                threading.Thread(target=_keep_alive, args=(driver, names, stopped), daemon=True).start()
            handled = failover_watch.watch(responder, reader, _stop(args, time.monotonic()),
                                           settle_s=args["settle_s"])
        finally:
            stopped.set()
            try:
                # the armed base goes back to the plain base, which the fabric was deployed with
                responder.disarm()
            except EtherclusterError as exc:
                display.warning("failover_watch: the plain base could not be written back on the armed "
                                "switches (%s); a re-deploy writes it" % exc)
            driver.close()
            if poller is not driver:
                poller.close()
            if listener is not None:
                listener.close()
        changed = any(event["event"] in ("recovered", "restored") for event in responder.events)
        result.update(changed=changed, events=responder.events, handled=handled, planned=ready["planned"],
                      armed=ready["armed"], resumed=ready["resumed"])
        result["kept_shells"] = [name for name in names if kept_shell and name not in fallbacks]
        result["polled"] = polled
        if listener is not None:
            result["traps"] = {"received": listener.received, "ignored": dict(listener.ignored)}
        elif args["traps_listen"]:
            display.warning("failover_watch: traps_listen ignored: every switch is an ovs switch, whose OpenFlow "
                            "port status message wakes its poll")
        result["msg"] = "failover_watch: %d event(s) handled" % handled
        return result


def _reader(driver, hold_s, interval_s):
    """``reader(switch, expected)`` for :func:`failover_watch.watch`: one
    long poll, its hold spread (:func:`failover_watch.poll_hold`)."""
    def read(switch, expected):
        return driver.long_poll(switch, expected, failover_watch.poll_hold(hold_s), interval_s)
    return read


def _keep_alive(driver, names, stopped, every_s=KEEP_ALIVE_S):
    """Run ``:`` in every switch's kept shell every ``every_s`` seconds, so
    that its persistent connection never reaches its idle time between
    failures and a dead one is replaced before a failure needs it (a failed
    command closes the shell; the next one opens another)."""
    while not stopped.wait(every_s):
        for name in names:
            if stopped.is_set():
                return
            try:
                driver._session(name).run(":", "keep-alive")  # pylint: disable=protected-access
            except Exception:  # pylint: disable=broad-except  # the next push reopens it and reports
                pass


def _stop(args, started):
    """``stop(handled)``: the duration, the count of events or the stop file."""
    def stop(handled):
        if args["duration_s"] and time.monotonic() - started >= args["duration_s"]:
            return True
        if args["max_events"] and handled >= args["max_events"]:
            return True
        return bool(args["stop_file"]) and os.path.exists(os.path.expanduser(args["stop_file"]))
    return stop


class _JsonLines:
    """One JSON object per line, appended and flushed at once (also in check
    mode: the log says what would be done)."""

    def __init__(self, path):
        self.path = os.path.abspath(os.path.expanduser(path))
        self.lock = threading.Lock()
        os.makedirs(os.path.dirname(self.path), exist_ok=True)

    def write(self, entry):
        with self.lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")
