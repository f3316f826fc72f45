# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An answer of ``network_cli`` that is no answer (the collection's cliconf plugins).

When the switch ends the SSH session before its prompt comes back (a switch
refusing a new session by accepting it and closing it at once, one that
reloads, a management path lost mid-command), ``network_cli``'s paramiko
reader meets the end of the channel, leaves its loop and returns nothing,
and ``send`` hands that on as the text ``"None"``
(``to_text(None)``): no error, and ``cli_command`` reports the text as the
switch's output. The commit-confirm check read it as "the trial already
ended", the reach check as "reached". :func:`answered` tells the two apart
by the channel itself, so every command of these platforms fails clearly
instead, and closes the dead session so that a retry opens a new one.
"""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleConnectionFailure


class SessionEnded(AnsibleConnectionFailure):
    """The switch ended the session before it answered a command; ``short``
    says so without the command (for a message that names it already)."""

    short = "the switch ended the session before answering"


def session_ended(connection: Any) -> bool:
    """Whether ``connection``'s (``network_cli``'s) shell channel has met its
    end: the switch sent EOF or closed it. False for a connection without
    such a channel (a stand-in, the libssh transport before it is open)."""
    shell = getattr(connection, "_ssh_shell", None)
    return shell is not None and bool(getattr(shell, "eof_received", False) or getattr(shell, "closed", False))


def answered(connection: Any, command: Any, response: Any) -> Any:
    """``response`` to ``command``; :class:`SessionEnded` when the session
    had ended before the switch answered (module doc), after closing the
    dead session (``network_cli`` opens a new one for the next command)."""
    if not session_ended(connection):
        return response
    try:
        connection.close()
    except Exception:  # pylint: disable=broad-except  # closing what is already gone may fail any way: the error below says why
        pass
    text = command.decode("utf-8", "replace") if isinstance(command, bytes) else str(command)
    raise SessionEnded("%s %r (no prompt came back; the next command opens a new session)"
                       % (SessionEnded.short, text.strip()))
