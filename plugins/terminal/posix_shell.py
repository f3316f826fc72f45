# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""terminal plugin of a POSIX shell for ansible.netcommon.network_cli
(``ansible_network_os: ethercluster.routing.posix_shell``): a kept shell on
a Linux-based switch (an Open vSwitch host), so that each command is a
line sent over one open channel instead of a new SSH session.

The login shell is replaced by ``/bin/sh`` (no line editing, no history
expansion, the same shell on every host), terminal echo is turned off, so
an answer holds only the command's output, and the prompt is set to
:data:`PROMPT` with an empty continuation prompt, so a multi-line command
(a here-document) answers with its output and one prompt. Errors are not
read from the text (a shell command's output can say anything): the caller
prints the exit status after each command and reads it
(``plugin_utils/connections.py``, ``ShellSession``).
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleConnectionFailure

from ansible_collections.ansible.netcommon.plugins.plugin_utils.terminal_base import TerminalBase

# the prompt set once the shell is ours: unlikely in any output, matched first
PROMPT = "ethercluster-shell# "


class TerminalModule(TerminalBase):
    """Prompts of a POSIX shell; no error patterns (exit statuses are read instead)."""

    # the login shell's prompt, before ours is set: user@host:dir$ , root's #, a bare $ or #.
    # Only until ours is set: a chunk of output that ends in "#" or "$" would match it too.
    terminal_stdout_re = [
        re.compile(re.escape(PROMPT.encode()) + rb"$"),
        re.compile(rb"(?:^|[\r\n])[^\r\n]{0,120}[$#] ?$"),
    ]

    terminal_stderr_re: list = []

    def on_open_shell(self):
        try:
            # a POSIX shell of known behaviour: no readline (which echoes whatever the
            # terminal's echo setting), no history expansion of "!" in a here-document
            self._exec_cli_command(b"exec /bin/sh")
            # network_cli reads the patterns of this object before each command: from the
            # next answer on, only our own prompt ends one
            self.terminal_stdout_re = [re.compile(re.escape(PROMPT.encode()) + rb"$")]
            self._exec_cli_command(("stty -echo 2>/dev/null; PS1='%s'; PS2=''" % PROMPT).encode())
        except AnsibleConnectionFailure as err:
            raise AnsibleConnectionFailure("unable to set up the shell (exec /bin/sh, stty -echo, PS1): %s"
                                           % err) from err
