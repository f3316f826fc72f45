# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SNMP ``linkDown`` / ``linkUp`` notifications as the failover responder's
wake-up (segment-based routing §2.3: the switches report a failure to the
manager by SNMP traps; docs/failover.md, "SNMP traps").

A switch configured to send SNMPv2c notifications to the controller sends
``linkDown`` (1.3.6.1.6.3.1.1.5.3) or ``linkUp`` (.4, IF-MIB, RFC 2863) with
the interface's ``ifIndex``, ``ifAdminStatus`` and ``ifOperStatus`` when a
port's carrier changes. :class:`TrapListener` receives them on a UDP port,
checks the community, finds the switch by the sender's address and hands
``(switch, notification)`` on. The responder does not trust the trap's
content for the state: a trap only says *read this switch now* (its
interface status, as the poll reads it), so a lost, late or reordered
trap costs at most one poll interval, never a wrong state (UDP notifications
are not acknowledged), and no ifIndex has to be mapped to a port.

pysnmp (requirements.txt) decodes the messages; it is imported when a
message is decoded. Standard library otherwise.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import EtherclusterError

SNMP_TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0"
LINK_DOWN = "1.3.6.1.6.3.1.1.5.3"
LINK_UP = "1.3.6.1.6.3.1.1.5.4"
NAMES = {LINK_DOWN: "linkDown", LINK_UP: "linkUp", "1.3.6.1.6.3.1.1.5.1": "coldStart",
         "1.3.6.1.6.3.1.1.5.2": "warmStart"}
IF_INDEX = "1.3.6.1.2.1.2.2.1.1."
IF_OPER_STATUS = "1.3.6.1.2.1.2.2.1.8."
OPER = {1: "up", 2: "down"}


class TrapError(EtherclusterError):
    """A notification listener that cannot start (names the address)."""


def decode(data: bytes, community: str) -> dict[str, Any] | None:
    """The notification in one UDP message: ``{"trap": name or OID,
    "if_index": int or None, "oper": "up"/"down"/None}``; None when the
    message is no SNMPv2c notification with ``community`` (or cannot be
    decoded at all)."""
    from pyasn1.codec.ber import decoder   # pylint: disable=import-outside-toplevel  # with pysnmp, when used
    from pyasn1.error import PyAsn1Error   # pylint: disable=import-outside-toplevel
    from pysnmp.proto import api           # pylint: disable=import-outside-toplevel

    try:
        version = int(api.decodeMessageVersion(data))
        if version != api.SNMP_VERSION_2C:
            return None
        module = api.PROTOCOL_MODULES[version]
        message, _rest = decoder.decode(data, asn1Spec=module.Message())
        if str(module.apiMessage.get_community(message)) != community:
            return None
        pdu = module.apiMessage.get_pdu(message)
        if not pdu.isSameTypeWith(module.SNMPv2TrapPDU()):
            return None
        binds = {oid.prettyPrint(): value for oid, value in module.apiPDU.get_varbinds(pdu)}
    except (PyAsn1Error, KeyError, ValueError, TypeError):
        return None
    value = binds.get(SNMP_TRAP_OID)
    trap = str(value.prettyPrint()) if value is not None else ""
    index = next((int(value) for oid, value in binds.items() if oid.startswith(IF_INDEX)), None)
    oper = next((OPER.get(int(value)) for oid, value in binds.items() if oid.startswith(IF_OPER_STATUS)), None)
    return {"trap": NAMES.get(trap, trap or None), "if_index": index, "oper": oper}


def parse_listen(text: str) -> tuple[str, int]:
    """``(address, port)`` of ``"ADDRESS:PORT"`` (``[v6]:PORT`` for IPv6);
    TrapError naming the text otherwise."""
    host, colon, port = str(text).rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise TrapError("traps_listen %r: give ADDRESS:PORT, as 0.0.0.0:162 or 192.0.2.1:16162" % (text,))
    return host, int(port)


def addresses_of(hosts: Mapping[str, str]) -> dict[str, str]:
    """``{address: switch}`` from ``{switch: inventory host}`` (names
    resolved once); TrapError naming a host that does not resolve."""
    result = {}
    for switch, host in hosts.items():
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_UDP)
        except OSError as exc:
            raise TrapError("%s: its address %r does not resolve (%s): its traps could not be told apart"
                            % (switch, host, exc)) from None
        for info in infos:
            result[str(info[4][0])] = switch
    return result


class TrapListener:
    """Receive notifications on ``listen`` (``"ADDRESS:PORT"``) in a thread
    of its own: each one decoded with ``community`` from a sender in
    ``addresses`` (``{address: switch}``) goes to ``on_trap(switch,
    notification)``; the others are counted in :attr:`ignored` (by sender).
    :meth:`close` stops it."""

    def __init__(self, listen: str, community: str, addresses: Mapping[str, str],
                 on_trap: Callable[[str, dict[str, Any]], Any]) -> None:
        host, port = parse_listen(listen)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_DGRAM)
        try:
            self.socket.bind((host, port))
        except OSError as exc:
            self.socket.close()
            raise TrapError("traps_listen %s: cannot listen there (%s)" % (listen, exc)) from None
        self.socket.settimeout(0.5)
        self.community, self.addresses, self.on_trap = community, dict(addresses), on_trap
        self.received = 0
        self.ignored: dict[str, int] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def address(self) -> tuple[str, int]:
        """The address and port listened on (the port the system chose for port 0)."""
        return self.socket.getsockname()[:2]

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                data, sender = self.socket.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            switch = self.addresses.get(str(sender[0]))
            found = decode(data, self.community) if switch is not None else None
            if switch is None or found is None:
                self.ignored[str(sender[0])] = self.ignored.get(str(sender[0]), 0) + 1
                continue
            self.received += 1
            self.on_trap(switch, found)

    def close(self) -> None:
        """Stop listening."""
        self.stopped.set()
        self.thread.join(timeout=2.0)
        self.socket.close()
