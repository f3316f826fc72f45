# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small SSH transport (paramiko) for switches that take shell scripts.

A script is sent on the standard input of ``sh -s`` rather than on the
command line, so its size is not bound by the 128 KiB limit of one argument
(a switch's flow table can be larger).
"""

from __future__ import annotations

import os
import socket

from ..errors import EtherclusterError

try:
    import paramiko
except ImportError as exc:  # reported when a connection is attempted
    paramiko = None
    PARAMIKO_ERROR: ImportError | None = exc
else:
    PARAMIKO_ERROR = None


class SwitchConnectionError(EtherclusterError):
    """The switch cannot be reached, refuses the login or fails a script
    (names the switch and its address)."""


class Session:
    """An open SSH connection to one switch; use as a context manager."""

    def __init__(self, switch, host, port=22, username="root", key_filename=None,
                 known_hosts=None, host_key_checking=True, timeout=10.0):
        if paramiko is None:
            raise SwitchConnectionError("%s: paramiko is needed to reach the switch over SSH "
                                        "(pip install paramiko): %s" % (switch, PARAMIKO_ERROR))
        self.switch = switch
        self.where = "%s (%s@%s:%s)" % (switch, username, host, port)
        self.timeout = timeout
        client = paramiko.SSHClient()
        try:
            if known_hosts:
                client.load_host_keys(os.path.expanduser(known_hosts))
            else:
                client.load_system_host_keys()
        except (OSError, IOError) as exc:
            raise SwitchConnectionError("%s: cannot read known hosts file %s: %s"
                                        % (self.where, known_hosts, exc))
        client.set_missing_host_key_policy(paramiko.RejectPolicy() if host_key_checking
                                           else paramiko.AutoAddPolicy())
        try:
            client.connect(host, port=port, username=username,
                           key_filename=os.path.expanduser(key_filename) if key_filename else None,
                           timeout=timeout, banner_timeout=timeout, auth_timeout=timeout,
                           allow_agent=key_filename is None, look_for_keys=key_filename is None)
        except paramiko.BadHostKeyException as exc:
            raise SwitchConnectionError("%s: the host key does not match the known one: %s"
                                        % (self.where, exc))
        except paramiko.SSHException as exc:
            raise SwitchConnectionError("%s: SSH failed: %s" % (self.where, exc))
        except (OSError, socket.timeout) as exc:
            raise SwitchConnectionError("%s: cannot connect: %s" % (self.where, exc))
        self.client = client

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        self.client.close()

    def run(self, script, what="script", timeout=None):
        """Run ``script`` with ``sh -s``; return its standard output. Raise
        SwitchConnectionError naming ``what`` when it exits non-zero."""
        try:
            stdin, stdout, stderr = self.client.exec_command(
                "sh -s", timeout=timeout or self.timeout)
            stdin.write(script)
            stdin.channel.shutdown_write()
            out = stdout.read().decode("utf-8", "replace")
            err = stderr.read().decode("utf-8", "replace")
            status = stdout.channel.recv_exit_status()
        except (paramiko.SSHException, OSError, socket.timeout) as exc:
            raise SwitchConnectionError("%s: %s failed: %s" % (self.where, what, exc))
        if status != 0:
            raise SwitchConnectionError("%s: %s failed with exit code %d: %s"
                                        % (self.where, what, status,
                                           " ".join(err.split())[:800] or "no output"))
        return out
