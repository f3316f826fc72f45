"""The lab's layout and command plans (pure; nothing is run here — the real
lab is built by tests/integration/lab/test_lab_wire.py)."""

import ipaddress
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"


@pytest.fixture(scope="module")
def ring3():
    return load_topology(FIXTURES / "ring3_topology.yml")


@pytest.fixture(scope="module")
def torus():
    return topology_from_data({"name": "t", "generate": {"kind": "torus", "dims": [4, 4],
                                                         "links_per_neighbor": 2}})


def steps(phase):
    return [step for job in phase.jobs for step in job]


def phase(phases, name):
    return next(p for p in phases if p.name == name)


# ------------------------------------------------------------------ layout
def test_ring3_layout_names_and_addresses(ring3):
    layout = lab_layout(ring3, name="r3", state_root="/run/ecl-test")
    assert layout["dir"] == "/run/ecl-test/r3"
    sw0 = layout["switches"]["sw0"]
    assert sw0["netns"] == "ec-r3-sw0"
    assert sw0["dir"] == "/run/ecl-test/r3/sw0"
    assert list(sw0["ports"]) == ["1", "2", "3", "4"]
    assert sw0["ports"]["2"] == {"dev": "p2", "ofport": 2, "speed_mbps": 1000, "peer": "sw1:2"}
    assert sw0["ports"]["4"]["peer"] == "h0b"
    assert layout["mgmt"] == {"network": "198.51.100.0/24", "gateway": "198.51.100.1"}
    assert [sw["mgmt_address"] for sw in layout["switches"].values()] == \
        ["198.51.100.2", "198.51.100.3", "198.51.100.4"]
    assert layout["hosts"]["h1"] == {
        "netns": "ec-r3-h1", "dev": "eth0", "mac": "02:00:00:00:00:03", "address": "10.42.0.3",
        "prefixlen": 16, "switch": "sw1", "port": "1", "speed_mbps": 1000}
    assert layout["links"][1] == {"a": "sw1:3", "b": "sw2:2", "speed_mbps": 1000, "state": "up"}


def test_root_interface_names_fit_and_differ_between_labs(torus):
    first = lab_layout(torus, name="a" * 32)
    second = lab_layout(torus, name="b")
    names = plan.root_devices(first) + plan.root_devices(second)
    assert len(set(names)) == len(names) == 32
    assert max(len(name) for name in names) <= 15


def test_layout_is_deterministic(torus):
    assert lab_layout(torus) == lab_layout(torus)


def test_topology_mgmt_address_is_kept_only_inside_the_mgmt_network():
    topology = topology_from_data({
        "switches": {"s0": {"mgmt_address": "198.51.100.50"}, "s1": {"mgmt_address": "10.1.1.1"},
                     "s2": {}},
        "links": [{"a": "s0:1", "b": "s1:1"}, {"a": "s1:2", "b": "s2:1"}]})
    layout = lab_layout(topology)
    assert [sw["mgmt_address"] for sw in layout["switches"].values()] == \
        ["198.51.100.50", "198.51.100.2", "198.51.100.3"]


def test_host_addresses_come_from_the_topology_or_the_host_network():
    topology = topology_from_data({
        "switches": {"s0": {}, "s1": {}}, "links": [{"a": "s0:1", "b": "s1:1"}],
        "hosts": {"n0": {"switch": "s0", "port": "2", "mac": "02:00:00:00:00:01",
                         "ip": "203.0.113.1"},
                  "n1": {"switch": "s1", "port": "2", "mac": "02:00:00:00:00:02"}}})
    layout = lab_layout(topology, host_network="203.0.113.0/24")
    assert layout["hosts"]["n0"]["address"] == "203.0.113.1"
    assert layout["hosts"]["n1"]["address"] == "203.0.113.2"
    with pytest.raises(plan.LabError, match=r"hosts.n0.ip: 203.0.113.1 is not a host address "
                                            r"of the lab's host network 10.42.0.0/16"):
        lab_layout(topology)


@pytest.mark.parametrize("options, message", [
    ({"name": "bad name"}, "name: a lab name"),
    ({"name": ""}, "name: a lab name"),
    ({"bridge": "br 0"}, "bridge:"),
    ({"state_root": "relative"}, "state_root:"),
    ({"state_root": "/"}, "state_root:"),
    ({"renegotiation_gap": -1}, "renegotiation_gap:"),
    ({"renegotiation_gap": "soon"}, "renegotiation_gap:"),
    ({"host_speed_mbps": 0}, "host_speed_mbps:"),
    ({"mgmt_network": "198.51.100.0/30"}, "mgmt_network (-e lab_mgmt_network): 198.51.100.0/30 has room for 1 switches"),
    ({"mgmt_network": "198.51.100.1/24"}, "mgmt_network (-e lab_mgmt_network): '198.51.100.1/24' is not"),
    ({"mgmt_network": "2001:db8::/64"}, "mgmt_network (-e lab_mgmt_network): needs an IPv4 network"),
    ({"host_network": "10.0.0.0/31"}, "host_network (-e lab_host_network): needs an IPv4 network"),
    ({"host_network": "198.51.100.0/25"}, "overlap"),
])
def test_bad_options_name_the_option(ring3, options, message):
    with pytest.raises(plan.LabError) as excinfo:
        lab_layout(ring3, **options)
    assert message in str(excinfo.value)
    assert isinstance(excinfo.value, EtherclusterError)


def test_host_network_too_small_is_refused():
    topology = topology_from_data({"generate": {"kind": "mesh", "dims": [2, 2],
                                                "hosts_per_switch": 2}})
    with pytest.raises(plan.LabError, match=r"host_network \(-e lab_host_network\): 10.9.9.0/29 has room "
                                            "for 6 hosts, the fabric has 8"):
        lab_layout(topology, host_network="10.9.9.0/29")


# -------------------------------------------------------------------- plan
def test_phases_come_in_the_order_the_quirks_need(ring3):
    names = [p.name for p in plan.up_phases(lab_layout(ring3))]
    assert names == ["files", "namespaces", "ipv6-off", "cables", "interfaces", "daemons"]


def test_ipv6_is_disabled_in_every_namespace(ring3):
    layout = lab_layout(ring3)
    ipv6 = steps(phase(plan.up_phases(layout), "ipv6-off"))
    assert sorted(step.netns for step in ipv6) == sorted(plan.all_netns(layout))
    for step in ipv6:
        assert "net.ipv6.conf.all.disable_ipv6=1" in step.argv
        assert "net.ipv6.conf.default.disable_ipv6=1" in step.argv


def test_every_data_port_is_created_inside_its_namespace(ring3):
    layout = lab_layout(ring3, name="r3")
    (cables,) = steps(phase(plan.up_phases(layout), "cables"))
    lines = cables.input.splitlines()
    veths = [line for line in lines if line.startswith("link add")]
    assert len(veths) == len(layout["links"]) + len(layout["hosts"]) + len(layout["switches"])
    root = set(plan.root_devices(layout))
    for line in veths:
        words = line.split()
        first = words[words.index("name") + 1]
        peer = words[words.index("peer") + 2]
        # both ends of a data veth have a netns; only management veths keep
        # their first end (ec<tag>m<index>) in the root namespace
        if first in root:
            assert peer == "mgmt0" and words.count("netns") == 1
        else:
            assert words.count("netns") == 2, line
    assert "link add name p1 netns ec-r3-sw1 type veth peer name eth0 address " \
           "02:00:00:00:00:03 netns ec-r3-h1" in lines
    assert "address add 198.51.100.1/32 peer 198.51.100.3/32 dev %s" \
           % layout["switches"]["sw1"]["root_dev"] in lines


def test_interfaces_get_speeds_and_addresses(ring3):
    layout = lab_layout(ring3, name="r3", host_tx_offload=False)
    jobs = phase(plan.up_phases(layout), "interfaces").jobs
    by_netns = {job[0].argv[2]: job for job in jobs}
    ip_sw0, tc_sw0 = by_netns["ec-r3-sw0"]
    assert "address add 198.51.100.2/32 peer 198.51.100.1/32 dev mgmt0" in ip_sw0.input
    assert tc_sw0.input.count("tbf rate 1000mbit") == 4
    host = by_netns["ec-r3-h0a"]
    assert "address add 10.42.0.1/16 dev eth0" in host[0].input
    assert host[1].argv[-6:] == ("rate", "1000mbit", "burst", "131072", "latency", "20ms")
    assert host[2].argv == ("ethtool", "-K", "eth0", "tx", "off")
    assert host[2].netns == "ec-r3-h0a"


def test_tbf_bucket_holds_a_tso_segment_and_a_millisecond():
    assert plan.tbf_parameters(100)[:4] == ["rate", "100mbit", "burst", "131072"]
    assert plan.tbf_parameters(10000)[3] == str(10000 * 1000 * 1000 // 8 // 1000)
    # the OVS platform owns port speeds (tc tbf); the lab uses the same buckets
    with pytest.raises(ovs.OvsError, match="speed_mbps"):
        plan.tbf_parameters(0)


def test_each_switch_gets_its_own_daemons_tso_first(ring3):
    layout = lab_layout(ring3, name="r3")
    jobs = phase(plan.up_phases(layout), "daemons").jobs
    assert len(jobs) == 3
    for name, job in zip(layout["switches"], jobs):
        sw = layout["switches"][name]
        copy, ovsdb, vsctl, vswitchd, sshd = job
        assert copy.dst == sw["dir"] + "/conf.db"
        for command in (ovsdb, vsctl, vswitchd):
            assert command.env == {"OVS_RUNDIR": sw["dir"], "OVS_DBDIR": sw["dir"],
                                   "OVS_LOGDIR": sw["dir"]}
        assert ovsdb.netns == vswitchd.netns == sshd.netns == sw["netns"]
        args = list(vsctl.argv)
        assert "other_config:userspace-tso-enable=true" in args
        for setting in ("datapath_type=netdev", "fail_mode=secure", "stp_enable=false",
                        "rstp_enable=false"):
            assert setting in args
        for port in sw["ports"].values():
            assert "ofport_request=%d" % port["ofport"] in args
            assert args[args.index(port["dev"]) - 2] == "add-port"
        assert args.count("qos=@noop") == len(sw["ports"])
        assert "type=linux-noop" in args
        assert vswitchd.argv[0] == "ovs-vswitchd"
        assert sshd.argv == (plan.SSHD, "-f", sw["dir"] + "/sshd_config")
    no_tso = phase(plan.up_phases(lab_layout(ring3, userspace_tso=False)), "daemons").jobs
    assert "other_config:userspace-tso-enable=true" not in no_tso[0][2].argv


def test_sshd_config_is_per_switch(ring3):
    layout = lab_layout(ring3, name="r3")
    files = steps(phase(plan.up_phases(layout), "files"))
    assert files.index(plan.MakeDirs(plan.SSHD_PRIVSEP_DIR, 0o755)) < len(files)
    configs = {step.path: step.content for step in files
               if isinstance(step, plan.WriteFile) and step.path.endswith("sshd_config")}
    assert len(configs) == 3
    text = configs["/run/ethercluster-lab/r3/sw2/sshd_config"]
    assert "ListenAddress 198.51.100.4:22\n" in text
    assert "HostKey /run/ethercluster-lab/r3/ssh_host_ed25519_key\n" in text
    assert "PidFile /run/ethercluster-lab/r3/sw2/sshd.pid\n" in text
    assert "AuthorizedKeysFile /run/ethercluster-lab/r3/authorized_keys\n" in text
    assert "SetEnv BASH_ENV=/run/ethercluster-lab/r3/session-priority.sh OVS_DBDIR=/run/ethercluster-lab/r3/sw2 " \
        "OVS_LOGDIR=" in text
    gap = [step for step in files if isinstance(step, plan.WriteFile)
           and step.path.endswith(plan.GAP_FILE)]
    assert {step.content for step in gap} == {"0\n"}
    known = next(step for step in files if isinstance(step, plan.WriteKnownHosts))
    assert known.addresses == ("198.51.100.2", "198.51.100.3", "198.51.100.4")


def _written(topology, path, niceness=-7):
    """The WriteFile step of ``path`` in the build of lab r3 (sshd at ``niceness``)."""
    layout = lab_layout(topology, name="r3", daemon_niceness={"sshd.pid": niceness})
    files = steps(phase(plan.up_phases(layout), "files"))
    return next(step for step in files if isinstance(step, plan.WriteFile) and step.path == path)


def test_ssh_sessions_get_the_sshds_priority_through_bash_env(ring3, tmp_path):
    # sshd starts each session at nice 0 in an autogroup of its own: the script bash runs first
    # (BASH_ENV) gives it the sshd's nice value, thread and autogroup
    script = _written(ring3, "/run/ethercluster-lab/r3/session-priority.sh")
    assert script.mode == 0o644
    assert "renice -n -7 -p $$" in script.content and "echo -7 2>/dev/null >/proc/self/autogroup" in script.content
    # the script runs as written under a shell that may not change priorities: it fails quietly
    path = tmp_path / "s.sh"
    path.write_text(script.content.replace("/proc/self/autogroup", str(tmp_path / "autogroup")))
    run = subprocess.run(["bash", "-c", "echo done"], env={"BASH_ENV": str(path), "PATH": os.environ["PATH"]},
                         capture_output=True, text=True, check=True)
    assert run.stdout == "done\n" and run.stderr == ""
    assert (tmp_path / "autogroup").read_text() == "-7\n"
    calm = lab_layout(ring3, name="r3", daemon_niceness={"ovs-vswitchd.pid": -10})
    calm_files = steps(phase(plan.up_phases(calm), "files"))
    assert not any(isinstance(step, plan.WriteFile) and step.path.endswith(plan.SESSION_PRIORITY_FILE)
                   for step in calm_files)
    assert all("BASH_ENV" not in step.content for step in calm_files
               if isinstance(step, plan.WriteFile) and step.path.endswith("sshd_config"))


def test_ovs_ofctl_runs_at_real_time_priority_in_the_sessions(ring3, tmp_path):
    # a switch's management CPU is its own: the sessions find the lab's ovs-ofctl first on PATH, which
    # sets itself to real-time priority and runs the real one (the first outside its directory)
    priority = _written(ring3, "/run/ethercluster-lab/r3/session-priority.sh")
    assert "PATH=/run/ethercluster-lab/r3/bin:$PATH; export PATH" in priority.content
    wrapper = _written(ring3, "/run/ethercluster-lab/r3/bin/ovs-ofctl")
    assert wrapper.mode == 0o755
    assert "chrt -f -p %d $$" % plan.REALTIME_TOOL_PRIORITY in wrapper.content
    layout = lab_layout(ring3, name="r3", daemon_niceness={"sshd.pid": -7})
    files = steps(phase(plan.up_phases(layout), "files"))
    assert files.index(plan.MakeDirs("/run/ethercluster-lab/r3/bin", 0o755)) < files.index(wrapper)
    # run as written: the tools directory first on PATH, a "real" ovs-ofctl further on, which says
    # its arguments, its scheduling policy (chrt -p: SCHED_FIFO where the kernel allowed it) and PATH
    tools, real = tmp_path / "bin", tmp_path / "real"
    tools.mkdir()
    real.mkdir()
    (tools / "ovs-ofctl").write_text(wrapper.content.replace("/run/ethercluster-lab/r3/bin", str(tools)))
    (tools / "ovs-ofctl").chmod(0o755)
    (real / "ovs-ofctl").write_text('#!/bin/sh\necho "$*"\nchrt -p $$\necho "$PATH"\n')
    (real / "ovs-ofctl").chmod(0o755)
    path = "%s:%s:%s:%s" % (tools, real, tools, os.environ["PATH"])
    run = subprocess.run(["ovs-ofctl", "dump-flows", "br0", "table=2"], env={"PATH": path},
                         capture_output=True, text=True, check=True)
    said = run.stdout.splitlines()
    assert said[0] == "dump-flows br0 table=2"
    allowed = subprocess.run(["chrt", "-f", "1", "true"], capture_output=True, check=False).returncode == 0
    assert ("SCHED_FIFO" in said[1]) == allowed
    assert said[-1] == "%s:%s" % (real, os.environ["PATH"])   # its own directory gone, every other kept
    # without a session priority the sessions keep their PATH and the lab has no tools directory
    calm = lab_layout(ring3, name="r3", daemon_niceness={"ovs-vswitchd.pid": -10})
    assert not any(getattr(step, "path", "").startswith("/run/ethercluster-lab/r3/bin")
                   for step in steps(phase(plan.up_phases(calm), "files")))


def _run_controller(script, tmp_path, cgroups):
    """controller.sh as written, the lab's priority script replaced by one
    that says it ran and the cgroup file systems by ``cgroups``; the
    command prints its session and process ids and exits 3."""
    (tmp_path / "priority.sh").write_text("echo priority\n")
    path = tmp_path / "controller.sh"
    path.write_text(script.content.replace("/run/ethercluster-lab/r3/session-priority.sh",
                                           str(tmp_path / "priority.sh")).replace("/sys/fs/cgroup", str(cgroups)))
    path.chmod(0o755)
    return subprocess.run([str(path), "sh", "-c", 'echo "$(ps -o sid= -p $$) $$"; exit 3'],
                          capture_output=True, text=True, check=False)


def test_the_controller_runs_in_a_session_of_its_own_at_the_session_priority(ring3, tmp_path):
    script = _written(ring3, "/run/ethercluster-lab/r3/controller.sh")
    assert script.mode == 0o755
    run = _run_controller(script, tmp_path, tmp_path / "no-cgroups")
    said = run.stdout.split()
    assert said[0] == "priority"
    assert said[1] == said[2]          # the command leads a session (so an autogroup) of its own
    assert run.returncode == 3         # its exit status comes back
    assert not (tmp_path / "no-cgroups").exists()
    # without a priority set the command still runs in a session of its own
    calm = lab_layout(ring3, name="r3", daemon_niceness={"ovs-vswitchd.pid": -10})
    assert any(isinstance(step, plan.WriteFile) and step.path.endswith(plan.CONTROLLER_FILE)
               for step in steps(phase(plan.up_phases(calm), "files")))


@pytest.mark.parametrize("version", [1, 2])
def test_the_controller_gets_a_cpu_cgroup_of_its_own_at_the_highest_weight(ring3, tmp_path, version):
    # a cgroup holds the sessions the controller starts (ansible-connection detaches into one),
    # which an autogroup does not
    script = _written(ring3, "/run/ethercluster-lab/r3/controller.sh")
    cgroups = tmp_path / "cgroup"
    if version == 1:
        (cgroups / "cpu").mkdir(parents=True)
        (cgroups / "cpu" / "cpu.shares").write_text("1024\n")
        made, weight = cgroups / "cpu" / "ethercluster-lab-r3-controller", ("cpu.shares", "262144")
    else:
        cgroups.mkdir()
        (cgroups / "cgroup.subtree_control").write_text("cpuset cpu io memory pids\n")
        made, weight = cgroups / "ethercluster-lab-r3-controller", ("cpu.weight", "10000")
    run = _run_controller(script, tmp_path, cgroups)
    said = run.stdout.split()
    assert run.returncode == 3 and said[0] == "priority"
    assert (made / weight[0]).read_text() == weight[1] + "\n"
    assert (made / "cgroup.procs").read_text() == said[2] + "\n"      # the command's own process
    # lab_down removes it (both places: which one the lab used is not recorded)
    removed = [step.argv for step in steps(phase(plan.down_phases(lab_layout(ring3, name="r3")), "controller-cgroup"))]
    assert removed == [("rmdir", "/sys/fs/cgroup/cpu/ethercluster-lab-r3-controller"),
                       ("rmdir", "/sys/fs/cgroup/ethercluster-lab-r3-controller")]


def _set_env(text):
    line = next(line for line in text.splitlines() if line.startswith("SetEnv "))
    return dict(item.split("=", 1) for item in line.split()[1:])


def test_ssh_sessions_skip_the_machines_bashrc_and_still_run_bash_env(ring3, tmp_path):
    # sshd runs a command through the login shell, bash -c, with SSH_CLIENT set and no
    # terminal: a top-level bash then reads ~/.bashrc (on the lab's machine a pyenv
    # init, ~170 processes per session) *instead of* BASH_ENV, the session's priority;
    # the switch's SetEnv makes it skip ~/.bashrc and run BASH_ENV
    variables = _set_env(_written(ring3, "/run/ethercluster-lab/r3/sw2/sshd_config").content)
    (tmp_path / ".bashrc").write_text("echo bashrc\n")
    (tmp_path / "env.sh").write_text("echo bash_env\n")
    session = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "SSH_CLIENT": "198.51.100.1 40000 22",
               "BASH_ENV": str(tmp_path / "env.sh")}

    def run(extra):
        return subprocess.run(["bash", "-c", "echo command"], env=dict(session, **extra), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=True).stdout.split()

    assert run({}) == ["bashrc", "command"]     # what a session did before
    assert run({"SHLVL": variables["SHLVL"]}) == ["bash_env", "command"]


def test_teardown_removes_exactly_what_the_build_creates(ring3):
    layout = lab_layout(ring3, name="r3")
    down = plan.down_phases(layout)
    assert [p.name for p in down] == ["stop-switches", "stop-processes", "namespaces", "files", "controller-cgroup"]
    (kill,) = steps(phase(down, "stop-processes"))
    assert set(kill.netns) == set(plan.all_netns(layout))
    (delete,) = steps(phase(down, "namespaces"))
    assert delete.argv == ("ip", "-force", "-batch", "-") and not delete.check
    up_created = set()
    for step in steps(phase(plan.up_phases(layout), "namespaces")):
        up_created |= {line.split()[-1] for line in step.input.splitlines()}
    deleted = {line.split()[-1] for line in delete.input.splitlines()}
    assert deleted == up_created | set(plan.root_devices(layout))
    assert steps(phase(down, "files")) == [plan.RemoveTree("/run/ethercluster-lab/r3")]


def test_inventory_lists_switches_with_ssh_settings_and_nodes(ring3):
    layout = lab_layout(ring3, name="r3")
    data = yaml.safe_load(plan.inventory_yaml(layout))
    assert data == plan.inventory_data(layout)
    switches = data["all"]["children"]["switches"]
    assert switches["hosts"]["sw2"]["ansible_host"] == "198.51.100.4"
    assert switches["vars"]["ansible_user"] == "root"
    assert switches["vars"]["ansible_ssh_private_key_file"] == "/run/ethercluster-lab/r3/id_ed25519"
    assert "UserKnownHostsFile=/run/ethercluster-lab/r3/known_hosts" in \
        switches["vars"]["ansible_ssh_common_args"]
    # paramiko (a kept shell) cannot read the lab's known_hosts: only its checking is off, ssh's stays strict
    assert switches["vars"]["ansible_paramiko_host_key_checking"] is False
    assert "ansible_host_key_checking" not in switches["vars"]
    nodes = data["all"]["children"]["nodes"]["hosts"]
    assert nodes["h2"]["ethercluster_lab_netns"] == "ec-r3-h2"
    assert ipaddress.ip_address(nodes["h2"]["ip"]) in ipaddress.ip_network("10.42.0.0/16")


def test_cli_switches_are_reached_over_network_cli_without_its_wait_after_each_prompt():
    mixed = topology_from_data({"name": "m2", "switches": {"sw0": {}, "sw1": {"platform": "dell_os6"}},
                                "links": [{"a": "sw0:2", "b": "sw1:2"}]})
    hosts = plan.inventory_data(lab_layout(mixed, name="m2"))["all"]["children"]["switches"]["hosts"]
    assert hosts["sw1"]["ansible_connection"] == "ansible.netcommon.network_cli"
    # network_cli's default 0.1 s after every matched prompt is most of a CLI push, and its SIGALRM
    # timer can deadlock paramiko; the emulator sends each answer with its prompt in one write: 0,
    # the value that arms no timer at all
    assert hosts["sw1"]["ansible_buffer_read_timeout"] == plan.CLI_BUFFER_READ_TIMEOUT_S == 0.0
    assert "ansible_buffer_read_timeout" not in hosts["sw0"] and "ansible_connection" not in hosts["sw0"]


def test_commands_print_as_shell_lines():
    command = plan.Command(("ovs-vsctl", "set", "a b"), env={"OVS_RUNDIR": "/x"}, netns="ns1")
    assert str(command) == "OVS_RUNDIR=/x ip netns exec ns1 ovs-vsctl set 'a b'"
