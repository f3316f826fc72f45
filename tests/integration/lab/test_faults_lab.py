"""Faults during a deploy, on a lab of emulated Dell OS6 switches (a 2x2
mesh, lab ``faultsos6``; docs/reliability.md, "Faults injected"):

* a switch that cannot be reached before the deploy: nothing is pushed to
  any switch and the error names it;
* a command the switch refuses (the emulator's ``reject`` fault): the error
  names the switch, the command and its line; nothing after it is sent;
  the other switches and every host pair whose path avoids the switch are
  unharmed; the re-run converges;
* the SSH session cut mid-push (``drop_after``): the same, with the lines
  that were taken;
* commit-confirm (``-e confirm_timeout``): a push that cuts the switch off
  (``lose_management``) is rolled back by the switch to its saved
  configuration; with the switch reachable the rollback is cancelled.

and on a 2x2 mesh of emulated Huawei VRP switches (lab ``faultsvrp``),
commit-confirm by VRP8's trial commit (``commit trial``, two-stage mode:
``"two_stage": true`` in the switch's cli.json): a switch without it is
refused before any switch is pushed; a push that cuts the switch off goes
back when its trial ends; with the switch reachable the trial is
confirmed; check mode and --diff do not arm anything.

Each fault is injected through ``faults.json`` in the switch's directory,
which the emulator (plugins/module_utils/lab/cli_emulator.py) reads when a
session opens."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lab_helpers import ansible_playbook, cli_session, lab_with_output, netns_exec, tasks_by_name

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import cli_emulator, expect, os6_cli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_diff, dell_os6, huawei_vrp, ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric

pytestmark = pytest.mark.lab

LAB = "faultsos6"
SWITCHES = ("sw0", "sw1", "sw2", "sw3")
FAILED_TASK = "Stop when the push failed, saying what this switch holds now"
TOPOLOGY = """\
# 2x2 mesh of emulated Dell OS6 switches, one host each (the fault tests)
plugin: ethercluster.routing.topology
name: faultsos6
switch_defaults: {platform: dell_os6}
generate: {kind: mesh, dims: [2, 2], hosts_per_switch: 1}
"""
VRP_LAB = "faultsvrp"
VRP_TOPOLOGY = TOPOLOGY.replace("Dell OS6", "Huawei VRP").replace("dell_os6", "huawei_vrp").replace(LAB, VRP_LAB)
PLATFORM_MODULES = {"dell_os6": dell_os6, "huawei_vrp": huawei_vrp}


def faults_lab(tmp_path_factory, name, text, networks, platform):
    """Body of the module-scoped lab fixtures: the 2x2 mesh ``text`` as lab
    ``name`` on ``networks`` (management, hosts), its switches on ``platform``."""
    directory = tmp_path_factory.mktemp(name)
    topology = directory / "topology.yml"
    topology.write_text(text)
    for the_lab in lab_with_output(name, topology, *networks, directory / "out"):
        the_lab.update(topology=topology, platform=platform)
        yield the_lab


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    yield from faults_lab(tmp_path_factory, LAB, TOPOLOGY, ("198.18.99.32/27", "10.92.0.0/16"), "dell_os6")


@pytest.fixture(scope="module")
def vrp_lab(lab_machine, tmp_path_factory):
    yield from faults_lab(tmp_path_factory, VRP_LAB, VRP_TOPOLOGY, ("198.18.97.0/27", "10.93.0.0/16"), "huawei_vrp")


def deploy(lab, *args):
    """deploy_routing.yml on the lab; the on-the-wire verification only with -e verify=true (it takes
    half a minute; test_2 runs it, the others check what each switch holds and ping host pairs)."""
    proc = ansible_playbook("-i", lab["topology"], "-i", lab["inventory"], "playbooks/deploy_routing.yml",
                            "-e", "out=%s" % lab["out"], "-e", "verify=false", *args)
    return proc.returncode, Output(proc.stdout, proc.stderr)


class Output(str):
    """A run's stdout and stderr as one text; ``stdout``: the JSON callback's output alone."""

    def __new__(cls, stdout, stderr):
        text = super().__new__(cls, stdout + stderr)
        text.stdout = stdout
        return text


def switch_dir(lab, name):
    return lab["layout"]["switches"][name]["dir"]


def read(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def task_messages(output):
    """The playbook's task messages, where a failed push says why (the
    output's tail holds only the stats)."""
    return "\n".join(line.strip() for line in output.splitlines() if '"msg"' in line)[-4000:]


def running_config(lab, name):
    return read(os.path.join(switch_dir(lab, name), cli_emulator.RUNNING_FILE))


def pipeline(lab, name):
    sw = lab["layout"]["switches"][name]
    text = netns_exec(sw["netns"], "ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                      "unix:%s/br0.mgmt" % sw["dir"], "--no-stats").stdout
    return sorted(flow for flow in ovs.parse_flows(text) if flow.cookie == ovs.PIPELINE_COOKIE)


def intent(lab):
    return json.loads((lab["out"] / "intent.json").read_text())


def holds_intent(lab, name):
    """The switch's CLI configuration and its data plane are the intent's."""
    entry, platform = intent(lab)["switches"][name], PLATFORM_MODULES[lab["platform"]]
    # VRP's running configuration has lines the renderer does not write (!Software Version)
    held = platform.parse(running_config(lab, name) or "", strict=lab["platform"] == "dell_os6")
    return (held == platform.parse(platform.render(entry, name))
            and pipeline(lab, name) == sorted(ovs.render(dict(entry, platform="ovs"), name)["flows"]))


def inject(lab, name, faults):
    path = os.path.join(switch_dir(lab, name), cli_emulator.FAULTS_FILE)
    if faults is None:
        if os.path.exists(path):
            os.remove(path)
        return
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(faults, handle)


def wipe_vlans(lab, name):
    """Delete the switch's routing VLANs by hand (its ports and static
    entries lose them): the next deploy has many lines to send it."""
    vlans = dell_os6.vlan_list(intent(lab)["switches"][name]["vlans"])
    reply = cli_session(lab, name, ["enable", "configure", "vlan database", "no vlan %s" % vlans, "exit", "end", "exit"])
    assert "% " not in reply.stdout, reply.stdout
    assert not holds_intent(lab, name)


def pairs_avoiding(lab, switch):
    """Host pairs whose planned paths, both ways, avoid ``switch``."""
    fabric = Dot1qFabric(intent(lab))
    hosts = sorted(lab["layout"]["hosts"])
    pairs = []
    for src in hosts:
        for dst in hosts:
            if src < dst and all(hop["switch"] != switch for a, b in ((src, dst), (dst, src))
                                 for hop in expect.planned_path(fabric, a, b)):
                pairs.append((src, dst))
    return pairs


def delivered(lab, pairs):
    """The pairs that answer a unicast ping (static neighbours: no ARP broadcast)."""
    hosts = lab["layout"]["hosts"]
    for src, dst in pairs:
        for a, b in ((src, dst), (dst, src)):
            netns_exec(hosts[a]["netns"], "ip", "neigh", "replace", hosts[b]["address"], "lladdr", hosts[b]["mac"],
                       "dev", hosts[a]["dev"], "nud", "permanent")
    return [(src, dst) for src, dst in pairs
            if netns_exec(hosts[src]["netns"], "ping", "-n", "-q", "-c", "2", "-i", "0.2", "-W", "2",
                          hosts[dst]["address"], check=False).returncode == 0]


def test_1_a_switch_unreachable_before_the_deploy_stops_it_with_nothing_pushed(lab):
    sw = lab["layout"]["switches"]["sw2"]
    pid = int(read(os.path.join(sw["dir"], "sshd.pid")))
    os.kill(pid, signal.SIGTERM)
    try:
        rc, output = deploy(lab)
    finally:
        netns_exec(sw["netns"], "/usr/sbin/sshd", "-f", os.path.join(sw["dir"], "sshd_config"))
    assert rc != 0
    assert "nothing pushed to any switch: switch sw2 (%s, platform dell_os6) cannot be reached" % sw["mgmt_address"] \
        in output, output[-3000:]
    assert "Unable to connect to port 22 on %s" % sw["mgmt_address"] in output
    for name in SWITCHES:
        assert running_config(lab, name) is None and pipeline(lab, name) == [], name


def test_2_the_re_run_deploys_and_passes_the_verification(lab):
    rc, output = deploy(lab, "-e", "verify=true")
    assert rc == 0, output[-3000:]
    assert "verification: PASSED, 6/6 checks passed" in output
    assert all(holds_intent(lab, name) for name in SWITCHES)


def pending_commands(lab, name):
    """The lines the next push sends switch ``name`` (the CLI diff)."""
    entry = intent(lab)["switches"][name]
    return cli_diff.diff_commands("dell_os6", running_config(lab, name), dell_os6.render(entry, name))


def failure(output, name):
    """The message of switch_deploy's failed-push task on switch ``name``."""
    tasks = tasks_by_name(output.stdout)
    failed = {task: {host: result.get("msg") for host, result in hosts.items() if result.get("failed")}
              for task, hosts in tasks.items()}
    assert name in tasks.get(FAILED_TASK, {}), {task: hosts for task, hosts in failed.items() if hosts}
    return tasks[FAILED_TASK][name]["msg"]


def deploy_with_fault(lab, name, faults, *args):
    """:func:`deploy` with ``faults`` injected into switch ``name`` for
    that run alone (removed after it, whatever happens)."""
    inject(lab, name, faults)
    try:
        return deploy(lab, *args)
    finally:
        inject(lab, name, None)


def assert_partial(lab, name, output, commands, line, answer):
    """The run's error names switch, line, command and answer, and says
    the first ``line - 1`` lines were taken; the other switches hold the
    intent."""
    total = len(commands)
    message = failure(output, name)
    expected = ("switch %s: the push failed: line %d of %d (%r) failed: %s; the %d line(s) before it were taken, "
                "none after it was sent. It holds a partial configuration: the first %d of %d lines were taken, "
                "line %d failed, none after it was sent. Nothing more is pushed to it; fix the cause and run the "
                "same command again." % (name, line, total, commands[line - 1], answer, line - 1, line - 1, total, line))
    assert message == expected
    assert "the push failed on %s (3 of 4 switches hold the new intent)" % name in output
    assert all(holds_intent(lab, other) for other in SWITCHES if other != name)


def assert_pairs_avoiding_it_delivered_and_the_re_run_converges(lab, name):
    """After a push that failed on switch ``name``: every host pair whose
    paths avoid it answers, and the re-run changes that switch alone and
    leaves every switch holding the intent."""
    pairs = pairs_avoiding(lab, name)
    assert pairs and delivered(lab, pairs) == pairs
    rc, output = deploy(lab)
    assert rc == 0, output[-3000:]
    assert "switches: 1 changed, 3 unchanged (%s)" % name in output
    assert all(holds_intent(lab, other) for other in SWITCHES)


def test_3_a_refused_command_names_switch_command_and_line_and_the_re_run_converges(lab):
    wipe_vlans(lab, "sw1")
    commands = pending_commands(lab, "sw1")
    line = next(number for number, command in enumerate(commands, 1) if command.startswith("mac address-table static"))
    rc, output = deploy_with_fault(lab, "sw1", {"reject": [commands[line - 1]]})
    assert rc != 0
    assert_partial(lab, "sw1", output, commands, line, "% Invalid input detected at '^' marker.")
    # the lines before the refused one were taken, none after it
    assert pending_commands(lab, "sw1") == commands[line - 1:]
    assert_pairs_avoiding_it_delivered_and_the_re_run_converges(lab, "sw1")


def test_4_a_session_cut_mid_push_says_what_was_taken_and_the_re_run_converges(lab):
    wipe_vlans(lab, "sw2")
    commands = pending_commands(lab, "sw2")
    rc, output = deploy_with_fault(lab, "sw2", {"drop_after": 3})
    assert rc != 0
    assert_partial(lab, "sw2", output, commands, 4, "the switch ended the session before answering")
    assert pending_commands(lab, "sw2") == commands[3:]
    assert_pairs_avoiding_it_delivered_and_the_re_run_converges(lab, "sw2")
    pairs = pairs_avoiding(lab, None)
    assert len(pairs) == 6 and delivered(lab, pairs) == pairs  # every pair of the 4 hosts


def test_5_commit_confirm_rolls_back_a_switch_the_push_cut_off(lab):
    wipe_vlans(lab, "sw3")
    before = (running_config(lab, "sw3"), pipeline(lab, "sw3"))
    directory = switch_dir(lab, "sw3")
    # a reload minute of 40 s (a reload during the push would end its session). The management
    # path stays lost until the fault is cleared, after the controller gave up: on a starved
    # machine its retries can outlast the reload, and it would then find the rollback done.
    inject(lab, "sw3", {"lose_management": cli_emulator.UNTIL_CLEARED, "minute_seconds": 40})
    try:
        rc, output = deploy(lab, "-e", "confirm_timeout=10")
        assert rc != 0
        assert "switch sw3: pushed, but not reached again within 10 s" in output, task_messages(output)
        assert "it reloads its saved configuration (the one it held before this push)" in output
        deadline = time.monotonic() + 90
        while os.path.exists(os.path.join(directory, os6_cli.RELOAD_FILE)) and time.monotonic() < deadline:
            time.sleep(1)
    finally:
        inject(lab, "sw3", None)
    assert not os.path.exists(os.path.join(directory, os6_cli.RELOAD_FILE)), "the rollback did not fire"
    assert "sw3#" in cli_session(lab, "sw3", ["enable", "exit"]).stdout  # management is back
    assert not os.path.exists(os.path.join(directory, os6_cli.MGMT_LOST_FILE))
    assert dell_os6.parse(running_config(lab, "sw3")) == dell_os6.parse(before[0])
    assert pipeline(lab, "sw3") == before[1]
    assert all(holds_intent(lab, name) for name in ("sw0", "sw1", "sw2"))
    rc, output = deploy(lab, "-e", "confirm_timeout=60")
    assert rc == 0, output[-3000:]
    assert "switches: 1 changed, 3 unchanged (sw3)" in output
    assert not os.path.exists(os.path.join(directory, os6_cli.RELOAD_FILE))  # confirmed: cancelled
    assert all(holds_intent(lab, name) for name in SWITCHES)
    rc, output = deploy(lab, "-e", "confirm_timeout=60")
    assert rc == 0 and "switches: 0 changed, 4 unchanged" in output, output[-3000:]
    assert not os.path.exists(os.path.join(directory, os6_cli.RELOAD_FILE))  # nothing to push: nothing armed


def test_6_credentials_from_ansible_vault_never_appear_in_the_output(lab, tmp_path):
    """The switch asks for an enable password (become) and the SSH password
    is set too, both from a Vault-encrypted file; the push with -vvv works
    (enable needed the password) and neither value is in its output."""
    become, password = "Vb3come-%d" % os.getpid(), "Vssh-%d" % os.getpid()
    vault_password = tmp_path / "vault-password"
    vault_password.write_text("lab vault password\n")
    secrets = tmp_path / "secrets.yml"
    secrets.write_text("ansible_become_password: %s\nansible_password: %s\n" % (become, password))
    vault = Path(sys.executable).parent / "ansible-vault"
    subprocess.run([str(vault), "encrypt", "--vault-password-file", str(vault_password), str(secrets)],
                   check=True, capture_output=True, timeout=60)
    assert become not in secrets.read_text() and "$ANSIBLE_VAULT" in secrets.read_text()
    wipe_vlans(lab, "sw0")
    rc, output = deploy_with_fault(lab, "sw0", {"enable_password": become},
                                   "-vvv", "-e", "@%s" % secrets, "--vault-password-file", str(vault_password))
    assert rc == 0, output[-3000:]
    assert re.search(r"switches: [0-9]+ changed, [0-9]+ unchanged \([^)]*\bsw0\b", output), output[-3000:]
    assert become not in output and password not in output
    assert all(holds_intent(lab, name) for name in SWITCHES)


# ------------------------------------------------------------------ VRP: commit trial
CLI_TASK = "Push the configuration over the CLI (only the lines that differ from the running configuration)"


def two_stage(lab, name, on=True):
    """Emulate switch ``name`` as a VRP8 switch with the two-stage mode
    and trial commits (``on``) or as the S5700 (immediate mode only); the
    emulator reads its cli.json when a session opens."""
    path = os.path.join(switch_dir(lab, name), cli_emulator.SETTINGS_FILE)
    settings = json.loads(read(path))
    settings["two_stage"] = on
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle)


def vrp_wipe_vlans(lab, name):
    """Delete the switch's routing VLANs by hand over its VRP CLI (committed
    on a two-stage switch), as wipe_vlans does on OS6."""
    batches = huawei_vrp.vlan_batches(intent(lab)["switches"][name]["vlans"])
    staged = json.loads(read(os.path.join(switch_dir(lab, name), cli_emulator.SETTINGS_FILE))).get("two_stage")
    lines = ["system-view"] + ["undo vlan batch %s" % batch for batch in batches] + (["commit"] if staged else [])
    reply = cli_session(lab, name, lines + ["return", "quit"])
    assert "Error" not in reply.stdout, reply.stdout
    assert not holds_intent(lab, name)


def trial_file(lab, name):
    return os.path.join(switch_dir(lab, name), cli_emulator.TRIAL_FILE)


def vrp_pending(lab, name):
    entry = intent(lab)["switches"][name]
    return cli_diff.diff_commands("huawei_vrp", running_config(lab, name), huawei_vrp.render(entry, name))


def test_7_vrp_a_switch_without_a_trial_commit_is_refused_before_any_push(vrp_lab):
    rc, output = deploy(vrp_lab)
    assert rc == 0, output[-3000:]
    assert all(holds_intent(vrp_lab, name) for name in SWITCHES)
    # sw1 is an S series switch (immediate mode only), sw3 a VRP8 one: both have lines to take
    vrp_wipe_vlans(vrp_lab, "sw1")
    two_stage(vrp_lab, "sw3")
    vrp_wipe_vlans(vrp_lab, "sw3")
    before = {name: running_config(vrp_lab, name) for name in SWITCHES}
    rc, output = deploy(vrp_lab, "-e", "confirm_timeout=60")
    assert rc != 0
    assert "nothing pushed to any switch: switch sw1: switch_deploy_confirm_timeout needs a trial commit" in output, \
        output[-3000:]
    assert "display configuration trial status answered:" in output and "Unrecognized command" in output
    # nothing pushed anywhere: sw3 took no line and runs no trial
    assert {name: running_config(vrp_lab, name) for name in SWITCHES} == before
    assert not os.path.exists(trial_file(vrp_lab, "sw3"))
    # with sw1 a VRP8 switch too, both are pushed with a trial and confirmed
    two_stage(vrp_lab, "sw1")
    rc, output = deploy(vrp_lab, "-e", "confirm_timeout=60")
    assert rc == 0, output[-3000:]
    assert "switches: 2 changed, 2 unchanged (sw1, sw3)" in output
    assert not os.path.exists(trial_file(vrp_lab, "sw1")) and not os.path.exists(trial_file(vrp_lab, "sw3"))
    assert all(holds_intent(vrp_lab, name) for name in SWITCHES)
    two_stage(vrp_lab, "sw1", on=False)


def test_8_vrp_check_mode_and_diff_show_the_lines_and_arm_nothing(vrp_lab):
    vrp_wipe_vlans(vrp_lab, "sw3")
    commands, before = vrp_pending(vrp_lab, "sw3"), running_config(vrp_lab, "sw3")
    proc = ansible_playbook("-i", vrp_lab["topology"], "-i", vrp_lab["inventory"], "playbooks/deploy_routing.yml",
                            "-e", "out=%s" % vrp_lab["out"], "-e", "confirm_timeout=60", "--check", "--diff")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    result = tasks_by_name(proc.stdout)[CLI_TASK]["sw3"]
    assert result["changed"] and result["commands"] == commands  # no trial commit among them
    assert running_config(vrp_lab, "sw3") == before and not os.path.exists(trial_file(vrp_lab, "sw3"))


def test_9_vrp_commit_trial_rolls_back_a_switch_the_push_cut_off(vrp_lab):
    before = (running_config(vrp_lab, "sw3"), pipeline(vrp_lab, "sw3"))
    assert not holds_intent(vrp_lab, "sw3")  # test_8 left it without its VLANs
    # a trial of 30 s whatever is asked (VRP's shortest is 60 s): the controller gives up about 10 s
    # after the push, the switch goes back when the trial ends; its management path stays lost
    # until the fault is cleared (see test_5)
    inject(vrp_lab, "sw3", {"lose_management": cli_emulator.UNTIL_CLEARED, "trial_seconds": 30})
    try:
        rc, output = deploy(vrp_lab, "-e", "confirm_timeout=10")
        assert rc != 0
        assert "switch sw3: pushed, but not reached again within 10 s" in output, task_messages(output)
        assert "its trial ends 60 s after the trial commit that ended the push, and it goes back to the " \
            "configuration it ran before this push" in output
        deadline = time.monotonic() + 90
        while os.path.exists(trial_file(vrp_lab, "sw3")) and time.monotonic() < deadline:
            time.sleep(1)
    finally:
        inject(vrp_lab, "sw3", None)
    assert not os.path.exists(trial_file(vrp_lab, "sw3")), "the trial did not end"
    assert "<sw3>" in cli_session(vrp_lab, "sw3", ["quit"]).stdout  # management is back
    assert not os.path.exists(os.path.join(switch_dir(vrp_lab, "sw3"), cli_emulator.MGMT_LOST_FILE))
    assert huawei_vrp.parse(running_config(vrp_lab, "sw3"), strict=False) == huawei_vrp.parse(before[0], strict=False)
    assert pipeline(vrp_lab, "sw3") == before[1]
    assert all(holds_intent(vrp_lab, name) for name in ("sw0", "sw1", "sw2"))
    rc, output = deploy(vrp_lab, "-e", "confirm_timeout=60")
    assert rc == 0, output[-3000:]
    assert "switches: 1 changed, 3 unchanged (sw3)" in output
    assert not os.path.exists(trial_file(vrp_lab, "sw3"))  # confirmed: the trial's timer is gone
    assert all(holds_intent(vrp_lab, name) for name in SWITCHES)
    rc, output = deploy(vrp_lab, "-e", "confirm_timeout=60")
    assert rc == 0 and "switches: 0 changed, 4 unchanged" in output, output[-3000:]
    assert not os.path.exists(trial_file(vrp_lab, "sw3"))  # nothing to push: no trial
