# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja filters behind the collection's roles (docs/roles.md): load a
reviewed ``intended/`` directory, read the fabric settings back from a
deployed intent, and check an inventory against an intent before a push
(documentation of each filter: the sibling YAML file named after it)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import (
        intent_settings,
        resolve,
        topology_file_settings,
        transition_options,
    )
    from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import unclaimed_topology
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import SCHEMA
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.schema import validate_intent
    from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import (
        CONFIG_DIR,
        render_configs,
    )
except ImportError as exc:  # networkx, PyYAML, jinja2, ... missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None

INTENT_FILE = "intent.json"
STALE_SUFFIX = ".stale"


def _need_imports(name):
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError("ethercluster.routing.%s needs the Python packages of the "
                                 "collection's requirements.txt on the controller: %s"
                                 % (name, IMPORT_ERROR))


def _read_intent(path, what):
    """The intent in ``path`` (JSON), checked for its schema and switches."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            intent = json.load(handle)
    except (OSError, UnicodeDecodeError) as exc:
        raise AnsibleFilterError("%s: cannot read %s: %s" % (what, path, getattr(exc, "strerror", None) or exc))
    except ValueError as exc:
        raise AnsibleFilterError("%s: %s is not valid JSON: %s" % (what, path, exc))
    if not isinstance(intent, dict) or intent.get("schema") != SCHEMA:
        raise AnsibleFilterError("%s: %s is not an intent (schema %s expected, got %r)"
                                 % (what, path, SCHEMA, intent.get("schema") if isinstance(intent, dict)
                                    else type(intent).__name__))
    switches = intent.get("switches")
    if not isinstance(switches, dict) or not switches or not all(
            isinstance(entry, dict) and entry.get("platform") for entry in switches.values()):
        raise AnsibleFilterError("%s: %s has no switches (a mapping of switch -> entry with a platform)"
                                 % (what, path))
    try:
        validate_intent(intent, "%s: %s" % (what, path))
    except EtherclusterError as exc:
        raise AnsibleFilterError(str(exc))
    return intent


def intended_intent(directory):
    """The intent of a reviewed intended/ directory (``DIR/intent.json``),
    refused when it is missing, not an intent, or when a file of
    ``DIR/configs/`` is not what the intent renders to (edited by hand, or
    left from another plan): what is pushed is what was reviewed."""
    _need_imports("intended_intent")
    if not isinstance(directory, str) or not directory:
        raise AnsibleFilterError("intent: give the directory of a reviewed plan (-e intent=DIR), got %r"
                                 % (directory,))
    directory = os.path.abspath(os.path.expanduser(directory))
    path = os.path.join(directory, INTENT_FILE)
    if not os.path.isdir(directory):
        raise AnsibleFilterError("intent: %s is not a directory (give the directory the plan wrote: "
                                 "intent.json, report.md, configs/)" % directory)
    if not os.path.exists(path):
        if os.path.exists(path + STALE_SUFFIX):
            raise AnsibleFilterError("intent: %s has no intent.json, only intent.json.stale: the last plan of "
                                     "that directory was rejected (report.md says why); nothing to push"
                                     % directory)
        raise AnsibleFilterError("intent: %s not found; plan first (playbooks/plan.yml or the "
                                 "fabric_design role write it)" % path)
    intent = _read_intent(path, "intent")
    try:
        rendered = render_configs(intent)
    except EtherclusterError as exc:
        raise AnsibleFilterError("intent: %s: %s" % (path, exc))
    problems = []
    found_dir = os.path.join(directory, CONFIG_DIR)
    found = sorted(entry for entry in os.listdir(found_dir)
                   if not entry.startswith(".") and not entry.endswith(STALE_SUFFIX)) \
        if os.path.isdir(found_dir) else []
    for entry in found:
        name = "%s/%s" % (CONFIG_DIR, entry)
        if name not in rendered:
            problems.append("%s: no switch of the intent has this file" % name)
            continue
        try:
            with open(os.path.join(directory, name), "r", encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append("%s: cannot read it: %s" % (name, exc))
            continue
        if text != rendered[name]:
            problems.append("%s: differs from what intent.json renders to" % name)
    if problems:
        raise AnsibleFilterError(
            "intent: %s does not hold one reviewed plan: %s. The intent is what is pushed, and the "
            "configs/ files are how it was reviewed: plan again into that directory, or remove the "
            "file that does not belong" % (directory, "; ".join(problems)))
    return intent


def deployed_settings(directory, topology=None, switches=None):
    """The fabric settings to reproduce what the switches hold: those
    recorded in ``DIR/intent.json`` (the deployed intent) when it is the
    intent of this fabric (its switches are ``switches``), else the
    topology file's ``fabric:`` block over the defaults. Returns
    ``{settings, options, source, note}``; ``options`` are the link
    transition's (routing, assignment, engine_options, plan_options)."""
    _need_imports("deployed_settings")
    try:
        from_topology = topology_file_settings(topology) if topology else {}
    except EtherclusterError as exc:
        raise AnsibleFilterError(str(exc))
    path = os.path.join(os.path.abspath(os.path.expanduser(directory)), INTENT_FILE) if directory else None
    settings, source, note = None, None, None
    if path is None or not os.path.exists(path):
        note = "no deployed intent at %s" % path if path else "no intent directory given"
    else:
        intent = _read_intent(path, "deployed intent")
        wanted = sorted(str(name) for name in (switches or ()))
        held = sorted(intent["switches"])
        if wanted and wanted != held:
            note = ("%s is the intent of other switches (%s; the inventory has %s): ignored"
                    % (path, _few(held), _few(wanted)))
        else:
            try:
                settings = intent_settings(intent)
            except EtherclusterError as exc:
                raise AnsibleFilterError("deployed intent: %s: %s" % (path, exc))
            source, note = "intent", "from the deployed intent %s" % path
    if settings is None:
        settings, sources = resolve(("topology", from_topology))
        source = "topology" if "topology" in sources.values() else "default"
        origin = "the topology file's fabric: block" if source == "topology" else "the defaults"
        note += "; settings from %s" % origin
    return {"settings": settings, "options": transition_options(settings), "source": source,
            "note": note}


def _few(names, limit=6):
    names = list(names)
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def inventory_problems(intent, switches, hostvars, push_paths, source="the intent"):
    """Why the inventory cannot take ``intent`` (one message starting
    ``nothing pushed:``), or ``""``: the inventory group ``switches`` must
    hold exactly the intent's switches, each on a platform of
    ``push_paths`` (platform -> ``ovs`` | ``cli`` | ``ssh``), and every
    CLI switch must be reached over ansible.netcommon.network_cli."""
    if not isinstance(intent, Mapping) or not isinstance(intent.get("switches"), Mapping):
        raise AnsibleFilterError("inventory_problems: the intent has no switches mapping")
    planned = intent["switches"]
    inventory = [str(name) for name in (switches or ())]
    missing = [name for name in planned if name not in inventory]
    extra = [name for name in inventory if name not in planned]
    unsupported = ["%s (%s)" % (name, entry.get("platform")) for name, entry in planned.items()
                   if entry.get("platform") not in push_paths]
    cli = [name for name, entry in planned.items()
           if name in inventory and push_paths.get(entry.get("platform")) == "cli"]
    not_network_cli = [name for name in cli
                       if not str(_host_var(hostvars, name, "ansible_connection") or "").endswith("network_cli")]
    parts = []
    if missing:
        parts.append("switches of the intent missing from the inventory group switches: %s; " % ", ".join(missing))
    if extra:
        parts.append("switches of the inventory not in the intent of %s: %s; " % (source, ", ".join(extra)))
    if unsupported:
        parts.append("switches on a platform deploy_routing.yml has no push path for (it pushes %s): %s; "
                     % (", ".join(push_paths), ", ".join(unsupported)))
    if not_network_cli:
        parts.append("CLI switches whose inventory does not set ansible_connection=ansible.netcommon.network_cli "
                     "(and ansible_network_os): %s" % ", ".join(not_network_cli))
    return "nothing pushed: " + "".join(parts) if parts else ""


def unclaimed_topologies(sources):
    """One message per inventory source (``ansible_inventory_sources``)
    that is a topology file Ansible read as a plain YAML inventory, because
    it lacks the ``plugin:`` line; an empty list when there is none."""
    _need_imports("unclaimed_topologies")
    if isinstance(sources, str):
        sources = [sources]
    if not isinstance(sources, (list, tuple)):
        raise AnsibleFilterError("unclaimed_topologies: expects the list of inventory sources, got %s"
                                 % type(sources).__name__)
    return [message for message in (unclaimed_topology(str(source)) for source in sources) if message]


def _host_var(hostvars, host, name):
    """A host's variable from Ansible's hostvars (or a plain mapping), or None."""
    try:
        values = hostvars[host]
    except (KeyError, TypeError):
        return None
    try:
        return values.get(name) if hasattr(values, "get") else values[name]
    except KeyError:
        return None


class FilterModule:
    """ethercluster.routing role filters."""

    def filters(self):
        return {"intended_intent": intended_intent, "deployed_settings": deployed_settings,
                "inventory_problems": inventory_problems, "unclaimed_topologies": unclaimed_topologies}
