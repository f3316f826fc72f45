# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the data files the plugins are given (intent.json, YAML)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..errors import EtherclusterError, TopologyError
from ..fabric.input_limits import load_yaml_text
from .schema import validate_intent


def plain_data(value: Any) -> Any:
    """A copy of ``value`` made of plain dict/list/str/int/float/bool/None:
    Ansible's tagged strings and numpy scalars and arrays (``tolist()``,
    ``item()``) become what they hold, so validation messages name the
    types the user wrote and every result is JSON-serialisable. Sets become
    lists sorted by ``repr``."""
    if isinstance(value, Mapping):
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [plain_data(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if hasattr(value, "tolist"):  # a numpy array or scalar, without importing numpy here
        return plain_data(value.tolist())
    return value


def read_document(path: str | os.PathLike, field: str = "src") -> Any:
    """The data in the JSON (``*.json``) or YAML file at ``path``. Raises
    EtherclusterError naming ``field`` and the file when it cannot be read
    or parsed."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise EtherclusterError("%s: cannot read %s: %s" % (field, path, exc))
    if not str(path).endswith(".json"):
        # YAML through the topology loader's limits (nesting, alias expansion,
        # duplicate keys): an alias bomb is refused before it is built
        try:
            return load_yaml_text(text, "%s: %s" % (field, path))
        except TopologyError as exc:
            raise EtherclusterError(str(exc)) from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EtherclusterError("%s: %s is not valid JSON: %s" % (field, path, exc)) from None


def read_intent(path: str | os.PathLike, field: str = "src") -> dict[str, Any]:
    """The intent in the JSON or YAML file at ``path``, checked against the
    shipped schema (:mod:`.schema`); EtherclusterError naming ``field``, the
    file and every problem's path otherwise."""
    data = read_document(path, field)
    validate_intent(data, "%s: %s" % (field, path))
    return data
