# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cliconf plugin of Dell OS6 (N-Series) switches for ansible.netcommon.network_cli."""

from __future__ import annotations

DOCUMENTATION = r"""
author: ethercluster.routing developers (@ethercluster)
name: dell_os6
short_description: Use dell_os6 cliconf to run commands on Dell EMC Networking OS6 (N-Series) switches
description:
  - Minimal cliconf plugin for Dell EMC Networking N-Series / PowerConnect switches (OS6) with the CLI subset that
    C(ethercluster.routing) renders (VLANs, general-mode ports, static MAC entries, port speed and admin state);
    set C(ansible_network_os=ethercluster.routing.dell_os6) with C(ansible_connection=ansible.netcommon.network_cli).
  - C(get_diff) is declarative, unlike a line diff - the running and the candidate configuration are both
    parsed into the collection's canonical switch form and exactly the commands that make the switch hold the
    candidate are returned, removals included (a VLAN taken off a port, a static MAC entry or a VLAN that goes, a
    PVID change). Ports the candidate does not configure are left alone. So M(ansible.netcommon.cli_config) pushes
    only the needed lines, shows them in check mode and changes nothing on a second run.
  - C(edit_config) sends the lines in global configuration mode (C(configure) ... C(end)); saving
    (C(copy running-config startup-config), answered C(y)) is a separate M(ansible.netcommon.cli_command).
  - A command whose session the switch ended before its prompt came back (network_cli then answers the text
    C(None), without an error) fails with a connection error naming the command, and the session is closed, so
    the next command opens a new one.
version_added: 0.1.0
"""

import ast
import json
import re

from ansible.errors import AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.ansible.netcommon.plugins.module_utils.network.common.utils import to_list
from ansible_collections.ansible.netcommon.plugins.plugin_utils.cliconf_base import (
    CliconfBase,
    enable_mode,
)
from ansible_collections.ethercluster.routing.plugins.plugin_utils.cli_answers import SessionEnded, answered

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_diff
except ImportError as exc:  # jinja2, netaddr missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

PLATFORM = "dell_os6"
NETWORK_OS = "ethercluster.routing.dell_os6"


def _answer(exc):
    """What the switch answered to a failed line (its ``%`` lines when it
    printed some), on one line."""
    detail = exc.args[0] if exc.args else exc
    text = to_text(detail, errors="surrogate_then_replace")
    if re.match(r"""b(['"]).*\1$""", text, re.S):  # the switch's bytes, as Ansible's error shows them
        try:
            text = to_text(ast.literal_eval(text), errors="surrogate_then_replace")
        except (ValueError, SyntaxError):
            pass
    marked = [line.strip() for line in text.splitlines() if line.strip().startswith("%")]
    return " ".join(" ".join(marked or text.split()).split())[:300]


def config_lines(candidate):
    """Configuration lines to send: strings or ``{command, prompt, answer}``
    mappings; blank lines and ``!`` comments are left out."""
    lines = []
    for line in to_list(candidate):
        if isinstance(line, dict):
            if line.get("command", "").strip():
                lines.append(line)
            continue
        for text in to_text(line).splitlines():
            if text.strip() and not text.strip().startswith("!"):
                lines.append(text.strip())
    return lines


class Cliconf(CliconfBase):
    """Dell OS6 over network_cli (see DOCUMENTATION)."""

    PLATFORM = PLATFORM
    NETWORK_OS = NETWORK_OS
    # what get_device_info asks and reads (a subclass for another OS changes these)
    VERSION_COMMAND = "show version"
    VERSION_RE = re.compile(r"^\s*Software Version\.*\s*(\S+)", re.M)
    MODEL_RE = re.compile(r"^\s*System Model ID\.*\s*(\S+)", re.M)
    HOSTNAME_RE = re.compile(r"^([^\s(>#]+)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._device_info = {}

    def get_device_info(self):
        if not self._device_info:
            info = {"network_os": self.NETWORK_OS}
            reply = to_text(self.get(self.VERSION_COMMAND), errors="surrogate_or_strict")
            found = self.VERSION_RE.search(reply)
            if found:
                info["network_os_version"] = found.group(1)
            found = self.MODEL_RE.search(reply)
            if found:
                info["network_os_model"] = found.group(1)
            prompt = to_text(self._connection.get_prompt() or b"", errors="surrogate_or_strict").strip()
            found = self.HOSTNAME_RE.match(prompt)
            if found:
                info["network_os_hostname"] = found.group(1)
            self._device_info = info
        return self._device_info

    @enable_mode
    def get_config(self, source="running", flags=None, format=None):
        if source not in ("running", "startup"):
            raise ValueError("fetching configuration from %s is not supported" % source)
        if format:
            raise ValueError("'format' value %s is not supported for get_config" % format)
        if flags:
            raise ValueError("'flags' value %s is not supported for get_config" % flags)
        return self.send_command("show %s-config" % source)

    @enable_mode
    def edit_config(self, candidate=None, commit=True, replace=None, comment=None):
        return self.send_config(candidate, commit, replace, comment)

    # the configuration mode: entered, left, the lines a candidate may hold that would
    # leave or re-enter it (the plugin sends those itself) and comments: all skipped
    CONFIG_ENTER = "configure"
    CONFIG_EXIT = "end"
    CONFIG_SKIP = ("end", "configure", "configure terminal")
    CONFIG_COMMENT = "!"

    def send_config(self, candidate, commit, replace, comment):
        """``edit_config`` of this plugin and its subclasses: every line of
        ``candidate`` sent inside the configuration mode, which is left even
        when a line fails. A line the switch refuses, or a session that
        ends, stops the push: the error names the line (its number and
        text) and says that the lines before it were taken and none after
        it was sent."""
        operations = self.get_device_operations()
        self.check_edit_config_capability(operations, candidate, commit, replace, comment)
        if not commit:
            raise ValueError("check mode is not supported by edit_config; use get_diff")
        lines = [line if isinstance(line, dict) else {"command": line} for line in config_lines(candidate)]
        lines = [line for line in lines
                 if line["command"] not in self.CONFIG_SKIP and not line["command"].startswith(self.CONFIG_COMMENT)]
        requests, results = [], []
        failure = None
        self.send_command(self.CONFIG_ENTER)
        ended = False
        for number, line in enumerate(lines, 1):
            try:
                results.append(self.send_command(**line))
            except (AnsibleConnectionFailure, OSError) as exc:  # OSError: paramiko's "Socket is closed"
                ended = isinstance(exc, (SessionEnded, OSError))
                failure = AnsibleConnectionFailure(
                    "line %d of %d (%r) failed: %s; the %d line(s) before it were taken, none after it was sent"
                    % (number, len(lines), line["command"], SessionEnded.short if isinstance(exc, SessionEnded)
                       else _answer(exc), number - 1))
                break
            requests.append(line["command"])
        if not ended:       # a session the switch ended has no configuration mode left to leave
            try:
                self.send_command(self.CONFIG_EXIT)
            except (AnsibleConnectionFailure, OSError):
                if failure is None:
                    raise
        if failure is not None:
            raise failure
        return {"request": requests, "response": results}

    def send_command(self, command=None, prompt=None, answer=None, sendonly=False, newline=True,
                     prompt_retry_check=False, check_all=False, strip_prompt=True):
        # network_cli answers the text "None" when the switch ended the session before its
        # prompt came back: that is an error here, not output (plugin_utils/cli_answers.py)
        response = super().send_command(command=command, prompt=prompt, answer=answer, sendonly=sendonly,
                                        newline=newline, prompt_retry_check=prompt_retry_check,
                                        check_all=check_all, strip_prompt=strip_prompt)
        return response if sendonly else answered(self._connection, command, response)

    def get(self, command=None, prompt=None, answer=None, sendonly=False, newline=True,
            output=None, check_all=False):
        if not command:
            raise ValueError("must provide value of command to execute")
        if output:
            raise ValueError("'output' value %s is not supported for get" % output)
        return self.send_command(command=command, prompt=prompt, answer=answer, sendonly=sendonly,
                                 newline=newline, check_all=check_all)

    def get_diff(self, candidate=None, running=None, diff_match="line", diff_ignore_lines=None,
                 path=None, diff_replace=None):
        """``{"config_diff": "commands\\n...", "banner_diff": {}}``: the
        declarative diff (module_utils/platforms/cli_diff.py)."""
        if IMPORT_ERROR is not None:
            raise ValueError("ethercluster.routing.%s needs jinja2 and netaddr on the controller: %s"
                             % (self.PLATFORM, IMPORT_ERROR))
        if not candidate:
            raise ValueError("must provide a candidate configuration")
        if diff_match == "none":
            commands = [line if isinstance(line, str) else line["command"] for line in config_lines(candidate)]
        else:
            try:
                commands = cli_diff.diff_commands(self.PLATFORM, to_text(running or ""), to_text(candidate))
            except EtherclusterError as err:
                raise ValueError(str(err))
        return {"config_diff": "\n".join(commands), "banner_diff": {}}

    def run_commands(self, commands=None, check_rc=True):
        if commands is None:
            raise ValueError("'commands' value is required")
        responses = []
        for command in to_list(commands):
            if not isinstance(command, dict):
                command = {"command": command}
            if command.pop("output", None):
                raise ValueError("'output' is not supported by ethercluster.routing.%s" % self.PLATFORM)
            try:
                responses.append(self.send_command(**command))
            except AnsibleConnectionFailure as err:
                if check_rc:
                    raise
                responses.append(getattr(err, "err", to_text(err)))
        return responses

    def get_device_operations(self):
        return {
            "supports_diff_replace": False,
            "supports_commit": False,
            "supports_rollback": False,
            "supports_defaults": False,
            "supports_onbox_diff": False,
            "supports_commit_comment": False,
            "supports_multiline_delimiter": False,
            "supports_diff_match": True,
            "supports_diff_ignore_lines": False,
            "supports_generate_diff": True,
            "supports_replace": False,
        }

    def get_option_values(self):
        return {"format": ["text"], "diff_match": ["line", "none"], "diff_replace": [], "output": []}

    def get_capabilities(self):
        result = super().get_capabilities()
        result["rpc"] = sorted(set(result["rpc"]) | {"get_diff", "run_commands"})
        result["device_operations"] = self.get_device_operations()
        result.update(self.get_option_values())
        return json.dumps(result)
