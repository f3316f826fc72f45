# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An emulated Huawei VRP (S5700 series, VRP V200R010) command line for the
lab's switches.

A lab switch whose topology platform is ``huawei_vrp`` answers SSH with the
lab's CLI key with this interpreter, served by the platform-neutral session
of :mod:`.cli_emulator` (files, data plane, faults, I/O loop). It has the
VRP views and prompts (``<sw0>`` user view, ``[sw0]`` system view,
``[sw0-vlan10]``, ``[sw0-GigabitEthernet0/0/1]``) and the subset of the
CLI that the ``huawei_vrp`` renderer and the CLI diff
(:mod:`..platforms.cli_diff`) write, with the ``undo`` forms:

* every view: ``display current-configuration``, ``display
  saved-configuration``, ``display version``, ``display interface brief``
  (the carrier of the lab port, ``*down`` when shut down), ``display
  interface IF`` (state and running speed), ``display this``, ``save``
  (asks ``[Y/N]``), ``return`` (to the user view);
* user view: ``system-view``, ``screen-length 0 temporary``, ``quit``;
* system view: ``sysname``, ``stp disable|enable``, ``undo stp enable``,
  ``[undo] mac-address aging-time``, ``[undo] vlan batch LIST``, ``[undo]
  vlan N``, ``interface IF``, ``[undo] mac-address static MAC IF vlan V``,
  ``quit``;
* VLAN view: ``quit``;
* interface view: ``port link-type hybrid|trunk|access``, ``[undo] port
  hybrid pvid vlan [N]``, ``port hybrid tagged|untagged vlan LIST``,
  ``undo port hybrid vlan LIST``, ``stp disable``/``undo stp enable``
  (the port's own spanning tree), ``[undo] flow-control``, ``[undo]
  negotiation auto``, ``speed N``, ``undo speed``, ``[undo] shutdown``,
  ``quit``.

VLAN lists are VRP's (``100 to 102 105``, at most ten items). Keywords may
be shortened to a unique prefix (``dis cur``, ``sys``), as on VRP. A
command of the system view typed in the VLAN or interface view runs there
and leaves the switch in the system view, as VRP searches the upper view.
Anything else answers ``Error: Unrecognized command found at '^'
position.`` under a caret; a value out of range answers ``Error: Wrong
parameter found at '^' position.``; a command VRP refuses in this state (a
hybrid command on a port that is not hybrid, a VLAN that does not exist,
``speed`` while auto-negotiation is on, a static entry on a port outside
the VLAN) answers an ``Error:`` line and changes nothing.

Configuration commands take effect at once, as on VRP; the session applies
them to the switch's OVS data plane when the switch leaves the system view
(``return``, ``quit`` to the user view) and when the session ends. Whether
a given VRP release words its refusals exactly so is not claimed: the
messages start with ``Error:`` as VRP's do, which is what the terminal
plugin reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..platforms import huawei_vrp
from ..platforms.common import PlatformError, expand_ranges, mac_address, mac_dashed
from .cli_emulator import CliEmulatorError, Emulation, ovs_entry_of, reload_shown
from .vrp_commit import Refused as _Refused, TwoStage, WrongWord as _Wrong

VERSION = "5.170"
RELEASE = "V200R010C00SPC600"
MODEL = "S5700-28C-HI"
UNRECOGNIZED = "Error: Unrecognized command found at '^' position."
WRONG = "Error: Wrong parameter found at '^' position."
SAVE_QUESTION = "The current configuration will be written to the device.\nAre you sure to continue?[Y/N]"
DEFAULT_VLAN = 1
SPEEDS = {"GigabitEthernet": (10, 100, 1000), "XGigabitEthernet": (1000, 10000)}
CONFIG_MODES = ("system", "vlan", "if")
# the keywords a shortened word may stand for (a unique prefix of one of them)
KEYWORDS = (
    "display", "current-configuration", "saved-configuration", "version", "interface", "brief", "this",
    "save", "return", "quit", "system-view", "screen-length", "temporary", "sysname", "stp", "disable",
    "enable", "undo", "mac-address", "aging-time", "static", "vlan", "batch", "port", "link-type",
    "hybrid", "trunk", "access", "pvid", "tagged", "untagged", "flow-control", "negotiation", "auto",
    "speed", "shutdown")
# short forms VRP reads as these keywords although another keyword shares the prefix
ALIASES = {"dis": "display", "disp": "display", "sys": "system-view", "cur": "current-configuration"}
_INTERFACE = re.compile(r"^([a-z-]+?)\s*(\d+/\d+/\d+)$", re.I)


def expand(word: str) -> str:
    """A keyword shortened to a unique prefix of :data:`KEYWORDS` (two
    characters at least), else ``word`` as typed (lower case)."""
    lower = word.lower()
    if lower in ALIASES:
        return ALIASES[lower]
    if lower in KEYWORDS or len(lower) < 2 or not re.match(r"^[a-z-]+$", lower):
        return lower
    found = [keyword for keyword in KEYWORDS if keyword.startswith(lower)]
    return found[0] if len(found) == 1 else lower


def interface_key(name: str) -> str | None:
    """``GigabitEthernet0/0/1``, ``gigabitethernet 0/0/1``, ``GE0/0/1``,
    ``gi0/0/1`` -> ``GigabitEthernet0/0/1`` (``XGE0/0/1`` ->
    ``XGigabitEthernet0/0/1``); None when not an Ethernet interface name."""
    found = _INTERFACE.match(name.strip())
    if not found:
        return None
    kind, number = found.group(1).lower(), found.group(2)
    for full, short in (("xgigabitethernet", "xge"), ("gigabitethernet", "ge")):
        if kind == short or (len(kind) >= 2 and full.startswith(kind)):
            return "%s%s" % ("XGigabitEthernet" if full[0] == "x" else "GigabitEthernet", number)
    return None


def _natural(text: str) -> list[Any]:
    """Sort key: digit runs as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _new_port() -> dict[str, Any]:
    """A port as VRP starts it: not hybrid (VRP's default link type), up,
    auto-negotiation on."""
    return {"link_type": None, "pvid": DEFAULT_VLAN, "untagged": {DEFAULT_VLAN}, "tagged": set(),
            "admin": "up", "speed": None, "negotiation": True, "flow_control": False, "stp": True}


def vlan_list(words: list[str]) -> list[int] | None:
    """A VRP VLAN list (``100 to 102 105``, at most ten items, 1-4094); None
    when the words are not one."""
    items = len([word for word in words if word != "to"]) - words.count("to")
    try:
        vlans = expand_ranges(" ".join(words), "vlan list")
    except PlatformError:
        return None
    if not vlans or items > 10 or words[0] == "to" or words[-1] == "to" \
            or any(not 1 <= vlan <= 4094 for vlan in vlans):
        return None
    return vlans


class VrpCli(TwoStage):
    """The command interpreter of one emulated VRP switch.

    ``interfaces``: the interface names the switch has
    (``GigabitEthernet0/0/1`` ...); ``running_config``: text to start from
    (replayed, as VRP does at boot from its saved configuration). Feed
    lines with :meth:`execute`; read :meth:`prompt`, :attr:`closed` and
    :attr:`apply_due` (set when the configuration changed and the system
    view was left). ``status()`` (set by the session) gives each
    interface's ``link`` and running ``speed_mbps``. ``two_stage``: the
    switch is a VRP8 one with the two-stage mode and trial commits
    (:mod:`.vrp_commit`)."""

    def __init__(self, hostname: str, interfaces: Iterable[str], running_config: str = "",
                 startup_config: str = "", privileged: bool = False, two_stage: bool = False) -> None:
        del privileged  # VRP has no enable level
        self.hostname = hostname
        self.interfaces = {}
        for name in interfaces:
            self.interfaces[(interface_key(name) or name).lower()] = interface_key(name) or name
        self.stp = True  # VRP runs spanning tree unless told not to
        self.mac_aging_s: int | None = None  # None: the default (300 s), not shown
        self.vlans = {DEFAULT_VLAN}
        self.ports: dict[str, dict[str, Any]] = {name: _new_port() for name in self.interfaces.values()}
        self.statics: set[tuple[int, str, str]] = set()  # (vlan, mac, interface name)
        self.mode = "user"
        self.view: Any = None  # the VLAN (int) or interface (str) of the current view
        self.closed = self.changed = self.apply_due = self.saved = False
        self.startup_config = startup_config or ""
        self._question: str | None = None
        self.reject: set[str] = set()  # lab fault: configuration commands answered as unknown
        self.enable_password: str | None = None  # OS6 only; VRP has no enable
        self.reload_request: int | None = None
        self.reload_cancel = False
        self.reload_shown = reload_shown(None)
        self.status: Callable[[], Mapping[str, Mapping[str, Any]]] = dict
        self.init_two_stage(two_stage)
        if running_config:
            self.load(running_config)
        self.mode, self.view = "user", None
        self.changed = self.apply_due = False

    # ------------------------------------------------------------ state
    def load(self, text: str) -> None:
        """Replay ``text`` (a ``display current-configuration``) in the
        system view; ``#`` lines end a view, as they separate them."""
        self.mode, self.view = "system", None
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("#") or stripped.startswith("!") or not stripped:
                self.mode, self.view = "system", None
                continue
            if stripped == "return":
                break
            reply = self.execute(stripped)
            if "Error:" in reply:
                raise CliEmulatorError("%s: the stored configuration does not replay, line %d %r: %s"
                                       % (self.hostname, number, line, reply.strip().splitlines()[-1]))

    def prompt(self) -> str:
        """The prompt of the current view."""
        if self._question is not None:
            return ""
        # a sysname in an uncommitted candidate shows once committed
        hostname = (self.running_state() or {}).get("hostname", self.hostname)
        if self.mode == "user":
            return "<%s>" % hostname
        if self.mode == "system":
            return "[%s%s]" % (self.prompt_mark(), hostname)
        return "[%s%s-%s]" % (self.prompt_mark(), hostname, ("vlan%d" % self.view) if self.mode == "vlan" else self.view)

    def banner(self) -> str:
        """What the switch prints when a session opens."""
        return ("\nInfo: The max number of VTY users is 5, and the number\n"
                "      of current VTY users on line is 1.\n"
                "HUAWEI %s, VRP %s (%s), emulated by the ethercluster.routing lab\n\n" % (MODEL, VERSION, RELEASE))

    def show_version(self) -> str:
        """``display version``."""
        return ("Huawei Versatile Routing Platform Software\n"
                "VRP (R) software, Version %s (S5700 %s)\n"
                "Copyright (C) 2000-2016 HUAWEI TECH CO., LTD\n"
                "HUAWEI %s Routing Switch uptime is 0 week, 0 day, 0 hour, 1 minute\n"
                "(ethercluster.routing lab, switch %s)\n" % (VERSION, RELEASE, MODEL, self.hostname))

    def running_config(self) -> str:
        """``display current-configuration``: what differs from the defaults
        (in the two-stage mode the running configuration, not the candidate)."""
        running = self.running_state()
        if running is None:
            return self._render()
        candidate = self.snapshot()
        self.restore(running)
        try:
            return self._render()
        finally:
            self.restore(candidate)

    def _render(self) -> str:
        lines = ["!Software Version %s" % RELEASE, "#", " sysname %s" % self.hostname, "#"]
        vlans = sorted(self.vlans - {DEFAULT_VLAN})
        lines += ["vlan batch %s" % batch for batch in huawei_vrp.vlan_batches(vlans)]
        if vlans:
            lines.append("#")
        if not self.stp:
            lines += ["stp disable", "#"]
        if self.mac_aging_s is not None:
            lines += ["mac-address aging-time %d" % self.mac_aging_s, "#"]
        for name in sorted(self.ports, key=_natural):
            lines += ["interface %s" % name] + [" " + line for line in self._port_lines(self.ports[name])] + ["#"]
        statics = ["mac-address static %s %s vlan %d" % (mac_dashed(mac), name, vlan)
                   for vlan, mac, name in sorted(self.statics)]
        if statics:
            lines += statics + ["#"]
        lines.append("return")
        return "\n".join(lines) + "\n"

    @staticmethod
    def _port_lines(port: dict[str, Any]) -> list[str]:
        lines = []
        if port["link_type"] is not None:
            lines.append("port link-type %s" % port["link_type"])
        if port["link_type"] == "hybrid":
            if DEFAULT_VLAN not in port["untagged"] | port["tagged"]:
                lines.append("undo port hybrid vlan %d" % DEFAULT_VLAN)
            if port["pvid"] != DEFAULT_VLAN:
                lines.append("port hybrid pvid vlan %d" % port["pvid"])
            lines += ["port hybrid tagged vlan %s" % batch
                      for batch in huawei_vrp.vlan_batches(port["tagged"])]
            lines += ["port hybrid untagged vlan %s" % batch
                      for batch in huawei_vrp.vlan_batches(port["untagged"] - {DEFAULT_VLAN})]
        if not port["stp"]:
            lines.append("stp disable")
        if not port["negotiation"]:
            lines.append("undo negotiation auto")
        if port["speed"] is not None:
            lines.append("speed %d" % port["speed"])
        if port["flow_control"]:
            lines.append("flow-control")
        if port["admin"] == "down":
            lines.append("shutdown")
        return lines

    # --------------------------------------------------------- commands
    def execute(self, line: str) -> str:
        """What the switch prints (before the next prompt) for one line."""
        if self._question is not None:
            return self._answer(line.strip())
        words = line.split()
        if not words or words[0].startswith("#"):
            return ""
        lower = [expand(word) for word in words]
        if self.mode in CONFIG_MODES and " ".join(word.lower() for word in words) in self.reject:
            return self._caret(0, UNRECOGNIZED)
        try:
            result = self._dispatch(words, lower)
        except _Refused as refused:
            return "%s\n" % refused
        except _Wrong as wrong:
            return self._caret(int(wrong.args[0]), WRONG, words)
        if result is None:
            return self._caret(0, UNRECOGNIZED)
        return result

    def _dispatch(self, words: list[str], lower: list[str]) -> str | None:
        """Commands of every view, then those of the current view; from the
        VLAN or interface view, a system-view command runs in the system
        view, which the switch then stays in (VRP searches the upper view)."""
        if lower[0] == "commit":
            return self.commit_command(words, lower)
        result = self._any_view(lower)
        if result is not None:
            return result
        if self.mode == "user":
            return self._user(lower)
        if self.mode == "system":
            return self._system(words, lower)
        result = self._interface_view(words, lower) if self.mode == "if" else self._leave_view(lower)
        if result is not None:
            return result
        saved = (self.mode, self.view)
        self.mode, self.view = "system", None
        try:
            result = self._system(words, lower)
        finally:
            if result is None:
                self.mode, self.view = saved
        return result

    def _caret(self, index: int, message: str, words: list[str] | None = None) -> str:
        offset = len(self.prompt())
        if words:
            offset += len(" ".join(words[:index])) + (1 if index else 0)
        return "%s^\n%s\n" % (" " * offset, message)

    def _any_view(self, lower: list[str]) -> str | None:
        """Commands of every view; None when not one of them."""
        if lower[0] == "display":
            return self._display(lower[1:])
        if lower == ["save"]:
            self._question = "save"
            return SAVE_QUESTION
        if lower == ["return"]:
            return self._to_user()
        return None

    def _user(self, lower: list[str]) -> str | None:
        staged = self.enter_system(lower)
        if staged is not None:
            return staged
        if lower == ["system-view"]:
            self.mode = "system"
            return "Enter system view, return user view with Ctrl+Z.\n"
        if lower == ["quit"]:
            self.closed = True
            return ""
        if lower[:1] == ["screen-length"] and len(lower) == 3 and lower[1].isdigit() and lower[2] == "temporary":
            return "Info: The configuration takes effect on the current user terminal interface only.\n"
        return None

    def _to_user(self) -> str:
        asked = self.leave_staged()
        if asked is not None:
            return asked
        self.mode, self.view = "user", None
        if self.changed:
            self.apply_due, self.changed = True, False
        return ""

    def _leave_view(self, lower: list[str]) -> str | None:
        if lower == ["quit"]:
            if self.mode == "system":
                return self._to_user()
            self.mode, self.view = "system", None
            return ""
        return None

    def _answer(self, text: str) -> str:
        question, self._question = self._question, None
        if question == "uncommitted":
            leave, output = self.answer_uncommitted(text)
            if leave:
                self.mode, self.view = "user", None
            return output
        if text.lower() in ("y", "yes"):
            self.startup_config = self.running_config()
            self.saved = True
            return ("\nNow saving the current configuration to the slot 0.\n"
                    "Save the configuration successfully.\n")
        return "\n"

    # ---------------------------------------------------------- display
    def _display(self, rest: list[str]) -> str | None:
        if rest == ["current-configuration"]:
            return self.running_config()
        if rest == ["saved-configuration"]:
            return self.startup_config
        if rest == ["version"]:
            return self.show_version()
        if rest == ["interface", "brief"]:
            return self.interface_brief()
        if rest == ["this"]:
            return self._display_this()
        if rest[:1] == ["interface"] and len(rest) >= 2:
            name = self.interfaces.get((interface_key(" ".join(rest[1:])) or "").lower())
            return None if name is None else self.interface_detail(name)
        if rest == ["reload"]:
            return self.reload_shown
        if rest == ["configuration", "trial", "status"] and self.two_stage:
            return self.trial_status()
        return None

    def _display_this(self) -> str:
        if self.mode == "if":
            body = [" " + line for line in self._port_lines(self.ports[str(self.view)])]
            return "\n".join(["#", "interface %s" % self.view] + body + ["#", "return"]) + "\n"
        return "#\nreturn\n"

    def _state(self, name: str) -> tuple[str, int | None]:
        """(PHY state, running speed) of interface ``name``: ``*down`` when
        shut down, else the lab port's carrier (down when unknown)."""
        seen = self.status().get(name) or {}
        if self.ports[name]["admin"] == "down":
            return "*down", seen.get("speed_mbps")
        return ("up" if seen.get("link") == "up" else "down"), seen.get("speed_mbps")

    def interface_brief(self) -> str:
        """``display interface brief``: PHY (the carrier), protocol."""
        lines = ["PHY: Physical", "*down: administratively down", "(l): loopback", "(s): spoofing",
                 "(b): BFD down", "(e): ETHOAM down", "(dl): DLDP down", "(d): Dampening Suppressed",
                 "InUti/OutUti: input utility/output utility",
                 "%-28s%-6s%-9s%-6s%-9s%-10s%s" % ("Interface", "PHY", "Protocol", "InUti", "OutUti", "inErrors",
                                                   "outErrors")]
        for name in sorted(self.ports, key=_natural):
            phy, _speed = self._state(name)
            protocol = "up" if phy == "up" else "down"
            lines.append("%-28s%-6s%-9s%5s%7s%13s%11s" % (name, phy, protocol, "0%", "0%", "0", "0"))
        lines.append("%-28s%-6s%-9s%5s%7s%13s%11s" % ("NULL0", "up", "up(s)", "0%", "0%", "0", "0"))
        return "\n".join(lines) + "\n"

    def interface_detail(self, name: str) -> str:
        """``display interface IF``: state, PVID and the running speed."""
        phy, speed = self._state(name)
        port = self.ports[name]
        state = "Administratively DOWN" if phy == "*down" else phy.upper()
        return ("%s current state : %s\nLine protocol current state : %s\nDescription:\n"
                "Switch Port, Link-type : %s, PVID : %4d, TPID : 8100(Hex), The Maximum Frame Length is 9216\n"
                "Speed : %s,  Loopback: NONE\nDuplex: FULL,  Negotiation: %s\nMdi   : AUTO,  Flow-control: %s\n"
                % (name, state, "UP" if phy == "up" else "DOWN", port["link_type"] or "negotiation-desirable",
                   port["pvid"], speed if speed is not None else "AUTO",
                   "ENABLE" if port["negotiation"] else "DISABLE",
                   "ENABLE" if port["flow_control"] else "DISABLE"))

    # ------------------------------------------------------- system view
    def _set(self, attribute: str, value: Any) -> str:
        if getattr(self, attribute) != value:
            setattr(self, attribute, value)
            self.edited()
        return ""

    def _system(self, words: list[str], lower: list[str]) -> str | None:
        result = self._leave_view(lower)
        if result is not None:
            return result
        if lower[0] == "sysname" and len(words) == 2:
            return self._set("hostname", words[1])
        if lower in (["stp", "disable"], ["undo", "stp", "enable"]):
            return self._set("stp", False)
        if lower == ["stp", "enable"]:
            return self._set("stp", True)
        if lower == ["undo", "mac-address", "aging-time"]:
            return self._set("mac_aging_s", None)
        if lower[:2] == ["mac-address", "aging-time"] and len(lower) == 3:
            # S series: 0 (no aging) or 10-1000000 seconds
            if not lower[2].isdigit() or not (int(lower[2]) == 0 or 10 <= int(lower[2]) <= 1000000):
                raise _Wrong(2)
            return self._set("mac_aging_s", int(lower[2]))
        if lower[:2] in (["vlan", "batch"], ["undo", "vlan"]) or lower[0] == "vlan":
            return self._vlans(lower)
        if lower[0] == "interface" and len(words) >= 2:
            name = self.interfaces.get((interface_key(" ".join(words[1:])) or "").lower())
            if name is None:
                raise _Wrong(1)
            self.mode, self.view = "if", name
            return ""
        if lower[:2] == ["mac-address", "static"]:
            return self._static(words[2:], lower[2:], add=True)
        if lower[:3] == ["undo", "mac-address", "static"]:
            return self._static(words[3:], lower[3:], add=False)
        return None

    def _vlans(self, lower: list[str]) -> str | None:
        undo = lower[0] == "undo"
        rest = lower[1:] if undo else lower
        if rest[:2] == ["vlan", "batch"]:
            listed = vlan_list(rest[2:])
        elif len(rest) == 2 and rest[1].isdigit():
            listed = vlan_list(rest[1:])
        else:
            return None
        if listed is None:
            raise _Wrong(len(lower) - 1)
        if not undo:
            if rest[1] != "batch":
                self.mode, self.view = "vlan", listed[0]
            return self._set("vlans", self.vlans | set(listed))
        gone = set(listed) - {DEFAULT_VLAN}
        for port in self.ports.values():
            port["untagged"] -= gone
            port["tagged"] -= gone
        self.statics = {entry for entry in self.statics if entry[0] not in gone}
        return self._set("vlans", self.vlans - gone)

    def _static(self, words: list[str], lower: list[str], add: bool) -> str | None:
        # MAC INTERFACE vlan V (the interface may be written with a space)
        if len(words) < 4 or lower[-2] != "vlan" or not lower[-1].isdigit():
            return None
        try:
            mac = mac_address(words[0], "mac")
        except PlatformError:
            raise _Wrong(0) from None
        vlan = int(lower[-1])
        name = self.interfaces.get((interface_key(" ".join(words[1:-2])) or "").lower())
        if name is None:
            raise _Wrong(1)
        entry = (vlan, mac, name)
        if not add:
            if entry not in self.statics:
                raise _Refused("Error: The MAC address entry does not exist.")
            self.statics.discard(entry)
            self.edited()
            return ""
        port = self.ports[name]
        if vlan not in self.vlans:
            raise _Refused("Error: The VLAN %d does not exist." % vlan)
        if vlan not in port["untagged"] | port["tagged"]:
            raise _Refused("Error: The interface %s does not belong to VLAN %d." % (name, vlan))
        if entry not in self.statics:
            self.statics.add(entry)
            self.edited()
        return ""

    # ---------------------------------------------------- interface view
    def _port_set(self, port: dict[str, Any], key: str, value: Any) -> str:
        if port[key] != value:
            port[key] = value
            self.edited()
        return ""

    def _interface_view(self, words: list[str], lower: list[str]) -> str | None:
        port = self.ports[str(self.view)]
        simple = {("shutdown",): ("admin", "down"), ("undo", "shutdown"): ("admin", "up"),
                  ("flow-control",): ("flow_control", True), ("undo", "flow-control"): ("flow_control", False),
                  ("negotiation", "auto"): ("negotiation", True), ("undo", "negotiation", "auto"): ("negotiation", False),
                  ("stp", "disable"): ("stp", False), ("undo", "stp", "enable"): ("stp", False),
                  ("stp", "enable"): ("stp", True), ("undo", "speed"): ("speed", None)}
        if tuple(lower) in simple:
            key, value = simple[tuple(lower)]
            if key == "negotiation" and value:
                self._port_set(port, "speed", None)
            return self._port_set(port, key, value)
        if lower[0] == "speed" and len(lower) == 2:
            return self._speed(port, lower[1])
        if lower[:2] == ["port", "link-type"] and len(lower) == 3:
            return self._link_type(port, lower[2])
        if "hybrid" in lower[:3] and lower[0] in ("port", "undo"):
            return self._hybrid(port, lower)
        return self._leave_view(lower)

    def _speed(self, port: dict[str, Any], value: str) -> str:
        kind = re.sub(r"[\d/]+$", "", str(self.view))
        if not value.isdigit() or int(value) not in SPEEDS.get(kind, ()):
            raise _Wrong(1)
        if port["negotiation"]:
            raise _Refused("Error: The speed cannot be configured when auto-negotiation is enabled "
                           "(undo negotiation auto first).")
        return self._port_set(port, "speed", int(value))

    def _link_type(self, port: dict[str, Any], kind: str) -> str:
        if kind not in ("hybrid", "trunk", "access"):
            raise _Wrong(2)
        if port["link_type"] == kind:
            return ""
        fresh = _new_port()
        if any(port[key] != fresh[key] for key in ("pvid", "untagged", "tagged")):
            raise _Refused("Error: Please renew the default configurations.")
        return self._port_set(port, "link_type", kind)

    def _hybrid(self, port: dict[str, Any], lower: list[str]) -> str | None:
        if port["link_type"] != "hybrid":
            raise _Refused("Error: The link type of the port %s is not hybrid (port link-type hybrid)." % self.view)
        if lower == ["undo", "port", "hybrid", "pvid", "vlan"]:
            return self._port_set(port, "pvid", DEFAULT_VLAN)
        if lower[:4] == ["port", "hybrid", "pvid", "vlan"] and len(lower) == 5:
            if not lower[4].isdigit() or not 1 <= int(lower[4]) <= 4094:
                raise _Wrong(4)
            return self._port_set(port, "pvid", int(lower[4]))
        if lower[:3] == ["undo", "port", "hybrid"] and lower[3:4] == ["vlan"]:
            return self._leave(port, lower, 4)
        if lower[:1] == ["port"] and lower[2:3] in (["tagged"], ["untagged"]) and lower[3:4] == ["vlan"]:
            vlans = vlan_list(lower[4:])
            if vlans is None:
                raise _Wrong(len(lower) - 1)
            missing = sorted(set(vlans) - self.vlans)
            if missing:
                raise _Refused("Error: The VLAN %d does not exist." % missing[0])
            kind, other = (lower[2], "untagged" if lower[2] == "tagged" else "tagged")
            before = (set(port[kind]), set(port[other]))
            port[other] = port[other] - set(vlans)
            port[kind] = port[kind] | set(vlans)
            if before != (port[kind], port[other]):
                self.edited()
            return ""
        return None

    def _leave(self, port: dict[str, Any], lower: list[str], start: int) -> str:
        """``undo port hybrid vlan LIST``: the port leaves the VLANs (and
        its static entries in them go)."""
        vlans = vlan_list(lower[start:])
        if vlans is None:
            raise _Wrong(len(lower) - 1)
        before = (set(port["untagged"]), set(port["tagged"]))
        port["untagged"] = port["untagged"] - set(vlans)
        port["tagged"] = port["tagged"] - set(vlans)
        self.statics = {entry for entry in self.statics if not (entry[2] == self.view and entry[0] in vlans)}
        if before != (port["untagged"], port["tagged"]):
            self.edited()
        return ""


# ------------------------------------------------------------ data plane
def ovs_entry(running_config: str, interface_names: Mapping[Any, str] | None,
              switch: str = "switch") -> dict[str, Any]:
    """The ``ovs`` intent entry that makes the lab's OVS switch forward as
    the VRP configuration ``running_config`` says (ports that are not
    hybrid are left out: the pipeline drops their frames)."""
    return ovs_entry_of(huawei_vrp.parse(running_config, interface_names, switch, strict=False))


EMULATION = Emulation(platform=huawei_vrp.PLATFORM, interpreter=VrpCli, ovs_entry=ovs_entry,
                      config_modes=CONFIG_MODES, error=lambda message: "Error: %s\n" % message,
                      options=lambda settings: {"two_stage": bool(settings.get("two_stage"))})
