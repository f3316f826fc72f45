# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the data files the plugins are given (intent.json, YAML)."""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import EtherclusterError, TopologyError
from ..fabric.input_limits import load_yaml_text
from .schema import validate_intent


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
