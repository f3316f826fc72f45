"""plugin_utils/connections.py over Ansible's ``ssh`` connection plugin to
real SSH servers on this machine (two private sshd on 127.0.0.1, no
switch lab): host keys are checked against the inventory's known_hosts
file, an unknown key is refused naming the host, and a jump host given in
``ansible_ssh_common_args`` is used. Marked ``lab``: needs root and sshd.
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest
import yaml
from lab_helpers import ansible_env

pytestmark = pytest.mark.lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROBE = os.path.join(ROOT, "tests", "unit", "plugins", "action", "connection_probe")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Sshd:
    """A private sshd on 127.0.0.1:port (root, the test's client key)."""

    def __init__(self, directory, name, host_key, authorized_keys):
        self.port = free_port()
        self.log = directory / ("%s.log" % name)
        config = directory / ("%s_config" % name)
        config.write_text("\n".join([
            "ListenAddress 127.0.0.1:%d" % self.port,
            "HostKey %s" % host_key,
            "PidFile none",
            "AuthorizedKeysFile %s" % authorized_keys,
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "UseDNS no",
            "StrictModes no",  # the keys sit under the world-writable /tmp
            "LogLevel INFO",
            "Subsystem sftp internal-sftp",
            ""]), encoding="utf-8")
        self.process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(config), "-E", str(self.log)])
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert self.process.poll() is None and time.monotonic() < deadline, \
                    self.log.read_text() if self.log.exists() else "sshd did not start"
                time.sleep(0.1)

    def logins(self):
        return self.log.read_text(encoding="utf-8").count("Accepted publickey for root")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def servers(lab_machine, tmp_path_factory):
    directory = tmp_path_factory.mktemp("sshd")
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / key)],
                       check=True)
    authorized = directory / "authorized_keys"
    authorized.write_text((directory / "client_key.pub").read_text(), encoding="utf-8")
    jump = Sshd(directory, "jump", directory / "host_key", authorized)
    target = Sshd(directory, "target", directory / "host_key", authorized)
    host_key = (directory / "host_key.pub").read_text().split()[:2]
    known = directory / "known_hosts"
    known.write_text("".join("[127.0.0.1]:%d %s\n" % (server.port, " ".join(host_key))
                             for server in (jump, target)), encoding="utf-8")
    (directory / "empty_known_hosts").write_text("", encoding="utf-8")
    # jump hosts take their settings from a config file (-F), not from -o
    (directory / "ssh_config").write_text(
        "Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n" % (directory / "client_key", known),
        encoding="utf-8")
    yield {"dir": directory, "jump": jump, "target": target, "known": known}
    jump.stop()
    target.stop()


def probe(tmp_path, hosts, script="echo reached\n"):
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}), encoding="utf-8")
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False,
        "tasks": [{"name": "probe", "connection_probe": {"hosts": sorted(hosts), "script": script,
                                                         "threads": True}}]}]), encoding="utf-8")
    env = ansible_env()
    # a ControlPersist master of another test must not carry this one's connection,
    # and none outlives the test by long
    env.update(ANSIBLE_ACTION_PLUGINS=PROBE, ANSIBLE_SSH_CONTROL_PATH_DIR=str(tmp_path / "cp"),
               ANSIBLE_SSH_ARGS="-C -o ControlMaster=auto -o ControlPersist=2s")
    tool = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run([tool, "-i", "inventory.yml", "playbook.yml"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    start = proc.stdout.find("{")
    assert proc.returncode == 0 and start >= 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(proc.stdout[start:])
    return data["plays"][0]["tasks"][0]["hosts"]["localhost"]["hosts"]


def switch(servers, known=None, **extra):
    return dict({"ansible_host": "127.0.0.1", "ansible_port": servers["target"].port,
                 "ansible_user": "root",
                 "ansible_ssh_private_key_file": str(servers["dir"] / "client_key"),
                 "ansible_ssh_common_args": "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes "
                                            "-o IdentitiesOnly=yes" % (known or servers["known"])},
                **extra)


def test_the_inventorys_known_hosts_file_is_checked(servers, tmp_path):
    found = probe(tmp_path, {"known": switch(servers),
                             "unknown": switch(servers, servers["dir"] / "empty_known_hosts")})
    assert found["known"]["connection"] == "ssh"
    assert found["known"]["stdout"] == "reached\n"
    assert found["unknown"]["error"].startswith("unknown: probe failed: ")
    assert "Host key verification failed" in found["unknown"]["error"]


def test_a_jump_host_in_ansible_ssh_common_args_is_used(servers, tmp_path):
    jump, before = servers["jump"], servers["jump"].logins()
    hosts = {"behind": switch(servers, ansible_ssh_common_args="-F %s -J root@127.0.0.1:%d"
                              % (servers["dir"] / "ssh_config", jump.port))}
    found = probe(tmp_path, hosts, 'echo "client=${SSH_CONNECTION%% *}"\n')
    assert found["behind"]["stdout"] == "client=127.0.0.1\n"
    assert jump.logins() == before + 1  # the jump host was logged into on the way
