# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command plans of the lab: a layout (:mod:`.layout`) in, the phases that
build or remove it out. Pure functions, standard library only.

A plan is a list of :class:`Phase`. The *jobs* of a phase may run in
parallel; the *steps* of one job run in order. A step is a
:class:`Command` or a small file operation, so tests can read a plan as
data. The order encodes the lab's quirks (docs/lab.md):

* IPv6 is disabled in every namespace *before* its veths exist (otherwise
  router solicitations of the ports are learned as MAC entries);
* every port is created directly inside its namespace: no data port ever
  sits in the root namespace (a veth end there answers ARP for the hosts);
* ``other_config:userspace-tso-enable=true`` is in the database before
  ``ovs-vswitchd`` starts (otherwise TCP fails on bad checksums);
* ``ovs-vswitchd`` runs inside the switch's namespace (it opens the ports
  there), with its own database, sockets, pid files and logs
  (``OVS_RUNDIR``/``OVS_DBDIR``/``OVS_LOGDIR`` = the switch's directory);
* ``/run/sshd`` exists before any ``sshd`` starts, and every ``sshd`` has
  its own configuration (ListenAddress, HostKey, PidFile,
  AuthorizedKeysFile).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..errors import EtherclusterError
from ..platforms.ovs import GAP_FILE, gap_file_text, tbf_parameters

LAB_SCHEMA = "ethercluster.routing/lab/v1"
RECORD_FILE = "lab.json"
INVENTORY_FILE = "inventory.yml"
CLIENT_KEY = "id_ed25519"
CLI_KEY = "cli_id_ed25519"
CLI_SETTINGS = "cli.json"
CLI_MODULE = "ansible_collections.ethercluster.routing.plugins.module_utils.lab.cli_emulator"
# network_cli's connect and command timeouts for the emulated CLIs (cli_inventory_vars)
CLI_TIMEOUT_S = 120
# network_cli's wait for more output after a matched prompt (its default 0.1 s), for the emulated CLIs:
# none. The emulator writes each answer with its prompt in one write, so nothing follows a prompt;
# and the wait is a SIGALRM timer that can fire inside paramiko's lock code and leave the channel's
# lock held for good (a session hung for minutes, CI 2026-11-28; ansible/ansible#47965)
CLI_BUFFER_READ_TIMEOUT_S = 0.0
# network_os of the ansible.netcommon.network_cli inventory of a CLI switch
CLI_NETWORK_OS = {"dell_os6": "ethercluster.routing.dell_os6", "huawei_vrp": "ethercluster.routing.huawei_vrp"}
HOST_KEY = "ssh_host_ed25519_key"
AUTHORIZED_KEYS = "authorized_keys"
KNOWN_HOSTS = "known_hosts"
TEMPLATE_DB = "template.db"
# sourced by bash (BASH_ENV, which each switch's sshd sets) before every SSH session's command
SESSION_PRIORITY_FILE = "session-priority.sh"
# runs a command as the fabric's controller: a session of its own at the sessions' priority
CONTROLLER_FILE = "controller.sh"
# the lab's own commands, first on the SSH sessions' PATH (only when the sessions have a priority): the
# management tools that run at real-time priority there, as a switch's management CPU is its own
SESSION_TOOLS_DIR = "bin"
REALTIME_TOOLS = ("ovs-ofctl",)
REALTIME_TOOL_PRIORITY = 10
# where the kernel's cgroup file systems are mounted; the controller's cpu weight there (each the maximum)
CGROUP_ROOT = "/sys/fs/cgroup"
CONTROLLER_CPU_SHARES = 262144
CONTROLLER_CPU_WEIGHT = 10000
SSHD = "/usr/sbin/sshd"
SSHD_PRIVSEP_DIR = "/run/sshd"


class LabError(EtherclusterError):
    """The lab cannot be built or removed as asked (names the option, switch,
    host, namespace or command at fault)."""


class Command(NamedTuple):
    """One process to run. ``netns``: run it inside that namespace
    (``ip netns exec``); ``input``: text for its standard input; ``env``:
    extra environment; ``check``: a non-zero exit fails the step."""

    argv: tuple
    input: str | None = None
    env: dict | None = None
    netns: str | None = None
    check: bool = True
    timeout: float = 30.0

    def __str__(self) -> str:
        text = " ".join(shlex.quote(str(arg)) for arg in self.full_argv())
        if self.env:
            text = " ".join("%s=%s" % item for item in sorted(self.env.items())) + " " + text
        return text

    def full_argv(self) -> list[str]:
        """The argv to execute (behind ``ip netns exec`` for a namespace)."""
        if self.netns is None:
            return list(self.argv)
        return ["ip", "netns", "exec", self.netns] + list(self.argv)


class MakeDirs(NamedTuple):
    path: str
    mode: int = 0o700


class WriteFile(NamedTuple):
    path: str
    content: str
    mode: int = 0o600


class CopyFile(NamedTuple):
    src: str
    dst: str
    mode: int = 0o600


class WriteKnownHosts(NamedTuple):
    """known_hosts naming every switch address with the lab's host key
    (read from ``host_key_pub`` once it has been generated)."""

    path: str
    addresses: tuple
    host_key_pub: str


class AppendAuthorizedKey(NamedTuple):
    """Append the public key ``key_pub`` (read once it has been generated)
    to ``path`` as an authorized_keys line with ``options``."""

    path: str
    key_pub: str
    options: str


class KillNetnsProcesses(NamedTuple):
    """SIGTERM, then SIGKILL after ``grace`` seconds, every process whose
    network namespace is one of ``netns`` (deleting a namespace does not
    stop its processes)."""

    netns: tuple
    grace: float = 3.0


class RemoveTree(NamedTuple):
    path: str


class Phase(NamedTuple):
    name: str
    jobs: list  # list of lists of steps


def ovs_env(directory: str) -> dict[str, str]:
    """Environment under which the OVS tools and daemons of one switch use
    that switch's directory for their database, sockets, pid files and logs."""
    return {"OVS_RUNDIR": directory, "OVS_DBDIR": directory, "OVS_LOGDIR": directory}


def all_netns(layout: dict[str, Any]) -> list[str]:
    """Every namespace of the lab: switches first, then hosts."""
    return [sw["netns"] for sw in layout["switches"].values()] + \
        [host["netns"] for host in layout["hosts"].values()]


def root_devices(layout: dict[str, Any]) -> list[str]:
    """The lab's interfaces in the root namespace (management veths only)."""
    return [sw["root_dev"] for sw in layout["switches"].values()]


def lab_paths(layout: dict[str, Any]) -> dict[str, str]:
    """The lab's own files (record, inventory, keys, template database)."""
    directory = layout["dir"]
    return {
        "dir": directory,
        "record": "%s/%s" % (directory, RECORD_FILE),
        "inventory": "%s/%s" % (directory, INVENTORY_FILE),
        "client_key": "%s/%s" % (directory, CLIENT_KEY),
        "cli_key": "%s/%s" % (directory, CLI_KEY),
        "host_key": "%s/%s" % (directory, HOST_KEY),
        "authorized_keys": "%s/%s" % (directory, AUTHORIZED_KEYS),
        "known_hosts": "%s/%s" % (directory, KNOWN_HOSTS),
        "template_db": "%s/%s" % (directory, TEMPLATE_DB),
        "session_priority": "%s/%s" % (directory, SESSION_PRIORITY_FILE),
        "session_tools": "%s/%s" % (directory, SESSION_TOOLS_DIR),
        "controller": "%s/%s" % (directory, CONTROLLER_FILE),
    }


def session_niceness(layout: dict[str, Any]) -> int:
    """The nice value of the switches' SSH sessions: their sshd's (0: none set)."""
    return int((layout.get("daemon_niceness") or {}).get("sshd.pid") or 0)


def session_priority_script(niceness: int, tools: str = "") -> str:
    """What bash runs before each SSH session's command on a lab switch.

    sshd starts every session in a process session of its own, and the
    kernel's autogroups (Debian: on) give each new session a scheduling
    group at nice 0: the commands of a push (ovs-ofctl, the CLI emulator)
    would lose the sshd's priority and wait behind the forwarding and the
    probes on a busy machine. This gives the session the sshd's nice value,
    its thread and its autogroup (docs/lab.md, "Under load"), and puts the
    lab's ``tools`` directory (:func:`realtime_tool_script`) first on its
    ``PATH``."""
    lines = [
        "# ethercluster.routing lab (written by lab_up): the SSH session's priority, the sshd's",
        "renice -n %d -p $$ >/dev/null 2>&1 || true" % niceness,
        "echo %d 2>/dev/null >/proc/self/autogroup || true" % niceness,
    ]
    if tools:
        lines.append("PATH=%s:$PATH; export PATH" % shlex.quote(tools))
    return _lines(lines + ["unset BASH_ENV"])


def realtime_tool_script(tool: str, tools: str) -> str:
    """``tools/TOOL``: run the real ``tool`` (the first on ``PATH`` outside
    ``tools``) at real-time priority :data:`REALTIME_TOOL_PRIORITY`.

    A switch runs its management on a CPU of its own; the lab's switches
    share 2 cores with their forwarding and the probes, and under the
    failover benchmark's probes one ``ovs-ofctl`` write waited 0.1-0.3 s
    for a CPU (0.02-0.03 s idle). At real-time priority the urgent rounds
    of a failover were about a quarter shorter (docs/lab.md, "A write's
    time"). Where the kernel refuses real-time priority it runs as
    before."""
    return _lines([
        "#!/bin/sh",
        "# ethercluster.routing lab (written by lab_up): %s at real-time priority, as on a switch's own "
        "management CPU" % tool,
        "chrt -f -p %d $$ >/dev/null 2>&1 || true" % REALTIME_TOOL_PRIORITY,
        "set -f",
        "rest= IFS=:",
        "for d in $PATH; do",
        "  [ \"$d\" = %s ] || rest=\"${rest:+$rest:}$d\"" % shlex.quote(tools),
        "done",
        "unset IFS",
        "PATH=$rest; export PATH",
        "exec %s \"$@\"" % shlex.quote(tool),
    ])


def controller_cgroups(lab: str) -> tuple[str, str]:
    """The cpu cgroup the lab's controller runs in: cgroup v1's, v2's path."""
    name = "ethercluster-lab-%s-controller" % lab
    return "%s/cpu/%s" % (CGROUP_ROOT, name), "%s/%s" % (CGROUP_ROOT, name)


def controller_script(session_priority: str, lab: str) -> str:
    """``controller.sh COMMAND [ARGS]``: run a command as the fabric's
    controller (the failover responder; docs/lab.md, "The controller's
    CPU"). On a real network it has a CPU of its own; here it shares the
    2 cores with 16 switches' forwarding and the probes. So it runs in a
    cpu cgroup of its own at the highest weight (v1 ``cpu.shares``
    262144, v2 ``cpu.weight`` 10000): a cgroup holds every process the
    command starts, also the persistent connection processes
    (``ansible-connection``) that detach into sessions of their own, which
    an autogroup does not (each new session gets an autogroup at nice 0:
    the kept shells' processes waited 9 times longer for a CPU than the
    switches). Where no cpu cgroup can be made, only the session: the
    command runs under ``setsid`` (a session, so an autogroup, of its own;
    ``-w`` returns the command's exit status when setsid has to fork) at
    the switches' session priority (``session_priority``, when the lab set
    one), as before. What the failover benchmark and the molecule scenario
    start the responder with."""
    version1, version2 = controller_cgroups(lab)
    return _lines([
        "#!/bin/sh",
        "# ethercluster.routing lab (written by lab_up): run a command as the fabric's controller, with a CPU",
        "# share of its own (a cpu cgroup that also holds the sessions it starts), in a session (an autogroup)",
        "# of its own at the switches' session priority",
        "g=",
        "if [ -e %s/cpu/cpu.shares ]; then" % CGROUP_ROOT,
        "  g=%s w=cpu.shares v=%d" % (shlex.quote(version1), CONTROLLER_CPU_SHARES),
        "elif grep -qw cpu %s/cgroup.subtree_control 2>/dev/null; then" % CGROUP_ROOT,
        "  g=%s w=cpu.weight v=%d" % (shlex.quote(version2), CONTROLLER_CPU_WEIGHT),
        "fi",
        "if [ -n \"$g\" ] && mkdir -p \"$g\" 2>/dev/null && echo \"$v\" >\"$g/$w\" 2>/dev/null; then",
        "  echo $$ >\"$g/cgroup.procs\" 2>/dev/null || true",
        "fi",
        "exec setsid -w sh -c 'if [ -r \"$1\" ]; then . \"$1\"; fi; shift; exec \"$@\"' sh %s \"$@\""
        % shlex.quote(session_priority),
    ])


# ------------------------------------------------------------------ build
def up_phases(layout: dict[str, Any]) -> list[Phase]:
    """The phases that build the lab of ``layout`` from nothing."""
    return [
        Phase("files", [_files_job(layout)]),
        Phase("namespaces", [[Command(("ip", "-batch", "-"), input=_lines(
            "netns add %s" % ns for ns in all_netns(layout)))]]),
        Phase("ipv6-off", [[Command(("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                                     "net.ipv6.conf.default.disable_ipv6=1"), netns=ns)]
                           for ns in all_netns(layout)]),
        Phase("cables", [[Command(("ip", "-batch", "-"), input=_lines(_cable_lines(layout)))]]),
        Phase("interfaces", [_switch_interfaces_job(layout, sw)
                             for sw in layout["switches"].values()]
              + [_host_interfaces_job(layout, host) for host in layout["hosts"].values()]),
        Phase("daemons", [_daemons_job(layout, name, sw)
                          for name, sw in layout["switches"].items()]),
    ]


def _lines(lines: Iterable[str]) -> str:
    """Lines as one text, each ended by a newline."""
    return "".join(line + "\n" for line in lines)


def _files_job(layout: dict[str, Any]) -> list[Any]:
    """Directories, keys and files of the lab, before any namespace."""
    paths = lab_paths(layout)
    steps: list[Any] = [MakeDirs(layout["state_root"], 0o755), MakeDirs(paths["dir"], 0o700),
                        MakeDirs(SSHD_PRIVSEP_DIR, 0o755)]
    steps.extend(MakeDirs(sw["dir"], 0o700) for sw in layout["switches"].values())
    for path, comment in ((paths["client_key"], "ethercluster-lab-%s" % layout["lab"]),
                          (paths["host_key"], "ethercluster-lab-%s-switches" % layout["lab"])):
        steps.append(Command(("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment,
                              "-f", path)))
    if "cli" in layout:
        steps.append(Command(("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                              "ethercluster-lab-%s-cli" % layout["lab"], "-f", paths["cli_key"])))
    steps.append(CopyFile(paths["client_key"] + ".pub", paths["authorized_keys"], 0o600))
    if "cli" in layout:
        # the CLI key gets the emulated switch CLI instead of a shell (forced command)
        steps.append(AppendAuthorizedKey(paths["authorized_keys"], paths["cli_key"] + ".pub",
                                         cli_key_options(layout)))
    steps.append(WriteKnownHosts(paths["known_hosts"],
                                 tuple(sw["mgmt_address"] for sw in layout["switches"].values()),
                                 paths["host_key"] + ".pub"))
    steps.append(Command(("ovsdb-tool", "create", paths["template_db"], layout["ovs_schema"])))
    if session_niceness(layout):
        steps.append(WriteFile(paths["session_priority"],
                               session_priority_script(session_niceness(layout), paths["session_tools"]), 0o644))
        steps.append(MakeDirs(paths["session_tools"], 0o755))
        steps.extend(WriteFile("%s/%s" % (paths["session_tools"], tool),
                               realtime_tool_script(tool, paths["session_tools"]), 0o755) for tool in REALTIME_TOOLS)
    steps.append(WriteFile(paths["controller"], controller_script(paths["session_priority"], layout["lab"]), 0o755))
    for name, sw in layout["switches"].items():
        steps.append(WriteFile("%s/sshd_config" % sw["dir"], sshd_config(layout, name), 0o600))
        gaps = sw.get("renegotiation_gaps")
        steps.append(WriteFile("%s/%s" % (sw["dir"], GAP_FILE),
                               gap_file_text(max(gaps.values()) if gaps else layout["renegotiation_gap"],
                                             gaps), 0o644))
        if "cli" in sw:
            steps.append(WriteFile("%s/%s" % (sw["dir"], CLI_SETTINGS), cli_settings(layout, name), 0o600))
    steps.append(WriteFile(paths["inventory"], inventory_yaml(layout), 0o600))
    return steps


def _cable_lines(layout: dict[str, Any]) -> list[str]:
    """``ip -batch`` lines that create every veth pair with each end already
    in its namespace, and address the root side of the management veths."""
    switches = layout["switches"]
    lines = []
    for link in layout["links"]:
        a_switch, a_port = link["a"].rsplit(":", 1)
        b_switch, b_port = link["b"].rsplit(":", 1)
        lines.append("link add name %s netns %s type veth peer name %s netns %s" % (
            switches[a_switch]["ports"][a_port]["dev"], switches[a_switch]["netns"],
            switches[b_switch]["ports"][b_port]["dev"], switches[b_switch]["netns"]))
    for host in layout["hosts"].values():
        sw = switches[host["switch"]]
        lines.append("link add name %s netns %s type veth peer name %s address %s netns %s" % (
            sw["ports"][host["port"]]["dev"], sw["netns"], host["dev"], host["mac"],
            host["netns"]))
    gateway = layout["mgmt"]["gateway"]
    for sw in switches.values():
        lines.append("link add name %s type veth peer name %s netns %s"
                     % (sw["root_dev"], sw["mgmt_dev"], sw["netns"]))
        lines.append("address add %s/32 peer %s/32 dev %s"
                     % (gateway, sw["mgmt_address"], sw["root_dev"]))
        lines.append("link set %s up" % sw["root_dev"])
    return lines


def _switch_interfaces_job(layout: dict[str, Any], sw: dict[str, Any]) -> list[Any]:
    lines = ["link set lo up"]
    lines.extend("link set %s up" % port["dev"] for port in sw["ports"].values())
    lines.append("address add %s/32 peer %s/32 dev %s"
                 % (sw["mgmt_address"], layout["mgmt"]["gateway"], sw["mgmt_dev"]))
    lines.append("link set %s up" % sw["mgmt_dev"])
    tc_lines = ["qdisc replace dev %s root tbf %s" % (port["dev"],
                                                      " ".join(tbf_parameters(port["speed_mbps"])))
                for port in sw["ports"].values()]
    return [Command(("ip", "-n", sw["netns"], "-batch", "-"), input=_lines(lines)),
            Command(("tc", "-n", sw["netns"], "-batch", "-"), input=_lines(tc_lines))]


def _host_interfaces_job(layout: dict[str, Any], host: dict[str, Any]) -> list[Any]:
    lines = ["link set lo up",
             "address add %s/%d dev %s" % (host["address"], host["prefixlen"], host["dev"]),
             "link set %s up" % host["dev"]]
    steps = [Command(("ip", "-n", host["netns"], "-batch", "-"), input=_lines(lines)),
             Command(("tc", "-n", host["netns"], "qdisc", "replace", "dev", host["dev"], "root",
                      "tbf", *tbf_parameters(host["speed_mbps"])))]
    if not layout["host_tx_offload"]:
        steps.append(Command(("ethtool", "-K", host["dev"], "tx", "off"), netns=host["netns"]))
    return steps


def _daemons_job(layout: dict[str, Any], name: str, sw: dict[str, Any]) -> list[Any]:
    """Database, switch daemon and SSH server of one switch, in that order."""
    directory = sw["dir"]
    env = ovs_env(directory)
    vsctl = ["ovs-vsctl", "--no-wait", "--", "init"]
    if layout["userspace_tso"]:
        vsctl += ["--", "set", "Open_vSwitch", ".", "other_config:userspace-tso-enable=true"]
    bridge = layout["bridge"]
    vsctl += ["--", "add-br", bridge,
              "--", "set", "Bridge", bridge, "datapath_type=netdev", "fail_mode=secure",
              "stp_enable=false", "rstp_enable=false", "mcast_snooping_enable=false",
              "external_ids:ethercluster-lab=%s" % layout["lab"],
              "external_ids:ethercluster-switch=%s" % name]
    # QoS linux-noop: OVS leaves the port's qdisc (the tbf that emulates the
    # link speed) alone; without it, OVS deletes any root qdisc it finds
    vsctl += ["--", "--id=@noop", "create", "QoS", "type=linux-noop"]
    for port in sw["ports"].values():
        vsctl += ["--", "add-port", bridge, port["dev"],
                  "--", "set", "Interface", port["dev"], "ofport_request=%d" % port["ofport"],
                  "--", "set", "Port", port["dev"], "qos=@noop"]
    return [
        CopyFile(lab_paths(layout)["template_db"], "%s/conf.db" % directory, 0o600),
        Command(("ovsdb-server", "%s/conf.db" % directory,
                 "--remote=punix:%s/db.sock" % directory, "--pidfile", "--detach",
                 "--no-chdir", "--log-file", "-vconsole:off"), env=env, netns=sw["netns"]),
        Command(tuple(vsctl), env=env),
        # --detach returns once the bridge and its ports are configured
        Command(("ovs-vswitchd", "--pidfile", "--detach", "--no-chdir", "--log-file",
                 "-vconsole:off"), env=env, netns=sw["netns"]),
        Command((SSHD, "-f", "%s/sshd_config" % directory), netns=sw["netns"]),
    ]


def cli_key_options(layout: dict[str, Any]) -> str:
    """authorized_keys options of the CLI key: a PTY and nothing else, and
    the emulator as forced command (it finds its switch through the
    session's ``OVS_RUNDIR``, which each switch's sshd sets)."""
    command = "PYTHONPATH=%s PYTHONDONTWRITEBYTECODE=1 exec %s -m %s" % (
        shlex.quote(layout["cli"]["pythonpath"]), shlex.quote(layout["cli"]["python"]), CLI_MODULE)
    return 'restrict,pty,command="%s"' % command.replace("\\", "\\\\").replace('"', '\\"')


def cli_settings(layout: dict[str, Any], name: str) -> str:
    """``cli.json`` of switch ``name``: what its emulated CLI needs."""
    sw = layout["switches"][name]
    return json.dumps({"hostname": name, "platform": sw["cli"]["platform"],
                       "interfaces": sw["cli"]["interfaces"], "bridge": layout["bridge"]},
                      indent=1, sort_keys=True) + "\n"


def sshd_config(layout: dict[str, Any], name: str) -> str:
    """The SSH server configuration of switch ``name``."""
    sw = layout["switches"][name]
    paths = lab_paths(layout)
    variables = dict(ovs_env(sw["dir"]))
    # bash started by sshd as a top-level shell reads ~/.bashrc *instead of*
    # BASH_ENV, even for a command: the machine's own login setup ran (a pyenv
    # init forked ~170 processes, 0.3-0.4 s of every session under load) and
    # the session's priority did not. A bash that sees itself nested (SHLVL 1
    # -> level 2) skips ~/.bashrc and runs BASH_ENV.
    variables["SHLVL"] = "1"
    if session_niceness(layout):
        variables["BASH_ENV"] = paths["session_priority"]
    env = " ".join("%s=%s" % item for item in sorted(variables.items()))
    return "\n".join([
        "# ethercluster.routing lab %s, switch %s (written by lab_up)" % (layout["lab"], name),
        "ListenAddress %s:22" % sw["mgmt_address"],
        "HostKey %s" % paths["host_key"],
        "PidFile %s/sshd.pid" % sw["dir"],
        "AuthorizedKeysFile %s" % paths["authorized_keys"],
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "UseDNS no",
        "X11Forwarding no",
        "PrintMotd no",
        "PrintLastLog no",
        "MaxStartups 64:30:128",
        "MaxSessions 32",
        # the OVS tools of an SSH session find this switch's database and bridge; bash runs
        # BASH_ENV (the session's priority) before the session's command, not ~/.bashrc (SHLVL)
        "SetEnv %s" % env,
        "Subsystem sftp internal-sftp",
        "",
    ])


# --------------------------------------------------------------- teardown
def down_phases(layout: dict[str, Any]) -> list[Phase]:
    """The phases that remove everything :func:`up_phases` may have created
    (each step tolerates a missing object, so a half-built lab goes too)."""
    netns = tuple(all_netns(layout))
    lines = ["netns delete %s" % ns for ns in netns]
    lines.extend("link delete %s" % dev for dev in root_devices(layout))
    return [
        Phase("stop-switches", [[Command(("ovs-appctl", "-T", "5", "-t", "ovs-vswitchd", "exit",
                                          "--cleanup"), env=ovs_env(sw["dir"]), check=False,
                                         timeout=10.0)]
                                for sw in layout["switches"].values()]),
        Phase("stop-processes", [[KillNetnsProcesses(netns)]]),
        # -force: go on after a line fails (an object that was never created)
        Phase("namespaces", [[Command(("ip", "-force", "-batch", "-"), input=_lines(lines),
                                      check=False)]]),
        Phase("files", [[RemoveTree(layout["dir"])]]),
        # the controller's cgroup goes once its processes have ended (else it stays, empty later)
        Phase("controller-cgroup", [[Command(("rmdir", path), check=False)
                                     for path in controller_cgroups(layout["lab"])]]),
    ]


# ------------------------------------------------------------- inventory
def inventory_data(layout: dict[str, Any]) -> dict[str, Any]:
    """The lab's Ansible inventory as data: groups ``switches`` and ``nodes``
    (the names the topology inventory plugin uses), switches reached over
    Ansible's ``ssh`` connection at their management address as root with
    the lab's key, their host key checked against the lab's known_hosts."""
    paths = lab_paths(layout)
    switches = {}
    for name, sw in layout["switches"].items():
        switches[name] = {
            "ansible_host": sw["mgmt_address"],
            "mgmt_address": sw["mgmt_address"],
            "ethercluster_lab_netns": sw["netns"],
            "ethercluster_lab_dir": sw["dir"],
        }
        if "cli" in sw:
            switches[name].update(cli_inventory_vars(layout, sw))
    nodes = {}
    for name, host in layout["hosts"].items():
        nodes[name] = {
            "ip": host["address"],
            "mac": host["mac"],
            "switch": host["switch"],
            "switch_port": host["port"],
            "ethercluster_lab_netns": host["netns"],
            "ethercluster_lab_dev": host["dev"],
        }
    # what Ansible's ssh connection needs: the lab's own known_hosts (strict: a
    # rebuilt lab's key is written there) and only the lab's key
    common = "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes" \
        % paths["known_hosts"]
    return {"all": {
        "vars": {"ethercluster_lab": layout["lab"], "ethercluster_lab_dir": layout["dir"]},
        "children": {
            "switches": {"hosts": switches, "vars": {
                # named, so a transport set in ansible.cfg does not drop the ssh arguments
                "ansible_connection": "ssh",
                "ansible_user": "root",
                "ansible_ssh_private_key_file": paths["client_key"],
                "ansible_ssh_common_args": common,
                # a kept shell (the failover responder's pushes) goes over paramiko, which reads only
                # ~/.ssh/known_hosts; the lab's host key is in the lab's own file (as for the CLI switches)
                "ansible_paramiko_host_key_checking": False,
                # the switches run this machine's system Python (OVS depends on it)
                "ansible_python_interpreter": "/usr/bin/python3",
                "ovs_bridge": layout["bridge"]}},
            "nodes": {"hosts": nodes},
        }}}


def cli_inventory_vars(layout: dict[str, Any], sw: dict[str, Any]) -> dict[str, Any]:
    """Host variables of a switch with an emulated CLI: reached over
    ``ansible.netcommon.network_cli`` (paramiko) with the CLI key, which
    gets the emulator, not a shell; OS6's ``enable`` through become (VRP
    has no enable level). Host keys are not checked (the lab's addresses
    sit on local veths and change host key with every build; paramiko only
    reads ~/.ssh/known_hosts)."""
    enable = sw["cli"]["platform"] == "dell_os6"
    return {
        "ansible_connection": "ansible.netcommon.network_cli",
        "ansible_network_os": CLI_NETWORK_OS[sw["cli"]["platform"]],
        "ansible_network_cli_ssh_type": "paramiko",
        "ansible_ssh_private_key_file": lab_paths(layout)["cli_key"],
        "ansible_become": enable,
        **({"ansible_become_method": "ansible.netcommon.enable"} if enable else {}),
        "ansible_host_key_checking": False,
        # each login starts a Python that imports the collection's parsers (jinja2, netaddr):
        # ~1 s on an idle machine, 12-20 s measured at load 90 on 2 cores, past network_cli's
        # 30 s defaults once the first command waits behind it (a deploy failed so)
        "ansible_connect_timeout": CLI_TIMEOUT_S,
        "ansible_command_timeout": CLI_TIMEOUT_S,
        # network_cli waits this long after every prompt it matches, in case more output follows:
        # 0.1 s by default, most of a push's time (a PVID flip is ~17 lines), and a SIGALRM timer
        # that can deadlock paramiko. The emulator writes each answer and the prompt after it in
        # one write, so nothing follows a prompt: no wait, no timer.
        "ansible_buffer_read_timeout": CLI_BUFFER_READ_TIMEOUT_S,
        "ethercluster_cli_platform": sw["cli"]["platform"],
    }


def inventory_yaml(layout: dict[str, Any]) -> str:
    """:func:`inventory_data` as YAML text (block style, JSON-quoted scalars)."""
    header = ("# Ansible inventory of the ethercluster.routing lab %r, written by lab_up.\n"
              "# Use it beside the topology: -i TOPOLOGY.yml -i %s\n"
              % (layout["lab"], lab_paths(layout)["inventory"]))
    return header + "---\n" + _yaml(inventory_data(layout), 0)


def _yaml(value: Any, indent: int) -> str:
    pad = "  " * indent
    if not value:
        return pad + "{}\n"
    text = ""
    for key, item in value.items():
        if isinstance(item, dict):
            text += "%s%s:\n%s" % (pad, key, _yaml(item, indent + 1))
        else:
            text += "%s%s: %s\n" % (pad, key, json.dumps(item))
    return text


def summary(layout: dict[str, Any]) -> dict[str, Any]:
    """What the lab is made of, for a task's result."""
    return {
        "lab": layout["lab"],
        "dir": layout["dir"],
        "inventory": lab_paths(layout)["inventory"],
        "switches": {name: {"mgmt_address": sw["mgmt_address"], "netns": sw["netns"],
                            "ports": list(sw["ports"])}
                     for name, sw in layout["switches"].items()},
        "hosts": {name: {"address": host["address"], "netns": host["netns"],
                         "switch": host["switch"], "port": host["port"]}
                  for name, host in layout["hosts"].items()},
        "namespaces": len(all_netns(layout)),
        "links": len(layout["links"]),
    }
