# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An emulated Dell OS6 (N-Series) command line for the lab's switches.

A lab switch whose topology platform is ``dell_os6`` answers SSH with the
lab's CLI key (docs/lab.md) with this program instead of a shell: a login
banner, the OS6 prompts (``sw0>``, ``sw0#``, ``sw0(config)#``,
``sw0(config-vlan)#``, ``sw0(config-if-Gi1/0/1)#``) and the subset of the
OS6 CLI that the ``dell_os6`` renderer and the CLI diff
(:mod:`..platforms.cli_diff`) write, with the ``no``/``remove`` forms:

* exec: ``enable``, ``disable``, ``terminal length 0``, ``configure
  [terminal]``, ``show running-config``, ``show startup-config``, ``show
  version``, ``copy running-config startup-config`` (asks y/n), ``write
  memory``, ``exit``/``quit``/``logout``;
* global configuration: ``hostname``, ``[no] spanning-tree``, ``[no]
  flowcontrol``, ``mac address-table aging-time 10-1000000``, ``no mac
  address-table aging-time``, ``vlan database``, ``interface IF``, ``[no] mac address-table static MAC vlan V
  interface IF``, ``exit``, ``end``;
* VLAN database: ``[no] vlan LIST`` (``2-5,8``), ``exit``, ``end``;
* interface: ``switchport mode general|access``, ``switchport general pvid
  N``, ``no switchport general pvid``, ``switchport general allowed vlan
  add LIST [tagged|untagged]``, ``switchport general allowed vlan remove
  LIST``, ``speed 10|100|1000|10000``, ``no speed``, ``[no] shutdown``,
  ``[no] description``, ``exit``, ``end``.

Anything else answers ``% Invalid input detected at '^' marker.`` as OS6
does; a command OS6 would refuse (a VLAN that does not exist, a general
setting on an access port, a static entry on a port outside the VLAN)
answers a ``% Error: ...`` line and changes nothing.

The running configuration is kept as text in the switch's directory and
applied to the switch's OVS data plane (parsed with
:func:`..platforms.dell_os6.parse`, rendered with the ``ovs`` platform)
by the platform-neutral session of :mod:`.cli_emulator`, which also holds
the I/O loop the SSH forced command runs, the lab's faults
(``faults.json``) and the timer of a scheduled reload. :class:`Os6Cli` is
the pure command interpreter (lines in, text out); :data:`EMULATION`
describes it to the session.

Two exec commands give a commit-confirm style safety net (docs/reliability.md):
``reload in MINUTES`` schedules a reload that, when it fires, puts the
saved (startup) configuration back as the running one and applies it to the
data plane, and ``reload cancel`` (``show reload``: the schedule) withdraws
it. Whether a real OS6 release has a scheduled reload is for its
operator to check (the role's commands are a variable). With the lab
setting ``enable_password`` (``faults.json``), ``enable`` asks for it, with
the terminal's echo off, as OS6 does with an enable password set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..platforms import dell_os6, ovs
from ..platforms.common import PlatformError, expand_ranges, mac_address, mac_dotted
# the session, files, faults and reload timer are platform-neutral (cli_emulator);
# their names stay importable from here
from .cli_emulator import (FAULTS_FILE, MGMT_LOST_FILE, RELOAD_FILE, RUNNING_FILE,  # noqa: F401 pylint: disable=unused-import
                           SETTINGS_FILE, STARTUP_FILE, CliEmulatorError, Emulation, Session, apply_entry,
                           end_sessions, load_settings, main, ovs_entry_of, reload_after)

VERSION = "6.6.3.10"
MODEL = "N1548"
INVALID = "% Invalid input detected at '^' marker."
SPEEDS = (10, 100, 1000, 10000)
DEFAULT_VLAN = 1
SAVE_QUESTION = ("This operation may take a few minutes.\n"
                 "Management interfaces will not be available during this time.\n\n"
                 "Are you sure you want to save? (y/n) ")


class Os6CliError(CliEmulatorError):
    """The emulated CLI cannot start (no settings, a stored configuration
    that does not replay) or cannot apply its configuration to OVS."""


class _Refused(Exception):
    """A command the switch refuses; the message is what it prints."""


def interface_key(name: str) -> str:
    """``gigabitethernet 1/0/3``, ``GigabitEthernet1/0/3``, ``gi1/0/3`` -> ``gi1/0/3``."""
    return dell_os6._interface_key(name).lower()  # pylint: disable=protected-access


def _new_port() -> dict[str, Any]:
    """A port as OS6 starts it: access mode in the default VLAN, up."""
    return {"mode": "access", "pvid": DEFAULT_VLAN, "untagged": {DEFAULT_VLAN}, "tagged": set(),
            "admin": "up", "speed": None, "description": None}


def _natural_key(name: str) -> list[Any]:
    """Sort key of an interface name: digit runs as numbers (Gi1/0/10 after Gi1/0/9)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _words(line: str) -> list[str]:
    """A command line's words."""
    return line.split()


class Os6Cli:
    """The command interpreter of one emulated OS6 switch.

    ``interfaces``: the interface names the switch has (``Gi1/0/1`` ...);
    ``running_config``: text to start from (replayed, as OS6 does at boot
    from its startup configuration). Feed lines with :meth:`execute`; read
    :meth:`prompt`, :attr:`closed` and :attr:`apply_due` (set when the
    configuration changed and configuration mode was left)."""

    def __init__(self, hostname: str, interfaces: Iterable[str], running_config: str = "",
                 startup_config: str = "", privileged: bool = False) -> None:
        self.hostname = hostname
        self.interfaces = {interface_key(name): name for name in interfaces}
        self.stp = True  # OS6 runs spanning tree unless told not to
        self.flow_control = False  # 802.3x; the lab's datapath has no PAUSE (docs/lab.md)
        self.mac_aging_s: int | None = None  # None: the default (300 s), not shown
        self.vlans = {DEFAULT_VLAN}
        self.ports: dict[str, dict[str, Any]] = {}  # interface name -> port state (only ports touched)
        self.statics: set[tuple[int, str, str]] = set()  # (vlan, mac, interface name)
        self.mode = "exec"
        self.interface: str | None = None
        self.closed = False
        self.changed = False
        self.apply_due = False
        self.saved = False
        self.startup_config = startup_config or ""
        self._question: str | None = None
        self.reject: set[str] = set()  # lab fault: configuration commands answered as unknown
        self.enable_password: str | None = None  # lab setting: enable asks for this password
        self.reload_request: int | None = None  # minutes of a ``reload in`` to schedule (Session does)
        self.reload_cancel = False
        self.reload_shown = "No reload is scheduled.\n"
        # () -> {interface: {"link", "admin", "speed_mbps"}}: the data plane's ports (the lab's
        # session sets it: its OVS ports); None: show interfaces status from the configuration alone
        self.status: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None
        if running_config:
            self.load(running_config)
        self.mode = "exec" if privileged else "user"
        self.changed = self.apply_due = False

    # ------------------------------------------------------------ state
    def load(self, text: str) -> None:
        """Replay ``text`` (a ``show running-config``) from privileged exec."""
        self.mode = "exec"
        for number, line in enumerate(text.splitlines(), 1):
            reply = self.execute(line)
            if reply.lstrip().startswith(("%", "^")):
                raise Os6CliError("%s: the stored configuration does not replay, line %d %r: %s"
                                  % (self.hostname, number, line, reply.strip().splitlines()[-1]))
            if self.closed:
                raise Os6CliError("%s: the stored configuration logs out at line %d" % (self.hostname, number))
        self.mode = "exec"

    def port(self, name: str) -> dict[str, Any]:
        """The state of interface ``name`` (made on first use)."""
        return self.ports.setdefault(name, _new_port())

    def prompt(self) -> str:
        """The prompt of the current mode."""
        if self._question is not None:
            return ""
        return self.hostname + {
            "user": ">", "exec": "#", "config": "(config)#", "vlan": "(config-vlan)#",
            "if": "(config-if-%s)#" % self.interface}[self.mode]

    def banner(self) -> str:
        """What the switch prints when a session opens."""
        return ("\n%s\nDell EMC Networking %s (OS6 %s), emulated by the ethercluster.routing lab\n%s\n\n"
                % ("-" * 60, MODEL, VERSION, "-" * 60))

    def running_config(self) -> str:
        """``show running-config``: everything that differs from the defaults."""
        lines = ["!Current Configuration:",
                 '!System Description "Dell EMC Networking %s, %s, ethercluster.routing lab"' % (MODEL, VERSION),
                 "!System Software Version %s" % VERSION, "!", "configure",
                 'hostname "%s"' % self.hostname]
        if not self.stp:
            lines.append("no spanning-tree")
        if self.flow_control:
            lines.append("flowcontrol")
        if self.mac_aging_s is not None:
            lines.append("mac address-table aging-time %d" % self.mac_aging_s)
        vlans = sorted(self.vlans - {DEFAULT_VLAN})
        if vlans:
            lines += ["vlan database", "vlan %s" % dell_os6.vlan_list(vlans), "exit"]
        for name in sorted(self.ports, key=lambda item: [int(part) if part.isdigit() else part
                                                         for part in re.split(r"(\d+)", item)]):
            body = self._port_lines(self.ports[name])
            if body:
                lines += ["interface %s" % name] + body + ["exit"]
        lines += ["mac address-table static %s vlan %d interface %s" % (mac_dotted(mac), vlan, name)
                  for vlan, mac, name in sorted(self.statics)]
        lines.append("exit")
        return "\n".join(lines) + "\n"

    @staticmethod
    def _port_lines(port):
        lines = []
        if port["description"]:
            lines.append('description "%s"' % port["description"])
        if port["mode"] == "general":
            lines.append("switchport mode general")
            if port["pvid"] != DEFAULT_VLAN:
                lines.append("switchport general pvid %d" % port["pvid"])
            untagged = sorted(port["untagged"] - {DEFAULT_VLAN})
            tagged = sorted(port["tagged"])
            if untagged:
                lines.append("switchport general allowed vlan add %s untagged" % dell_os6.vlan_list(untagged))
            if tagged:
                lines.append("switchport general allowed vlan add %s tagged" % dell_os6.vlan_list(tagged))
            if DEFAULT_VLAN not in port["untagged"] | port["tagged"]:
                lines.append("switchport general allowed vlan remove %d" % DEFAULT_VLAN)
        if port["speed"] is not None:
            lines.append("speed %d" % port["speed"])
        if port["admin"] == "down":
            lines.append("shutdown")
        return lines

    def show_version(self) -> str:
        """``show version``."""
        return ("\nMachine Description............... Dell EMC Networking %s (ethercluster.routing lab)\n"
                "System Model ID................... %s\n"
                "Machine Type...................... Dell EMC Networking %s\n"
                "Serial Number..................... EC-LAB-%s\n"
                "Software Version.................. %s\n" % (MODEL, MODEL, MODEL, self.hostname, VERSION))

    # --------------------------------------------------------- commands
    def execute(self, line: str) -> str:
        """Run one command line; return what the switch prints (before the
        next prompt)."""
        text = line.strip()
        if self._question is not None:
            return self._answer(text)
        if not text or text.startswith("!"):
            return ""
        words = _words(text)
        lower = [word.lower() for word in words]
        if self.mode in ("config", "vlan", "if") and " ".join(lower) in self.reject:
            return self._invalid()
        handler = {"user": self._user, "exec": self._exec, "config": self._config,
                   "vlan": self._vlan_database, "if": self._interface_mode}[self.mode]
        try:
            result = handler(words, lower)
        except _Refused as refused:
            return "%s\n" % refused
        if result is None:
            return self._invalid()
        return result

    def _invalid(self):
        return "%s^\n%s\n" % (" " * len(self.prompt()), INVALID)

    def _common(self, lower):
        """Commands of both exec levels; None when not one of them."""
        if lower in (["exit"], ["quit"], ["logout"]):
            self.closed = True
            return ""
        if lower == ["terminal", "length", "0"] or (lower[:2] == ["terminal", "length"] and len(lower) == 3
                                                    and lower[2].isdigit()):
            return ""
        if lower == ["show", "version"]:
            return self.show_version()
        if lower in (["show", "interfaces", "status"], ["show", "interface", "status"]):
            return self.interfaces_status()
        return None

    def interfaces_status(self) -> str:
        """``show interfaces status``: per interface its duplex, speed,
        negotiation and link state, as N-Series prints them. The link is up
        when the port is not shut down and, with :attr:`status`, its
        data-plane port has carrier; the speed is that port's rate, else the
        configured speed, else 1000."""
        seen = dict(self.status() if self.status is not None else {})
        lines = ["", "Port      Description               Vlan  Duplex Speed   Neg  Link  Flow Ctrl",
                 "                                                              State Status",
                 "--------- ------------------------- ----- ------ ------- ---- ----- ---------"]
        for key in sorted(self.interfaces, key=_natural_key):
            name = self.interfaces[key]
            port = self.ports.get(name) or _new_port()
            data = seen.get(name, {})
            up = port["admin"] == "up" and data.get("link", "up") == "up"
            speed = data.get("speed_mbps") or port["speed"] or 1000
            vlan = "Gen" if port["mode"] == "general" else str(port["pvid"])
            lines.append("%-9s %-25s %-5s %-6s %-7s %-4s %-5s %s" % (
                name, (port["description"] or "")[:25], vlan, "Full" if up else "N/A",
                speed if up else "Unknown", "Off" if port["speed"] else "Auto", "Up" if up else "Down",
                "Inactive"))
        return "\n".join(lines) + "\n"

    def _user(self, words, lower):
        if lower == ["enable"]:
            if self.enable_password:
                self._question = "enable"
                return "Password:"
            self.mode = "exec"
            return ""
        return self._common(lower)

    def _exec(self, words, lower):
        if lower in (["configure"], ["configure", "terminal"]):
            self.mode = "config"
            return ""
        if lower == ["enable"]:
            return ""
        if lower == ["disable"]:
            self.mode = "user"
            return ""
        if lower == ["end"]:
            return ""
        if lower == ["show", "running-config"]:
            return self.running_config()
        if lower == ["show", "startup-config"]:
            return self.startup_config or "Startup configuration file does not exist.\n"
        if lower in (["copy", "running-config", "startup-config"], ["write", "memory"]):
            self._question = "save"
            return SAVE_QUESTION
        if lower[:2] == ["reload", "in"] and len(lower) == 3 and lower[2].isdigit() and 1 <= int(lower[2]) <= 1440:
            self.reload_request = int(lower[2])
            return "Reload scheduled in %d minute(s).\n" % self.reload_request
        if lower == ["reload", "cancel"]:
            self.reload_cancel = True
            return ""
        if lower == ["show", "reload"]:
            return self.reload_shown
        return self._common(lower)

    def _answer(self, text):
        question, self._question = self._question, None
        if question == "enable":
            if text != self.enable_password:
                return "\n% Bad secret\n"
            self.mode = "exec"
            return "\n"
        if text.lower() in ("y", "yes"):
            self.startup_config = self.running_config()
            self.saved = True
            return "\nConfiguration Saved!\n"
        return "\nConfiguration Not Saved!\n"

    def _leave_config(self):
        self.mode = "exec"
        self.interface = None
        if self.changed:
            self.apply_due = True
            self.changed = False
        return ""

    def _config(self, words, lower):
        if lower == ["end"] or lower == ["exit"]:
            return self._leave_config()
        if lower[0] == "hostname" and len(words) == 2:
            return self._set("hostname", words[1].strip('"'))
        if lower == ["no", "spanning-tree"]:
            return self._set("stp", False)
        if lower == ["spanning-tree"]:
            return self._set("stp", True)
        if lower in (["flowcontrol"], ["no", "flowcontrol"]):
            return self._set("flow_control", lower == ["flowcontrol"])
        if lower == ["no", "mac", "address-table", "aging-time"]:
            return self._set("mac_aging_s", None)
        if lower[:3] == ["mac", "address-table", "aging-time"] and len(lower) == 4:
            # N-Series: 10-1000000 seconds (docs/platforms.md "MAC aging time")
            if not lower[3].isdigit() or not 10 <= int(lower[3]) <= 1000000:
                return None
            return self._set("mac_aging_s", int(lower[3]))
        if lower == ["vlan", "database"]:
            self.mode = "vlan"
            return ""
        if lower[0] == "interface" and len(words) >= 2:
            name = self.interfaces.get(interface_key(" ".join(words[1:])))
            if name is None:
                return None
            self.mode, self.interface = "if", name
            return ""
        if lower[:3] == ["mac", "address-table", "static"]:
            return self._static(words[3:], lower[3:], add=True)
        if lower[:4] == ["no", "mac", "address-table", "static"]:
            return self._static(words[4:], lower[4:], add=False)
        return None

    def _set(self, attribute, value):
        if getattr(self, attribute) != value:
            setattr(self, attribute, value)
            self.changed = True
        return ""

    def _static(self, words, lower, add):
        # MAC vlan V interface IF
        if len(words) < 5 or lower[1] != "vlan" or lower[3] != "interface" or not words[2].isdigit():
            return None
        try:
            mac = mac_address(words[0], "mac")
        except PlatformError:
            return None
        vlan = int(words[2])
        name = self.interfaces.get(interface_key(" ".join(words[4:])))
        if name is None:
            return None
        entry = (vlan, mac, name)
        if not add:
            if entry not in self.statics:
                raise _Refused("%% Error: no static entry for %s in VLAN %d on %s." % (words[0], vlan, name))
            self.statics.discard(entry)
            self.changed = True
            return ""
        if int(mac.split(":")[0], 16) & 1:
            raise _Refused("%% Error: %s is a multicast address." % words[0])
        if vlan not in self.vlans:
            raise _Refused("%% Error: VLAN %d is not configured." % vlan)
        port = self.ports.get(name) or _new_port()
        if port["mode"] != "general" or vlan not in port["untagged"] | port["tagged"]:
            raise _Refused("%% Error: %s is not a member of VLAN %d." % (name, vlan))
        if any(other[:2] == (vlan, mac) and other != entry for other in self.statics):
            raise _Refused("%% Error: %s is already static in VLAN %d." % (words[0], vlan))
        if entry not in self.statics:
            self.statics.add(entry)
            self.changed = True
        return ""

    def _vlan_list(self, text):
        try:
            vlans = expand_ranges(text, "vlan list")
        except PlatformError:
            return None
        return vlans

    def _vlan_database(self, words, lower):
        if lower == ["exit"]:
            self.mode = "config"
            return ""
        if lower == ["end"]:
            return self._leave_config()
        if lower[0] == "vlan" and len(words) == 2:
            vlans = self._vlan_list(words[1])
            if vlans is None:
                return None
            if set(vlans) - self.vlans:
                self.vlans.update(vlans)
                self.changed = True
            return ""
        if lower[:2] == ["no", "vlan"] and len(words) == 3:
            vlans = self._vlan_list(words[2])
            if vlans is None:
                return None
            if DEFAULT_VLAN in vlans:
                raise _Refused("% Error: VLAN 1 is the default VLAN and cannot be deleted.")
            for vlan in set(vlans) & self.vlans:
                self.vlans.discard(vlan)
                for port in self.ports.values():
                    port["untagged"].discard(vlan)
                    port["tagged"].discard(vlan)
                    if port["pvid"] == vlan:  # as OS6 does: the port falls back to the default VLAN
                        port["pvid"] = DEFAULT_VLAN
                self.statics = {entry for entry in self.statics if entry[0] != vlan}
                self.changed = True
            return ""
        return None

    def _interface_mode(self, words, lower):
        if lower == ["exit"]:
            self.mode, self.interface = "config", None
            return ""
        if lower == ["end"]:
            return self._leave_config()
        port = self.port(self.interface)
        before = repr(sorted((key, sorted(value) if isinstance(value, set) else value)
                             for key, value in port.items()))
        statics = len(self.statics)
        result = self._port_command(port, words, lower)
        after = repr(sorted((key, sorted(value) if isinstance(value, set) else value)
                            for key, value in port.items()))
        if before != after or statics != len(self.statics):
            self.changed = True
        return result

    def _port_command(self, port, words, lower):
        if lower == ["switchport", "mode", "general"]:
            if port["mode"] != "general":
                port.update(mode="general", pvid=DEFAULT_VLAN, untagged={DEFAULT_VLAN}, tagged=set())
            return ""
        if lower == ["switchport", "mode", "access"]:
            port.update(mode="access", pvid=DEFAULT_VLAN, untagged={DEFAULT_VLAN}, tagged=set())
            self._drop_statics(self.interface)
            return ""
        if lower[:2] == ["switchport", "general"] or lower[:3] == ["no", "switchport", "general"]:
            return self._general(port, words, lower)
        if lower[0] == "speed" and len(lower) == 2:
            if lower[1] == "auto":
                port["speed"] = None
                return ""
            if not lower[1].isdigit() or int(lower[1]) not in SPEEDS:
                return None
            port["speed"] = int(lower[1])
            return ""
        if lower == ["no", "speed"]:
            port["speed"] = None
            return ""
        if lower == ["shutdown"]:
            port["admin"] = "down"
            return ""
        if lower == ["no", "shutdown"]:
            port["admin"] = "up"
            return ""
        if lower[0] == "description" and len(words) > 1:
            port["description"] = " ".join(words[1:]).strip('"')
            return ""
        if lower == ["no", "description"]:
            port["description"] = None
            return ""
        return None

    def _general(self, port, words, lower):
        if port["mode"] != "general":
            raise _Refused("%% Error: %s is not in general mode (switchport mode general)." % self.interface)
        if lower == ["no", "switchport", "general", "pvid"]:
            port["pvid"] = DEFAULT_VLAN
            return ""
        if lower[2:3] == ["pvid"] and len(lower) == 4 and lower[3].isdigit():
            vlan = int(lower[3])
            if vlan not in self.vlans:
                raise _Refused("%% Error: VLAN %d is not configured." % vlan)
            port["pvid"] = vlan
            return ""
        if lower[2:4] != ["allowed", "vlan"] or len(lower) < 6:
            return None
        action, listed, kind = lower[4], words[5], (lower[6:] or ["tagged"])
        vlans = self._vlan_list(listed)
        if vlans is None or len(kind) != 1 or kind[0] not in ("tagged", "untagged"):
            return None
        if action == "add":
            missing = sorted(set(vlans) - self.vlans)
            if missing:
                raise _Refused("%% Error: VLAN %d is not configured." % missing[0])
            other = "tagged" if kind[0] == "untagged" else "untagged"
            port[other] -= set(vlans)
            port[kind[0]] |= set(vlans)
            return ""
        if action == "remove" and not lower[6:]:
            port["untagged"] -= set(vlans)
            port["tagged"] -= set(vlans)
            self.statics = {entry for entry in self.statics
                            if not (entry[2] == self.interface and entry[0] in vlans)}
            return ""
        return None

    def _drop_statics(self, name):
        self.statics = {entry for entry in self.statics if entry[2] != name}


# ------------------------------------------------------------ data plane
def ovs_entry(running_config: str, interface_names: Mapping[Any, str] | None,
              switch: str = "switch") -> dict[str, Any]:
    """The ``ovs`` intent entry that makes the lab's OVS switch forward as
    the OS6 configuration ``running_config`` says (ports not in general
    mode are left out: the pipeline drops their frames)."""
    return ovs_entry_of(dell_os6.parse(running_config, interface_names, switch, strict=False))


def apply_to_ovs(running_config: str, interface_names: Mapping[Any, str] | None, switch: str,
                 bridge: str = ovs.DEFAULT_BRIDGE, shell: Callable[[str, str], str] | None = None) -> list[str]:
    """Make the switch's OVS bridge hold ``running_config``: read, compare,
    write only the difference (:func:`.cli_emulator.apply_entry`). Returns
    the change lines (empty when nothing differed)."""
    return apply_entry(ovs_entry(running_config, interface_names, switch), switch, bridge, shell)


EMULATION = Emulation(platform=dell_os6.PLATFORM, interpreter=Os6Cli, ovs_entry=ovs_entry,
                      config_modes=("config", "vlan", "if"), error=lambda message: "%% Error: %s\n" % message)


if __name__ == "__main__":
    raise SystemExit(main())
