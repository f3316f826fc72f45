"""fabric_settings: the topology file's ``fabric:`` block and the other layers
of fabric settings -- validation naming ``fabric.<field>``, the merge order,
what a plan records in the intent and what a transition reads back."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.verify import metrics
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import (
    CHOICES,
    DEFAULTS,
    FIELDS,
    FabricSettingsError,
    intent_settings,
    parse_settings,
    resolve,
    topology_file_settings,
    topology_settings,
    transition_options,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import PLAN_DEFAULTS
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

RING = yaml.safe_load((Path(__file__).resolve().parents[1] / "fixtures" / "lab" / "ring3_topology.yml").read_text())


def test_a_full_block_is_normalised():
    parsed = parse_settings({"routing": " updown ", "engine_options": {"root": "sw1"},
                             "assignment": "fixed", "bank": "B", "vlan_range": "200-3000",
                             "max_broadcast_copies": "500", "mac_learning": "static",
                             "traffic": "bit_reversal"}, source="f.yml")
    assert parsed == {"routing": "updown", "engine_options": {"root": "sw1"}, "assignment": "fixed",
                      "bank": "B", "vlan_range": [200, 3000], "max_broadcast_copies": 500,
                      "mac_learning": "static", "traffic": "bit_reversal"}


def test_values_given_as_text_are_read():
    """-e key=value gives strings: the mapping and the list they spell are taken."""
    assert parse_settings({"engine_options": '{"root": "sw5"}', "vlan_range": "[100, 300]"}) == {
        "engine_options": {"root": "sw5"}, "vlan_range": [100, 300]}
    assert parse_settings({"engine_options": "{}"}) == {"engine_options": {}}
    with pytest.raises(FabricSettingsError, match=r"fabric\.engine_options: must be a mapping"):
        parse_settings({"engine_options": "root"})


def test_null_fields_are_not_set():
    assert parse_settings({"routing": None, "bank": "A"}) == {"bank": "A"}
    assert parse_settings(None) == {}


@pytest.mark.parametrize("field, value, message", [
    ("bank", "C", r"^f\.yml: fabric\.bank: must be one of A, B, got 'C'$"),
    ("assignment", "fixd", r"^f\.yml: fabric\.assignment: must be one of auto, fixed, renamed"),
    ("mac_learning", True, r"^f\.yml: fabric\.mac_learning: must be one of static, self"),
    ("traffic", "tornado", r"fabric\.traffic: must be one of uniform, bit_reversal"),
    ("routing", "", r"^f\.yml: fabric\.routing: must be the name of a routing engine"),
    ("routing", 7, r"fabric\.routing: must be the name"),
    ("engine_options", ["root"], r"^f\.yml: fabric\.engine_options: must be a mapping"),
    ("vlan_range", [100], r"^f\.yml: fabric\.vlan_range: must be \[first, last\]"),
    ("vlan_range", "abc", r"fabric\.vlan_range: must be \[first, last\]"),
    ("vlan_range", [True, 200], r"fabric\.vlan_range: must be \[first, last\]"),
    ("vlan_range", [300, 200], r"fabric\.vlan_range: must satisfy 1 <= first < last <= 4094, got \[300, 200\]"),
    ("vlan_range", [100, 4095], r"fabric\.vlan_range: must satisfy"),
    ("max_broadcast_copies", -1, r"^f\.yml: fabric\.max_broadcast_copies: must be a whole number >= 0"),
    ("max_broadcast_copies", True, r"fabric\.max_broadcast_copies: must be a whole number"),
    ("max_broadcast_copies", 1.5, r"fabric\.max_broadcast_copies: must be a whole number"),
])
def test_a_bad_field_is_named_with_the_file(field, value, message):
    with pytest.raises(FabricSettingsError, match=message):
        parse_settings({field: value}, source="f.yml")


def test_unknown_fields_and_a_non_mapping_are_refused():
    with pytest.raises(FabricSettingsError,
                       match=r"^f\.yml: fabric\.engine, f\.yml: fabric\.vlans: unknown fields \(known: routing, "):
        parse_settings({"engine": "dor", "vlans": 3}, source="f.yml")
    with pytest.raises(FabricSettingsError, match=r"^f\.yml: fabric: must be a mapping"):
        parse_settings(["routing"], source="f.yml")
    with pytest.raises(FabricSettingsError, match=r"^settings\.bank: must be one of A, B"):
        parse_settings({"bank": "Z"}, prefix="settings.")


def test_every_traffic_pattern_and_default_matches_the_planner():
    assert CHOICES["traffic"] == tuple(metrics.PATTERNS)
    for field in FIELDS:
        assert PLAN_DEFAULTS[field] == DEFAULTS[field] or (
            field == "engine_options" and PLAN_DEFAULTS[field] is None and DEFAULTS[field] == {})


def test_topology_file_block(tmp_path):
    path = tmp_path / "fabric.yml"
    path.write_text("name: x\nfabric:\n  routing: dor\n  bank: B\nswitches: {}\n")
    assert topology_file_settings(str(path)) == {"routing": "dor", "bank": "B"}
    path.write_text("name: x\nswitches: {}\n")
    assert topology_file_settings(str(path)) == {}
    path.write_text("fabric:\n  bank: C\n")
    with pytest.raises(FabricSettingsError, match=r"fabric\.yml: fabric\.bank: must be one of A, B"):
        topology_file_settings(str(path))
    # unreadable or not YAML: left to the topology loader, which names the line
    assert topology_file_settings(str(tmp_path / "missing.yml")) == {}
    path.write_text("fabric: [unclosed\n")
    assert topology_file_settings(str(path)) == {}
    assert topology_settings(["not", "a", "mapping"]) == {}


def test_the_topology_loader_accepts_the_block():
    topology = topology_from_data(dict(RING, fabric={"routing": "dor"}), source="ring.yml")
    assert sorted(topology.switches) == ["sw0", "sw1", "sw2"]


def test_layers_merge_field_by_field_later_wins():
    settings, sources = resolve(("topology", {"routing": "dor", "bank": "B"}),
                                ("settings", {"bank": "A", "assignment": "fixed"}),
                                ("options", {"routing": "updown"}))
    assert settings == dict(DEFAULTS, routing="updown", bank="A", assignment="fixed")
    assert sources == dict({field: "default" for field in FIELDS}, routing="options",
                           bank="settings", assignment="settings")
    assert resolve()[0] == DEFAULTS


def test_intent_settings_read_back_what_was_recorded_and_older_intents():
    recorded = {"fabric": {"routing": "updown", "settings": dict(
        DEFAULTS, routing="updown", engine_options={"root": "sw1"}, vlan_range=[500, 900],
        traffic="matrix_transpose")}}
    assert intent_settings(recorded) == recorded["fabric"]["settings"]
    older = {"fabric": {"routing": "dor", "assignment": "fixed", "engine_options": {"x": 1},
                        "bank": "B", "mac_learning": "static", "max_broadcast_copies": 100000,
                        "vlan_range": [2100, 3999]}}
    assert intent_settings(older) == dict(DEFAULTS, routing="dor", assignment="fixed",
                                          engine_options={"x": 1}, bank="B",
                                          max_broadcast_copies=100000)
    with pytest.raises(FabricSettingsError, match="intent: no 'fabric' mapping"):
        intent_settings({"switches": {}})
    with pytest.raises(FabricSettingsError, match=r"^intent: fabric\.settings\.bank: must be one of"):
        intent_settings({"fabric": {"settings": {"bank": "Q"}}})


def test_transition_options_carry_what_must_match_the_deployment():
    settings = dict(DEFAULTS, routing="updown", engine_options={"root": "sw1"},
                    vlan_range=[500, 900], max_broadcast_copies=7, bank="B")
    assert transition_options(settings) == {
        "routing": "updown", "assignment": "auto", "engine_options": {"root": "sw1"},
        "plan_options": {"vlan_range": [500, 900], "traffic": "uniform", "max_broadcast_copies": 7,
                         "broadcast": "contained"}}


def test_settings_from_the_file_reach_the_planner_like_options():
    """What the block says plans the same as the options given directly."""
    topology = topology_from_data(RING, source="ring.yml")
    block = parse_settings({"routing": "updown", "engine_options": {"root": "sw1"},
                            "assignment": "fixed", "bank": "B"})
    settings = resolve(("topology", block))[0]
    planned = plan(topology, engine=settings["routing"], assignment=settings["assignment"],
                   engine_options=settings["engine_options"], bank=settings["bank"])
    direct = plan(topology, engine="updown", assignment="fixed", engine_options={"root": "sw1"},
                  bank="B")
    assert planned.intent == direct.intent
    assert planned.intent["fabric"]["bank"] == "B"
    assert all(vlan >= 2100 for entry in planned.intent["switches"].values() for vlan in entry["vlans"])
