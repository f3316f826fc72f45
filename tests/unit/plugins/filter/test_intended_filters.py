"""The filters behind the roles (plugins/filter/intended.py): a reviewed
intended/ directory taken as it is, or refused naming the file; the fabric
settings read back from a deployed intent; the inventory checked against an
intent before a push; topology files Ansible read as plain YAML
inventories named."""

import json
import os
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.ethercluster.routing.plugins.filter.intended import (
    FilterModule,
    deployed_settings,
    intended_intent,
    inventory_problems,
    unclaimed_topologies,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import DEFAULTS
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import run_plan, sync_files

# the lab's ring, two of its switches on other platforms
RING = yaml.safe_load((Path(__file__).resolve().parents[2] / "fixtures" / "lab" / "ring3_topology.yml").read_text())
RING["switches"].update(sw1={"platform": "dell_os6"}, sw2={"platform": "linux_bridge"})
PUSH_PATHS = {"ovs": "ovs", "dell_os6": "cli", "huawei_vrp": "cli", "linux_bridge": "linux_bridge"}


@pytest.fixture()
def planned(tmp_path):
    """A directory as the plan writes it: intent.json, report.md, fabric.svg, configs/."""
    outcome = run_plan(RING, source="ring", routing="updown", assignment="fixed")
    assert outcome.accepted
    sync_files(str(tmp_path / "intended"), outcome.contents)
    return tmp_path / "intended", outcome.plan.intent


def test_the_filters_are_registered():
    assert set(FilterModule().filters()) == {
        "intended_intent", "deployed_settings", "inventory_problems", "unclaimed_topologies"}


def test_a_reviewed_directory_gives_its_intent(planned):
    directory, intent = planned
    assert sorted(os.listdir(directory / "configs")) == ["sw0.flows", "sw1.cfg", "sw2.interfaces", "sw2.sh"]
    assert intended_intent(str(directory)) == json.loads(json.dumps(intent))


def test_a_config_edited_by_hand_is_refused_naming_it(planned):
    directory, _intent = planned
    config = directory / "configs" / "sw1.cfg"
    config.write_text(config.read_text() + "vlan 999\n")
    with pytest.raises(AnsibleFilterError, match=r"configs/sw1\.cfg: differs from what intent\.json renders to"):
        intended_intent(str(directory))


def test_a_config_of_no_switch_is_refused_and_stale_files_are_ignored(planned):
    directory, _intent = planned
    (directory / "configs" / "sw9.cfg").write_text("hostname sw9\n")
    (directory / "configs" / "sw8.cfg.stale").write_text("old\n")
    with pytest.raises(AnsibleFilterError, match=r"configs/sw9\.cfg: no switch of the intent has this file"):
        intended_intent(str(directory))
    (directory / "configs" / "sw9.cfg").unlink()
    assert intended_intent(str(directory))["fabric"]["routing"] == "updown"


BROKEN = [
    (None, None, r"intent\.json not found; plan first"),
    ("intent.json.stale", "{}", r"only intent\.json\.stale: the last plan of that directory was rejected"),
    ("intent.json", '{"schema": "someone/else/v9", "switches": {}}',
     r"is not an intent \(schema ethercluster\.routing/intent/v1 expected"),
    ("intent.json", "{not json", r"intent\.json is not valid JSON"),
    ("intent.json", '{"schema": "ethercluster.routing/intent/v1", "switches": {}}', r"has no switches"),
]


@pytest.mark.parametrize("name, text, message", BROKEN)
def test_missing_stale_and_foreign_intents_are_refused(tmp_path, name, text, message):
    if name is not None:
        (tmp_path / name).write_text(text)
    with pytest.raises(AnsibleFilterError, match=message):
        intended_intent(str(tmp_path))


def test_no_directory_is_refused(tmp_path):
    with pytest.raises(AnsibleFilterError, match=r"is not a directory"):
        intended_intent(str(tmp_path / "nowhere"))
    with pytest.raises(AnsibleFilterError, match=r"give the directory of a reviewed plan"):
        intended_intent(None)


def test_settings_come_back_from_the_deployed_intent(planned):
    directory, intent = planned
    intent["fabric"]["settings"] = dict(DEFAULTS, routing="updown", assignment="fixed",
                                        engine_options={"root": "sw1"}, vlan_range=[200, 3000])
    (directory / "intent.json").write_text(json.dumps(intent))
    found = deployed_settings(str(directory), None, ["sw2", "sw0", "sw1"])
    assert found["source"] == "intent"
    assert found["options"] == {"routing": "updown", "assignment": "fixed", "engine_options": {"root": "sw1"},
                                "plan_options": {"vlan_range": [200, 3000], "traffic": "uniform",
                                                 "broadcast": "contained"}}
    assert found["note"] == "from the deployed intent %s" % (directory / "intent.json")


def test_without_an_intent_of_these_switches_the_topology_block_is_used(tmp_path, planned):
    directory, _intent = planned
    topology = tmp_path / "fabric.yml"
    topology.write_text("name: other\nfabric:\n  routing: dor\n  assignment: fixed\nswitches: {}\n")
    found = deployed_settings(str(directory), str(topology), ["sw0", "sw1"])
    assert found["source"] == "topology"
    assert found["settings"]["routing"] == "dor" and found["settings"]["assignment"] == "fixed"
    assert "is the intent of other switches (sw0, sw1, sw2; the inventory has sw0, sw1): ignored" in found["note"]
    found = deployed_settings(str(tmp_path / "none"), None, [])
    assert found["source"] == "default" and found["settings"] == DEFAULTS
    assert found["note"].startswith("no deployed intent at %s" % (tmp_path / "none" / "intent.json"))
    topology.write_text("fabric:\n  bank: Q\n")
    with pytest.raises(AnsibleFilterError, match=r"fabric\.yml: fabric\.bank: must be one of A, B"):
        deployed_settings(str(tmp_path / "none"), str(topology), [])


def test_the_inventory_must_hold_exactly_the_intents_switches(planned):
    _directory, intent = planned
    network_cli = {"ansible_connection": "ansible.netcommon.network_cli"}
    assert inventory_problems(intent, ["sw0", "sw1", "sw2"], {"sw1": network_cli}, PUSH_PATHS) == ""
    message = inventory_problems(intent, ["sw0", "sw1", "sw7"], {"sw1": {}}, PUSH_PATHS, "fabric.yml")
    assert message == (
        "nothing pushed: switches of the intent missing from the inventory group switches: sw2; "
        "switches of the inventory not in the intent of fabric.yml: sw7; "
        "CLI switches whose inventory does not set ansible_connection=ansible.netcommon.network_cli "
        "(and ansible_network_os): sw1")
    message = inventory_problems(intent, ["sw0", "sw1", "sw2"], {"sw1": {"ansible_connection": "ssh"}},
                                 {"ovs": "ovs", "dell_os6": "cli"})
    assert ("switches on a platform deploy_routing.yml has no push path for (it pushes ovs, dell_os6): "
            "sw2 (linux_bridge); ") in message
    assert message.endswith("(and ansible_network_os): sw1")
    with pytest.raises(AnsibleFilterError, match="the intent has no switches mapping"):
        inventory_problems(None, [], {}, PUSH_PATHS)


@pytest.mark.parametrize("text", [
    "generate: {kind: torus, dims: [4, 4], hosts_per_switch: 1}\n",
    "name: rack3\nswitches:\n  sw0: {}\n  sw1: {}\nlinks:\n  - {a: sw0:1, b: sw1:1}\n",
    "switches:\n  sw0: {platform: ovs}\n",
])
def test_a_topology_without_its_plugin_line_is_named(tmp_path, text):
    path = tmp_path / "fabric.yml"
    path.write_text(text)
    messages = unclaimed_topologies([str(path), str(tmp_path)])
    assert messages == ["%s: a topology file without the line 'plugin: ethercluster.routing.topology', so "
                        "Ansible read it as a plain YAML inventory (its keys became groups) and took none of "
                        "its switches; add that line at the top of the file" % path]
    path.write_text("plugin: ethercluster.routing.topology\n" + text)
    assert unclaimed_topologies([str(path)]) == []


@pytest.mark.parametrize("name, text", [
    ("inventory.yml", "all:\n  children:\n    switches:\n      hosts: {sw0: {}}\n"),
    ("groups.yml", "switches:\n  hosts:\n    sw0: {}\n"),            # an inventory group named switches
    ("other.yml", "plugin: community.general.nmap\naddress: 10.0.0.0/24\n"),
    ("vars.yml", "generate: 1\nowner: me\n"),                            # a key no topology has
    ("broken.yml", "generate: [\n"),
    ("hosts.ini", "generate: {kind: torus}\n"),
])
def test_other_inventory_sources_are_left_alone(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert unclaimed_topologies([str(path), str(tmp_path / "absent.yml")]) == []


def test_unclaimed_topologies_wants_the_list_of_sources():
    with pytest.raises(AnsibleFilterError, match="expects the list of inventory sources, got int"):
        unclaimed_topologies(42)
