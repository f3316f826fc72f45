# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""terminal plugin of Huawei VRP (S series) switches for ansible.netcommon.network_cli
(``ansible_network_os: ethercluster.routing.huawei_vrp``).

Prompts: ``<HUAWEI>`` (user view), ``[HUAWEI]`` (system view),
``[HUAWEI-GigabitEthernet0/0/1]``, ``[HUAWEI-vlan10]`` (and the ``[~HUAWEI]``
/ ``[*HUAWEI]`` forms of two-stage-commit models). An answer with
``Error:``, ``Unrecognized command``, ``Incomplete command``, ``Wrong
parameter`` or ``Too many parameters`` fails the command. The session
turns paging off (``screen-length 0 temporary``). VRP has no enable mode.
Tested against the lab's emulated VRP CLI (docs/lab.md), not a real VRP switch.
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleConnectionFailure

from ansible_collections.ansible.netcommon.plugins.plugin_utils.terminal_base import TerminalBase


class TerminalModule(TerminalBase):
    """Prompts, errors and paging of VRP."""

    terminal_stdout_re = [
        re.compile(rb"[\r\n]?(?:<[~*]?[\w+\-.:/]+>|\[[~*]?[\w+\-.:/]+\]) ?$"),
    ]

    terminal_stderr_re = [
        re.compile(rb"^\s*Error:", re.M),
        re.compile(rb"Unrecognized command", re.I),
        re.compile(rb"Incomplete command", re.I),
        re.compile(rb"Wrong parameter", re.I),
        re.compile(rb"Too many parameters", re.I),
        re.compile(rb"Ambiguous command", re.I),
    ]

    def on_open_shell(self):
        try:
            self._exec_cli_command(b"screen-length 0 temporary")
        except AnsibleConnectionFailure as err:
            raise AnsibleConnectionFailure("unable to set terminal parameters") from err
