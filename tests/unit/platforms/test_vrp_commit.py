"""The emulated VRP's two-stage mode and trial commits (lab/vrp_commit.py,
the VRP8 commands switch_deploy's commit-confirm uses: docs/reliability.md,
"Commit-confirm"), and the session's trial timer (lab/cli_emulator.py); a
recorded OVS read stands in for the switch, as in test_vrp_cli.py."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import cli_emulator, vrp_commit
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.vrp_cli import UNRECOGNIZED, WRONG, VrpCli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_diff, huawei_vrp

from test_os6_cli import RecordedSwitch, ring3_sw1, run
from test_vrp_cli import INTERFACES

PERSIST = "ethercluster-1795000000"


def two_stage(*lines):
    """A two-stage (VRP8) switch sw0 after ``lines`` (each must be taken)."""
    cli = VrpCli("sw0", INTERFACES, two_stage=True)
    for _prompt, line, reply in run(cli, *lines):
        assert "Error" not in reply, (line, reply)
    return cli


@pytest.fixture(name="vrp8_dir")
def fixture_vrp8_dir(tmp_path):
    """A two-stage VRP switch's directory: sw1 on br0, ports 1-3."""
    (tmp_path / "cli.json").write_text(json.dumps({
        "hostname": "sw1", "platform": "huawei_vrp", "bridge": "br0", "two_stage": True,
        "interfaces": {str(port): "GigabitEthernet0/0/%d" % port for port in (1, 2, 3)}}))
    return tmp_path


def test_an_s_series_switch_has_neither_two_stage_mode_nor_trials():
    cli = VrpCli("sw0", INTERFACES)
    assert cli.execute("display configuration trial status").endswith(UNRECOGNIZED + "\n")
    assert cli.execute("system-view immediately").endswith(UNRECOGNIZED + "\n")
    cli.execute("system-view")
    assert cli.prompt() == "[sw0]"
    for line in ("commit", "commit trial 60 persist %s" % PERSIST):
        assert cli.execute(line).endswith(UNRECOGNIZED + "\n"), line


def test_the_candidate_is_edited_apart_and_commit_makes_it_the_running_configuration():
    cli = two_stage("system-view")
    assert cli.prompt() == "[~sw0]"
    running = cli.running_config()
    cli.execute("vlan batch 10")
    cli.execute("sysname core1")
    assert cli.prompt() == "[*sw0]"  # the new name shows once committed
    cli.execute("interface GigabitEthernet0/0/1")
    assert cli.prompt() == "[*sw0-GigabitEthernet0/0/1]"
    cli.execute("quit")
    assert cli.running_config() == running == cli.execute("display current-configuration")
    assert not cli.changed and not cli.apply_due
    assert cli.execute("commit") == ""
    assert cli.prompt() == "[~core1]" and cli.apply_due
    assert "vlan batch 10" in cli.running_config() and " sysname core1" in cli.running_config()
    cli.apply_due = False
    assert run(cli, "return")[0][2] == "" and cli.prompt() == "<core1>" and not cli.apply_due


def test_leaving_with_an_uncommitted_candidate_asks_commit_discard_or_cancel():
    cli = two_stage("system-view", "vlan batch 10")
    assert cli.execute("return") == vrp_commit.UNCOMMITTED_QUESTION and cli.prompt() == ""
    assert cli.execute("maybe") == "\n" + vrp_commit.CHOOSE_AGAIN
    assert cli.execute("c") == "\n" and cli.prompt() == "[*sw0]"  # cancel: still editing
    assert cli.execute("quit") == vrp_commit.UNCOMMITTED_QUESTION
    assert cli.execute("n") == "\n" and cli.prompt() == "<sw0>"
    assert cli.vlans == {1} and not cli.apply_due  # discarded
    cli = two_stage("system-view", "vlan batch 10")
    cli.execute("return")
    assert cli.execute("Y") == "\n" and cli.prompt() == "<sw0>"
    assert cli.apply_due and "vlan batch 10" in cli.running_config()


def test_system_view_immediately_is_the_s_series_behaviour():
    cli = two_stage("system-view immediately")
    assert cli.prompt() == "[sw0]"
    cli.execute("vlan batch 10")
    assert "vlan batch 10" in cli.running_config()
    assert cli.execute("commit").endswith(UNRECOGNIZED + "\n")  # no commit in the immediate mode
    cli.execute("return")
    assert cli.apply_due and cli.prompt() == "<sw0>"


@pytest.mark.parametrize("line, word", [
    ("commit trial 59", 2), ("commit trial 65536", 2), ("commit trial 60 persist 9ab", 4),
    ("commit trial 60 persist", 3), ("commit trial 60 persist - ", 4), ("commit trial 60 soon", 3),
])
def test_commit_trial_refuses_what_vrp_would(line, word):
    cli = two_stage("system-view", "vlan batch 10")
    reply = cli.execute(line)
    assert reply == " " * len("[*sw0]" + " ".join(line.split()[:word]) + " ") + "^\n" + WRONG + "\n"
    assert cli.trial is None and cli.trial_request is None and cli.pending()


def test_commit_trial_commits_and_asks_for_a_rollback_to_the_configuration_before_it():
    cli = two_stage("system-view", "vlan batch 10", "commit")
    before = cli.running_config()
    cli.execute("vlan batch 20")
    reply = cli.execute("commit trial 120 persist %s" % PERSIST)
    assert reply.startswith("Info: Trial run:") and "120 seconds" in reply
    assert cli.prompt() == "[~sw0]" and cli.apply_due and "vlan batch 10 20" in cli.running_config()
    assert cli.trial_request == {"seconds": 120, "persist": PERSIST, "rollback": before}
    status = cli.execute("display configuration trial status")
    assert status.startswith("Trial status: ACTIVE\nPersist id: %s\nTrial time left (sec): " % PERSIST)
    assert 118 <= int(status.split()[-1]) <= 120
    assert cli.execute("commit trial 60").startswith("Error: A trial run is in progress")
    assert two_stage("system-view", "commit trial").trial_request["seconds"] == vrp_commit.TRIAL_DEFAULT_S


def test_a_trial_is_confirmed_by_commit_in_its_session_or_commit_persist_in_any():
    cli = two_stage("system-view", "vlan batch 10", "commit trial 60")
    assert cli.execute("commit") == "Info: The trial run was confirmed.\n"
    assert cli.trial_confirm and cli.trial is None
    assert cli.execute("display configuration trial status") == "Trial status: INACTIVE\nTrial time left (sec): 0\n"
    # another session: a trial started there, with or without a persist ID
    other = two_stage("system-view")
    other.trial = {"at": time.time() + 60, "persist": PERSIST, "mine": False}
    assert other.execute("commit").startswith("Error: A trial run started by another session")
    assert other.execute("commit persist ethercluster-0").startswith("Error: A trial run started by another session")
    assert not other.trial_confirm
    assert other.execute("commit persist %s" % PERSIST) == "Info: The trial run was confirmed.\n"
    assert other.trial_confirm
    unnamed = two_stage("system-view")
    unnamed.trial = {"at": time.time() + 60, "persist": None, "mine": False}
    assert unnamed.execute("commit persist %s" % PERSIST).startswith("Error: A trial run started by another session")
    assert two_stage("system-view").execute("commit persist %s" % PERSIST) == \
        "Error: No trial run with persist ID %s is in progress.\n" % PERSIST


def test_the_cli_diff_pushed_with_commit_trial_as_switch_deploy_sends_it():
    # what the huawei_vrp cliconf sends for a trial push: system-view, the diff, commit trial, return
    cli = two_stage()
    text = huawei_vrp.render(ring3_sw1(), "sw0")
    commands = cli_diff.diff_commands("huawei_vrp", cli.running_config(), text)
    seen = run(cli, "system-view", *commands, "commit trial 60 persist %s" % PERSIST, "return")
    assert all("Error" not in reply for _prompt, _line, reply in seen)
    assert [prompt for prompt, _line, _reply in seen][:3] == ["<sw0>", "[~sw0]", "[*sw0]"]
    assert seen[-1][0] == "[~sw0]" and cli.prompt() == "<sw0>"
    assert cli_diff.diff_commands("huawei_vrp", cli.running_config(), text) == []


class Timers:
    """subprocess.Popen for the session's timer processes: the command is
    recorded, a stand-in that only sleeps runs (the real module would
    import the collection from a tree other test runs may be rebuilding)."""

    def __init__(self):
        self.asked, self.started = [], []
        self.popen = subprocess.Popen

    def __call__(self, argv, **kwargs):
        self.asked.append(argv[3:])
        self.started.append(self.popen([sys.executable, "-c", "import time; time.sleep(600)", argv[3]], **kwargs))
        return self.started[-1]

    def stop(self):
        for process in self.started:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture(name="timers")
def fixture_timers(monkeypatch):
    timers = Timers()
    monkeypatch.setattr(cli_emulator.subprocess, "Popen", timers)
    yield timers
    timers.stop()


def _wait_for_flag(process, flag):
    deadline = time.time() + 10
    while process.poll() is None and time.time() < deadline and \
            flag not in open("/proc/%d/cmdline" % process.pid, encoding="utf-8").read():
        time.sleep(0.05)  # the new process's command line shows once it runs


def test_a_session_runs_the_trial_timer_and_another_session_confirms_it(vrp8_dir, timers):
    shell = RecordedSwitch()
    session = cli_emulator.Session(str(vrp8_dir), shell=shell)
    for line in ("system-view", "vlan batch 10"):
        session.feed(line)
    before = session.cli.running_config()
    assert session.feed("commit trial 60 persist %s" % PERSIST).endswith("[~sw1]")
    trial = json.loads((vrp8_dir / cli_emulator.TRIAL_FILE).read_text())
    assert timers.asked == [["--trial-after", "60.0"]] and trial["pid"] == timers.started[0].pid
    assert trial["persist"] == PERSIST and trial["rollback"] == before and 55 < trial["at"] - time.time() <= 60
    assert "vlan batch 10" in (vrp8_dir / "running-config").read_text()  # committed: stored and applied
    _wait_for_flag(timers.started[0], "--trial-after")
    session.feed("return")
    session.close()
    other = cli_emulator.Session(str(vrp8_dir), shell=shell)
    assert other.feed("display configuration trial status").startswith(
        "Trial status: ACTIVE\nPersist id: %s\n" % PERSIST)
    other.feed("system-view")
    assert other.feed("commit persist %s" % PERSIST) == "Info: The trial run was confirmed.\n[~sw1]"
    assert not (vrp8_dir / cli_emulator.TRIAL_FILE).exists()
    assert timers.started[0].wait(timeout=10) == -signal.SIGTERM
    assert "vlan batch 10" in (vrp8_dir / "running-config").read_text()


def test_the_lab_fault_trial_seconds_sets_the_length_of_a_trial(vrp8_dir, timers):
    (vrp8_dir / "faults.json").write_text(json.dumps({"trial_seconds": 7}))
    session = cli_emulator.Session(str(vrp8_dir), shell=RecordedSwitch())
    for line in ("system-view", "vlan batch 10", "commit trial 600 persist %s" % PERSIST):
        session.feed(line)
    assert timers.asked == [["--trial-after", "7.0"]]
    assert session.cli.trial["at"] == json.loads((vrp8_dir / cli_emulator.TRIAL_FILE).read_text())["at"]


def test_the_timer_puts_the_configuration_before_the_trial_back_and_restores_management(vrp8_dir):
    shell = RecordedSwitch()
    before = huawei_vrp.render(ring3_sw1(), "sw1")
    (vrp8_dir / "running-config").write_text(before + "vlan batch 300\n")
    (vrp8_dir / cli_emulator.MGMT_LOST_FILE).write_text("lost")
    (vrp8_dir / cli_emulator.TRIAL_FILE).write_text(json.dumps({"pid": os.getpid(), "at": 0, "rollback": before}))
    assert cli_emulator.trial_after(str(vrp8_dir), 0, shell=shell)
    running = (vrp8_dir / "running-config").read_text()
    assert huawei_vrp.parse(running, strict=False) == huawei_vrp.parse(before, strict=False)
    assert shell.writes == []  # the recorded data plane holds exactly that configuration
    assert not (vrp8_dir / cli_emulator.MGMT_LOST_FILE).exists() and not (vrp8_dir / cli_emulator.TRIAL_FILE).exists()


def test_a_confirmed_trial_timer_does_nothing(vrp8_dir):
    (vrp8_dir / "running-config").write_text("")
    assert not cli_emulator.trial_after(str(vrp8_dir), 0, shell=RecordedSwitch())  # confirmed: no file
    (vrp8_dir / cli_emulator.TRIAL_FILE).write_text(json.dumps({"pid": os.getpid() + 1, "rollback": "x"}))
    assert not cli_emulator.trial_after(str(vrp8_dir), 0, shell=RecordedSwitch())  # another timer's
    assert (vrp8_dir / "running-config").read_text() == ""


def test_a_trial_push_that_cut_management_refuses_sessions_until_the_trial_ends(vrp8_dir, timers):
    (vrp8_dir / "faults.json").write_text(json.dumps({"lose_management": True}))
    shell = RecordedSwitch()
    session = cli_emulator.Session(str(vrp8_dir), shell=shell)
    session.feed("system-view")
    session.feed("vlan batch 10")
    assert not cli_emulator.Session(str(vrp8_dir), shell=shell).refused()  # a candidate cuts nothing
    session.feed("commit trial 60 persist %s" % PERSIST)
    assert cli_emulator.Session(str(vrp8_dir), shell=shell).refused()
    trial = json.loads((vrp8_dir / cli_emulator.TRIAL_FILE).read_text())
    (vrp8_dir / cli_emulator.TRIAL_FILE).write_text(json.dumps(dict(trial, pid=os.getpid())))  # this process fires
    assert cli_emulator.trial_after(str(vrp8_dir), 0, shell=shell)
    assert not cli_emulator.Session(str(vrp8_dir), shell=shell).refused()
    assert "vlan batch 10" not in (vrp8_dir / "running-config").read_text()


def test_a_management_loss_until_cleared_outlasts_the_trial_and_ends_with_the_fault(vrp8_dir, timers):
    # the trial still puts the old configuration back, but sessions stay refused until the fault goes:
    # a test's controller then cannot reach the switch however slowly it retries
    (vrp8_dir / "faults.json").write_text(json.dumps({"lose_management": cli_emulator.UNTIL_CLEARED}))
    shell = RecordedSwitch()
    session = cli_emulator.Session(str(vrp8_dir), shell=shell)
    for line in ("system-view", "vlan batch 10", "commit trial 60 persist %s" % PERSIST):
        session.feed(line)
    trial = json.loads((vrp8_dir / cli_emulator.TRIAL_FILE).read_text())
    (vrp8_dir / cli_emulator.TRIAL_FILE).write_text(json.dumps(dict(trial, pid=os.getpid())))  # this process fires
    assert cli_emulator.trial_after(str(vrp8_dir), 0, shell=shell)
    assert "vlan batch 10" not in (vrp8_dir / "running-config").read_text()
    assert cli_emulator.Session(str(vrp8_dir), shell=shell).refused()
    (vrp8_dir / "faults.json").unlink()
    assert not cli_emulator.Session(str(vrp8_dir), shell=shell).refused()
    assert not (vrp8_dir / cli_emulator.MGMT_LOST_FILE).exists()


def test_a_session_that_ends_discards_its_uncommitted_candidate(vrp8_dir):
    session = cli_emulator.Session(str(vrp8_dir), shell=RecordedSwitch())
    session.feed("system-view")
    session.feed("vlan batch 10")
    session.close()
    assert not (vrp8_dir / "running-config").exists()  # nothing was committed, nothing stored
    assert cli_emulator.Session(str(vrp8_dir), shell=RecordedSwitch()).cli.vlans == {1}
