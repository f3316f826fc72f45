"""A lab switch's shell over the OpenSSH client, for lab tests that read or
push a switch without a playbook (the collection itself reaches switches
through Ansible's connection plugins: plugin_utils/connections.py).

``Session(switch, address, key_filename=..., known_hosts=...)`` has the
interface the drivers use: ``run(script, what, timeout=None) -> stdout``
(the script on the standard input of ``sh -s``; a non-zero exit raises
:class:`SwitchConnectionError` naming the switch and the step) and
``close()``.
"""

import subprocess

from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    SwitchConnectionError,
)


class Session:
    """ssh root@ADDRESS with the lab's key and known_hosts (strict checking)."""

    def __init__(self, switch, host, port=22, username="root", key_filename=None,
                 known_hosts=None, timeout=30.0):
        self.switch = switch
        self.timeout = timeout
        self.argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                     "-o", "StrictHostKeyChecking=yes", "-p", str(port)]
        if known_hosts:
            self.argv += ["-o", "UserKnownHostsFile=%s" % known_hosts]
        if key_filename:
            self.argv += ["-o", "IdentitiesOnly=yes", "-i", str(key_filename)]
        self.argv += ["%s@%s" % (username, host), "sh -s"]

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        """Nothing stays open between scripts."""

    def run(self, script, what="script", timeout=None):
        try:
            done = subprocess.run(self.argv, input=script, capture_output=True, text=True,
                                  timeout=timeout or self.timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise SwitchConnectionError("%s: %s timed out: %s" % (self.switch, what, exc))
        if done.returncode != 0:
            raise SwitchConnectionError("%s: %s failed with exit code %d: %s"
                                        % (self.switch, what, done.returncode,
                                           " ".join(done.stderr.split())[:800] or "no output"))
        return done.stdout
