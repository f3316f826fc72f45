# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric settings: how a fabric is planned (routing engine and its options,
VLAN assignment, VLAN bank and range, broadcast limit, MAC learning, traffic
pattern), kept with the fabric instead of restated on every command line.

They come in layers, the later winning field by field:

1. the built-in defaults (:data:`DEFAULTS`, the ``plan`` module's);
2. the topology file's optional top-level ``fabric:`` mapping;
3. the inventory (``fabric_design_*`` variables in group_vars/host_vars);
4. extra vars (``-e``).

Ansible itself orders 3 and 4 (a role variable set in both keeps the extra
var); this module validates every layer (errors name ``fabric.<field>``, or
the layer's own prefix) and merges them. The plan records the merged
settings in the intent (``intent.fabric.settings``), so a later transition
reads back exactly what was deployed (:func:`intent_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ..errors import EtherclusterError, TopologyError
from .input_limits import load_yaml_text, read_text

#: every field of a ``fabric:`` block, in the order they are documented
FIELDS = ("routing", "engine_options", "assignment", "bank", "vlan_range",
          "max_broadcast_copies", "broadcast", "mac_learning", "traffic")

#: the built-in defaults (the plan module's); None = the planner's own
DEFAULTS: dict[str, object] = {
    "routing": "segment",
    "engine_options": {},
    "assignment": "auto",
    "bank": "A",
    "vlan_range": None,          # None: the default banks (A 100-1999, B 2100-3999)
    "max_broadcast_copies": None,  # None: the planner's default (100000)
    "broadcast": "contained",
    "mac_learning": "static",
    "traffic": "uniform",
}

CHOICES = {
    "assignment": ("auto", "fixed", "renamed"),
    "broadcast": ("contained", "bounded"),
    "bank": ("A", "B"),
    "mac_learning": ("static", "self"),
    "traffic": ("uniform", "bit_reversal", "matrix_transpose", "random_permutation"),
}


class FabricSettingsError(EtherclusterError):
    """A fabric setting is malformed; the message names the file and field."""


def _where(source, prefix, field):
    name = "%s%s" % (prefix, field)
    return "%s: %s" % (source, name) if source else name


def _text_data(text):
    """A value given as text (``-e key={"root": "sw5"}`` arrives as a
    string): its YAML/JSON reading, else the text itself."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _vlan_range(value, where):
    if isinstance(value, str) and value.count("-") == 1:
        value = value.split("-")
    elif isinstance(value, str):
        value = _text_data(value)
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise FabricSettingsError("%s: must be [first, last] (or \"first-last\"), got %r"
                                  % (where, value))
    items = list(value)
    try:
        if len(items) != 2 or any(isinstance(item, bool) for item in items):
            raise ValueError
        first, last = (int(item) for item in items)
    except (TypeError, ValueError, OverflowError):  # OverflowError: [-.inf, 1]
        raise FabricSettingsError("%s: must be [first, last] (or \"first-last\"), got %r"
                                  % (where, value)) from None
    if not 1 <= first < last <= 4094:
        raise FabricSettingsError("%s: must satisfy 1 <= first < last <= 4094, got [%d, %d]"
                                  % (where, first, last))
    return [first, last]


def _field(field, value, where):
    """``value`` of ``field`` checked and normalised; raises naming ``where``."""
    if field in CHOICES:
        if not isinstance(value, str) or value not in CHOICES[field]:
            raise FabricSettingsError("%s: must be one of %s, got %r"
                                      % (where, ", ".join(CHOICES[field]), value))
        return str(value)
    if field == "routing":
        if not isinstance(value, str) or not value.strip():
            raise FabricSettingsError("%s: must be the name of a routing engine (segment, dor, "
                                      "updown, ...), got %r" % (where, value))
        return str(value).strip()
    if field == "engine_options":
        if isinstance(value, str):
            value = _text_data(value)
        if not isinstance(value, Mapping):
            raise FabricSettingsError("%s: must be a mapping of engine option -> value, got %r"
                                      % (where, value))
        return {str(key): item for key, item in value.items()}
    if field == "vlan_range":
        return _vlan_range(value, where)
    if field == "max_broadcast_copies":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 18:
                return int(value)  # at most 18 digits: int() refuses over 4,300 with a ValueError
            raise FabricSettingsError("%s: must be a whole number >= 0, got %r" % (where, value))
        return int(value)
    raise FabricSettingsError("%s: unknown field" % where)  # pragma: no cover - FIELDS guard


def parse_settings(data: Any, source: str = "", prefix: str = "fabric.") -> dict[str, Any]:
    """The settings of one layer: ``data`` (a mapping of field -> value)
    checked and normalised. A None value means "not set in this layer" and
    is left out. Raises FabricSettingsError naming ``source`` and
    ``<prefix><field>`` (e.g. ``topology.yml: fabric.bank: must be one of
    A, B, got 'C'``)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        where = "%s: %s" % (source, prefix.rstrip(".")) if source else prefix.rstrip(".")
        raise FabricSettingsError("%s: must be a mapping of setting -> value (fields: %s), got %r"
                                  % (where, ", ".join(FIELDS), data))
    unknown = sorted(str(key) for key in data if key not in FIELDS)
    if unknown:
        raise FabricSettingsError("%s: unknown field%s (known: %s)"
                                  % (", ".join(_where(source, prefix, key) for key in unknown),
                                     "s" if len(unknown) > 1 else "", ", ".join(FIELDS)))
    settings = {}
    for field in FIELDS:
        value = data.get(field)
        if value is not None:
            settings[field] = _field(field, value, _where(source, prefix, field))
    return settings


def topology_settings(data: Any, source: str = "") -> dict[str, Any]:
    """The ``fabric:`` block of topology data (the file's top-level mapping),
    parsed; ``{}`` when there is none."""
    if not isinstance(data, Mapping):
        return {}
    return parse_settings(data.get("fabric"), source=source, prefix="fabric.")


def topology_file_settings(path: Any) -> dict[str, Any]:
    """The ``fabric:`` block of the topology file at ``path``; ``{}`` when
    the file has none. A file that cannot be read or parsed gives ``{}``:
    loading the topology itself reports that, with the line."""
    try:
        # within the input limits: libyaml's composer crashes on deep nesting
        data = load_yaml_text(read_text(path), str(path), count_entries=True)
    except TopologyError:
        return {}
    return topology_settings(data, source=str(path))


def resolve(*layers: tuple[str, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge layers of settings (each a mapping field -> value, already
    parsed; the later wins field by field) over :data:`DEFAULTS`. Returns
    ``(settings, sources)``: every field's value, and per field the name of
    the layer it came from (``"default"`` for the built-in default). Each
    layer is ``(name, mapping)``."""
    settings = dict(DEFAULTS)
    settings["engine_options"] = {}
    sources = {field: "default" for field in FIELDS}
    for name, layer in layers:
        for field, value in (layer or {}).items():
            if field in FIELDS and value is not None:
                settings[field] = value
                sources[field] = name
    return settings, sources


def intent_settings(intent: Any) -> dict[str, Any]:
    """The settings an intent was planned with: ``intent.fabric.settings``
    when the plan recorded them, else what older intents carry in
    ``intent.fabric`` (routing, engine options, assignment, bank, MAC
    learning, broadcast limit), the rest at its default; ``assignment:
    auto`` comes back as what auto picked (and ``paths: source_tree`` in
    the engine options when it picked source trees). Raises
    FabricSettingsError when ``intent`` is not an intent."""
    fabric = intent.get("fabric") if isinstance(intent, Mapping) else None
    if not isinstance(fabric, Mapping):
        raise FabricSettingsError("intent: no 'fabric' mapping; is this an intent.json written "
                                  "by ethercluster.routing.plan?")
    recorded = fabric.get("settings")
    if recorded is not None:
        layer = parse_settings(recorded, source="intent", prefix="fabric.settings.")
    else:
        layer = parse_settings({field: fabric.get(field) for field in
                                ("routing", "engine_options", "assignment", "bank",
                                 "mac_learning", "max_broadcast_copies", "broadcast")},
                               source="intent", prefix="fabric.")
    settings = resolve(("intent", layer))[0]
    choice = fabric.get("assignment_choice")
    if settings["assignment"] == "auto" and isinstance(choice, Mapping):
        # what auto picked is what a transition must reproduce
        settings["assignment"] = choice.get("picked", fabric.get("assignment"))
        if choice.get("paths") in ("source_tree", "paper"):
            settings["engine_options"] = dict(settings["engine_options"] or {}, paths=choice["paths"])
    return settings


def transition_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """From full settings, the options a link transition must reproduce as
    deployed: ``routing``, ``assignment``, ``engine_options`` and
    ``plan_options`` (vlan_range, traffic, max_broadcast_copies, those that
    are set). The bank is not among them: transitions read it from the
    switches, and it alternates."""
    plan_options = {field: settings.get(field) for field in ("vlan_range", "traffic",
                                                             "max_broadcast_copies", "broadcast")
                    if settings.get(field) is not None}
    return {"routing": settings["routing"], "assignment": settings["assignment"],
            "engine_options": dict(settings.get("engine_options") or {}),
            "plan_options": plan_options}
