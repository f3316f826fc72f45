"""The roles' workflow on a real lab (the ring of fixtures/lab/), every
playbook run from a fresh working directory as an operator would: plan.yml
writes intended/, deploy_routing.yml -e intent=intended pushes that
reviewed intent without planning again (and refuses a directory whose
configs/ was edited), validate.yml reads every switch back and names the one
changed by hand, and link_off.yml / link_on.yml need only -e link=: the
fabric settings come back from the deployed intent.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lab_helpers import FIXTURES, ROOT, ansible_env, build_lab, held_pipelines, netns_exec, tasks_by_name

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner

pytestmark = pytest.mark.lab

LAB = "pytest-roles"
SWITCHES = {"sw0", "sw1", "sw2"}
FAST = ["-e", "renegotiation_s=0.5", "-e", "transition_wait_s=0.5"]
# task names of the roles
PLAN_TASK, TAKE_TASK, PUSH_TASK, SUMMARY_TASK = (
    "Plan routing, VLANs and static MACs; check everything; write the intent",
    "Take the intent of the reviewed plan, without planning: intended",
    "Push the intent (read what the switch holds, compare, write the difference)",
    "Print the summary")


def run(lab, playbook, *args):
    """ansible-playbook PLAYBOOK from the lab's working directory, with the
    topology and the lab's inventory; (rc, {task: {host: result}}, output)."""
    tool = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run([str(tool), "-i", str(FIXTURES / "ring3_topology.yml"), "-i", lab["inventory"],
                           "-f", "8", str(ROOT / "playbooks" / playbook), *args], cwd=str(lab["cwd"]),
                          env=ansible_env(), capture_output=True, text=True, timeout=600, check=False)
    return proc.returncode, tasks_by_name(proc.stdout), proc.stdout + proc.stderr


def flows(lab):
    return held_pipelines(lab["layout"])


def files(directory):
    return {str(path.relative_to(directory)): path.read_text() for path in sorted(directory.rglob("*"))
            if path.is_file()}


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    built = build_lab(LAB, FIXTURES / "ring3_topology.yml", "198.18.24.0/28", "10.66.0.0/16")
    yield dict(built, cwd=tmp_path_factory.mktemp("operator"))
    runner.lab_down("/run/ethercluster-lab", LAB)


def test_1_plan_writes_the_reviewable_directory_and_touches_no_switch(lab):
    rc, tasks, output = run(lab, "plan.yml", "-e", "assignment=fixed")
    assert rc == 0, output[-3000:]
    intended = lab["cwd"] / "intended"
    assert sorted(files(intended)) == ["configs/sw0.flows", "configs/sw1.flows", "configs/sw2.flows",
                                       "fabric.svg", "intent.json", "report.md"]
    settings = json.loads((intended / "intent.json").read_text())["fabric"]["settings"]
    assert settings["assignment"] == "fixed" and settings["routing"] == "segment"
    assert flows(lab) == {switch: [] for switch in SWITCHES}


def test_2_deploy_pushes_the_reviewed_intent_without_planning(lab):
    intended = lab["cwd"] / "intended"
    before = files(intended)
    rc, tasks, output = run(lab, "deploy_routing.yml", "-e", "intent=intended")
    assert rc == 0, output[-3000:]
    assert PLAN_TASK not in tasks and TAKE_TASK in tasks
    assert {switch for switch, result in tasks[PUSH_TASK].items() if result["changed"]} == SWITCHES
    summary = tasks[SUMMARY_TASK]["localhost"]["msg"]
    assert summary[0].startswith("ring3: segment routing, fixed VLAN assignment")
    assert summary[0].endswith("the reviewed intent of %s (not planned again)" % (intended / "intent.json"))
    assert summary[1] == "switches: 3 changed, 0 unchanged (sw0, sw1, sw2)"
    assert summary[2].startswith("verification: PASSED, 6/6 checks passed")
    assert files(intended) == before      # nothing planned, nothing rewritten
    assert all(flows(lab).values())


def test_3_an_edited_config_is_refused_before_any_push(lab):
    edited = lab["cwd"] / "edited"
    shutil.copytree(lab["cwd"] / "intended", edited)
    config = edited / "configs" / "sw1.flows"
    config.write_text(config.read_text().replace("priority=", "priority=1", 1))
    before = flows(lab)
    rc, tasks, output = run(lab, "deploy_routing.yml", "-e", "intent=edited", "-e", "verify=false")
    assert rc != 0
    assert "configs/sw1.flows: differs from what intent.json renders to" in output
    assert PUSH_TASK not in tasks
    assert flows(lab) == before


def test_4_validate_reads_back_and_names_a_switch_changed_by_hand(lab):
    rc, tasks, output = run(lab, "validate.yml", "-e", "verify=false")
    assert rc == 0, output[-3000:]
    assert tasks[SUMMARY_TASK]["localhost"]["msg"][1] == "read back: 3 of 3 switches hold the intent"
    sw1 = lab["layout"]["switches"]["sw1"]
    netns_exec(sw1["netns"], "ovs-ofctl", "-O", "OpenFlow13", "del-flows", "unix:%s/br0.mgmt" % sw1["dir"],
               "cookie=0xec00/-1")
    rc, tasks, output = run(lab, "validate.yml", "-e", "verify=false")
    assert rc != 0
    assert tasks[SUMMARY_TASK]["localhost"]["msg"][1] == "read back: 2 of 3 switches hold the intent; differ: sw1"
    assert "1 switch does not hold the intent: sw1" in output
    # the reviewed intent again, and only sw1 is written
    rc, tasks, output = run(lab, "deploy_routing.yml", "-e", "intent=intended", "-e", "verify=false")
    assert rc == 0, output[-3000:]
    assert {switch for switch, result in tasks[PUSH_TASK].items() if result["changed"]} == {"sw1"}


def test_5_a_transition_needs_only_the_link(lab):
    """Deployed with the fixed assignment asked for (recorded in the intent, not in the
    topology file): link off and on reproduce it from intended/intent.json."""
    for playbook in ("link_off.yml", "link_on.yml"):
        rc, tasks, output = run(lab, playbook, "-e", "link=sw0:2", *FAST)
        assert rc == 0, output[-3000:]
        result = next(hosts["localhost"] for name, hosts in tasks.items()
                      if name.startswith("Read the switches, plan make-before-break, run the steps"))
        assert result["changed"] and result["proof"]["assignment"] == "fixed"
        printed = tasks["Print the transition (check mode - the whole step list; else each step run)"]
        assert printed["localhost"]["msg"][-1] == (
            "fabric settings: segment routing, fixed VLAN assignment (from the deployed intent %s)"
            % (lab["cwd"] / "intended" / "intent.json"))
