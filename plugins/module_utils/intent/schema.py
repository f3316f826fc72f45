# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The intent's versioned JSON Schema, shipped in the collection
(``schemas/intent.v1.schema.json`` beside this file; docs/intent.md).

The intent is the one contract between planning and rendering. It is
checked against the schema on every write (``report.outputs.intent_text``)
and every read (``documents.read_intent``): a hand-edited or foreign
intent is refused with every problem's JSON path before anything renders
it, and a planner that wrote something outside its own contract fails its
tests.

Speed: a 1,024-switch intent holds millions of static MAC entries, and a
generic validator spends minutes on them (jsonschema: 200 s; fastjsonschema:
12 s). So the schema is checked by fastjsonschema (compiled once) with the
items of ``static_macs`` left to :func:`_static_problems`, a loop that
checks exactly what the schema says of them (tests compare the two on
valid and broken entries); only a failing intent is then walked by
jsonschema, to list every problem with its path.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

import re

import fastjsonschema
import jsonschema

from ..errors import EtherclusterError

SCHEMA_ID = "ethercluster.routing/intent/v1"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas", "intent.v1.schema.json")
MAX_LISTED = 25


class IntentSchemaError(EtherclusterError):
    """An intent does not match the schema; ``problems`` lists each as
    ``path: message``."""

    def __init__(self, problems: list[str], source: str = "intent") -> None:
        self.problems = list(problems)
        self.source = source
        if len(problems) == 1:
            message = "%s: not a valid intent (%s): %s" % (source, SCHEMA_ID, problems[0])
        else:
            message = "%s: not a valid intent (%s), %d problems:\n%s" % (
                source, SCHEMA_ID, len(problems), "\n".join("  - %s" % problem for problem in problems))
        super().__init__(message)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The schema (loaded once)."""
    with open(SCHEMA_FILE, "r", encoding="utf-8") as handle:
        return json.load(handle)


def _without_static_items(document: dict[str, Any]) -> dict[str, Any]:
    """The schema with ``static_macs`` items unconstrained (checked by
    :func:`_static_problems` instead)."""
    copy = json.loads(json.dumps(document))
    switch = copy["properties"]["switches"]["additionalProperties"]
    switch["properties"]["static_macs"]["items"] = {}
    return copy


@lru_cache(maxsize=1)
def _fast() -> Any:
    return fastjsonschema.compile(_without_static_items(schema()))


@lru_cache(maxsize=1)
def _validator() -> Any:
    validator_class = jsonschema.validators.validator_for(schema())
    validator_class.check_schema(schema())
    return validator_class(_without_static_items(schema()))


@lru_cache(maxsize=1)
def _static_rules() -> tuple[Any, Any, set[str], int, int]:
    """(MAC pattern, port pattern, required keys, lowest, highest VLAN) of a
    static entry, read from the schema itself."""
    item = schema()["properties"]["switches"]["additionalProperties"]["properties"]["static_macs"]["items"]
    props = item["properties"]
    return (re.compile(props["mac"]["pattern"]), re.compile(props["port"]["pattern"]),
            set(item["required"]), props["vlan"]["minimum"], props["vlan"]["maximum"])


def _static_entry_problem(entry: Any, mac_ok: set[str], rules: tuple[Any, Any, set[str], int, int]) -> str | None:
    """What is wrong with one static entry, or None."""
    mac_re, port_re, required, lowest, highest = rules
    if type(entry) is not dict:  # pylint: disable=unidiomatic-typecheck  # bool/str subclasses are not entries
        return "%r is not of type 'object'" % (entry,)
    if set(entry) != required:
        missing, extra = sorted(required - set(entry)), sorted(set(entry) - required)
        return ("%r is a required property" % missing[0]) if missing \
            else "Additional properties are not allowed (%r was unexpected)" % extra[0]
    mac, vlan, port = entry["mac"], entry["vlan"], entry["port"]
    # a str first: a list or mapping is not hashable (TypeError in the set lookup)
    if not isinstance(mac, str) or mac not in mac_ok:
        if not isinstance(mac, str) or not mac_re.search(mac):
            return "mac: %r does not match the MAC pattern" % (mac,)
        mac_ok.add(mac)
    if type(vlan) is not int or not lowest <= vlan <= highest:  # pylint: disable=unidiomatic-typecheck
        return "vlan: %r is not a VLAN ID %d-%d" % (vlan, lowest, highest)
    if not isinstance(port, str) or not port_re.search(port):
        return "port: %r does not match the port pattern" % (port,)
    return None


def _static_problems(data: Any) -> list[str]:
    """Problems of the ``static_macs`` items of every switch (the schema's
    rules for them, applied by hand for speed)."""
    switches = data.get("switches") if isinstance(data, dict) else None
    if not isinstance(switches, dict):
        return []
    rules = _static_rules()
    mac_ok: set[str] = set()
    problems = []
    for name, entry in switches.items():
        statics = entry.get("static_macs") if isinstance(entry, dict) else None
        if not isinstance(statics, list):
            continue
        for position, item in enumerate(statics):
            problem = _static_entry_problem(item, mac_ok, rules)
            if problem is not None:
                problems.append("switches.%s.static_macs[%d]: %s" % (name, position, problem))
                if len(problems) > MAX_LISTED:
                    return problems
    return problems


def _path(error: Any) -> str:
    """``switches.sw0.ports."25".pvid``: the place of one error, keys that
    are not plain names quoted."""
    parts = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append("[%d]" % part)
        elif str(part).replace("_", "a").replace("-", "a").isalnum() and not str(part).isdigit():
            parts.append(("." if parts else "") + str(part))
        else:
            parts.append(("." if parts else "") + json.dumps(str(part)))
    return "".join(parts) or "(top level)"


def _message(error: Any) -> str:
    """jsonschema's message, with long instances cut."""
    message = error.message
    if len(message) > 300:
        message = message[:297] + "..."
    return message


def intent_problems(data: Any) -> list[str]:
    """Every problem of ``data`` against the schema, ``path: message``,
    sorted by path (at most :data:`MAX_LISTED`, then a count)."""
    problems = _static_problems(data)
    try:
        _fast()(data)
    except fastjsonschema.JsonSchemaException:
        errors = sorted(_validator().iter_errors(data), key=lambda error: [str(p) for p in error.absolute_path])
        problems = ["%s: %s" % (_path(error), _message(error)) for error in errors] + problems
    if len(problems) > MAX_LISTED:
        problems = problems[:MAX_LISTED] + ["... and %d more" % (len(problems) - MAX_LISTED)]
    return problems


def validate_intent(data: Any, source: str = "intent") -> None:
    """Raise :class:`IntentSchemaError` naming ``source`` and every
    problem's path when ``data`` is not an intent of this schema."""
    if isinstance(data, dict) and data.get("schema") not in (None, SCHEMA_ID):
        raise IntentSchemaError(["schema: %r is not %s (this collection reads version 1 intents)"
                                 % (data.get("schema"), SCHEMA_ID)], source)
    problems = intent_problems(data)
    if problems:
        raise IntentSchemaError(problems, source)
