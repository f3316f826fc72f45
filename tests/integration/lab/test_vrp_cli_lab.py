"""The VRP CLI path end to end on a real lab whose ring mixes the three
platforms the lab emulates (fixtures/lab/ring3_mixed_topology.yml: sw0 OVS,
sw1 Dell OS6, sw2 Huawei VRP): deploy_routing.yml pushes sw2 over
ansible.netcommon.network_cli with the collection's huawei_vrp
cliconf/terminal plugins; check mode shows the VRP lines and touches
nothing; the pushed configuration reaches sw2's OVS data plane and frames
cross the fabric (the verification on the wire); a second run changes
nothing; a change made by hand in the VRP CLI is undone with exactly the
needed lines and saved (save, answered y)."""

import json

import pytest
from lab_helpers import FIXTURES, cli_session, lab_with_output
from test_os6_cli_lab import deploy_topology, pipeline, running_config, second_run_changes_nothing, summary

from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import huawei_vrp, ovs

pytestmark = pytest.mark.lab

LAB = "h2a"
TOPOLOGY = FIXTURES / "ring3_mixed_topology.yml"
CLI_TASK = "Push the configuration over the CLI (only the lines that differ from the running configuration)"
OVS_TASK = "Push the intent (read what the switch holds, compare, write the difference)"
SAVE_TASK = "Save the running configuration (save_config=true)"


@pytest.fixture(scope="module")
def lab(lab_machine, tmp_path_factory):
    yield from lab_with_output(LAB, TOPOLOGY, "198.18.20.0/26", "10.82.1.0/24", tmp_path_factory.mktemp("deploy_vrp"))


def deploy(lab, *args):
    """deploy_routing.yml on the mixed ring (the OS6 test's runner, this topology)."""
    return deploy_topology(TOPOLOGY, lab, *args)


def test_1_check_mode_shows_the_vrp_lines_and_touches_nothing(lab):
    rc, tasks, output = deploy(lab, "--check", "--diff")
    assert rc == 0, output[-3000:]
    result = tasks[CLI_TASK]["sw2"]
    assert result["changed"] and result["commands"][:2] == ["stp disable", "vlan batch 100 to 102"]
    assert "port link-type hybrid" in result["commands"] and "undo port hybrid vlan 1" in result["commands"]
    assert tasks[CLI_TASK]["sw1"]["changed"] and tasks[OVS_TASK]["sw0"]["changed"]
    assert running_config(lab, "sw2") is None and pipeline(lab, "sw2") == []


def test_2_the_push_reaches_the_vrp_data_plane_and_frames_cross_the_mixed_fabric(lab):
    rc, tasks, output = deploy(lab)
    assert rc == 0, output[-3000:]
    assert summary(tasks)[2].startswith("verification: PASSED, 6/6 checks passed"), summary(tasks)
    assert "switches: 3 changed, 0 unchanged" in summary(tasks)[1]
    assert "held another routing" not in summary(tasks)[1]  # a first push replaces nothing
    entry = json.loads((lab["out"] / "intent.json").read_text())["switches"]["sw2"]
    assert huawei_vrp.parse(running_config(lab, "sw2"), strict=False) == huawei_vrp.parse(huawei_vrp.render(entry, "sw2"))
    assert pipeline(lab, "sw2") == sorted(ovs.render(dict(entry, platform="ovs"), "sw2")["flows"])


def test_3_a_second_run_changes_nothing(lab):
    second_run_changes_nothing(deploy, lab)


def test_4_a_change_made_in_the_vrp_cli_is_undone_with_exactly_the_needed_lines_and_saved(lab):
    before = pipeline(lab, "sw2")
    reply = cli_session(lab, "sw2", ["system-view", "vlan batch 999", "interface GigabitEthernet0/0/2",
                                     "port hybrid tagged vlan 999", "shutdown", "return",
                                     "display interface brief", "quit"])
    assert "Error:" not in reply.stdout, reply.stdout
    rows = {line.split()[0]: line.split()[1] for line in reply.stdout.splitlines()
            if line.startswith("GigabitEthernet")}
    assert rows == {"GigabitEthernet0/0/1": "up", "GigabitEthernet0/0/2": "*down", "GigabitEthernet0/0/3": "up"}
    assert pipeline(lab, "sw2") != before  # the CLI change reached OVS
    rc, tasks, output = deploy(lab, "-e", "verify=false", "-e", "save_config=true")
    assert rc == 0, output[-3000:]
    assert tasks[CLI_TASK]["sw2"]["commands"] == [
        "interface GigabitEthernet0/0/2", "undo port hybrid vlan 999", "undo shutdown", "quit",
        "undo vlan batch 999"]
    assert not tasks[CLI_TASK]["sw1"]["changed"]
    assert pipeline(lab, "sw2") == before
    assert not tasks[SAVE_TASK]["sw2"].get("skipped") and "sw1" not in tasks[SAVE_TASK]
    with open("%s/startup-config" % lab["layout"]["switches"]["sw2"]["dir"], encoding="utf-8") as handle:
        assert handle.read() == running_config(lab, "sw2")
    assert "1 held another routing" in summary(tasks)[1]
