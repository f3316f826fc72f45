# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argument specs the collection's modules share (the options of a task
that reaches the switches, and of one that acts on a deployed fabric) and
the ``main()`` of a module that is all action plugin, which runs only when
the action plugin was not found."""

from __future__ import annotations

from typing import Any

from ansible.module_utils.basic import AnsibleModule

# documented by the doc fragment ethercluster.routing.controller.deployed_fabric (and by
# fabric_state and ovs_switch themselves, whose timeouts mean something narrower)
SWITCH_SESSION_SPEC: dict[str, dict[str, Any]] = {
    "host_key_checking": {"type": "bool", "default": True},
    "timeout": {"type": "float", "default": 30.0},
}


# with SWITCH_SESSION_SPEC, documented by the doc fragment ethercluster.routing.controller.deployed_fabric
DEPLOYED_FABRIC_SPEC: dict[str, dict[str, Any]] = {
    "topology": {"type": "path", "required": True},
    "routing": {"type": "str", "default": "segment"},
    "assignment": {"type": "str", "default": "renamed", "choices": ["auto", "fixed", "renamed"]},
    "engine_options": {"type": "dict"},
}


def node_spec(**options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The argument spec of a module that configures a node: ``options`` plus
    ``state`` (present or absent) and ``netns`` (a lab node's namespace)."""
    return dict(options, state={"type": "str", "default": "present", "choices": ["present", "absent"]},
                netns={"type": "str"})


def file_or_data_spec(option: str, **more: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The argument spec of such a module: ``option`` (a path), ``<option>_data``
    (a dict) and the options ``more``."""
    return dict({option: {"type": "path"}, option + "_data": {"type": "dict"}}, **more)


def file_or_data(option: str) -> dict[str, Any]:
    """Argument rules of a module that takes its input either from a file
    (option ``option``) or inline (``<option>_data``): exactly one of the two."""
    pair = (option, option + "_data")
    return {"mutually_exclusive": [pair], "required_one_of": [pair]}


def started_module(argument_spec: dict[str, Any], import_error: str | None, code: str,
                   **spec_rules: Any) -> AnsibleModule:
    """The AnsibleModule of a module that runs on its host (check mode
    supported), failed at once with ``import_error`` (a traceback) when the
    collection's ``code`` could not be imported there."""
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **spec_rules)
    if import_error is not None:
        module.fail_json(msg="cannot load the %s code of ethercluster.routing" % code, exception=import_error)
    return module


def refuse_bare_run(name: str, argument_spec: dict[str, Any], **spec_rules: Any) -> None:
    """``main()`` of module ``name``, which works only through its action
    plugin: validate the arguments (so ``ansible-doc`` and sanity see the
    spec) and fail saying why the action plugin did not run."""
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **spec_rules)
    module.fail_json(msg="ethercluster.routing.%s runs on the controller through its action "
                         "plugin; it was started as a bare module, which means the collection's "
                         "plugins/action/%s.py was not found (call it by its full name "
                         "ethercluster.routing.%s from an installed collection)" % (name, name, name))
