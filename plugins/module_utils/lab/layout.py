# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab layout: which namespaces, devices, addresses and directories the
emulator of a topology is made of.

:func:`lab_layout` is a pure function from a :class:`~..topology.Topology`
and a few options to plain JSON data (the *layout*). The layout is what the
``lab`` module receives, what the lab's record keeps, and what the lab
inventory is written from; :mod:`.plan` turns it into commands.

Naming (all names are unique to one lab, so two labs can coexist and
``lab_down`` removes only what its ``lab_up`` created):

* switch ``S`` of lab ``L`` lives in namespace ``ec-L-S``; its port ``"N"``
  is the veth ``pN`` there, with OpenFlow port number ``N``; its management
  veth is ``mgmt0``, peered with ``ec<tag>m<index>`` in the root namespace
  (``<tag>``: 4 hex digits of a hash of ``L``; interface names have at most
  15 characters);
* host ``H`` lives in namespace ``ec-L-H`` with one NIC ``eth0`` carrying
  the topology's MAC and an address of the lab's host network;
* files, sockets, pid files and logs are under ``<state_root>/L/`` (one
  directory per switch);
* a switch whose topology platform has an emulated CLI
  (:data:`CLI_PLATFORMS`: ``dell_os6``, ``huawei_vrp``) gets ``cli``: its
  platform and ``{port: interface name}`` map (the topology's
  ``interface_names`` / ``interface_pattern``, else ``Gi1/0/<port>`` on
  OS6, ``GigabitEthernet0/0/<port>`` on VRP); the layout then names the
  Python (``cli.python``, with ``cli.pythonpath``) that runs the emulator
  (:mod:`.cli_emulator`: :mod:`.os6_cli`, :mod:`.vrp_cli`) behind the
  switch's SSH CLI key.

Addresses: the management network (default 198.51.100.0/24, TEST-NET-2)
gives its first address to the root-namespace side of every management veth
(point-to-point ``/32 peer`` routes, so a /24 serves 253 switches) and the
next ones to the switches. The host network (default 10.42.0.0/16) exists
only inside the host namespaces.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import sys
from collections.abc import Container, Iterator
from typing import TYPE_CHECKING, Any

from .plan import LAB_SCHEMA, LabError

if TYPE_CHECKING:
    from ..fabric.topology import Switch, Topology

STATE_ROOT = "/run/ethercluster-lab"
DEFAULT_MGMT_NETWORK = "198.51.100.0/24"
DEFAULT_HOST_NETWORK = "10.42.0.0/16"
DEFAULT_BRIDGE = "br0"
DEFAULT_HOST_SPEED_MBPS = 1000
MAX_RENEGOTIATION_GAP_S = 60.0
# renegotiation_gap: "profile": each switch's own Table 6 figures
GAP_FROM_PROFILE = "profile"
OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
# platform -> default interface name pattern of the ports its emulated CLI has
CLI_PLATFORMS = {"dell_os6": "Gi1/0/{port}", "huawei_vrp": "GigabitEthernet0/0/{port}"}
# The niceness each switch daemon runs at (its pid file -> nice value; runner.prioritize_daemons
# gives it to every thread and to the daemon's autogroup). An emulated switch stands for dedicated
# hardware: its forwarding (ovs-vswitchd's main loop reads every port's packet socket, which
# overflows when the loop waits for a CPU) and its control plane (ovsdb-server, sshd) go before
# the machine's other work. The sshd's sessions run the pushes and the carrier polls, the work a
# switch's own management CPU does beside its forwarding: they go at the forwarding's priority
# (at -5 they waited behind it and a failover took twice as long). Measured why: docs/lab.md,
# "Under load".
DAEMON_NICENESS = {"ovs-vswitchd.pid": -10, "ovsdb-server.pid": -5, "sshd.pid": -10}
# The receive buffer (bytes, SO_RCVBUFFORCE: the kernel doubles it) of the packet sockets through
# which each ovs-vswitchd reads its ports (runner.enlarge_port_buffers). OVS sets none, so a port
# holds the kernel's 212,992 bytes (about 256 small frames), and its main loop, which also commits
# every flow-table change, does not read the ports while it commits: a host port that receives a
# datagram to each of 15 peers every 10 ms overflowed during one large bundle and lost two of its
# host's probe rounds. A hardware switch keeps forwarding while its tables are written; 2 MiB
# (about 5,000 such frames, over 3 s of a host's probes) lets the emulated one catch up instead of
# dropping. Measured: docs/lab.md, "Under load".
PORT_RECEIVE_BUFFER = 2 * 1024 * 1024
# the directory holding ansible_collections/ of this code (PYTHONPATH of the emulator)
COLLECTIONS_DIR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               *[os.pardir] * 6))

_LAB_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_BRIDGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}\Z")


def lab_tag(name: str) -> str:
    """Four hex digits that stand for lab ``name`` in root-namespace
    interface names (which are limited to 15 characters)."""
    return hashlib.sha1(name.encode("utf-8")).hexdigest()[:4]


def lab_layout(topology: Topology, name: str | None = None, state_root: str = STATE_ROOT,
               mgmt_network: str = DEFAULT_MGMT_NETWORK, host_network: str = DEFAULT_HOST_NETWORK,
               host_speed_mbps: int = DEFAULT_HOST_SPEED_MBPS, renegotiation_gap: float | str = 0.0,
               bridge: str = DEFAULT_BRIDGE, userspace_tso: bool = True,
               host_tx_offload: bool = True, ovs_schema: str = OVS_SCHEMA,
               cli_python: str | None = None, cli_pythonpath: str | None = None,
               daemon_niceness: dict[str, int] | None = None,
               port_receive_buffer: int = PORT_RECEIVE_BUFFER) -> dict[str, Any]:
    """Return the layout (plain data) of the lab that emulates ``topology``.

    ``name`` defaults to the topology's name. ``renegotiation_gap`` (seconds)
    is how long a switch port stays down when its speed is changed (0: no
    gap; ``"profile"``: each switch's Table 6 figures). ``userspace_tso``
    sets ``other_config:userspace-tso-enable`` before each ``ovs-vswitchd``
    starts (TCP across the lab needs it, or ``host_tx_offload=False``).
    ``cli_python``/``cli_pythonpath``: the interpreter (with jinja2 and
    netaddr) and the ``ansible_collections/`` parent that run the emulated
    CLI of :data:`CLI_PLATFORMS` switches (default: this Python and tree).
    ``daemon_niceness``: ``{pid file: nice}`` (default :data:`DAEMON_NICENESS`);
    ``port_receive_buffer``: bytes for each port's packet socket (0: the kernel's).

    Raises :class:`~.plan.LabError` naming the option, switch or host at
    fault: a bad lab name, networks too small for the fabric, a host address
    outside the host network, a host named like a switch.
    """
    name = topology.name if name is None else name
    state_root, gap = _checked_options(name, bridge, state_root, host_speed_mbps, renegotiation_gap)
    mgmt, hosts_net = _networks(mgmt_network, host_network)
    # host and switch names never clash (the topology refuses it): each has its own namespace
    lab_dir = "%s/%s" % (state_root, name)
    tag = lab_tag(name)
    netns_prefix = "ec-%s-" % name
    gateway, switch_addresses = _mgmt_addresses(topology, mgmt)
    switches = {sw.name: _switch_layout(topology, sw, lab_dir, tag, netns_prefix,
                                        switch_addresses[sw.name], host_speed_mbps)
                for sw in topology.switches.values()}
    hosts = _host_layouts(topology, hosts_net, netns_prefix, host_speed_mbps)
    links = [{"a": str(link.a), "b": str(link.b), "speed_mbps": link.speed_mbps, "state": link.state}
             for link in topology.links]
    for sw_name, gaps in (renegotiation_gaps(topology) if gap == GAP_FROM_PROFILE else {}).items():
        switches[sw_name]["renegotiation_gaps"] = gaps
    layout = {
        "schema": LAB_SCHEMA, "lab": name, "topology": topology.name, "state_root": state_root, "dir": lab_dir,
        "bridge": bridge,
        "ovs_schema": ovs_schema,
        "userspace_tso": bool(userspace_tso),
        "host_tx_offload": bool(host_tx_offload),
        "renegotiation_gap": gap,
        "mgmt": {"network": str(mgmt), "gateway": gateway},
        "host_network": str(hosts_net),
        "switches": switches,
        "hosts": hosts,
        "links": links,
        "daemon_niceness": _checked_niceness(DAEMON_NICENESS if daemon_niceness is None else daemon_niceness),
        "port_receive_buffer": _checked_buffer(port_receive_buffer),
    }
    if any("cli" in sw for sw in switches.values()):
        layout["cli"] = {"python": cli_python or sys.executable,
                         "pythonpath": cli_pythonpath or COLLECTIONS_DIR}
    return layout


def _checked_buffer(size: Any) -> int:
    """``port_receive_buffer`` checked: whole bytes, 0 (the kernel's own)
    or from 64 KiB to 256 MiB."""
    if isinstance(size, bool) or not isinstance(size, int) or not (size == 0 or 65536 <= size <= 256 * 1024 * 1024):
        raise LabError("port_receive_buffer: bytes, 0 or from 65536 to 268435456, got %r" % (size,))
    return size


def renegotiation_gaps(topology: Topology) -> dict[str, dict[str, float]]:
    """Per switch, ``{"FROM>TO": seconds}``: how long its model keeps a
    port down while it changes speed (switch-tagged paper §4.3, Table 6,
    from the switch's power profile, the default one when it names none).
    LabError naming the switch when its profile is unknown or has no
    speed-change figures."""
    # the power model imports the fabric model; only this option needs it
    from ..power.model import PowerError, switch_profiles   # pylint: disable=import-outside-toplevel
    try:
        profiles = switch_profiles(topology)
    except PowerError as exc:
        raise LabError("renegotiation_gap: %s: %s; the lab knows only the built-in profiles"
                       % (GAP_FROM_PROFILE, exc)) from None
    result = {}
    for name, profile in profiles.items():
        timings = profile.link_timings
        if timings is None or not timings.speed_change_s:
            raise LabError("renegotiation_gap: %s: switch %s: power profile %s has no speed-change "
                           "figures (link_timings)" % (GAP_FROM_PROFILE, name, profile.name))
        result[name] = timings.to_data()["speed_change_s"]
    return result


def _checked_options(name: Any, bridge: Any, state_root: Any, host_speed_mbps: Any,
                     renegotiation_gap: Any) -> tuple[str, float | str]:
    """Check the plain options of :func:`lab_layout`; return the state root
    without a trailing slash and the renegotiation gap in seconds (or
    ``"profile"``)."""
    if not isinstance(name, str) or not _LAB_NAME_RE.match(name):
        raise LabError("name: a lab name is 1-32 letters, digits, '_' or '-', starting with a "
                       "letter or digit; got %r" % (name,))
    if not isinstance(bridge, str) or not _BRIDGE_RE.match(bridge):
        raise LabError("bridge: %r is not a usable bridge name (a letter, then up to 14 "
                       "letters, digits, '_' or '-')" % (bridge,))
    if not isinstance(state_root, str) or not state_root.startswith("/") or state_root == "/":
        raise LabError("state_root: must be an absolute directory other than /, got %r"
                       % (state_root,))
    if isinstance(host_speed_mbps, bool) or not isinstance(host_speed_mbps, int) \
            or host_speed_mbps <= 0:
        raise LabError("host_speed_mbps: must be a whole number of Mbit/s > 0, got %r"
                       % (host_speed_mbps,))
    if renegotiation_gap == GAP_FROM_PROFILE:
        return state_root.rstrip("/"), GAP_FROM_PROFILE
    try:
        gap = float(renegotiation_gap)
    except (TypeError, ValueError):
        raise LabError("renegotiation_gap: must be a number of seconds or %r (each switch's "
                       "Table 6 figures), got %r" % (GAP_FROM_PROFILE, renegotiation_gap))
    if not 0 <= gap <= MAX_RENEGOTIATION_GAP_S:
        raise LabError("renegotiation_gap: must be from 0 to %g seconds, got %r"
                       % (MAX_RENEGOTIATION_GAP_S, renegotiation_gap))
    return state_root.rstrip("/"), gap


def _checked_niceness(niceness: Any) -> dict[str, int]:
    """``daemon_niceness`` checked: a nice value from -20 to 19 for some of
    the switch daemons' pid files."""
    known = tuple(DAEMON_NICENESS)
    if not isinstance(niceness, dict):
        raise LabError("daemon_niceness: must be a mapping of %s to nice values, got %r"
                       % (", ".join(known), niceness))
    for pidfile, value in niceness.items():
        if pidfile not in known:
            raise LabError("daemon_niceness: %r is not a switch daemon's pid file (%s)"
                           % (pidfile, ", ".join(known)))
        if isinstance(value, bool) or not isinstance(value, int) or not -20 <= value <= 19:
            raise LabError("daemon_niceness: %s: a nice value is a whole number from -20 to 19, got %r"
                           % (pidfile, value))
    return {pidfile: niceness[pidfile] for pidfile in sorted(niceness)}


def _switch_layout(topology: Topology, sw: Switch, lab_dir: str, tag: str, netns_prefix: str,
                   mgmt_address: str, host_speed_mbps: int) -> dict[str, Any]:
    """One switch's namespace, directory, management veth and ports (and
    its emulated CLI when its platform has one)."""
    ports = {}
    for neighbour in topology.neighbours(sw.name):
        ports[neighbour["port"]] = {
            "dev": "p" + neighbour["port"], "ofport": int(neighbour["port"]),
            "speed_mbps": neighbour["speed_mbps"],
            "peer": "%s:%s" % (neighbour["switch"], neighbour["remote_port"])}
    for host in topology.hosts_on(sw.name):
        ports[host.port] = {"dev": "p" + host.port, "ofport": int(host.port),
                            "speed_mbps": host_speed_mbps, "peer": host.name}
    ports = {port: ports[port] for port in sorted(ports, key=int)}
    layout: dict[str, Any] = {
        "index": sw.index,
        "netns": netns_prefix + sw.name,
        "dir": "%s/%s" % (lab_dir, sw.name),
        "mgmt_address": mgmt_address,
        "mgmt_dev": "mgmt0",
        "root_dev": "ec%sm%d" % (tag, sw.index),
        "ports": ports,
    }
    if sw.platform in CLI_PLATFORMS:
        layout["cli"] = {
            "platform": sw.platform,
            "interfaces": {port: _interface_name(sw, port, CLI_PLATFORMS[sw.platform])
                           for port in ports}}
    return layout


def _host_layouts(topology: Topology, hosts_net: ipaddress.IPv4Network | ipaddress.IPv6Network,
                  netns_prefix: str, host_speed_mbps: int) -> dict[str, dict[str, Any]]:
    """Per host: its namespace, NIC, MAC, address and switch port."""
    hosts = {}
    host_addresses = _host_addresses(topology, hosts_net)
    for host in topology.hosts.values():
        hosts[host.name] = {
            "netns": netns_prefix + host.name,
            "dev": "eth0",
            "mac": host.mac,
            "address": host_addresses[host.name],
            "prefixlen": hosts_net.prefixlen,
            "switch": host.switch,
            "port": host.port,
            "speed_mbps": host_speed_mbps,
        }
    return hosts


def _interface_name(switch: Switch, port: str, pattern: str) -> str:
    """The name of ``switch``'s port ``port`` on its CLI: the topology's
    own (``interface_names``, ``interface_pattern``), else ``pattern``."""
    named = getattr(switch, "interface_name", None)
    name = named(port) if named is not None else None
    return name or pattern.format(port=port)


# How a message names the two networks: the lab module's option and the
# playbooks' variable (lab_up.yml, molecule), since users set the latter.
MGMT_OPTION = "mgmt_network (-e lab_mgmt_network)"
HOST_OPTION = "host_network (-e lab_host_network)"


def _networks(mgmt_network: Any, host_network: Any) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network,
                                                             ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The management and host networks, checked and disjoint."""
    mgmt = _network(mgmt_network, MGMT_OPTION)
    hosts_net = _network(host_network, HOST_OPTION)
    if mgmt.overlaps(hosts_net):
        raise LabError("%s %s and %s %s overlap; the host network must exist only inside "
                       "the host namespaces" % (MGMT_OPTION, mgmt, HOST_OPTION, hosts_net))
    return mgmt, hosts_net


def _network(value: Any, option: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """Option ``option`` as an IPv4 network a lab can use."""
    try:
        network = ipaddress.ip_network(str(value), strict=True)
    except ValueError as exc:
        raise LabError("%s: %r is not an IPv4 network such as 198.51.100.0/24 (%s)"
                       % (option, value, exc))
    if network.version != 4 or network.prefixlen > 30:
        raise LabError("%s: needs an IPv4 network of at least 4 addresses, got %s"
                       % (option, network))
    if network.is_loopback or network.is_multicast or network.is_link_local:
        raise LabError("%s: %s is not usable for a lab" % (option, network))
    return network


def _mgmt_addresses(topology: Topology,
                    network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> tuple[str, dict[str, str]]:
    """The gateway (root-namespace side) and one address per switch.

    A switch keeps the ``mgmt_address`` of the topology when it lies inside
    the lab's management network (addresses outside it belong to real
    equipment and are never routed from this machine)."""
    usable = network.hosts()
    gateway = next(usable)
    taken = {gateway}
    wanted = {}
    for sw in topology.switches.values():
        if sw.mgmt_address is None:
            continue
        address = ipaddress.ip_address(sw.mgmt_address)
        if address in network and address not in taken and address != network.broadcast_address:
            wanted[sw.name] = address
            taken.add(address)
    result = {}
    for sw in topology.switches.values():
        if sw.name in wanted:
            result[sw.name] = str(wanted[sw.name])
            continue
        address = _next_free(usable, taken)
        if address is not None:
            taken.add(address)
            result[sw.name] = str(address)
        else:
            raise LabError("%s: %s has room for %d switches, the fabric has %d (give a larger one)"
                           % (MGMT_OPTION, network, network.num_addresses - 3, len(topology.switches)))
    return str(gateway), result


def _next_free(usable: Iterator[Any], taken: Container[Any]) -> Any:
    """The next address of ``usable`` (consumed as it goes) not in ``taken``; None when none is left."""
    return next((address for address in usable if address not in taken), None)


def _host_addresses(topology: Topology,
                    network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> dict[str, str]:
    """One address per host: the topology's own, else the next free one."""
    taken: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, str] = {}
    result = {}
    for host in topology.hosts.values():
        if host.ip is None:
            continue
        address = ipaddress.ip_address(host.ip)
        if address not in network or address in (network.network_address,
                                                 network.broadcast_address):
            raise LabError("hosts.%s.ip: %s is not a host address of the lab's host network %s: "
                           "the lab refuses it rather than renumber the host; set %s to a network "
                           "that holds it" % (host.name, address, network, HOST_OPTION))
        if address in taken:
            raise LabError("hosts.%s.ip: %s is also the address of host %s"
                           % (host.name, address, taken[address]))
        taken[address] = host.name
        result[host.name] = str(address)
    usable = network.hosts()
    for host in topology.hosts.values():
        if host.name in result:
            continue
        address = _next_free(usable, taken)
        if address is not None:
            taken[address] = host.name
            result[host.name] = str(address)
        else:
            raise LabError("%s: %s has room for %d hosts, the fabric has %d (give a larger one)"
                           % (HOST_OPTION, network, network.num_addresses - 2, len(topology.hosts)))
    return result
