# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the action plugins that plan a host-routed design (the
Stack-Ring/Stack-Mesh and multi-port planes plans): the design comes from a
file (option ``design``) or inline (``design_data``), and both plans need
the same planning code on the controller."""

from __future__ import annotations

from typing import Any

from ansible_collections.ethercluster.routing.plugins.plugin_utils.action_base import CollectionAction

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import plain_data
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import planes, stack, stack_design
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import stack_report
except ImportError as exc:  # PyYAML or the schema packages missing on the controller
    IMPORT_ERROR: ImportError | None = exc
    # the plugins import these names; run() fails with IMPORT_ERROR before using them
    plain_data = planes = stack = stack_design = stack_report = None  # type: ignore[assignment]
else:
    IMPORT_ERROR = None

__all__ = ["DesignAction", "planes", "stack", "stack_design", "stack_report"]


class DesignAction(CollectionAction):
    """An action plugin planning a design given by ``design`` or ``design_data``."""

    ARGUMENT_SPEC: dict[str, Any] = {}   # each plugin's comes from its module (MODULE)
    IMPORT_ERROR = IMPORT_ERROR
    REQUIREMENTS = "PyYAML, jsonschema, fastjsonschema"

    def design_source(self, args: dict, result: dict) -> tuple[str | None, Any]:
        """``(path, None)`` for a design file (its path also in ``result``), else
        ``(None, the inline design as plain data)``."""
        if args["design"] is not None:
            path = result["design"] = self.controller_file("design", args["design"])
            return path, None
        return None, plain_data(args["design_data"])
