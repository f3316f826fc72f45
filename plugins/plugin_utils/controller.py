# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side helpers shared by this collection's action plugins."""

from __future__ import annotations

import os

from ansible.errors import AnsibleError


def controller_path(action, path):
    """Absolute path of the controller file ``path`` for ``action`` (an
    ActionBase): as given when absolute, else where Ansible finds a task's
    files (files/ of the role and the playbook, the playbook directory),
    else relative to the current directory. None when it does not exist."""
    if os.path.isabs(path):
        path = os.path.normpath(path)
        return path if os.path.exists(path) else None
    try:
        return os.path.abspath(action._find_needle("files", path))  # pylint: disable=protected-access
    except AnsibleError:
        pass
    found = os.path.abspath(path)
    return found if os.path.exists(found) else None


def task_var(action, task_vars, name):
    """The templated value of variable ``name`` for ``action``, or None."""
    value = task_vars.get(name)
    if value is None:
        return None
    return action._templar.template(value)  # pylint: disable=protected-access


def task_intent(action, intent, src):
    """The intent a task names, validated against the collection's schema:
    ``intent`` (data) or, when ``src`` is set, the controller file ``src``
    (found as :func:`controller_path` does). None when neither is given.
    Raises EtherclusterError naming the file and the field at fault."""
    # planning code (PyYAML, jsonschema): loaded when used, like the actions' own imports
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import read_document
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.schema import validate_intent
    if src is not None:
        intent = read_document(controller_path(action, src) or os.path.abspath(src))
    if intent is not None:
        validate_intent(intent, src or "intent")
    return intent
