"""lab_up.yml, lab_down.yml and the ovs_switch module through
ansible-playbook, on a real three-switch lab: idempotent playbooks,
``--check --diff`` that shows per-switch changes and touches nothing, a
push whose second run changes nothing, and a teardown that leaves nothing.
"""

import json

import pytest
from lab_helpers import (
    FIXTURES,
    ansible_playbook,
    netns_exec,
    processes_mentioning,
    root_interfaces,
)

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan, runner

pytestmark = pytest.mark.lab

LAB = "pytest-playbooks"
STATE_ROOT = "/run/ethercluster-lab"
LAB_VARS = ["-e", "topology=%s" % (FIXTURES / "ring3_topology.yml"), "-e", "lab_name=%s" % LAB,
            "-e", "lab_mgmt_network=203.0.113.64/26", "-e", "lab_host_network=10.44.0.0/16"]


def play(*args):
    """Run ansible-playbook with the JSON callback; return (stats, task results
    as {task name: {host: result}}) and fail with its output if it failed."""
    proc = ansible_playbook(*args)
    start = proc.stdout.find("{")
    assert proc.returncode == 0 and start >= 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(proc.stdout[start:])
    tasks = {}
    for entry in data["plays"]:
        for task in entry["tasks"]:
            tasks[task["task"]["name"]] = task["hosts"]
    return data["stats"], tasks


@pytest.fixture(scope="module")
def lab_inventory(lab_machine):
    runner.lab_down(STATE_ROOT, LAB)
    before = root_interfaces()
    stats, tasks = play("playbooks/lab_up.yml", *LAB_VARS)
    yield {"before": before, "stats": stats, "tasks": tasks,
           "inventory": "%s/%s/inventory.yml" % (STATE_ROOT, LAB)}
    runner.lab_down(STATE_ROOT, LAB)


def test_lab_up_builds_the_lab_and_a_second_run_changes_nothing(lab_inventory):
    assert lab_inventory["stats"]["localhost"]["changed"] >= 1
    built = lab_inventory["tasks"]["Build the lab"]["localhost"]
    assert built["outcome"] == "created"
    assert set(built["summary"]["switches"]) == {"sw0", "sw1", "sw2"}
    assert built["memory"]["processes"] == 9  # ovsdb-server, ovs-vswitchd, sshd per switch
    stats, tasks = play("playbooks/lab_up.yml", *LAB_VARS)
    assert stats["localhost"]["changed"] == 0
    assert tasks["Build the lab"]["localhost"]["outcome"] == "unchanged"


def test_check_diff_shows_each_switch_and_touches_nothing(lab_inventory):
    stats, tasks = play("-i", lab_inventory["inventory"], "--check", "--diff",
                        str(FIXTURES / "push_intent.yml"),
                        "-e", "intent_file=%s" % (FIXTURES / "ring3_intent.yml"))
    results = tasks["Push the intent"]
    assert set(results) == {"sw0", "sw1", "sw2"}
    for switch, result in results.items():
        assert result["changed"] is True
        diff = result["diff"]
        assert diff["before_header"] == "%s: on the switch" % switch
        assert "flow " not in diff["before"]
        assert "flow cookie=0xec00,table=1,priority=0,actions=learn(" in diff["after"]
    # check mode wrote nothing: the switches still hold no flow at all
    layout = runner.read_record(STATE_ROOT, LAB)["layout"]
    for sw in layout["switches"].values():
        flows = netns_exec(sw["netns"], "ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                           "unix:%s/br0.mgmt" % sw["dir"], "--no-stats").stdout
        assert "cookie" not in flows and "actions" not in flows


def test_push_then_push_again_changes_nothing_and_frames_flow(lab_inventory):
    stats, tasks = play("-i", lab_inventory["inventory"], str(FIXTURES / "push_intent.yml"),
                        "-e", "intent_file=%s" % (FIXTURES / "ring3_intent.yml"))
    for switch in ("sw0", "sw1", "sw2"):
        assert stats[switch]["changed"] == 1  # the first push only
        assert stats[switch]["failures"] == 0
    layout = runner.read_record(STATE_ROOT, LAB)["layout"]
    h0a, h2 = layout["hosts"]["h0a"], layout["hosts"]["h2"]
    assert netns_exec(h0a["netns"], "ping", "-c", "2", "-W", "2", "-q", h2["address"],
                      check=False).returncode == 0


def test_lab_down_removes_everything_and_a_second_run_changes_nothing(lab_inventory):
    layout = runner.read_record(STATE_ROOT, LAB)["layout"]
    stats, tasks = play("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
    assert tasks["Remove the lab"]["localhost"]["outcome"] == "removed"
    assert stats["localhost"]["changed"] == 1
    assert root_interfaces() == lab_inventory["before"]
    assert runner.netns_processes(plan.all_netns(layout)) == {}
    assert processes_mentioning(layout["dir"]) == []
    assert not any(runner.netns_exists(ns) for ns in plan.all_netns(layout))
    stats, tasks = play("playbooks/lab_down.yml", "-e", "lab_name=%s" % LAB)
    assert stats["localhost"]["changed"] == 0
    assert tasks["Remove the lab"]["localhost"]["outcome"] == "absent"
