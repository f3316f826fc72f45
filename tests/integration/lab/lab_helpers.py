"""Helpers of the lab tests (see conftest.py)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "unit" / "fixtures" / "lab"
FRAMES = Path(__file__).resolve().parent / "lab_frames.py"
TOOLS = ("ip", "tc", "sysctl", "ssh-keygen", "ovsdb-tool", "ovsdb-server", "ovs-vsctl",
         "ovs-vswitchd", "ovs-appctl", "ovs-ofctl")


def lab_machine_problems():
    problems = []
    if os.geteuid() != 0:
        problems.append("not root")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not os.path.exists("/usr/sbin/sshd"):
        missing.append("/usr/sbin/sshd")
    if missing:
        problems.append("missing " + ", ".join(missing))
    return problems


def netns_exec(netns, *argv, timeout=20, check=True, input=None):
    result = subprocess.run(["ip", "netns", "exec", netns, *map(str, argv)], capture_output=True,
                            text=True, timeout=timeout, input=input, check=False)
    if check and result.returncode != 0:
        raise AssertionError("ip netns exec %s %s: rc %d\n%s%s" % (
            netns, " ".join(map(str, argv)), result.returncode, result.stdout, result.stderr))
    return result


def cli_session(lab, name, lines):
    """Type ``lines`` into switch ``name``'s CLI over SSH (the lab's CLI key)."""
    sw = lab["layout"]["switches"][name]
    directory = lab["layout"]["dir"]
    return subprocess.run(
        ["ssh", "-tt", "-i", "%s/cli_id_ed25519" % directory, "-o", "IdentitiesOnly=yes",
         "-o", "UserKnownHostsFile=%s/known_hosts" % directory, "-o", "StrictHostKeyChecking=yes",
         "root@%s" % sw["mgmt_address"]],
        input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=30, check=False)


def frames_command(netns, *args):
    """argv that runs lab_frames.py inside ``netns``."""
    return ["ip", "netns", "exec", netns, sys.executable, str(FRAMES), *map(str, args)]


def root_interfaces():
    return set(os.listdir("/sys/class/net"))


def processes_mentioning(text):
    """Live (non-zombie) processes whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open("/proc/%s/stat" % entry, "r", encoding="utf-8") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state not in ("Z", "X"):
            found.append((int(entry), cmdline.strip()))
    return found


def ansible_env():
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".build"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_DEPRECATION_WARNINGS="0",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    return env


def ansible_playbook(*args, timeout=300, controller=None, state_root="/run/ethercluster-lab"):
    """ansible-playbook with ``args`` from the checkout. ``controller``: the
    name of a lab whose ``controller.sh`` runs it (a cpu cgroup of its own,
    as a real controller has a CPU of its own: docs/lab.md, "The
    controller's CPU"), for playbooks timed under the lab's probes."""
    tool = Path(sys.executable).parent / "ansible-playbook"
    assert tool.exists(), "ansible-playbook not found next to %s" % sys.executable
    prefix = ["%s/%s/controller.sh" % (state_root, controller)] if controller else []
    return subprocess.run([*prefix, str(tool), *map(str, args)], cwd=str(ROOT), env=ansible_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def held_pipelines(layout):
    """The pipeline each switch of a lab holds: its flows of this collection
    (cookie 0xec00; learned entries left out), sorted."""
    held = {}
    for name, sw in layout["switches"].items():
        text = netns_exec(sw["netns"], "ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                          "unix:%s/br0.mgmt" % sw["dir"], "--no-stats").stdout
        held[name] = sorted(line.strip() for line in text.splitlines() if "cookie=0xec00" in line)
    return held


def build_lab(name, topology, mgmt_network, host_network, *extra_args, state_root="/run/ethercluster-lab"):
    """A fresh lab of ``topology`` (lab_up.yml with ``extra_args``; one of
    that name removed first): ``{"inventory", "layout"}``."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner

    runner.lab_down(state_root, name)
    proc = ansible_playbook("playbooks/lab_up.yml", "-e", "topology=%s" % topology, "-e", "lab_name=%s" % name,
                            "-e", "lab_mgmt_network=%s" % mgmt_network, "-e", "lab_host_network=%s" % host_network,
                            *extra_args)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return {"inventory": "%s/%s/inventory.yml" % (state_root, name),
            "layout": runner.read_record(state_root, name)["layout"]}


def lab_with_output(name, topology, mgmt_network, host_network, out):
    """Body of a module-scoped lab fixture (``yield from``): a fresh lab
    (:func:`build_lab`) with ``out`` for the playbooks' files, removed
    after the module's tests."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner

    yield dict(build_lab(name, topology, mgmt_network, host_network), out=out)
    runner.lab_down("/run/ethercluster-lab", name)


def play_results(stdout):
    """ansible-playbook's JSON callback output as ``(stats, {task name: {host:
    result}})`` (a role's task named as in the role, without the ``ROLE : ``
    prefix)."""
    start = stdout.find("{")
    assert start >= 0, stdout[-3000:]
    data = json.loads(stdout[start:])
    tasks = {}
    for play in data["plays"]:
        for task in play["tasks"]:
            tasks.setdefault(task["task"]["name"].split(" : ", 1)[-1], {}).update(task["hosts"])
    return data["stats"], tasks


def tasks_by_name(stdout):
    """The tasks of :func:`play_results`."""
    return play_results(stdout)[1]
