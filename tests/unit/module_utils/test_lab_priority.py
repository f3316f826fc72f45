"""The scheduling priority of the lab's switch daemons (docs/lab.md, "Under
load"): the layout carries a nice value per daemon, lab_up gives it to
every thread of each daemon and to the daemon's autogroup (a kernel with
autogroups shares the CPUs between sessions first, and each daemon leads a
session of its own). The renicing is tested on real child processes
(raising a nice value needs no root)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import DAEMON_NICENESS, lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.plan import LabError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"


@pytest.fixture(scope="module")
def ring3():
    return load_topology(FIXTURES / "ring3_topology.yml")


def test_the_switch_daemons_go_before_other_work_and_the_pushes_with_them():
    # ovs-vswitchd forwards (its main loop reads the ports); ovsdb-server and sshd (whose
    # sessions run the pushes and the carrier polls) are the control plane, the sessions at the
    # forwarding's priority (a switch's management CPU is its own); the probe agents run at +10
    assert DAEMON_NICENESS == {"ovs-vswitchd.pid": -10, "ovsdb-server.pid": -5, "sshd.pid": -10}
    assert set(DAEMON_NICENESS) == set(runner.DAEMON_PIDFILES)


def test_the_layout_carries_the_niceness_and_its_hash_changes_with_it(ring3):
    layout = lab_layout(ring3, name="r3")
    assert layout["daemon_niceness"] == {"ovs-vswitchd.pid": -10, "ovsdb-server.pid": -5, "sshd.pid": -10}
    other = lab_layout(ring3, name="r3", daemon_niceness={"ovs-vswitchd.pid": 0})
    assert other["daemon_niceness"] == {"ovs-vswitchd.pid": 0}
    # a lab built at other priorities is rebuilt by the next lab_up
    assert runner.layout_hash(layout) != runner.layout_hash(other)


@pytest.mark.parametrize("niceness, message", [
    ({"ovs-vswitchd.pid": -21}, "daemon_niceness: ovs-vswitchd.pid: a nice value is a whole number from -20 to 19, got -21"),
    ({"sshd.pid": 20}, "daemon_niceness: sshd.pid: a nice value is a whole number from -20 to 19, got 20"),
    ({"sshd.pid": True}, "daemon_niceness: sshd.pid: a nice value is a whole number from -20 to 19, got True"),
    ({"sshd.pid": "-5"}, "daemon_niceness: sshd.pid: a nice value is a whole number from -20 to 19, got '-5'"),
    ({"dnsmasq.pid": 0}, "daemon_niceness: 'dnsmasq.pid' is not a switch daemon's pid file"),
    ([-10], "daemon_niceness: must be a mapping of"),
])
def test_bad_niceness_is_refused_naming_the_daemon(ring3, niceness, message):
    with pytest.raises(LabError) as raised:
        lab_layout(ring3, name="r3", daemon_niceness=niceness)
    assert message in str(raised.value)


def test_every_thread_is_reniced_and_a_thread_that_ended_is_skipped():
    calls = []

    def setpriority(which, tid, value):
        calls.append((which, tid, value))
        if tid == 12:
            raise ProcessLookupError(tid)

    done = runner.set_niceness(10, -10, threads=lambda pid: [10, 11, 12, 13], setpriority=setpriority)
    assert done == [10, 11, 13]
    assert calls == [(runner.os.PRIO_PROCESS, tid, -10) for tid in (10, 11, 12, 13)]


def _layout_with_pidfiles(tmp_path, niceness, pids):
    switches = {}
    for name, pid in pids.items():
        directory = tmp_path / name
        directory.mkdir()
        for pidfile in niceness:
            if pid is not None:
                (directory / pidfile).write_text("%d\n" % pid)
        switches[name] = {"dir": str(directory)}
    return {"switches": switches, "daemon_niceness": niceness}


def test_each_daemon_of_each_switch_gets_its_value(tmp_path):
    layout = _layout_with_pidfiles(tmp_path, {"ovs-vswitchd.pid": -10, "sshd.pid": -5}, {"sw0": 100, "sw1": 200})
    calls = []

    def renice(pid, value):
        calls.append(("threads", pid, value))
        return [pid, pid + 1] if value == -10 else [pid]

    def regroup(pid, value):
        calls.append(("autogroup", pid, value))
        return pid == 100

    done = runner.prioritize_daemons(layout, renice=renice, regroup=regroup)
    assert sorted(calls) == [(kind, pid, value) for kind in ("autogroup", "threads")
                             for pid in (100, 200) for value in (-10, -5)]
    assert done == {"sw0": {"ovs-vswitchd.pid": {"threads": 2, "autogroup": True},
                            "sshd.pid": {"threads": 1, "autogroup": True}},
                    "sw1": {"ovs-vswitchd.pid": {"threads": 2, "autogroup": False},
                            "sshd.pid": {"threads": 1, "autogroup": False}}}


def test_a_daemon_that_cannot_be_reniced_is_named(tmp_path):
    layout = _layout_with_pidfiles(tmp_path, {"sshd.pid": -5}, {"sw0": 100})

    def refused(pid, value):
        raise PermissionError(1, "Operation not permitted")

    with pytest.raises(LabError) as raised:
        runner.prioritize_daemons(layout, renice=refused)
    assert str(raised.value) == "sw0: cannot give sshd (pid 100) nice -5: [Errno 1] Operation not permitted"
    with pytest.raises(LabError) as raised:
        runner.prioritize_daemons(layout, renice=lambda pid, value: [pid], regroup=refused)
    assert str(raised.value) == "sw0: cannot give sshd (pid 100) nice -5: [Errno 1] Operation not permitted"
    with pytest.raises(LabError) as raised:
        runner.prioritize_daemons(layout, renice=lambda pid, value: [])
    assert str(raised.value) == "sw0: sshd (pid 100) is gone: cannot give it nice -5"
    missing = _layout_with_pidfiles(tmp_path, {"ovs-vswitchd.pid": -10}, {"sw1": None})
    with pytest.raises(LabError) as raised:
        runner.prioritize_daemons(missing, renice=lambda pid, value: [pid], regroup=lambda pid, value: True)
    assert str(raised.value) == "sw1: ovs-vswitchd has no pid: cannot give it nice -10"


def _nice_of(pid, tid):
    fields = Path("/proc/%d/task/%d/stat" % (pid, tid)).read_text().rpartition(")")[2].split()
    return int(fields[16])  # field 19 of stat(5), counted after the command name


def test_a_real_process_gets_the_value_on_every_thread_and_on_threads_it_starts_later():
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""\
        import sys, threading
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
        print("ready", flush=True)
        sys.stdin.readline()              # reniced meanwhile
        threading.Thread(target=stop.wait, daemon=True).start()
        print("started", flush=True)
        sys.stdin.readline()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        threads = runner.thread_ids(child.pid)
        assert len(threads) == 2 and threads[0] == child.pid
        # raising a nice value needs no privilege; lab_up lowers it as root
        assert runner.set_niceness(child.pid, 7) == threads
        assert [_nice_of(child.pid, tid) for tid in threads] == [7, 7]
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "started\n"
        later = runner.thread_ids(child.pid)
        assert len(later) == 3
        assert [_nice_of(child.pid, tid) for tid in later] == [7, 7, 7]
    finally:
        child.kill()
        child.wait()
    assert runner.thread_ids(child.pid) == []


def _fake_proc(tmp_path, pid, session, enabled="1"):
    """A /proc with process ``pid`` (session ``session``) and the autogroup switch."""
    (tmp_path / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
    (tmp_path / "sys" / "kernel" / "sched_autogroup_enabled").write_text(enabled + "\n")
    (tmp_path / str(pid)).mkdir()
    (tmp_path / str(pid) / "stat").write_text("%d (ovs-vswitchd) S 1 %d %d 0 -1 4194560\n" % (pid, pid, session))
    (tmp_path / str(pid) / "autogroup").write_text("/autogroup-42 nice 0\n")
    return str(tmp_path)


def test_the_autogroup_is_set_only_for_a_daemon_that_leads_its_session(tmp_path):
    proc = _fake_proc(tmp_path / "own", 300, 300)
    assert runner.set_autogroup_niceness(300, -10, proc=proc)
    assert (tmp_path / "own" / "300" / "autogroup").read_text() == "-10\n"
    # a daemon in its starter's session shares that group: it is left alone
    proc = _fake_proc(tmp_path / "shared", 301, 250)
    assert not runner.set_autogroup_niceness(301, -10, proc=proc)
    assert (tmp_path / "shared" / "301" / "autogroup").read_text() == "/autogroup-42 nice 0\n"
    # autogroups off: the threads' nice values decide
    proc = _fake_proc(tmp_path / "off", 302, 302, enabled="0")
    assert not runner.set_autogroup_niceness(302, -10, proc=proc)
    assert not runner.set_autogroup_niceness(303, -10, proc=str(tmp_path / "none"))


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="this kernel has no autogroups")
def test_a_real_session_leader_gets_the_value_on_its_autogroup():
    enabled = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE,
                             start_new_session=True)
    try:
        assert runner.session_leader(child.pid)
        assert runner.session_leader(os.getpid()) == (os.getsid(0) == os.getpid())
        assert runner.set_autogroup_niceness(child.pid, 7) == enabled
        if enabled:
            assert Path("/proc/%d/autogroup" % child.pid).read_text().split()[-2:] == ["nice", "7"]
            assert Path("/proc/self/autogroup").read_text() != Path("/proc/%d/autogroup" % child.pid).read_text()
    finally:
        child.kill()
        child.wait()
