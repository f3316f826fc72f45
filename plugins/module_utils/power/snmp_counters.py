# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port byte counters of a switch over SNMP (IF-MIB, RFC 2863), for the
power-save measurement of switches whose counters are not read over SSH.

A switch port is found by its interface name: ``ifName``
(1.3.6.1.2.1.31.1.1.1.1) is walked to learn each interface's ``ifIndex``,
then the 64-bit ``ifHCOutOctets`` (.10) and ``ifHCInOctets`` (.6) of the
wanted ports are read in one request. The name of topology port ``N`` is
the switch's interface name for it (``interface_names`` /
``interface_pattern`` of the topology), else ``if_name_pattern`` formatted
with the port (``"p{port}"`` in the lab), else the port itself.

pysnmp (pure Python, PyPI) does the SNMP; it is imported only when a switch
is read, so the rest of the collection does not need it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import EtherclusterError

if TYPE_CHECKING:  # for the type hints only: the topology model needs PyYAML, this module does not
    from ..fabric.topology import Topology

IF_NAME = "1.3.6.1.2.1.31.1.1.1.1"
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
IF_HC_OUT_OCTETS = "1.3.6.1.2.1.31.1.1.1.10"


class SnmpError(EtherclusterError):
    """A switch cannot be read over SNMP (names the switch, address, port or OID)."""


def port_if_names(topology: Topology, switch: str, ports: Iterable[Any],
                  if_name_pattern: str | None = None) -> dict[str, str]:
    """``{port: interface name}`` of ``ports`` of ``switch``."""
    sw = topology.switches[switch]
    names = {}
    for port in ports:
        name = sw.interface_name(port)
        if name is None:
            name = if_name_pattern.format(port=port) if if_name_pattern else str(port)
        names[str(port)] = name
    return names


def match_ports(if_names: dict[Any, Any], wanted: dict[str, str],
                switch: str = "switch") -> dict[str, int]:
    """``{port: ifIndex}`` from ``if_names`` ({ifIndex: ifName} walked from
    the switch) and ``wanted`` ({port: interface name}); SnmpError naming
    the ports whose interface the switch does not have."""
    index_of: dict[str, int] = {}
    for index, name in if_names.items():
        index_of.setdefault(str(name), int(index))
    missing = sorted(port for port, name in wanted.items() if name not in index_of)
    if missing:
        raise SnmpError("%s: no interface %s in its IF-MIB ifName (it has %s)" % (
            switch, ", ".join("%s (port %s)" % (wanted[port], port) for port in missing),
            ", ".join(sorted(map(str, if_names.values()))[:12]) or "none"))
    return {port: index_of[name] for port, name in wanted.items()}


def read_counters(switch: str, host: str, wanted: dict[str, str], community: str = "public",
                  port: int = 161, timeout: float = 2.0, retries: int = 1) -> dict[str, dict[str, int]]:
    """``{port: {"rx_bytes", "tx_bytes"}}`` of the ports of ``wanted``
    ({port: interface name}) of ``switch`` at ``host``, SNMP v2c."""
    try:
        from pysnmp.hlapi.v3arch import asyncio as snmp  # pylint: disable=import-outside-toplevel
    except ImportError as exc:
        raise SnmpError("%s: reading counters over SNMP needs pysnmp on the controller (pip "
                        "install pysnmp): %s" % (switch, exc))
    where = "%s (%s:%s)" % (switch, host, port)

    async def query() -> dict[str, dict[str, int]]:
        engine = snmp.SnmpEngine()
        auth = snmp.CommunityData(community, mpModel=1)
        target = await snmp.UdpTransportTarget.create((host, int(port)), timeout=timeout,
                                                      retries=retries)
        names: dict[int, str] = {}
        async for error, status, _index, binds in snmp.walk_cmd(
                engine, auth, target, snmp.ContextData(),
                snmp.ObjectType(snmp.ObjectIdentity(IF_NAME)), lexicographicMode=False):
            if error or status:
                raise SnmpError("%s: walking ifName failed: %s" % (where, error or status))
            for name, value in binds:
                names[int(tuple(name)[-1])] = str(value)
        indexes = match_ports(names, wanted, switch)
        objects = []
        for index in indexes.values():
            objects.append(snmp.ObjectType(snmp.ObjectIdentity("%s.%d" % (IF_HC_IN_OCTETS, index))))
            objects.append(snmp.ObjectType(snmp.ObjectIdentity("%s.%d" % (IF_HC_OUT_OCTETS, index))))
        error, status, _index, binds = await snmp.get_cmd(engine, auth, target, snmp.ContextData(),
                                                          *objects)
        if error or status:
            raise SnmpError("%s: reading ifHCInOctets/ifHCOutOctets failed: %s"
                            % (where, error or status))
        values = {str(name): value for name, value in binds}
        engine.close_dispatcher()
        counters = {}
        for port_name, index in indexes.items():
            try:
                counters[port_name] = {
                    "rx_bytes": int(values["%s.%d" % (IF_HC_IN_OCTETS, index)]),
                    "tx_bytes": int(values["%s.%d" % (IF_HC_OUT_OCTETS, index)])}
            except (KeyError, ValueError, TypeError):
                raise SnmpError("%s: no 64-bit octet counters for ifIndex %d (port %s)"
                                % (where, index, port_name))
        return counters

    try:
        return asyncio.run(query())
    except SnmpError:
        raise
    except Exception as exc:  # pylint: disable=broad-except  # pysnmp raises many types
        raise SnmpError("%s: SNMP failed: %s" % (where, exc))
