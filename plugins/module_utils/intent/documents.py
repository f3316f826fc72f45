# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the data files the plugins are given (intent.json, YAML)."""

from __future__ import annotations

import json

import yaml

from ..errors import EtherclusterError
from .schema import validate_intent


def read_document(path, field="src"):
    """The data in the JSON (``*.json``) or YAML file at ``path``. Raises
    EtherclusterError naming ``field`` and the file when it cannot be read
    or parsed."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise EtherclusterError("%s: cannot read %s: %s" % (field, path, exc))
    try:
        return json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise EtherclusterError("%s: %s is not valid JSON/YAML: %s" % (field, path, exc))


def read_intent(path, field="src"):
    """The intent in the JSON or YAML file at ``path``, checked against the
    shipped schema (:mod:`.schema`); EtherclusterError naming ``field``, the
    file and every problem's path otherwise."""
    data = read_document(path, field)
    validate_intent(data, "%s: %s" % (field, path))
    return data
