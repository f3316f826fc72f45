"""playbooks/deploy_routing.yml end to end on a real lab (the ring of
fixtures/lab/): plan -> checks -> render -> push -> verification on the
wire; a second run changes nothing; --check --diff shows each switch and
touches nothing; a rejected plan or an inventory that does not match the
intent pushes nothing.
"""

import pytest
from lab_helpers import FIXTURES, ansible_playbook, held_pipelines, lab_with_output, play_results

pytestmark = pytest.mark.lab

LAB = "pytest-deploy"
TOPOLOGY = FIXTURES / "ring3_topology.yml"
SWITCHES = {"sw0", "sw1", "sw2"}
PLAN_TASK = "Plan routing, VLANs and static MACs; check everything; write the intent"
PUSH_TASK = "Push the intent (read what the switch holds, compare, write the difference)"
VERIFY_TASK = "Verify on the wire (pings, planned paths, broadcast, no storm, TCP, STP off)"
SUMMARY_TASK = "Print the summary"


def deploy(lab, *args):
    """Run deploy_routing.yml with the JSON callback; return (rc, stats,
    {task name: {host: result}}, output)."""
    proc = ansible_playbook("-i", str(TOPOLOGY), "-i", lab["inventory"], "-f", "8",
                            "playbooks/deploy_routing.yml", "-e", "out=%s" % lab["out"], *args)
    stats, tasks = play_results(proc.stdout)
    return proc.returncode, stats, tasks, proc.stdout + proc.stderr


def flows(lab):
    """The pipeline every switch holds (learned entries left out)."""
    return held_pipelines(lab["layout"])


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    yield from lab_with_output(LAB, TOPOLOGY, "198.18.0.32/28", "10.47.0.0/16", tmp_path_factory.mktemp("deploy"))


def test_a_rejected_plan_pushes_nothing(lab):
    rc, stats, tasks, output = deploy(lab, "-e", "routing=dor")
    assert rc != 0
    assert "dor: needs a mesh or torus" in tasks[PLAN_TASK]["localhost"]["msg"]
    assert PUSH_TASK not in tasks and not SWITCHES & set(stats)
    assert flows(lab) == {switch: [] for switch in SWITCHES}


def test_an_inventory_that_does_not_match_the_intent_pushes_nothing(lab, tmp_path):
    two = tmp_path / "two.yml"
    two.write_text(TOPOLOGY.read_text().replace("  sw2: {}\n", "").replace(
        '  - {a: "sw1:3", b: "sw2:2"}\n', "").replace('  - {a: "sw2:3", b: "sw0:3"}\n', "")
        .replace('  h2: {switch: sw2, port: "1", mac: "02:00:00:00:00:04"}\n', ""))
    rc, stats, tasks, output = deploy(lab, "-e", "topology=%s" % two)
    assert rc != 0
    assert "switches of the inventory not in the intent of %s: sw2" % two in output
    assert PUSH_TASK not in tasks
    assert flows(lab) == {switch: [] for switch in SWITCHES}


def test_deploy_pushes_every_switch_and_verifies_on_the_wire(lab):
    rc, stats, tasks, output = deploy(lab)
    assert rc == 0, output[-3000:]
    assert {switch: result["changed"] for switch, result in tasks[PUSH_TASK].items()} == \
        {switch: True for switch in SWITCHES}
    verified = tasks[VERIFY_TASK]["localhost"]
    assert verified["passed"] is True
    assert {check["name"] for check in verified["checks"]} == {
        "stp_off", "broadcast", "no_storm", "planned_paths", "ping", "tcp"}
    summary = tasks[SUMMARY_TASK]["localhost"]["msg"]
    # assignment auto: segment routing on a ring of three routes each source along a tree
    assert summary[0].startswith("ring3: segment routing, fixed VLAN assignment, 3 VLANs used")
    assert summary[1] == "switches: 3 changed, 0 unchanged (sw0, sw1, sw2)"
    assert summary[2].startswith("verification: PASSED, 6/6 checks passed")
    assert (lab["out"] / "intent.json").exists()
    assert all(flows(lab).values())


def test_a_second_deploy_changes_nothing(lab):
    before = flows(lab)
    rc, stats, tasks, output = deploy(lab, "-e", "verify=false")
    assert rc == 0, output[-3000:]
    assert all(host["changed"] == 0 for host in stats.values()), stats
    assert tasks[SUMMARY_TASK]["localhost"]["msg"][1] == "switches: 0 changed, 3 unchanged"
    assert flows(lab) == before


def test_check_diff_shows_each_switch_and_touches_nothing(lab):
    before = flows(lab)
    intent_before = (lab["out"] / "intent.json").read_text()
    rc, stats, tasks, output = deploy(lab, "--check", "--diff", "-e", "bank=B")
    assert rc == 0, output[-3000:]
    changed = {switch for switch, result in tasks[PUSH_TASK].items() if result["changed"]}
    assert changed == SWITCHES  # other VLAN IDs on every switch
    for switch in changed:
        diff = tasks[PUSH_TASK][switch]["diff"]
        assert diff["before_header"] == "%s: on the switch" % switch
        assert diff["after_header"] == "%s: intent" % switch
        assert diff["before"] != diff["after"]
    assert '"bank": "B"' in tasks[PLAN_TASK]["localhost"]["diff"]["after"]
    assert VERIFY_TASK not in tasks or tasks[VERIFY_TASK]["localhost"].get("skipped")
    summary = tasks[SUMMARY_TASK]["localhost"]["msg"]
    assert summary[1].startswith("switches: 3 would change, 0 unchanged (sw0, sw1, sw2); 3 held "
                                 "another routing")
    assert summary[2] == "verification: skipped (check mode)"
    assert flows(lab) == before
    assert (lab["out"] / "intent.json").read_text() == intent_before
