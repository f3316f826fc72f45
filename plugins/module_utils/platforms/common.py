# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the text renderers (``dell_os6``, ``huawei_vrp``, ``linux_bridge``)
share: checking one switch's intent entry (docs/intent.md ``switches.<name>``)
into a canonical form, VLAN lists as ranges, interface names, MAC address
spellings and the Jinja2 environment of ``templates/``.

The canonical form is what a config text can hold and what a parser gives
back, so a round trip (intent -> render -> parse) is compared on it::

    {"stp": False, "vlans": [100, 101],
     "ports": {"1": {"pvid": 100, "untagged": [100, 101], "tagged": [],
                     "admin": "up", "speed_mbps": 1000, "flow_control": True}},
     "static_macs": [{"mac": "02:00:00:00:00:01", "vlan": 100, "port": "1"}]}

Ports are sorted by number, VLAN lists ascending, static entries by
(VLAN, MAC); other intent fields (``role``, ``peer``, ``limits``...) are
not part of a switch's configuration and are dropped.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import netaddr

from ..fabric import device_strings
from ..fabric.device_strings import UnsafeString
from .capabilities import PlatformError

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
ADMIN_STATES = ("up", "down")


def safe_string(kind: str, value: Any, where: str, rule: device_strings.Rule | None = None) -> str:
    """``value`` if a string of ``kind`` may reach a device
    (:mod:`..device_strings`), else a :class:`PlatformError` naming
    ``where``: every renderer checks again what the topology checked, so a
    hand-edited intent cannot smuggle a command in."""
    try:
        return device_strings.check(kind, value, where, rule)
    except UnsafeString as exc:
        raise PlatformError(str(exc)) from None


def device_number(text: str, where: str) -> int:
    """A number a switch printed (the digits a parser's pattern matched), or
    PlatformError naming ``where`` (the switch and line): ASCII digits only
    (``\\d`` also matches other scripts' digits) and at most 9 of them (no
    setting is larger; ``int()`` raises ValueError past 4,300 digits)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise PlatformError("%s: %r is not a number this parser reads (at most 9 digits 0-9)"
                            % (where, text[:20] + ("..." if len(text) > 20 else "")))
    return int(text)


def set_members(port: dict[str, Any], listed: list[int], kind: str | None) -> None:
    """A VLAN membership line read into ``port``: the ``listed`` VLANs leave
    its untagged and tagged lists, then join the ``kind`` list (``tagged``
    or ``untagged``; None: they are removed only). A set filters them: a
    list made repeated "1-4094" lines quadratic."""
    removed = set(listed)
    for key in ("untagged", "tagged"):
        port[key] = [vlan for vlan in port[key] if vlan not in removed]
    if kind is not None:
        port[kind].extend(listed)


def _vlan(value: Any, where: str) -> int:
    """``value`` if a VLAN ID (1-4094), else PlatformError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4094:
        raise PlatformError("%s: VLAN ID must be an integer 1-4094, got %r" % (where, value))
    return value


def _vlan_list(value: Any, where: str) -> list[int]:
    """A list of VLAN IDs checked, sorted and de-duplicated."""
    if not isinstance(value, (list, tuple)):
        raise PlatformError("%s: must be a list of VLAN IDs, got %r" % (where, value))
    return sorted({_vlan(item, where) for item in value})


def mac_address(value: Any, where: str) -> str:
    """``value`` (any usual spelling) as ``aa:bb:cc:dd:ee:ff``."""
    try:
        mac = netaddr.EUI(str(value), version=48)
    except (netaddr.AddrFormatError, TypeError, ValueError):
        raise PlatformError("%s: not a MAC address: %r" % (where, value)) from None
    mac.dialect = netaddr.mac_unix_expanded
    return str(mac)


def mac_dotted(mac: str) -> str:
    """``aa:bb:cc:dd:ee:ff`` as ``aabb.ccdd.eeff`` (Cisco-style H.H.H)."""
    digits = mac.replace(":", "")
    return ".".join(digits[i:i + 4] for i in range(0, 12, 4))


def mac_dashed(mac: str) -> str:
    """``aa:bb:cc:dd:ee:ff`` as ``aabb-ccdd-eeff`` (Huawei H-H-H)."""
    return mac_dotted(mac).replace(".", "-")


def port_key(port: str) -> tuple[int, int, str]:
    """Sort key of a topology port name (numbers in numeric order)."""
    return (0, int(port), "") if port.isdigit() else (1, 0, port)


def canonical_switch(config: Any, switch: str = "switch") -> dict[str, Any]:
    """Check one switch's intent entry ``config`` and return its canonical
    form (module doc). Raises :class:`PlatformError` naming the switch,
    port and field at fault."""
    safe_string("switch name", switch, "switch %s" % device_strings.shown(switch))
    if not isinstance(config, dict):
        raise PlatformError("switch %s: intent entry must be a mapping, got %r" % (switch, config))
    stp = config.get("stp", False)
    if not isinstance(stp, bool):
        raise PlatformError("switch %s: stp must be true or false, got %r" % (switch, stp))
    vlans = _vlan_list(config.get("vlans", []), "switch %s: vlans" % switch)
    ports_in = config.get("ports", {})
    if not isinstance(ports_in, dict):
        raise PlatformError("switch %s: ports must be a mapping, got %r" % (switch, ports_in))
    ports = {}
    for port in sorted((str(name) for name in ports_in), key=port_key):
        try:
            device_strings.check_port(port, "switch %s" % switch)
        except UnsafeString as exc:
            raise PlatformError("%s (the interface name comes from the platform's pattern or map)"
                                % exc) from None
        entry = ports_in[port] if port in ports_in else ports_in[int(port)]
        ports[port] = _canonical_port(entry, "switch %s port %s" % (switch, port), vlans)
    statics = _canonical_statics(config.get("static_macs", []) or [], switch, ports)
    result = {"stp": stp, "vlans": vlans, "ports": ports,
              "static_macs": [{"mac": mac, "vlan": vlan, "port": port} for vlan, mac, port in statics]}
    aging = config.get("mac_aging_s")
    if aging is not None:
        result["mac_aging_s"] = mac_aging_seconds(aging, "switch %s: mac_aging_s" % switch)
    return result


def mac_aging_seconds(value: Any, where: str) -> int:
    """A MAC aging time (whole seconds >= 0, 0: never) checked."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlatformError("%s: must be whole seconds >= 0 (0: never age), got %r" % (where, value))
    return value


def _canonical_port(entry: Any, where: str, vlans: list[int]) -> dict[str, Any]:
    """One port's intent entry checked against the switch's ``vlans``."""
    if not isinstance(entry, dict):
        raise PlatformError("%s: must be a mapping, got %r" % (where, entry))
    untagged = _vlan_list(entry.get("untagged", []), where + ": untagged")
    tagged = _vlan_list(entry.get("tagged", []), where + ": tagged")
    both = sorted(set(untagged) & set(tagged))
    if both:
        raise PlatformError("%s: VLAN %s both tagged and untagged" % (where, both[0]))
    outside = sorted((set(untagged) | set(tagged)) - set(vlans))
    if outside:
        raise PlatformError("%s: member of VLAN %s which is not in the switch's vlans"
                            % (where, outside[0]))
    pvid = entry.get("pvid")
    if pvid is not None:
        _vlan(pvid, where + ": pvid")
        if pvid not in vlans:
            raise PlatformError("%s: pvid %s is not in the switch's vlans" % (where, pvid))
    admin = entry.get("admin", "up")
    if admin not in ADMIN_STATES:
        raise PlatformError("%s: admin must be up or down, got %r" % (where, admin))
    speed = entry.get("speed_mbps")
    if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int) or speed <= 0):
        raise PlatformError("%s: speed_mbps must be a positive integer, got %r" % (where, speed))
    flow_control = entry.get("flow_control", True)  # absent (an older intent): on
    if not isinstance(flow_control, bool):
        raise PlatformError("%s: flow_control must be true or false, got %r" % (where, flow_control))
    return {"pvid": pvid, "untagged": untagged, "tagged": tagged, "admin": admin,
            "speed_mbps": speed, "flow_control": flow_control}


def _canonical_statics(entries: Any, switch: str,
                       ports: dict[str, dict[str, Any]]) -> list[tuple[int, str, str]]:
    """The static entries checked against the canonical ``ports``, as
    sorted, de-duplicated ``(vlan, mac, port)``."""
    statics: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], str] = {}
    for number, entry in enumerate(entries):
        where = "switch %s static_macs[%d]" % (switch, number)
        if not isinstance(entry, dict):
            raise PlatformError("%s: must be a mapping, got %r" % (where, entry))
        mac = mac_address(entry.get("mac"), where + ": mac")
        vlan = _vlan(entry.get("vlan"), where + ": vlan")
        port = str(entry.get("port"))
        if port not in ports:
            raise PlatformError("%s: port %s is not among the switch's ports" % (where, port))
        if vlan not in ports[port]["untagged"] and vlan not in ports[port]["tagged"]:
            raise PlatformError("%s: port %s is not a member of VLAN %d" % (where, port, vlan))
        if (mac, vlan) in seen and seen[(mac, vlan)] != port:
            raise PlatformError("%s: %s in VLAN %d is already on port %s"
                                % (where, mac, vlan, seen[(mac, vlan)]))
        seen[(mac, vlan)] = port
        statics.append({"mac": mac, "vlan": vlan, "port": port})
    return sorted({(s["vlan"], s["mac"], s["port"]) for s in statics})


def vlan_ranges(vlans: Iterable[int]) -> list[tuple[int, ...]]:
    """Ascending VLAN IDs as ``[(first, last), ...]`` runs of consecutive IDs."""
    runs: list[list[int]] = []
    for vlan in sorted(set(vlans)):
        if runs and vlan == runs[-1][1] + 1:
            runs[-1][1] = vlan
        else:
            runs.append([vlan, vlan])
    return [tuple(run) for run in runs]


def expand_ranges(text: str, where: str) -> list[int]:
    """A VLAN list as Dell writes it (``"100-102,105"``) or Huawei does
    (``"100 to 102 105"``) as a list of VLAN IDs."""
    tokens = [token for token in re.split(r"[,\s]+", text.replace("-", " to ")) if token]
    vlans: list[int] = []
    index = 0
    try:
        while index < len(tokens):
            low = high = int(tokens[index])
            if index + 1 < len(tokens) and tokens[index + 1] == "to":
                high = int(tokens[index + 2])
                index += 3
            else:
                index += 1
            if low > high:
                raise PlatformError("%s: VLAN range %d-%d runs backwards" % (where, low, high))
            vlans.extend(_vlan(vlan, where) for vlan in range(low, high + 1))
    except (ValueError, IndexError):
        raise PlatformError("%s: not a VLAN list: %r" % (where, text)) from None
    return vlans


def interface_namer(pattern: str, interface_names: Any = None, switch: str = "switch",
                    platform: str | None = None) -> Callable[[Any], str]:
    """A function port -> interface name: ``interface_names[port]`` when the
    map names the port (the topology's per-switch interface map), else
    ``pattern.format(port=port)`` (the platform's default naming). Every
    name it gives is one token the platform ``platform`` (a renderer name)
    takes safely (:func:`..device_strings.check_interface`), or it raises
    :class:`PlatformError` naming the switch and port."""
    if interface_names is not None and not isinstance(interface_names, dict):
        raise PlatformError("switch %s: interface_names must be a mapping of port -> interface name"
                            % switch)
    names = {}
    for port, name in (interface_names or {}).items():
        try:
            # keys are topology ports (or, in cli_diff, the candidate's own
            # interface names); only the names reach the device
            names[str(port)] = device_strings.check_interface(
                platform, name, "switch %s interface_names.%s" % (switch, device_strings.label(port)))
        except UnsafeString as exc:
            raise PlatformError(str(exc)) from None
    if len(set(names.values())) != len(names):
        raise PlatformError("switch %s: interface_names maps two ports to one interface" % switch)

    def name_of(port: Any) -> str:
        name = names.get(str(port), pattern.format(port=port))
        try:
            return device_strings.check_interface(platform, name, "switch %s port %s" % (switch, port))
        except UnsafeString as exc:
            raise PlatformError(str(exc)) from None
    return name_of


def port_reader(pattern: str, interface_names: Any = None) -> Callable[[str], str | None]:
    """The inverse of :func:`interface_namer`: a function interface name ->
    topology port (``None`` for an interface that is not a topology port)."""
    names = {str(name).lower(): str(port) for port, name in (interface_names or {}).items()}
    head, tail = pattern.split("{port}")
    default = re.compile("^%s([1-9][0-9]*)%s$" % (re.escape(head.lower()), re.escape(tail.lower())))

    def port_of(interface: str) -> str | None:
        key = interface.lower()
        if key in names:
            return names[key]
        found = default.match(key)
        return found.group(1) if found else None
    return port_of


def _finalize(value: Any) -> Any:
    # the last guard: no value printed by a template may hold a control
    # character (a line feed would start a command of its own)
    try:
        return device_strings.check_text_value(value, "rendered value")
    except UnsafeString as exc:
        raise PlatformError(str(exc)) from None


def strict_environment(template_dir: str, **options: Any) -> jinja2.Environment:
    """A Jinja2 environment over the templates in ``template_dir`` for
    text that is not HTML (configurations, Markdown): a missing variable
    is an error, not an empty string; blocks leave no blank lines behind;
    ``options`` are further environment settings (``finalize``)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # configuration text and Markdown, not HTML  # noqa: S701
        **options,
    )


def environment() -> jinja2.Environment:
    """The Jinja2 environment of the platform templates
    (:func:`strict_environment`; every printed value passes
    :func:`_finalize`; ``shell_quote`` quotes a word for /bin/sh)."""
    env = strict_environment(TEMPLATE_DIR, finalize=_finalize)
    env.filters["shell_quote"] = lambda value: shlex.quote(str(value))
    return env


def render_template(name: str, **context: Any) -> str:
    """Fill ``templates/<name>`` with ``context``."""
    return environment().get_template(name).render(**context)


def empty_port() -> dict[str, Any]:
    """A port as a parser first sees it: no PVID, no membership, up, speed
    unset, 802.3x off (a text that does not say otherwise: the platforms'
    default)."""
    return {"pvid": None, "untagged": [], "tagged": [], "admin": "up", "speed_mbps": None,
            "flow_control": False}


def finish_parsed(stp: bool, vlans: Iterable[int], ports: dict[str, dict[str, Any]],
                  statics: Iterable[tuple[int, str, str]], mac_aging_s: int | None = None) -> dict[str, Any]:
    """A parser's findings in the canonical form (sorted, de-duplicated);
    ``mac_aging_s`` only when the text sets it."""
    for entry in ports.values():
        entry["untagged"] = sorted(set(entry["untagged"]))
        entry["tagged"] = sorted(set(entry["tagged"]))
    ordered = {port: ports[port] for port in sorted(ports, key=port_key)}
    statics = sorted(set(statics))
    result = {"stp": stp, "vlans": sorted(set(vlans)), "ports": ordered,
              "static_macs": [{"mac": mac, "vlan": vlan, "port": port} for vlan, mac, port in statics]}
    if mac_aging_s is not None:
        result["mac_aging_s"] = mac_aging_s
    return result
