# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cliconf plugin of a POSIX shell for ansible.netcommon.network_cli."""

from __future__ import annotations

DOCUMENTATION = r"""
author: ethercluster.routing developers (@ethercluster)
name: posix_shell
short_description: Use posix_shell cliconf to keep a shell open on a Linux-based switch
description:
  - Minimal cliconf plugin for a POSIX shell reached over C(ansible.netcommon.network_cli) (set
    C(ansible_network_os=ethercluster.routing.posix_shell)). It exists so that a controller that sends many short
    scripts to an Open vSwitch host (the failover responder's pushes) keeps one shell per switch open instead of
    starting an SSH session per script. The terminal plugin of the same name replaces the login shell by
    C(/bin/sh), turns terminal echo off and sets its own prompt.
  - C(get) sends one command (it may span lines, as a here-document does) and returns its output. The exit status
    is not checked here; the collection's C(ShellSession) prints it after each script and reads it.
  - A command whose session the switch ended before its prompt came back (network_cli then answers the text
    C(None), without an error) fails with a connection error naming the command, and the session is closed, so
    the next command opens a new one.
  - There is no configuration mode; C(edit_config) and C(get_config) are refused.
version_added: 0.1.0
"""

import json

from ansible_collections.ansible.netcommon.plugins.plugin_utils.cliconf_base import CliconfBase
from ansible_collections.ethercluster.routing.plugins.plugin_utils.cli_answers import answered

NETWORK_OS = "ethercluster.routing.posix_shell"


class Cliconf(CliconfBase):
    """A POSIX shell over network_cli (see DOCUMENTATION)."""

    def get_device_info(self):
        return {"network_os": NETWORK_OS}

    def get_config(self, source="running", flags=None, format=None):
        raise ValueError("a shell has no configuration to fetch (ethercluster.routing.posix_shell)")

    def edit_config(self, candidate=None, commit=True, replace=None, comment=None):
        raise ValueError("a shell has no configuration mode (ethercluster.routing.posix_shell): send commands")

    def get(self, command=None, prompt=None, answer=None, sendonly=False, newline=True,
            output=None, check_all=False):
        # a shell asks nothing back (no prompt/answer pairs) and has one output format
        if not command or prompt or answer or output:
            raise ValueError("posix_shell: get takes a command, without prompt, answer or output")
        response = self.send_command(command=command, sendonly=sendonly, newline=newline)
        # the text "None" when the shell ended before its prompt came back (plugin_utils/cli_answers.py)
        return response if sendonly else answered(self._connection, command, response)

    def get_capabilities(self):
        result = super().get_capabilities()
        result["device_operations"] = {"supports_commit": False, "supports_replace": False,
                                       "supports_onbox_diff": False, "supports_generate_diff": False}
        return json.dumps(result)
