# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side access to every switch of the fabric at once, for the
action plugins that read or change several switches in one task
(fabric_state, link_transition, power counters): the SSH settings of each
switch come from its inventory variables, exactly as ovs_switch reads them
for its own host."""

from __future__ import annotations

from ansible.errors import AnsibleError

from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.ssh import Session
from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import (
    controller_path,
    task_var,
)


def load_fabric_topology(action, path):
    """The topology of controller file ``path`` (AnsibleError when missing)."""
    # planning code (networkx, PyYAML): loaded when used, like the actions' own imports
    from ansible_collections.ethercluster.routing.plugins.module_utils.topology import load_topology

    found = controller_path(action, path)
    if found is None:
        raise AnsibleError("topology: file %r not found" % path)
    return load_topology(found)


def switch_settings(action, task_vars, switches):
    """``{switch: {host, port, username, key_filename, known_hosts, bridge}}``
    from each switch's inventory variables (``ansible_host``,
    ``ansible_port``, ``ansible_user``, ``ansible_ssh_private_key_file``,
    ``ethercluster_known_hosts``, ``ovs_bridge``). Raises AnsibleError
    naming the switches the inventory does not have."""
    hostvars = task_vars.get("hostvars") or {}
    missing = [name for name in switches if name not in hostvars]
    if missing:
        raise AnsibleError("the inventory has no host(s) %s; give the lab's or the fabric's "
                           "inventory (-i) with every switch of the topology"
                           % ", ".join(missing))
    settings = {}
    for name in switches:
        values = hostvars[name]
        settings[name] = {
            "host": str(task_var(action, values, "ansible_host") or name),
            "port": int(task_var(action, values, "ansible_port") or 22),
            "username": str(task_var(action, values, "ansible_user") or "root"),
            "key_filename": task_var(action, values, "ansible_ssh_private_key_file")
            or task_var(action, values, "ansible_private_key_file"),
            "known_hosts": task_var(action, values, "ethercluster_known_hosts"),
            "bridge": task_var(action, values, "ovs_bridge"),
        }
    return settings


def session_opener(settings, timeout=30.0, host_key_checking=True):
    """A function ``switch -> Session`` over ``settings`` (:func:`switch_settings`)."""
    def open_session(switch):
        entry = settings[switch]
        return Session(switch, entry["host"], port=entry["port"], username=entry["username"],
                       key_filename=entry["key_filename"], known_hosts=entry["known_hosts"],
                       host_key_checking=host_key_checking, timeout=timeout)
    return open_session
