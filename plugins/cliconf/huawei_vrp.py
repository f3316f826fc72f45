# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cliconf plugin of Huawei VRP (S series) switches for ansible.netcommon.network_cli."""

from __future__ import annotations

DOCUMENTATION = r"""
author: ethercluster.routing developers (@ethercluster)
name: huawei_vrp
short_description: Use huawei_vrp cliconf to run commands on Huawei VRP (S series) switches
description:
  - Minimal cliconf plugin for Huawei VRP switches (S series) with the CLI subset that C(ethercluster.routing) renders
    (VLANs, hybrid ports, static MAC entries, port speed and admin state); set
    C(ansible_network_os=ethercluster.routing.huawei_vrp) with C(ansible_connection=ansible.netcommon.network_cli).
  - C(get_config) reads C(display current-configuration) (or C(display saved-configuration)).
  - C(get_diff) is declarative - both texts are parsed into the collection's canonical switch form and exactly the
    commands that make the switch hold the candidate are returned, removals included (C(undo port hybrid vlan),
    C(undo mac-address static), C(undo vlan batch), PVID changes). Ports the candidate does not configure are left
    alone.
  - C(edit_config) sends the lines in the system view (C(system-view) ... C(return)); saving (C(save), answered
    C(y)) is a separate M(ansible.netcommon.cli_command).
  - A command whose session the switch ended before its prompt came back (network_cli then answers the text
    C(None), without an error) fails with a connection error naming the command, and the session is closed, so
    the next command opens a new one.
  - Tested against the collection's lab, which emulates a VRP (S5700, V200R010) CLI (docs/lab.md), not against a real
    VRP switch.
version_added: 0.1.0
"""

import re

from ansible_collections.ethercluster.routing.plugins.cliconf.dell_os6 import Cliconf as Os6Cliconf

NETWORK_OS = "ethercluster.routing.huawei_vrp"


class Cliconf(Os6Cliconf):
    """Huawei VRP over network_cli: the OS6 plugin with VRP's commands (VRP
    has no enable mode, so nothing here needs the ``#`` prompt)."""

    PLATFORM = "huawei_vrp"
    NETWORK_OS = NETWORK_OS
    VERSION_COMMAND = "display version"
    VERSION_RE = re.compile(r"VRP \(R\) software, Version (\S+)")
    MODEL_RE = re.compile(r"^HUAWEI (\S+) .*uptime", re.M)
    HOSTNAME_RE = re.compile(r"^[<\[]~?\*?([^\]>-]+)")

    def get_config(self, source="running", flags=None, format=None):
        if source not in ("running", "startup"):
            raise ValueError("fetching configuration from %s is not supported" % source)
        if format or flags:
            raise ValueError("'format' and 'flags' are not supported for get_config")
        return self.send_command("display current-configuration" if source == "running"
                                 else "display saved-configuration")

    CONFIG_ENTER = "system-view"
    CONFIG_EXIT = "return"
    CONFIG_SKIP = ("return", "system-view")
    CONFIG_COMMENT = "#"

    def edit_config(self, candidate=None, commit=True, replace=None, comment=None):
        # VRP has no enable mode: the OS6 method without its enable_mode wrapper
        return self.send_config(candidate, commit, replace, comment)
