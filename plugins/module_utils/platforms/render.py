# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline rendering: every switch's configuration from the intent, as
files ``configs/<switch>.<ext>`` (no connection to any switch).

:func:`render_configs` is what the plan calls; it refuses the whole
intent, before writing anything, if any switch's platform cannot run
switch-tagged routing or has no renderer (capabilities.require_renderable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from . import dell_os6, huawei_vrp, linux_bridge, ovs
from .capabilities import BROADCAST_TREE_PLATFORMS, require_renderable
from ..fabric.device_strings import shown
from .common import PlatformError, safe_string

CONFIG_DIR = "configs"


def _render_ovs(config: Any, switch: str, interface_names: Mapping[Any, str] | None = None) -> str:
    """The OVS flow file of one switch (OpenFlow ports are the topology's)."""
    if interface_names:
        raise PlatformError("switch %s: ovs uses the topology's port numbers as OpenFlow ports; "
                            "an interface-name map does not apply" % switch)
    try:
        return ovs.flows_text(ovs.render(config, switch)["flows"])
    except ovs.OvsError as exc:
        raise PlatformError(str(exc)) from None


# renderer name -> ((extension, function(config, switch, interface_names) -> text), ...)
RENDERERS: dict[str, tuple[tuple[str, Callable[..., str]], ...]] = {
    "ovs": (("flows", _render_ovs),),
    "dell_os6": ((dell_os6.CONFIG_EXTENSION, dell_os6.render),),
    "huawei_vrp": ((huawei_vrp.CONFIG_EXTENSION, huawei_vrp.render),),
    "linux_bridge": ((linux_bridge.CONFIG_EXTENSION, linux_bridge.render),
                     (linux_bridge.INTERFACES_EXTENSION, linux_bridge.render_interfaces)),
}

# renderer name -> parse(text, interface_names, switch) for the first file above
PARSERS = {
    "dell_os6": dell_os6.parse,
    "huawei_vrp": huawei_vrp.parse,
    "linux_bridge": linux_bridge.parse,
}


def render_switch(name: str, entry: Any, interface_names: Mapping[Any, str] | None = None) -> dict[str, str]:
    """``{extension: text}`` for switch ``name``'s intent entry ``entry``;
    interface names from ``interface_names`` ({port: name}), else from the
    entry's own ``interface_names`` (the topology's, via the plan), else the
    platform's default pattern."""
    safe_string("switch name", name, "switch %s" % shown(name))  # it names the config file
    if not isinstance(entry, dict):
        raise PlatformError("switch %s: intent entry must be a mapping" % name)
    row = require_renderable(entry.get("platform"), name)
    if entry.get("broadcast_ports") is not None and row.platform not in BROADCAST_TREE_PLATFORMS:
        # rendering without it would let the renamed VLANs flood along every path
        raise PlatformError("switch %s: platform %s cannot hold broadcast_ports (a flood tree across "
                            "VLANs); plan it with assignment auto or fixed" % (name, row.platform))
    if interface_names is None:
        interface_names = entry.get("interface_names")
    return {extension: function(entry, name, interface_names)
            for extension, function in RENDERERS[cast(str, row.renderer)]}  # not None: require_renderable


def render_configs(intent: Any, interface_names: Mapping[str, Mapping[Any, str]] | None = None) -> dict[str, str]:
    """Every switch's configuration: ``{"configs/<switch>.<ext>": text}``
    (sorted by file name). ``interface_names``: optional ``{switch:
    {port: interface name}}`` (the topology's per-switch map). Raises
    :class:`~.common.PlatformError` naming the first switch that cannot be
    rendered; nothing is returned in that case."""
    switches = intent.get("switches") if isinstance(intent, dict) else None
    if not isinstance(switches, dict):
        raise PlatformError("intent: has no switches mapping")
    names = interface_names or {}
    for name in sorted(switches):
        safe_string("switch name", name, "switch %s" % shown(name))
        if not isinstance(switches[name], dict):
            raise PlatformError("switch %s: intent entry must be a mapping" % name)
        require_renderable(switches[name].get("platform"), name)
    files = {}
    for name in sorted(switches):
        for extension, text in render_switch(name, switches[name], names.get(name)).items():
            files["%s/%s.%s" % (CONFIG_DIR, name, extension)] = text
    return dict(sorted(files.items()))
