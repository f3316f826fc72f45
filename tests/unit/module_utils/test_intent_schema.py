"""The intent's shipped JSON Schema (module_utils/intent/schemas/, docs/intent.md):
the planner's intents match it, every kind of corruption is refused with
its path, the hand-checked static MAC entries follow exactly the schema's
rules, and intents are checked when written and when read."""

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent import schema as intent_schema
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import read_intent
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import intent_text

ROOT = Path(__file__).resolve().parents[3]

# (generator, engine, assignment, mac_learning): the combinations the
# end-to-end tests plan, each kind of fabric and both assignments
PLANS = [
    ({"kind": "torus", "dims": [4, 4]}, "segment", "renamed", "static"),
    ({"kind": "mesh", "dims": [3, 3]}, "dor", "fixed", "self"),
    ({"kind": "mesh", "dims": [4, 4], "faults": 2, "seed": 1}, "segment", "renamed", "static"),
    ({"kind": "fat_tree", "u": 2, "d": 4, "r": 2}, "updown", "renamed", "static"),
    ({"kind": "random", "switches": 12, "degree": 3, "seed": 3}, "tbtp", "renamed", "static"),
    ({"kind": "complete", "switches": 5}, "stp", "fixed", "static"),
    ({"kind": "mesh", "dims": [4, 4]}, "dor", "fixed", "static"),
    ({"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2}, "dor", "renamed", "static"),
    ({"kind": "random", "switches": 12, "degree": 3, "seed": 3}, "segment", "auto", "static"),
]


@pytest.fixture(scope="module", name="intent")
def fixture_intent():
    data = {
        "name": "ring",
        "switches": {"sw0": {"mgmt_address": "192.0.2.1"}, "sw1": {"platform": "dell_os6"}, "sw2": {}},
        "links": [{"a": "sw0:25", "b": "sw1:25"}, {"a": "sw1:26", "b": "sw2:26"}, {"a": "sw2:25", "b": "sw0:26"}],
        "hosts": {"n%d" % i: {"switch": "sw%d" % i, "port": "1", "ip": "192.0.2.1%d" % i,
                              "mac": "02:00:00:00:00:0%d" % (i + 1)} for i in range(3)},
    }
    topology = topology_from_data(data)
    return plan(topology, engine="updown", assignment="renamed", broadcast="bounded").intent


@pytest.mark.parametrize("spec, engine, assignment, learning", PLANS)
def test_the_planners_intents_match_the_schema(spec, engine, assignment, learning):
    result = plan(topology_from_data({"generate": spec}), engine=engine, assignment=assignment,
                  mac_learning=learning,
                  broadcast="bounded" if assignment == "renamed" else "contained")
    assert intent_schema.intent_problems(result.intent) == []
    # and jsonschema itself, with the static entries checked by the schema too
    validator = jsonschema.Draft7Validator(intent_schema.schema())
    assert list(validator.iter_errors(json.loads(json.dumps(result.intent)))) == []


CORRUPTIONS = [
    (lambda i: i["switches"]["sw0"]["ports"]["1"].update(pvid=5000),
     'switches.sw0.ports."1".pvid: 5000 is greater than the maximum of 4094'),
    (lambda i: i["switches"]["sw0"].update(vlans="100"), "switches.sw0.vlans: '100' is not of type 'array'"),
    (lambda i: i["switches"]["sw0"].pop("ports"), "switches.sw0: 'ports' is a required property"),
    (lambda i: i["switches"]["sw0"].update(colour="red"), "switches.sw0: Additional properties are not allowed"),
    (lambda i: i["hosts"]["n0"].update(mac="02:00:00:00:00:0G"), "hosts.n0.mac: '02:00:00:00:00:0G' does not match"),
    (lambda i: i["hosts"]["n0"].update(mac="02:00:00:00:00:01\n"), "hosts.n0.mac: '02:00:00:00:00:01\\n' does not match"),
    (lambda i: i["switches"].update({"sw9\n": i["switches"]["sw2"]}), "switches: 'sw9\\n' does not match"),
    (lambda i: i["switches"]["sw1"].update(interface_names={"1": "Gi1/0/1\nreload"}),
     "switches.sw1.interface_names.\"1\": 'Gi1/0/1\\nreload' does not match"),
    (lambda i: i["switches"]["sw1"].update(platform="dell_os6 "), "switches.sw1.platform: 'dell_os6 ' does not match"),
    (lambda i: i["links"][0].update(state="half"), "links[0].state: 'half' is not one of ['up', 'down']"),
    (lambda i: i["fabric"].update(assignment="mixed"), "fabric.assignment: 'mixed' is not one of"),
    (lambda i: i.update(extra=1), "(top level): Additional properties are not allowed"),
    (lambda i: i["switches"]["sw0"]["static_macs"][0].update(vlan=0),
     "switches.sw0.static_macs[0]: vlan: 0 is not a VLAN ID 1-4094"),
    (lambda i: i["switches"]["sw0"]["static_macs"][0].update(port="1;reboot"),
     "switches.sw0.static_macs[0]: port: '1;reboot' does not match the port pattern"),
]


@pytest.mark.parametrize("corrupt, expected", CORRUPTIONS, ids=[c[1][:40] for c in CORRUPTIONS])
def test_each_corruption_is_refused_with_its_path(intent, corrupt, expected):
    broken = copy.deepcopy(intent)
    corrupt(broken)
    with pytest.raises(intent_schema.IntentSchemaError) as info:
        intent_schema.validate_intent(broken, "out/intent.json")
    message = str(info.value)
    assert message.startswith("out/intent.json: not a valid intent (ethercluster.routing/intent/v1)")
    assert expected in message


def test_another_schema_version_is_refused_by_name(intent):
    with pytest.raises(intent_schema.IntentSchemaError, match="'ethercluster.routing/intent/v2' is not "
                                                              "ethercluster.routing/intent/v1"):
        intent_schema.validate_intent(dict(intent, schema="ethercluster.routing/intent/v2"))


def test_every_problem_is_listed(intent):
    broken = copy.deepcopy(intent)
    broken["switches"]["sw0"]["ports"]["1"]["pvid"] = 0
    broken["hosts"]["n1"]["port"] = "x"
    broken["switches"]["sw2"]["static_macs"][0]["mac"] = "ff"
    problems = intent_schema.intent_problems(broken)
    paths = {problem.split(": ")[0] for problem in problems}
    assert {"hosts.n1.port", 'switches.sw0.ports."1".pvid', "switches.sw2.static_macs[0]"} <= paths


STATIC_VALUES = st.one_of(st.text(max_size=20), st.integers(-5, 5000), st.booleans(), st.none(),
                          st.sampled_from(["02:00:00:00:00:01", "02:00:00:00:00:01\n", "1", "25", "0", "65535",
                                           "99999", "1\n", "0a:1b:2c:3d:4e:5f", "0A:1B:2C:3D:4E:5F"]))


@settings(max_examples=300, deadline=None)
@given(entry=st.one_of(
    st.fixed_dictionaries({"mac": STATIC_VALUES, "vlan": STATIC_VALUES, "port": STATIC_VALUES}),
    st.dictionaries(st.sampled_from(["mac", "vlan", "port", "x"]), STATIC_VALUES), STATIC_VALUES))
def test_the_hand_checked_static_entries_follow_the_schema_exactly(entry):
    # the fast path checks static_macs items by hand: it must agree with
    # jsonschema applying the schema's own item rules
    item_schema = intent_schema.schema()["properties"]["switches"]["additionalProperties"]["properties"][
        "static_macs"]["items"]
    by_schema = jsonschema.Draft7Validator(item_schema).is_valid(entry)
    by_hand = intent_schema._static_entry_problem(  # pylint: disable=protected-access
        entry, set(), intent_schema._static_rules()) is None  # pylint: disable=protected-access
    assert by_hand == by_schema


def test_intents_are_checked_when_written(intent):
    broken = copy.deepcopy(intent)
    broken["switches"]["sw0"]["ports"]["1"]["untagged"] = [1, 1]
    with pytest.raises(intent_schema.IntentSchemaError, match=r"intent.json: .*has non-unique elements"):
        intent_text(broken)
    assert json.loads(intent_text(intent)) == json.loads(json.dumps(intent))


def test_intents_are_checked_when_read(intent, tmp_path):
    good = tmp_path / "intent.json"
    good.write_text(json.dumps(intent))
    assert read_intent(str(good)) == json.loads(json.dumps(intent))
    broken = copy.deepcopy(intent)
    broken["switches"]["sw0"]["stp"] = "no"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken))
    with pytest.raises(EtherclusterError, match=r"src: .*bad.json: not a valid intent .*switches.sw0.stp: 'no' is not "
                                                r"of type 'boolean'"):
        read_intent(str(bad))


def _properties(node, found):
    if isinstance(node, dict):
        for name, child in (node.get("properties") or {}).items():
            found.add(name)
            _properties(child, found)
        for key in ("additionalProperties", "items"):
            if isinstance(node.get(key), dict):
                _properties(node[key], found)
    return found


def test_docs_describe_every_field_of_the_schema():
    text = (ROOT / "docs" / "intent.md").read_text()
    missing = sorted(name for name in _properties(intent_schema.schema(), set())
                     if not re.search(r"`%s`" % re.escape(name), text))
    assert missing == []


def test_every_field_has_a_description():
    def walk(node, where):
        if isinstance(node, dict):
            for name, child in (node.get("properties") or {}).items():
                assert child.get("description"), "%s.%s has no description" % (where, name)
                walk(child, "%s.%s" % (where, name))
            for key in ("additionalProperties", "items"):
                if isinstance(node.get(key), dict):
                    walk(node[key], where + "[]")
    walk(intent_schema.schema(), "intent")
