# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side access to every switch of the fabric at once, for the
action plugins that read or change several switches in one task
(fabric_state, link_transition, power counters): each switch is reached
through the Ansible connection plugin its inventory variables name, set up
as for a task on it (plugin_utils/connections.py): a shell connection for
``ovs`` switches, ``ansible.netcommon.network_cli`` for the CLI platforms
(:func:`fabric_driver` picks the driver per switch by its platform)."""

from __future__ import annotations

from ansible.errors import AnsibleError

from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    SwitchConnectionError,
    cli_session,
    connection_session,
    shell_session,
)
from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import (
    controller_path,
    task_var,
)


def load_fabric_topology(action, path):
    """The topology of controller file ``path`` (AnsibleError when missing),
    refused (TransitionRunError) unless every switch is on a platform the
    multi-switch actions can read and change, before any switch is reached."""
    # planning code (networkx, PyYAML): loaded when used, like the actions' own imports
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import check_platforms
    found = controller_path(action, path)
    if found is None:
        raise AnsibleError("topology: file %r not found" % path)
    topology = load_topology(found)
    check_platforms(topology)
    return topology


class SwitchSettings(dict):
    """``{switch: {"host": address, "bridge": ovs_bridge}}``, remembering the
    action and task variables the switches' connections are set up from."""

    def __init__(self, action, task_vars, entries):
        super().__init__(entries)
        self.action = action
        self.task_vars = task_vars


def switch_settings(action, task_vars, switches):
    """:class:`SwitchSettings` of ``switches`` from their inventory
    variables: ``host`` (``ansible_host``, else the name: for SNMP) and
    ``bridge`` (``ovs_bridge``). Raises AnsibleError naming the switches
    the inventory does not have."""
    hostvars = task_vars.get("hostvars") or {}
    missing = [name for name in switches if name not in hostvars]
    if missing:
        raise AnsibleError("the inventory has no host(s) %s; give the lab's or the fabric's "
                           "inventory (-i) with every switch of the topology"
                           % ", ".join(missing))
    entries = {}
    for name in switches:
        values = hostvars[name]
        entries[name] = {
            "host": str(task_var(action, values, "ansible_host") or name),
            "bridge": task_var(action, values, "ovs_bridge"),
        }
    return SwitchSettings(action, task_vars, entries)


def session_opener(settings, timeout=30.0, host_key_checking=True):
    """A function ``switch -> ScriptSession`` over ``settings``
    (:func:`switch_settings`): the switch's own Ansible connection
    (``ansible_connection``, default ssh) with its inventory variables.
    ``timeout`` bounds each script; ``host_key_checking=False`` turns host
    key checking off, True leaves it to Ansible's setting
    (``ansible_host_key_checking``, ``ANSIBLE_HOST_KEY_CHECKING``, on by
    default)."""
    def open_session(switch):
        return connection_session(settings.action, settings.task_vars, switch, timeout,
                                  host_key_checking=None if host_key_checking else False)
    return open_session


def kept_shell_opener(settings, timeout=30.0, host_key_checking=True, fallbacks=None):
    """Like :func:`session_opener`, but a switch reached over ``ssh``
    without become gets a shell kept open over ``network_cli``
    (:func:`..connections.shell_session`): each script is then a line over
    an open channel, not an SSH session. Any other switch gets its
    :func:`session_opener` session, and ``fallbacks`` (a dict, when given)
    gets the switch's name and the reason."""
    ordinary = session_opener(settings, timeout, host_key_checking)

    def open_session(switch):
        try:
            return shell_session(settings.action, settings.task_vars, switch, timeout,
                                 host_key_checking=None if host_key_checking else False)
        except SwitchConnectionError as exc:
            if fallbacks is not None:
                fallbacks[switch] = str(exc)
            return ordinary(switch)
    return open_session


def ovs_driver(action, task_vars, switches, timeout=30.0, host_key_checking=True):
    """``(driver, settings)``: an OvsDriver reaching ``switches`` over their
    inventory connections (:func:`session_opener`), and their settings
    (:func:`switch_settings`). Close the driver when done."""
    # planning code: loaded when used, like the actions' own imports
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_run import OvsDriver

    settings = switch_settings(action, task_vars, switches)
    driver = OvsDriver(session_opener(settings, timeout, host_key_checking),
                       {name: value["bridge"] for name, value in settings.items()}, timeout=timeout)
    return driver, settings


def fabric_driver(action, task_vars, topology, timeout=30.0, host_key_checking=True, switches=None):
    """``(driver, settings)`` for the switches of ``topology`` (or only
    ``switches``): each reached by the driver of its platform, an OvsDriver
    (:func:`ovs_driver`) for ``ovs`` switches, a CliDriver over
    ``ansible.netcommon.network_cli`` (:func:`..connections.cli_session`) for
    ``dell_os6`` and ``huawei_vrp``; one SwitchDrivers over both. Close the
    driver when done."""
    # planning code: loaded when used, like the actions' own imports
    from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.cli_state import CLI_PLATFORMS
    from ansible_collections.ethercluster.routing.plugins.module_utils.power.cli_driver import CliDriver, SwitchDrivers

    names = list(switches or topology.switch_names())
    cli = [name for name in names if topology.switches[name].platform in CLI_PLATFORMS]
    shell = [name for name in names if name not in cli]
    ovs, settings = ovs_driver(action, task_vars, shell, timeout, host_key_checking)
    settings.update(switch_settings(action, task_vars, cli))
    drivers = {name: ovs for name in shell}
    if cli:
        def open_cli(switch):
            return cli_session(action, task_vars, switch, host_key_checking=None if host_key_checking else False)
        interface_names = {}
        for name in cli:
            switch = topology.switches[name]
            named = {port: switch.interface_name(port) for port in topology.used_ports(name)}
            interface_names[name] = {port: value for port, value in named.items() if value} or None
        driver = CliDriver(open_cli, {name: topology.switches[name].platform for name in cli}, interface_names)
        drivers.update({name: driver for name in cli})
    return SwitchDrivers(drivers), settings
