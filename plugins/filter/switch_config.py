# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja filter: one switch's configuration text rendered from its intent
entry (the same text the plan writes to ``configs/<switch>.<ext>``)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import render_switch
except ImportError as exc:  # jinja2, netaddr missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def switch_config(entry, switch, extension=None):
    """The rendered configuration of switch ``switch`` whose intent entry is
    ``entry`` (``platform``, ``vlans``, ``ports``, ``static_macs``, optional
    ``interface_names``): the text of ``extension`` (``cfg``, ``sh``,
    ``interfaces``, ``flows``), else of the platform's first file."""
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError("switch_config needs jinja2 and netaddr on the controller: %s" % IMPORT_ERROR)
    if not isinstance(entry, dict):
        raise AnsibleFilterError("switch_config: switch %s: the intent entry must be a mapping, got %r"
                                 % (switch, type(entry).__name__))
    try:
        files = render_switch(str(switch), entry, entry.get("interface_names"))
    except EtherclusterError as exc:
        raise AnsibleFilterError(str(exc))
    if extension is None:
        return next(iter(files.values()))
    if extension not in files:
        raise AnsibleFilterError("switch_config: switch %s (platform %s) has no .%s file; it has %s"
                                 % (switch, entry.get("platform"), extension,
                                    ", ".join("." + name for name in files)))
    return files[extension]


class FilterModule:
    """ethercluster.routing switch_config filter."""

    def filters(self):
        return {"switch_config": switch_config}
