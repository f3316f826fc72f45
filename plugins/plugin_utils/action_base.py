# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one base of the collection's action plugins.

Every module of the collection is an action plugin that works on the
controller. They all validate their arguments against the module's own
argument spec, refuse to run when the planning code's Python packages are
missing, and turn the planning code's errors (which name the file, switch,
port or field at fault) into a failed result with that message. This class
does those three things once; a plugin sets its class attributes and
writes :meth:`run_action`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.plugin_utils.controller import controller_path


class CollectionAction(ActionBase):
    """An action plugin of this collection (see the module doc).

    Class attributes a plugin sets:

    ``MODULE``
        the module's full name, for messages (``ethercluster.routing.plan``);
    ``ARGUMENT_SPEC``
        the module's argument spec; by default the ``ARGUMENT_SPEC`` of
        ``plugins/modules/<name>.py``, the module ``MODULE`` names;
    ``ARGUMENT_RULES``
        keyword arguments of ``validate_argument_spec`` besides the spec
        (``mutually_exclusive``, ``required_one_of``, ...); by default the
        module's ``ARGUMENT_RULES`` (none if it has none);
    ``IMPORT_ERROR``
        the ImportError of the plugin's imports of the planning code, or None;
        by default the plugin file's global ``IMPORT_ERROR``;
    ``REQUIREMENTS``
        the packages to name when that import failed;
    ``FAILED_RESULT``
        fields every failed result carries besides ``failed`` and ``msg``.
    """

    MODULE = "ethercluster.routing"
    ARGUMENT_SPEC: dict[str, Any] = {}
    ARGUMENT_RULES: dict[str, Any] = {}
    IMPORT_ERROR: Exception | None = None
    REQUIREMENTS = "networkx, netaddr, PyYAML"
    FAILED_RESULT: dict[str, Any] = {}

    TRANSFERS_FILES = False
    _requires_connection = False  # the work is done on the controller
    _supports_check_mode = True
    _supports_async = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "ARGUMENT_SPEC" not in cls.__dict__:
            # the module documents the options; the plugin validates with its spec
            module = importlib.import_module("ansible_collections.ethercluster.routing.plugins.modules."
                                             + cls.MODULE.rsplit(".", 1)[-1])
            cls.ARGUMENT_SPEC = module.ARGUMENT_SPEC
            if "ARGUMENT_RULES" not in cls.__dict__:
                cls.ARGUMENT_RULES = getattr(module, "ARGUMENT_RULES", {})
        if "IMPORT_ERROR" not in cls.__dict__:
            cls.IMPORT_ERROR = getattr(sys.modules.get(cls.__module__), "IMPORT_ERROR", cls.IMPORT_ERROR)
        cls._VALID_ARGS = frozenset(cls.ARGUMENT_SPEC)

    def controller_file(self, option: str, name: str, what: str = "file") -> str:
        """The path of ``name`` (option ``option``) on the controller, looked up
        like a role's or playbook's file; AnsibleError naming the option and the
        places looked in when there is none."""
        path = controller_path(self, name)
        if path is None:
            raise AnsibleError("%s: %s %r not found (looked in the role/playbook files directories, "
                               "the playbook directory and the current directory %s)"
                               % (option, what, name, os.getcwd()))
        return path

    def run(self, tmp: str | None = None, task_vars: dict | None = None) -> dict:
        result = super().run(tmp, task_vars)
        result["changed"] = False
        task_vars = task_vars or {}
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC,
                                                        **self.ARGUMENT_RULES)
        if self.IMPORT_ERROR is not None:
            return self.failed(result, "%s needs the Python packages of the collection's requirements.txt "
                               "(%s) on the controller: %s"
                               % (self.MODULE, self.REQUIREMENTS, self.IMPORT_ERROR))
        try:
            return self.run_action(args, task_vars, result)
        except (EtherclusterError, AnsibleError) as exc:
            return self.failed(result, str(exc))

    def run_action(self, args: dict, task_vars: dict, result: dict) -> dict:
        """The plugin's work: ``args`` validated, ``result`` to fill and
        return. Raise EtherclusterError or AnsibleError to fail with its
        message."""
        raise NotImplementedError

    def failed(self, result: dict, msg: str, **fields: Any) -> dict:
        """``result`` marked failed with ``msg`` (and the plugin's
        ``FAILED_RESULT`` fields, then ``fields``)."""
        result.update(self.FAILED_RESULT)
        result.update(fields)
        result.update(failed=True, msg=msg)
        return result
