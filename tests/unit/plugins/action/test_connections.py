"""plugin_utils/connections.py through real connection plugins, without a
lab: ansible-playbook runs a test-only action plugin
(connection_probe/connection_probe.py) that opens sessions to the hosts of
a small inventory (``ansible.builtin.local``, and ``ssh`` to a closed port)
and runs scripts; and the collection's ovs_switch and fabric_state reach
their switches the same way.
"""

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[4]
PROBE = Path(__file__).resolve().parent / "connection_probe"
RING = ROOT / "tests" / "unit" / "fixtures" / "lab" / "ring3_topology.yml"
PASSWORD = "pw-Zq81-secret"

# a stand-in for sudo (ansible_become_exe): records its arguments, answers the
# password prompt it is given (-p) from its standard input, then runs the
# command as this user with FAKE_SUDO_USER set to the -u user
FAKE_SUDO = """#!/bin/sh
log="$(dirname "$0")/fake_sudo.log"
printf 'argv %s\\n' "$*" >> "$log"
prompt=""
user=""
while [ $# -gt 0 ]; do
  case "$1" in
    -p) prompt="$2"; shift 2 ;;
    -u) user="$2"; shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ -n "$prompt" ]; then
  printf '%s' "$prompt" >&2
  IFS= read -r password
  printf 'password %s\\n' "$password" >> "$log"
fi
printf 'user %s\\n' "$user" >> "$log"
FAKE_SUDO_USER="$user"
export FAKE_SUDO_USER
exec "$@"
"""


def run_playbook(tmp_path, hosts, plays, env=None):
    """Write the inventory ({host: vars}) and the plays; run ansible-playbook
    with the JSON callback; return (returncode, {task name: {host: result}})."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}), encoding="utf-8")
    playbook = tmp_path / "playbook.yml"
    playbook.write_text(yaml.safe_dump(plays), encoding="utf-8")
    environ = dict(os.environ)
    environ.update(ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".build"),
                   ANSIBLE_ACTION_PLUGINS=str(PROBE),
                   ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                   ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0",
                   ANSIBLE_LOCAL_TEMP=str(tmp_path / "local-tmp"))
    environ.update(env or {})
    tool = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run([str(tool), "-i", str(inventory), str(playbook)], cwd=str(tmp_path),
                          env=environ, capture_output=True, text=True, timeout=180, check=False)
    assert "{" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    plays = json.loads(proc.stdout[proc.stdout.index("{"):])["plays"]
    return proc.returncode, {task["task"]["name"]: task["hosts"]
                             for play in plays for task in play["tasks"]}


def module_result(tmp_path, hosts, target, module, args):
    """Run ``module`` with ``args`` on ``target`` (errors ignored); its result."""
    task = {"name": "module", module: args, "ignore_errors": True}
    dummy, tasks = run_playbook(tmp_path, hosts, [{"hosts": target, "gather_facts": False,
                                                   "tasks": [task]}])
    return tasks["module"][target]


def probe(tmp_path, hosts, targets, script, env=None, **args):
    """connection_probe on localhost against ``targets``: {host: entry}."""
    task = {"name": "probe", "connection_probe": dict(args, hosts=targets, script=script)}
    rc, tasks = run_playbook(tmp_path, hosts, [{"hosts": "localhost", "gather_facts": False,
                                                "tasks": [task]}], env=env)
    assert rc == 0, tasks
    return tasks["probe"]["localhost"]["hosts"]


def local(**variables):
    return dict({"ansible_connection": "local",
                 "ansible_python_interpreter": sys.executable}, **variables)


@pytest.fixture
def fake_sudo(tmp_path):
    path = tmp_path / "fake_sudo"
    path.write_text(FAKE_SUDO, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def sudo_log(fake_sudo):
    log = fake_sudo.parent / "fake_sudo.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


# ------------------------------------------------------------------ scripts
def test_a_large_script_goes_in_on_standard_input(tmp_path):
    # 3 MB: far beyond one argument's 128 KiB (and the whole command line's 2 MB)
    filler = ": %s\n" % ("x" * 70)
    script = filler * (3 * 1024 * 1024 // len(filler)) + \
        'echo "stdin=$(readlink /proc/$$/fd/0 | cut -d: -f1)"\necho "sum=$((40 + 2))"\n'
    assert len(script) > 3_000_000
    hosts = probe(tmp_path, {"one": local()}, ["one"], script)
    assert hosts["one"]["connection"] == "local"
    assert hosts["one"]["stdout"] == "stdin=pipe\nsum=42\n"


def test_each_host_gets_its_own_connection_from_its_variables(tmp_path):
    hosts = {
        "one": local(),
        # ssh to a closed port: the options come from the host's (templated) variables
        "far": {"ansible_host": "127.0.0.1", "ansible_user": "nobody",
                "ansible_port": "{{ 1 + 1 }}", "ansible_ssh_common_args": "-o ConnectTimeout=2"},
    }
    found = probe(tmp_path, hosts, ["one", "far"], "echo ok\n", what="read")
    assert found["one"]["stdout"] == "ok\n"
    far = found["far"]
    assert far["connection"] == "ssh"
    assert (far["host"], far["port"], far["remote_user"]) == ("127.0.0.1", 2, "nobody")
    assert far["host_key_checking"] is True  # Ansible's default, untouched
    assert far["error"].startswith("far: read failed: ")
    assert "127.0.0.1" in far["error"] and "port 2" in far["error"]


def test_host_key_checking_false_reaches_the_ssh_plugin(tmp_path):
    hosts = {"far": {"ansible_host": "127.0.0.1", "ansible_port": 2}}
    found = probe(tmp_path, hosts, ["far"], "true\n", host_key_checking=False)
    assert found["far"]["host_key_checking"] is False


def test_a_failing_script_names_the_host_the_step_and_stderr(tmp_path):
    found = probe(tmp_path, {"one": local()}, ["one"],
                  "echo partial\necho 'no bridge  br9' >&2\nexit 3\n", what="write")
    assert found["one"]["error"] == "one: write failed with exit code 3: no bridge br9"
    assert "stdout" not in found["one"]


def test_a_script_that_outlives_its_time_limit_is_stopped(tmp_path):
    # exit code 124 is timeout(1) stopping the script; no wall-clock bound here,
    # since the probe's ansible-playbook start-up alone takes seconds on a busy machine
    found = probe(tmp_path, {"one": local()}, ["one"], "sleep 20\n", what="read", timeout=1)
    assert found["one"]["error"].startswith("one: read failed: no answer within 1 s (exit code 124)")


def test_hosts_outside_the_inventory_and_cli_connections_are_refused(tmp_path):
    hosts = {"cli": {"ansible_connection": "ansible.netcommon.network_cli",
                     "ansible_network_os": "ethercluster.routing.dell_os6"}}
    found = probe(tmp_path, hosts, ["ghost", "cli"], "true\n")
    assert found["ghost"]["error"].startswith("ghost: not a host of the inventory")
    assert found["cli"]["error"].startswith(
        "cli: its connection ansible.netcommon.network_cli talks to a device CLI")


def test_sessions_opened_in_threads_each_get_their_own_host(tmp_path, fake_sudo):
    hosts = {"h%d" % index: local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                                  ansible_become_user="user%d" % index, ansible_pipelining=True)
             for index in range(8)}
    found = probe(tmp_path, hosts, sorted(hosts), 'echo "$FAKE_SUDO_USER"\n', threads=True)
    assert {host: entry.get("stdout") for host, entry in found.items()} == \
        {host: "user%s\n" % host[1:] for host in hosts}


# ------------------------------------------------------------------- become
def test_become_settings_and_password_reach_the_become_plugin(tmp_path, fake_sudo):
    hosts = {"one": local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                          ansible_become_user="admin1", ansible_become_flags="-H -S",
                          ansible_become_password=PASSWORD, ansible_pipelining=True)}
    found = probe(tmp_path, hosts, ["one"], 'echo "as=$FAKE_SUDO_USER"\n')
    entry = found["one"]
    assert (entry["become"], entry["become_user"], entry["become_flags"]) == ("sudo", "admin1", "-H -S")
    assert entry["become_pass_set"] is True
    # the password answered the prompt; the script still arrived whole on stdin
    assert entry["stdout"] == "as=admin1\n"
    log = sudo_log(fake_sudo)
    assert "password %s" % PASSWORD in log and "user admin1" in log
    assert any(line.startswith("argv -H -S -p ") and " -u admin1 " in line for line in log)


def test_secrets_never_appear_in_error_messages(tmp_path, fake_sudo):
    hosts = {"one": local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                          ansible_become_user="admin1", ansible_become_password=PASSWORD,
                          ansible_pipelining=True)}
    found = probe(tmp_path, hosts, ["one"], "echo 'login %s refused' >&2\nexit 1\n" % PASSWORD,
                  what="read")
    assert found["one"]["error"] == "one: read failed with exit code 1: login ******** refused"


def test_become_without_pipelining_runs_a_copied_script_and_removes_it(tmp_path, fake_sudo):
    remote_tmp = tmp_path / "remote-tmp"
    hosts = {"one": local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                          ansible_become_user="root", ansible_remote_tmp=str(remote_tmp))}
    found = probe(tmp_path, hosts, ["one"], 'echo "as=$FAKE_SUDO_USER from=$0"\n',
                  env={"ANSIBLE_BECOME_ALLOW_SAME_USER": "1"})
    output = found["one"]["stdout"]
    assert re.fullmatch(r"as=root from=%s/ethercluster-[0-9a-f]{32}/script\.sh\n"
                        % re.escape(str(remote_tmp)), output), output
    assert list(remote_tmp.iterdir()) == []  # the copy is removed


def test_become_to_another_unprivileged_user_without_pipelining_is_refused(tmp_path, fake_sudo):
    hosts = {"one": local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                          ansible_become_user="admin1")}
    found = probe(tmp_path, hosts, ["one"], "true\n")
    assert found["one"]["error"].startswith("one: become_method sudo cannot take the script")
    assert "ansible_pipelining: true" in found["one"]["error"]
    assert sudo_log(fake_sudo) == []  # refused before anything ran


# ------------------------------------------------------------ task's own
def test_the_tasks_own_connection_is_used_for_its_host(tmp_path, fake_sudo):
    hosts = {"one": local(ansible_become=True, ansible_become_exe=str(fake_sudo),
                          ansible_become_user="admin2", ansible_pipelining=True)}
    task = {"name": "own", "connection_probe": {"script": 'echo "own as $FAKE_SUDO_USER"\n'}}
    rc, tasks = run_playbook(tmp_path, hosts, [{"hosts": "one", "gather_facts": False,
                                                "tasks": [task]}])
    assert rc == 0, tasks
    entry = tasks["own"]["one"]["hosts"]["one"]
    assert entry["connection"] == "local" and entry["become_user"] == "admin2"
    assert entry["stdout"] == "own as admin2\n"


# ------------------------------------------------- the collection's modules
def test_ovs_switch_reads_over_the_tasks_connection_and_names_the_failure(tmp_path):
    # the host's shell has no OVS bridge "ec-none": the read script fails there
    hosts = {"sw0": local(ovs_bridge="ec-none")}
    result = module_result(tmp_path, hosts, "sw0", "ethercluster.routing.ovs_switch",
                           {"state": "gathered", "timeout": 20})
    assert result["failed"] is True
    assert re.match(r"sw0: read failed with exit code \d+: ", result["msg"]), result["msg"]


def test_ovs_switch_refuses_the_removed_connection_options(tmp_path):
    result = module_result(tmp_path, {"sw0": local()}, "sw0", "ethercluster.routing.ovs_switch",
                           {"state": "gathered", "host": "192.0.2.1"})
    assert result["failed"] is True
    assert result["msg"] == "Invalid options for ethercluster.routing.ovs_switch: host"


def test_fabric_state_reaches_each_switch_through_its_inventory_connection(tmp_path):
    hosts = {name: local(ovs_bridge="ec-none") for name in ("sw0", "sw1", "sw2")}
    result = module_result(tmp_path, hosts, "localhost", "ethercluster.routing.fabric_state",
                           {"topology": str(RING), "timeout": 20})
    assert result["failed"] is True
    assert re.match(r"sw[012]: read failed with exit code \d+: ", result["msg"]), result["msg"]


def test_fabric_state_refuses_switches_missing_from_the_inventory(tmp_path):
    result = module_result(tmp_path, {"sw0": local()}, "localhost",
                           "ethercluster.routing.fabric_state", {"topology": str(RING)})
    assert result["failed"] is True
    assert "the inventory has no host(s) sw1, sw2" in result["msg"]


# ------------------------------------------------------------ kept shells
def test_a_kept_shell_is_network_cli_set_up_from_the_hosts_ssh_variables(tmp_path):
    hosts = {"ovs1": {"ansible_host": "127.0.0.1", "ansible_port": 2, "ansible_user": "netops",
                      "ansible_connection": "ssh", "ansible_paramiko_host_key_checking": False},
             "ovs2": {"ansible_host": "127.0.0.1", "ansible_port": 2, "ansible_command_timeout": 300},
             "sudo": {"ansible_host": "127.0.0.1", "ansible_become": True},
             "here": local()}
    found = probe(tmp_path, hosts, sorted(hosts), "true\n", kept=True, timeout=20)
    first = found["ovs1"]
    assert first["connection"].endswith("ansible.netcommon.plugins.connection.network_cli")
    assert first["network_os"] == "ethercluster.routing.posix_shell"
    assert (first["ssh_type"], first["remote_user"], first["port"]) == ("paramiko", "netops", 2)
    # paramiko's own variable turns its checking off; the host's default stays on
    assert first["host_key_checking"] is False and found["ovs2"]["host_key_checking"] is True
    # no wait after the prompt; network_cli waits longer than the script's own 20 s limit
    assert first["persistent_buffer_read_timeout"] == 0.0
    assert first["persistent_command_timeout"] == 50 and found["ovs2"]["persistent_command_timeout"] == 300
    assert found["sudo"] == {"error": "sudo: a kept shell does not become another user (ansible_become)"}
    assert found["here"]["error"].startswith("here: a kept shell needs an ssh connection; the host's is ")


def test_a_switch_without_a_kept_shell_falls_back_to_its_ordinary_session(monkeypatch):
    from ansible_collections.ethercluster.routing.plugins.plugin_utils import fabric_access

    def shell(action, task_vars, switch, timeout, host_key_checking=None):
        if switch == "sudo1":
            raise fabric_access.SwitchConnectionError("sudo1: a kept shell does not become another user")
        return ("kept", switch, timeout, host_key_checking)

    def ordinary(action, task_vars, switch, timeout, host_key_checking=None):
        return ("ssh", switch, timeout, host_key_checking)
    monkeypatch.setattr(fabric_access, "shell_session", shell)
    monkeypatch.setattr(fabric_access, "connection_session", ordinary)
    settings = fabric_access.SwitchSettings("action", {}, {"ovs1": {}, "sudo1": {}})
    fallbacks = {}
    opened = fabric_access.kept_shell_opener(settings, 12, False, fallbacks)
    assert opened("ovs1") == ("kept", "ovs1", 12, False)
    assert opened("sudo1") == ("ssh", "sudo1", 12, False)
    assert fallbacks == {"sudo1": "sudo1: a kept shell does not become another user"}
