"""The OS6 emulator's fault hooks (faults.json: reject, drop_after,
lose_management, minute_seconds) and its scheduled reload (reload in /
reload cancel / show reload and the timer), without a lab: a recording
shell stands in for OVS (docs/reliability.md, "Faults injected")."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import cli_emulator, os6_cli
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import INVALID, Os6Cli, Session
from test_os6_cli import RecordedSwitch


class Shell(RecordedSwitch):
    """The recorded OVS read of a lab switch; records the writes."""


def faults(directory, **hooks):
    (directory / os6_cli.FAULTS_FILE).write_text(json.dumps(hooks))


def feed(session, *lines):
    return "".join(session.feed(line) for line in lines)


def test_a_rejected_command_answers_invalid_input_and_changes_nothing(switch_dir):
    faults(switch_dir, reject=["vlan 100"])
    session = Session(str(switch_dir), shell=Shell())
    reply = feed(session, "enable", "configure", "vlan database", "VLAN   100")
    assert INVALID in reply
    assert 100 not in session.cli.vlans
    assert INVALID not in feed(session, "vlan 101")  # only the injected command
    assert 101 in session.cli.vlans


def test_rejection_applies_to_configuration_modes_only(switch_dir):
    faults(switch_dir, reject=["show version"])
    session = Session(str(switch_dir), shell=Shell())
    assert "Software Version" in feed(session, "enable", "show version")


def test_a_dropped_session_keeps_the_lines_before_the_cut_and_applies_them(switch_dir):
    faults(switch_dir, drop_after=3)
    shell = Shell()
    session = Session(str(switch_dir), shell=shell)
    feed(session, "enable", "configure", "no spanning-tree", "vlan database", "vlan 100")
    assert not session.dropped
    assert session.feed("exit") == "" and session.dropped  # line 4: the session ends unanswered
    session.close()
    stored = (switch_dir / os6_cli.RUNNING_FILE).read_text()
    assert "no spanning-tree" in stored and "vlan 100" in stored
    assert shell.writes  # the taken lines reached the data plane


def test_main_ends_a_dropped_session_without_reading_further(switch_dir, monkeypatch):
    faults(switch_dir, drop_after=1)
    monkeypatch.setenv("ETHERCLUSTER_CLI_DIR", str(switch_dir))
    monkeypatch.setattr(cli_emulator, "_shell", Shell())
    out = io.BytesIO()
    lines = b"enable\nconfigure\nno spanning-tree\nflowcontrol\nend\nexit\n"
    assert os6_cli.main([], stdin=io.BytesIO(lines), stdout=out) == 0
    assert out.getvalue().decode().endswith("sw1(config)#")
    assert "flowcontrol" not in (switch_dir / os6_cli.RUNNING_FILE).read_text()


def test_lose_management_refuses_new_sessions_after_a_change(switch_dir, monkeypatch):
    faults(switch_dir, lose_management=True)
    session = Session(str(switch_dir), shell=Shell())
    assert not session.refused()
    feed(session, "enable", "show version")
    assert not session.refused()  # reading cuts nothing
    feed(session, "configure", "no spanning-tree", "end")
    assert Session(str(switch_dir), shell=Shell()).refused()
    monkeypatch.setenv("ETHERCLUSTER_CLI_DIR", str(switch_dir))
    out = io.BytesIO()
    assert os6_cli.main([], stdin=io.BytesIO(b"enable\n"), stdout=out) == 1
    assert out.getvalue() == b""


def test_deleting_a_vlan_resets_the_pvid_of_its_ports_and_the_configuration_replays():
    cli = Os6Cli("sw1", ["Gi1/0/1"], privileged=True)
    for line in ("configure", "vlan database", "vlan 100", "exit", "interface Gi1/0/1", "switchport mode general",
                 "switchport general allowed vlan add 100 untagged", "switchport general pvid 100", "exit",
                 "vlan database", "no vlan 100", "end"):
        assert not cli.execute(line).strip(), line
    assert cli.port("Gi1/0/1")["pvid"] == 1
    Os6Cli("sw1", ["Gi1/0/1"], running_config=cli.running_config())  # raises when it does not replay


ROOT = os6_cli.__file__.split(os.sep + "ansible_collections" + os.sep, maxsplit=1)[0]


def test_reload_in_schedules_a_timer_process_that_reload_cancel_stops(switch_dir, monkeypatch):
    # the timer's command is checked, then a stand-in that only sleeps runs (the real module
    # would import the collection from a tree other test runs may be rebuilding)
    popen, asked, started = subprocess.Popen, [], []

    def stand_in(argv, **kwargs):
        asked.append((argv, kwargs["env"]["ETHERCLUSTER_CLI_DIR"], kwargs["start_new_session"]))
        started.append(popen([sys.executable, "-c", "import time; time.sleep(600)", "--reload-after"], **kwargs))
        return started[-1]

    monkeypatch.setattr(cli_emulator.subprocess, "Popen", stand_in)
    try:
        faults(switch_dir, minute_seconds=600)
        session = Session(str(switch_dir), shell=Shell())
        session.feed("enable")
        assert session.feed("show reload").startswith("No reload is scheduled.")
        assert "Reload scheduled in 2 minute(s)." in session.feed("reload in 2")
        scheduled = json.loads((switch_dir / os6_cli.RELOAD_FILE).read_text())
        assert 1100 < scheduled["at"] - time.time() <= 1200
        assert asked == [([sys.executable, "-m", cli_emulator.MODULE, "--reload-after", "1200.0"], str(switch_dir), True)]
        assert [process.pid for process in started] == [scheduled["pid"]]
        deadline = time.time() + 10
        while started[0].poll() is None and time.time() < deadline and \
                "--reload-after" not in open("/proc/%d/cmdline" % scheduled["pid"], encoding="utf-8").read():
            time.sleep(0.05)  # the new process's command line shows once it runs
        assert started[0].poll() is None, "the timer stand-in exited: %s" % started[0].returncode
        other = Session(str(switch_dir), shell=Shell())
        other.feed("enable")
        assert other.feed("show reload").startswith("Reload scheduled at %d" % scheduled["at"])
        other.feed("reload cancel")
        assert not (switch_dir / os6_cli.RELOAD_FILE).exists()
        assert started[0].wait(timeout=10) == -signal.SIGTERM  # the timer is this process's child here
        assert other.feed("show reload").startswith("No reload is scheduled.")
    finally:  # a failed assertion leaves no sleeping stand-in behind
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("minutes", ["0", "1441", "soon", "-1"])
def test_reload_in_refuses_what_os6_would(minutes):
    cli = Os6Cli("sw1", ["Gi1/0/1"], privileged=True)
    assert INVALID in cli.execute("reload in %s" % minutes)
    assert cli.reload_request is None


def test_the_timer_puts_the_startup_configuration_back_and_restores_management(switch_dir):
    shell = Shell()
    saved = Session(str(switch_dir), shell=shell)
    feed(saved, "enable", "configure", "no spanning-tree", "end", "copy running-config startup-config", "y")
    feed(saved, "configure", "vlan database", "vlan 200", "exit", "end")
    (switch_dir / os6_cli.MGMT_LOST_FILE).write_text("lost")
    (switch_dir / os6_cli.RELOAD_FILE).write_text(json.dumps({"pid": os.getpid(), "at": 0}))
    assert cli_emulator.reload_after(str(switch_dir), 0, shell=shell)
    running = (switch_dir / os6_cli.RUNNING_FILE).read_text()
    assert "no spanning-tree" in running and "vlan 200" not in running
    assert not (switch_dir / os6_cli.MGMT_LOST_FILE).exists() and not (switch_dir / os6_cli.RELOAD_FILE).exists()


def test_a_cancelled_timer_does_nothing(switch_dir):
    (switch_dir / os6_cli.RUNNING_FILE).write_text("")
    assert not cli_emulator.reload_after(str(switch_dir), 0, shell=Shell())  # no reload.json: cancelled
    (switch_dir / os6_cli.RELOAD_FILE).write_text(json.dumps({"pid": os.getpid() + 1, "at": 0}))
    assert not cli_emulator.reload_after(str(switch_dir), 0, shell=Shell())  # another timer's
    assert (switch_dir / os6_cli.RUNNING_FILE).read_text() == ""


def test_the_timer_runs_as_the_module_with_reload_after(switch_dir):
    env = dict(os.environ, ETHERCLUSTER_CLI_DIR=str(switch_dir), PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, "-m", cli_emulator.MODULE, "--reload-after", "0"], env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")  # nothing scheduled: it does not fire


def test_an_enable_password_is_asked_for_and_checked(switch_dir):
    faults(switch_dir, enable_password="s3cret")
    session = Session(str(switch_dir), shell=Shell())
    assert session.feed("enable") == "Password:"
    assert session.feed("wrong") == "\n% Bad secret\nsw1>"
    assert session.feed("enable") == "Password:"
    assert session.feed("s3cret") == "\nsw1#"


def test_a_reload_ends_the_switchs_sessions_and_only_those(switch_dir, tmp_path_factory):
    other_dir = tmp_path_factory.mktemp("other_switch")
    argv = [sys.executable, "-c", "import time; time.sleep(60)", cli_emulator.MODULE]
    mine = subprocess.Popen(argv, env=dict(os.environ, OVS_RUNDIR=str(switch_dir)))  # pylint: disable=consider-using-with
    other = subprocess.Popen(argv, env=dict(os.environ, OVS_RUNDIR=str(other_dir)))  # pylint: disable=consider-using-with
    try:
        deadline = time.time() + 10
        while time.time() < deadline and cli_emulator.MODULE not in open("/proc/%d/cmdline" % other.pid, encoding="utf-8").read():
            time.sleep(0.05)
        assert cli_emulator.end_sessions(str(switch_dir)) == [mine.pid]
        assert mine.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
        mine.kill()
        mine.wait()
