"""The CLI path end to end on a real lab of emulated Dell OS6 switches (the
ring of fixtures/lab/ on platform dell_os6): deploy_routing.yml pushes over
ansible.netcommon.network_cli with the collection's cliconf/terminal
plugins; check mode shows the lines and touches nothing; the pushed
configuration reaches the switches' OVS data plane and passes the
verification on the wire; a second run changes nothing; a switch changed by
hand gets exactly the lines that undo it (removals included); saving is
asked for; an inventory without network_cli for a CLI switch pushes
nothing. A pulled cable (a switch's veth set down) fails over over the
CLI with link_failed.yml and returns with link_restored.yml; the resident
responder (failover_watch.yml) polls the switches' interface status,
fails over by itself and returns; with an snmpd per switch sending
linkDown/linkUp notifications, a trap wakes it long before its poll. On a
2x2 mesh of OS6 switches carrying segment routing's source trees (the
fixed assignment), the responder fails its covered link over by the
repaired trees and returns."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from lab_helpers import FIXTURES, ansible_env, ansible_playbook, cli_session, lab_with_output, netns_exec, tasks_by_name
from test_faults_lab import delivered

from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import dell_os6, ovs

pytestmark = pytest.mark.lab

LAB = "os6-pytest"
TOPOLOGY = FIXTURES / "ring3_os6_topology.yml"
SWITCHES = ("sw0", "sw1", "sw2")
CLI_TASK = "Push the configuration over the CLI (only the lines that differ from the running configuration)"
SAVE_TASK = "Save the running configuration (save_config=true)"
SUMMARY_TASK = "Print the summary"


def deploy_topology(topology, lab, *args, inventory=None):
    """deploy_routing.yml on ``topology`` in ``lab``: (rc, results by task, output)."""
    proc = ansible_playbook("-i", str(topology), "-i", inventory or lab["inventory"], "-f", "8",
                            "playbooks/deploy_routing.yml", "-e", "out=%s" % lab["out"], *args)
    return proc.returncode, tasks_by_name(proc.stdout), proc.stdout + proc.stderr


def deploy(lab, *args, inventory=None):
    return deploy_topology(TOPOLOGY, lab, *args, inventory=inventory)


def summary(tasks):
    return tasks[SUMMARY_TASK]["localhost"]["msg"]


def pipeline(lab, name):
    sw = lab["layout"]["switches"][name]
    text = netns_exec(sw["netns"], "ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                      "unix:%s/br0.mgmt" % sw["dir"], "--no-stats").stdout
    return sorted(flow for flow in ovs.parse_flows(text) if flow.cookie == ovs.PIPELINE_COOKIE)


def running_config(lab, name):
    path = "%s/running-config" % lab["layout"]["switches"][name]["dir"]
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    yield from lab_with_output(LAB, TOPOLOGY, "198.18.8.32/28", "10.61.1.0/24", tmp_path_factory.mktemp("deploy_os6"))


def test_1_check_mode_shows_the_lines_and_touches_nothing(lab):
    rc, tasks, output = deploy(lab, "--check", "--diff")
    assert rc == 0, output[-3000:]
    for name in SWITCHES:
        result = tasks[CLI_TASK][name]
        assert result["changed"] and result["commands"][0] == "no spanning-tree"
        assert "switchport general allowed vlan remove 1" in result["commands"]
        assert result["diff"]["prepared"] == "\n".join(result["commands"])
        assert running_config(lab, name) is None and pipeline(lab, name) == []
    assert "switches: 3 would change, 0 unchanged" in summary(tasks)[1]


def test_2_the_push_reaches_the_data_plane_and_passes_the_verification(lab):
    rc, tasks, output = deploy(lab)
    assert rc == 0, output[-3000:]
    assert summary(tasks)[2].startswith("verification: PASSED, 6/6 checks passed"), summary(tasks)
    intent = json.loads((lab["out"] / "intent.json").read_text())
    for name in SWITCHES:
        entry = intent["switches"][name]
        assert dell_os6.parse(running_config(lab, name)) == dell_os6.parse(dell_os6.render(entry, name))
        assert pipeline(lab, name) == sorted(ovs.render(dict(entry, platform="ovs"), name)["flows"])
    assert SAVE_TASK not in tasks or all(result.get("skipped") for result in tasks[SAVE_TASK].values())


def second_run_changes_nothing(deploy_playbook, lab):
    """Deploy again (no verification): no CLI switch changes, all three are unchanged."""
    rc, tasks, output = deploy_playbook(lab, "-e", "verify=false")
    assert rc == 0, output[-3000:]
    assert not any(result["changed"] for result in tasks[CLI_TASK].values())
    assert "switches: 0 changed, 3 unchanged" in summary(tasks)[1]


def test_3_a_second_run_changes_nothing(lab):
    second_run_changes_nothing(deploy, lab)


def test_4_changes_made_by_hand_are_undone_with_exactly_the_needed_lines(lab):
    before = pipeline(lab, "sw1")
    reply = cli_session(lab, "sw1", ["enable", "configure", "vlan database", "vlan 999", "exit",
                                     "interface Gi1/0/2", "switchport general allowed vlan add 999 tagged",
                                     "shutdown", "end", "exit"])
    assert "Invalid input" not in reply.stdout and "% Error" not in reply.stdout, reply.stdout
    assert pipeline(lab, "sw1") != before  # the CLI change reached OVS
    rc, tasks, output = deploy(lab, "-e", "verify=false", "-e", "save_config=true")
    assert rc == 0, output[-3000:]
    assert tasks[CLI_TASK]["sw1"]["commands"] == [
        "interface Gi1/0/2", "switchport general allowed vlan remove 999", "no shutdown", "exit",
        "vlan database", "no vlan 999", "exit"]
    assert not tasks[CLI_TASK]["sw0"]["changed"] and not tasks[CLI_TASK]["sw2"]["changed"]
    assert pipeline(lab, "sw1") == before
    # the save is a handler: only the switch whose push changed is notified
    assert not tasks[SAVE_TASK]["sw1"].get("skipped") and "sw0" not in tasks[SAVE_TASK]
    with open("%s/startup-config" % lab["layout"]["switches"]["sw1"]["dir"], encoding="utf-8") as handle:
        assert handle.read() == running_config(lab, "sw1")
    assert "1 held another routing" in summary(tasks)[1]


def test_5_a_cli_switch_without_network_cli_in_the_inventory_pushes_nothing(lab, tmp_path):
    inventory = yaml.safe_load(open(lab["inventory"], encoding="utf-8"))
    for host in inventory["all"]["children"]["switches"]["hosts"].values():
        host.pop("ansible_connection")
    bare = tmp_path / "inventory.yml"
    bare.write_text(yaml.safe_dump(inventory))
    rc, tasks, output = deploy(lab, "-e", "verify=false", inventory=str(bare))
    assert rc != 0
    assert "CLI switches whose inventory does not set ansible_connection=ansible.netcommon.network_cli " \
           "(and ansible_network_os): sw0, sw1, sw2" in output
    assert CLI_TASK not in tasks


def holds_the_deployed_routing(lab):
    """Whether every switch's running configuration is the deployed intent's, as test_2 compares them
    (what a second deploy would find unchanged, without its minute of Ansible)."""
    intent = json.loads((lab["out"] / "intent.json").read_text())
    return all(dell_os6.parse(running_config(lab, name))
               == dell_os6.parse(dell_os6.render(intent["switches"][name], name)) for name in intent["switches"])


def play(lab, playbook, *args):
    proc = ansible_playbook("-i", str(TOPOLOGY), "-i", lab["inventory"], "-f", "8", playbook, *args)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    found = [hosts["localhost"] for name, hosts in tasks_by_name(proc.stdout).items() if name.startswith("Failover: ")]
    assert len(found) <= 1
    return found[0] if found else None


def pings(lab, src, dst):
    """Whether ``src`` reaches ``dst`` by unicast (test_faults_lab's check)."""
    return delivered(lab, [(src, dst)]) == [(src, dst)]


def test_6_a_failed_link_fails_over_over_the_cli_and_returns(lab):
    # the cable of sw1:3--sw2:2 pulled (sw1's veth down): h1 -> h2 is cut until the failover detours via sw0
    directory = str(lab["out"])
    assert play(lab, "playbooks/failover_plan.yml", "-e", "intent=%s" % directory)["coverage"]["link"] \
        == {"covered": 3, "total": 3}
    sw1 = lab["layout"]["switches"]["sw1"]
    netns_exec(sw1["netns"], "ip", "link", "set", "dev", sw1["ports"]["3"]["dev"], "down")
    assert not pings(lab, "h1", "h2")
    failed = play(lab, "playbooks/link_failed.yml", "-e", "link=sw1:3", "-e", "intent=%s" % directory)
    assert failed["changed"] and failed["stored"] and failed["reason"] == "fresh" and failed["bank_after"] == "B"
    assert pings(lab, "h1", "h2") and pings(lab, "h0a", "h2")
    assert not holds_the_deployed_routing(lab)      # the backup, in the other bank
    # the failed link's ports are neither shut nor given a VLAN of the backup
    for name, port in (("sw1", "Gi1/0/3"), ("sw2", "Gi1/0/2")):
        block = running_config(lab, name).split("interface %s\n" % port, 1)[1].split("exit")[0]
        assert "shutdown" not in block and "vlan add" not in block, (name, block)
    again = play(lab, "playbooks/link_failed.yml", "-e", "link=sw1:3", "-e", "intent=%s" % directory)
    assert not again["changed"] and "done already" in again["reason"]
    netns_exec(sw1["netns"], "ip", "link", "set", "dev", sw1["ports"]["3"]["dev"], "up")
    back = play(lab, "playbooks/link_restored.yml", "-e", "link=sw1:3", "-e", "intent=%s" % directory)
    assert back["changed"] and back["bank_after"] == "A"
    assert holds_the_deployed_routing(lab)


def _events(log):
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _wait_for(log, event, proc, timeout=120.0):
    """The first ``event`` of the responder's log; fails naming what was logged when the responder exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [entry for entry in _events(log) if entry["event"] == event]
        if found:
            return found[0]
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail("no %s event: %s" % (event, [entry["event"] for entry in _events(log)]))


def cut_and_return(lab, log, *settings, topology=TOPOLOGY, end=("sw1", "3"), link="sw1:3--sw2:2", pair=("h1", "h2")):
    """failover_watch.yml on ``lab`` (the OS6 ring) with ``settings``, the cable of ``link`` pulled at ``end``
    once it watches, put back once the failover settled, ``pair`` pinging between: (the cut's time, the
    responder's events)."""
    tool = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.Popen(
        [str(tool), "-i", str(topology), "-i", lab["inventory"], "playbooks/failover_watch.yml",
         "-e", "intent=%s" % lab["out"], "-e", "failover_watch_log=%s" % log, "-e", "failover_watch_max_events=2",
         "-e", "failover_watch_duration_s=240", *settings],
        cwd=str(Path(__file__).resolve().parents[3]), env=ansible_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    switch = lab["layout"]["switches"][end[0]]
    device = switch["ports"][end[1]]["dev"]
    try:
        _wait_for(log, "watching", proc)
        netns_exec(switch["netns"], "ip", "link", "set", "dev", device, "down")
        cut = time.time()
        recovered = _wait_for(log, "recovered", proc)
        assert recovered["name"] == link and recovered["proof"]["acyclic"] and not recovered["proof"]["drain"]
        assert pings(lab, *pair)
        _wait_for(log, "settled", proc)
        netns_exec(switch["netns"], "ip", "link", "set", "dev", device, "up")
        _wait_for(log, "restored", proc)
        output = proc.communicate(timeout=120)[0]
    finally:
        netns_exec(switch["netns"], "ip", "link", "set", "dev", device, "up")
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, output[-3000:]
    return cut, _events(log)


def first(events, name):
    return [entry for entry in events if entry["event"] == name][0]


def test_7_the_responder_polls_the_cli_switches_fails_over_and_returns(lab, tmp_path):
    # failover_watch.yml on the OS6 ring: no port status message to wait for, so every switch's interface
    # status is read every cli_interval_s; the planned move runs over the CLI, then the restore
    cut, events = cut_and_return(lab, tmp_path / "watch.jsonl", "-e", "failover_watch_cli_interval_s=0.5")
    assert first(events, "ready")["armed"] == []
    watching, recovered, restored = (first(events, name) for name in ("watching", "recovered", "restored"))
    assert watching["at"] < cut < recovered["at"] < restored["at"]
    print("responder over the CLI: detected %.2f s after the cut, recovered %.2f s after the cut"
          % (recovered["detected"] - cut, recovered["at"] - cut))
    assert holds_the_deployed_routing(lab)


SNMPD = "/usr/sbin/snmpd"
# net-snmp's DISMAN monitor on ifOperStatus every second, linkDown/linkUp with the IF-MIB objects (numeric:
# Debian ships no MIB files); an internal user for the monitor's own queries
SNMPD_TRAPS = """rocommunity public default
createUser ecInternal SHA "ethercluster-lab-internal" AES
rouser ecInternal
iquerySecName ecInternal
trap2sink {sink} public
notificationEvent ecLinkUp .1.3.6.1.6.3.1.1.5.4 .1.3.6.1.2.1.2.2.1.1 .1.3.6.1.2.1.2.2.1.7 .1.3.6.1.2.1.2.2.1.8
notificationEvent ecLinkDown .1.3.6.1.6.3.1.1.5.3 .1.3.6.1.2.1.2.2.1.1 .1.3.6.1.2.1.2.2.1.7 .1.3.6.1.2.1.2.2.1.8
monitor -r 1 -e ecLinkUp "link up" .1.3.6.1.2.1.2.2.1.8 == 1
monitor -r 1 -e ecLinkDown "link down" .1.3.6.1.2.1.2.2.1.8 == 2
"""


def test_8_a_switchs_link_down_trap_wakes_the_responder_before_its_poll(lab, tmp_path):
    # an snmpd in each switch's namespace sends linkDown/linkUp to the controller; the poll is every 60 s,
    # so a failover within seconds of the cut was woken by the trap
    if not os.path.exists(SNMPD):
        message = "%s is not installed (apt-get install snmpd)" % SNMPD
        if os.environ.get("CI") == "true":
            pytest.fail(message)    # CI installs it (.ci/run): a skip would hide a failure
        pytest.skip(message)
    sink = "%s:16162" % lab["layout"]["mgmt"]["gateway"]
    config = tmp_path / "snmpd.conf"
    config.write_text(SNMPD_TRAPS.format(sink=sink))
    pids = []
    try:
        for name, sw in lab["layout"]["switches"].items():
            state = tmp_path / ("snmp-%s" % name)
            state.mkdir()
            pids.append(tmp_path / ("snmpd-%s.pid" % name))
            netns_exec(sw["netns"], "env", "SNMP_PERSISTENT_DIR=%s" % state, SNMPD, "-C", "-c", str(config),
                       "-p", str(pids[-1]), "-Lf", str(tmp_path / ("snmpd-%s.log" % name)),
                       "udp:%s:161" % sw["mgmt_address"])
        cut, events = cut_and_return(lab, tmp_path / "watch.jsonl", "-e", "failover_watch_cli_interval_s=60",
                                     "-e", "failover_watch_traps_listen=%s" % sink)
    finally:
        for pid_file in pids:
            if pid_file.exists():
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
    recovered = first(events, "recovered")
    downs = [entry for entry in events if entry["event"] == "trap" and entry["trap"] == "linkDown"
             and entry["at"] >= cut - 0.5]
    assert downs and downs[0]["name"] in ("sw1", "sw2") and downs[0]["oper"] == "down"
    assert downs[0]["at"] <= recovered["detected"] and recovered["at"] - cut < 30.0
    print("responder woken by traps: first linkDown trap %.2f s after the cut, detected %.2f s, recovered %.2f s"
          % (downs[0]["at"] - cut, recovered["detected"] - cut, recovered["at"] - cut))
    assert holds_the_deployed_routing(lab)


# A 2x2 mesh of OS6 switches with segment routing's source trees and the fixed assignment (what an OS6
# fabric carries: an OS6 VLAN floods to every member, so no renamed assignment); its one covered link
TREES_LAB = "os6-trees"
TREES_TOPOLOGY = """\
# 2x2 mesh of emulated Dell OS6 switches, one host each (the responder on source trees)
plugin: ethercluster.routing.topology
name: os6-trees
switch_defaults: {platform: dell_os6}
generate: {kind: mesh, dims: [2, 2], hosts_per_switch: 1}
"""
TREES_LINK = "sw2:3--sw3:3"


@pytest.fixture(scope="module")
def trees_lab(lab_machine, tmp_path_factory):
    topology = tmp_path_factory.mktemp("os6_trees") / "topology.yml"
    topology.write_text(TREES_TOPOLOGY)
    for made in lab_with_output(TREES_LAB, topology, "198.18.8.48/28", "10.61.2.0/24",
                                tmp_path_factory.mktemp("deploy_os6_trees")):
        yield dict(made, topology=topology)


def test_9_the_responder_fails_a_source_tree_routing_over_by_its_repaired_trees_and_returns(trees_lab):
    lab = trees_lab
    rc, _tasks, output = deploy_topology(lab["topology"], lab, "-e", "routing=segment", "-e", "assignment=fixed",
                                         "-e", '{"engine_options": {"paths": "source_tree"}}')
    assert rc == 0, output[-3000:]
    intent = json.loads((lab["out"] / "intent.json").read_text())
    assert intent["fabric"]["assignment"] == "fixed"
    cut, events = cut_and_return(lab, lab["out"] / "watch.jsonl", "-e", "failover_watch_cli_interval_s=0.5",
                                 topology=lab["topology"], end=("sw2", "3"), link=TREES_LINK, pair=("node02", "node03"))
    ready, recovered = first(events, "ready"), first(events, "recovered")
    assert ready["planned"] == [TREES_LINK] and ready["armed"] == [], ready
    assert recovered["how"] == "pre-planned" and recovered["steps"][0]["name"].startswith("install bank B")
    print("responder on source trees over the CLI: detected %.2f s after the cut, recovered %.2f s after the cut"
          % (recovered["detected"] - cut, recovered["at"] - cut))
    assert holds_the_deployed_routing(lab)
