# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test-only action plugin (tests/unit/plugins/action/test_connections.py):
runs a script on inventory hosts through plugin_utils/connections.py and
returns, per host, its output or error and how the connection was set up."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ansible.plugins.action import ActionBase

from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    SwitchConnectionError,
    connection_session,
    shell_session,
    task_session,
)


class ActionModule(ActionBase):
    """Arguments: hosts (list; omitted: the task's own connection), script,
    what, timeout, host_key_checking, threads (run the hosts in parallel),
    kept (set up a kept shell to each host and describe it, run nothing)."""

    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        hosts = args.get("hosts")

        def probe(host):
            if args.get("kept"):
                return kept(host)
            try:
                if hosts is None:
                    session = task_session(self, host, args.get("timeout", 30))
                else:
                    session = connection_session(self, task_vars, host, args.get("timeout", 30),
                                                 args.get("host_key_checking"))
            except SwitchConnectionError as exc:
                return {"error": str(exc)}
            entry = describe(session.connection)
            with session:
                try:
                    entry["stdout"] = session.run(args["script"], args.get("what", "probe"))
                except SwitchConnectionError as exc:
                    entry["error"] = str(exc)
            return entry

        def kept(host):
            # a kept shell as set up (nothing connects before its first script)
            try:
                session = shell_session(self, task_vars, host, args.get("timeout", 30),
                                        args.get("host_key_checking"))
            except SwitchConnectionError as exc:
                return {"error": str(exc)}
            connection = session.cli.connection
            options = connection.get_options()
            return {"connection": connection._load_name,  # pylint: disable=protected-access
                    **{name: options.get(name) for name in (
                        "network_os", "host_key_checking", "persistent_command_timeout",
                        "persistent_buffer_read_timeout", "ssh_type", "remote_user", "port")}}

        if hosts is None:
            result["hosts"] = {task_vars["inventory_hostname"]: probe(task_vars["inventory_hostname"])}
        elif args.get("threads"):
            with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
                result["hosts"] = dict(zip(hosts, pool.map(probe, hosts)))
        else:
            result["hosts"] = {host: probe(host) for host in hosts}
        return result


def describe(connection):
    """The connection plugin, its become plugin and a few options, as set up."""
    entry = {"connection": connection._load_name}  # pylint: disable=protected-access
    options = connection.get_options()
    for name in ("remote_user", "host_key_checking", "pipelining", "port", "host"):
        if name in options:
            entry[name] = options[name]
    become = connection.become
    if become is not None:
        entry["become"] = become.name
        for name in ("become_user", "become_exe", "become_flags"):
            entry[name] = become.get_option(name)
        entry["become_pass_set"] = bool(become.get_option("become_pass"))
    return entry
