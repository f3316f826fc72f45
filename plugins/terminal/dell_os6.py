# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""terminal plugin of Dell OS6 (N-Series) switches for ansible.netcommon.network_cli
(``ansible_network_os: ethercluster.routing.dell_os6``).

Prompts: ``sw0>`` (user exec), ``sw0#`` (privileged exec), ``sw0(config)#``,
``sw0(config-vlan)#``, ``sw0(config-if-Gi1/0/1)#``. An answer that holds
``% Invalid input``, ``% Error``, an incomplete or ambiguous command fails
the command. The session turns paging off (``terminal length 0``); become
(``ansible_become: true``, method ``ansible.netcommon.enable``) sends
``enable``, with the become password when OS6 asks for one.
"""

from __future__ import annotations

import json
import re

from ansible.errors import AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.ansible.netcommon.plugins.plugin_utils.terminal_base import TerminalBase


class TerminalModule(TerminalBase):
    """Prompts, errors, paging and enable mode of OS6."""

    terminal_stdout_re = [
        re.compile(rb"[\r\n]?[\w+\-.:/\[\]]+(?:\([^)]+\)){0,3}[>#] ?$"),
    ]

    terminal_stderr_re = [
        re.compile(rb"% ?Error", re.I),
        re.compile(rb"% ?Bad secret"),
        re.compile(rb"invalid input", re.I),
        re.compile(rb"(?:incomplete|ambiguous) command", re.I),
        re.compile(rb"connection timed out", re.I),
        re.compile(rb"'[^']' +returned error code: ?\d+"),
    ]

    def on_open_shell(self):
        try:
            self._exec_cli_command(b"terminal length 0")
        except AnsibleConnectionFailure as err:
            raise AnsibleConnectionFailure("unable to set terminal parameters") from err

    def on_become(self, passwd=None):
        prompt = self._get_prompt()
        if prompt and prompt.strip().endswith(b"#"):
            return
        command = {"command": "enable"}
        if passwd:
            command["prompt"] = to_text(r"[\r\n]?[Pp]assword: ?$", errors="surrogate_or_strict")
            command["answer"] = passwd
        try:
            self._exec_cli_command(to_bytes(json.dumps(command), errors="surrogate_or_strict"))
            prompt = self._get_prompt()
        except AnsibleConnectionFailure as err:
            raise AnsibleConnectionFailure("unable to enter privileged mode (enable) at prompt [%s]: %s"
                                           % (to_text(self._get_prompt()), err)) from err
        if prompt is None or not prompt.strip().endswith(b"#"):
            raise AnsibleConnectionFailure("enable did not reach privileged mode, still at prompt [%s]"
                                           % to_text(prompt))

    def on_unbecome(self):
        prompt = self._get_prompt()
        if prompt is None:
            return
        if b"(config" in prompt:
            self._exec_cli_command(b"end")
            self._exec_cli_command(b"disable")
        elif prompt.strip().endswith(b"#"):
            self._exec_cli_command(b"disable")
