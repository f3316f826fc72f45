# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test traffic inside the lab's host namespaces: raw Ethernet frames,
frame counting and a checksummed TCP transfer. Standard library only.

A process enters a network namespace with :class:`Netns` (``setns(2)``
through ctypes; Python 3.11 has no ``os.setns``), opens its sockets there
and leaves again: a socket stays in the namespace it was created in, so
one process can talk from every host of the lab at once, without an
``ip netns exec`` per frame. Needs root (CAP_SYS_ADMIN).

The frames carry the IEEE 802 local experimental EtherType 0x88B5 and a
marker, so counting ignores whatever else a host's kernel sends.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import random
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from ..errors import EtherclusterError

ETHERTYPE = 0x88B5  # IEEE 802 local experimental
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
CLONE_NEWNET = 0x40000000
NETNS_DIR = "/run/netns"
MARKER = b"ethercluster"
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
RECEIVE_BUFFER = 16 << 20
PACE_EVERY = 20      # frames sent back to back ...
PACE_SLEEP = 0.002   # ... then a pause: the userspace datapath drops what its socket cannot hold


class FramesError(EtherclusterError):
    """A namespace, interface or socket of the lab cannot be used (names it)."""


_LIBC = None


def _libc() -> ctypes.CDLL:
    """The C library (loaded once), for setns(2)."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


class Netns:
    """``with Netns(name):`` runs the block (this thread) inside network
    namespace ``name`` (``/run/netns/<name>``) and comes back afterwards."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._home: int | None = None

    def __enter__(self) -> Netns:
        path = os.path.join(NETNS_DIR, self.name)
        try:
            target = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise FramesError("network namespace %s: %s" % (self.name, exc.strerror))
        try:
            self._home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            _setns(target, self.name)
        except BaseException:
            if self._home is not None:
                os.close(self._home)
                self._home = None
            raise
        finally:
            os.close(target)
        return self

    def __exit__(self, *exc_info: object) -> None:
        home = cast(int, self._home)  # set by __enter__, which ran
        try:
            _setns(home, "the original namespace")
        finally:
            os.close(home)
            self._home = None


def _setns(fd: int, what: str) -> None:
    """Move this thread into the network namespace open as ``fd``."""
    if _libc().setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise FramesError("cannot enter %s: %s (needs root)" % (what, os.strerror(errno)))


def mac_bytes(text: str) -> bytes:
    """``aa:bb:cc:dd:ee:ff`` as 6 bytes."""
    return bytes(int(part, 16) for part in text.split(":"))


def mac_text(raw: bytes) -> str:
    """6 bytes as ``aa:bb:cc:dd:ee:ff``."""
    return ":".join("%02x" % byte for byte in raw)


def frame(dst: str, src: str, token: bytes = b"", ethertype: int = ETHERTYPE) -> bytes:
    """An untagged Ethernet frame (minimum size) with the marker and ``token``."""
    payload = (MARKER + token).ljust(46, b".")
    return mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", ethertype) + payload


def packet_socket(netns: str, dev: str) -> socket.socket:
    """A raw packet socket bound to ``dev`` in ``netns`` that sends and
    receives every frame (non-blocking)."""
    with Netns(netns):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            # a flood may bring hundreds of copies at once; the default buffer
            # (~200 KiB) holds about 270 small frames and drops the rest
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
            sock.bind((dev, 0))
        except OSError as exc:
            sock.close()
            raise FramesError("%s: cannot bind a packet socket to %s: %s"
                              % (netns, dev, exc.strerror))
    sock.setblocking(False)
    return sock


def send_frames(sock: socket.socket, data: bytes, count: int) -> None:
    """Send ``data`` ``count`` times, paced."""
    sock.setblocking(True)
    try:
        for number in range(count):
            sock.send(data)
            if number % PACE_EVERY == PACE_EVERY - 1:
                time.sleep(PACE_SLEEP)
    finally:
        sock.setblocking(False)


def drain(sock: socket.socket) -> None:
    """Drop every frame waiting in ``sock``."""
    while True:
        try:
            sock.recv(65535)
        except (BlockingIOError, InterruptedError):
            return


def collect(sockets: dict[str, socket.socket], seconds: float, ethertype: int = ETHERTYPE,
            token: bytes = b"", done: Callable[..., bool] | None = None,
            grace: float = 0.1, idle: float | None = None) -> dict[str, dict[str, int]]:
    """Receive on ``sockets`` ({name: socket}) for ``seconds``; return
    ``{name: {source MAC: frames}}`` of the incoming frames of
    ``ethertype`` that carry the marker and ``token`` (a tagged frame
    counts too: the tag is looked through). With ``done`` (a function of
    that mapping), stop ``grace`` seconds after it first returns true:
    long enough to see copies beyond the expected ones. With ``idle``,
    stop once nothing matching arrived for ``idle`` seconds after the
    first frame."""
    wanted = MARKER + token
    last = None
    seen: dict[str, dict[str, int]] = {name: {} for name in sockets}
    selector = selectors.DefaultSelector()
    for name, sock in sockets.items():
        selector.register(sock, selectors.EVENT_READ, name)
    deadline = time.monotonic() + seconds
    try:
        while True:
            now = time.monotonic()
            left = deadline - now
            if idle is not None and last is not None:
                left = min(left, last + idle - now)
            if left <= 0:
                break
            for key, _events in selector.select(left):
                while True:
                    try:
                        data, address = sockets[key.data].recvfrom(65535)
                    except (BlockingIOError, InterruptedError):
                        break
                    if address[2] == PACKET_OUTGOING or len(data) < 14:
                        continue
                    offset = 12
                    kind = struct.unpack("!H", data[offset:offset + 2])[0]
                    if kind == 0x8100 and len(data) >= 18:
                        offset = 16
                        kind = struct.unpack("!H", data[offset:offset + 2])[0]
                    if kind != ethertype or not data[offset + 2:].startswith(wanted):
                        continue
                    source = mac_text(data[6:12])
                    counts = seen[key.data]
                    counts[source] = counts.get(source, 0) + 1
                    last = time.monotonic()
            if done is not None and done(seen):
                deadline = min(deadline, time.monotonic() + grace)
                done = None
    finally:
        selector.close()
    return seen


def tcp_transfer(server_netns: str, server_address: str, client_netns: str, size: int,
                 timeout: float = 30.0) -> dict[str, Any]:
    """Send ``size`` pseudo-random bytes over TCP from a socket in
    ``client_netns`` to one listening on ``server_address`` in
    ``server_netns``. Returns ``{"sent": {"bytes", "sha256"}, "received":
    {...}, "seconds"}``; ``received`` is None when nothing arrived, and
    ``error`` says why a side failed."""
    server = _listener(server_netns, server_address)
    port = server.getsockname()[1]
    with Netns(client_netns):
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.settimeout(timeout)
    client.settimeout(timeout)
    data = random.Random(size).randbytes(size)
    outcome: dict[str, Any] = {"sent": {"bytes": size, "sha256": hashlib.sha256(data).hexdigest()},
                               "received": None, "error": None}
    receiver = threading.Thread(target=_receive, args=(server, timeout, outcome), daemon=True)
    receiver.start()
    started = time.monotonic()
    try:
        client.connect((server_address, port))
        client.sendall(data)
        client.shutdown(socket.SHUT_WR)
    except OSError as exc:
        outcome["error"] = outcome["error"] or "send: %s" % (exc,)
        try:
            server.shutdown(socket.SHUT_RDWR)  # wakes up the accept()
        except OSError:
            pass
    finally:
        client.close()
    receiver.join(timeout + 1)
    server.close()
    outcome["seconds"] = round(time.monotonic() - started, 3)
    return outcome


def _listener(netns: str, address: str) -> socket.socket:
    """A TCP socket listening on ``address`` (any port) in ``netns``."""
    with Netns(netns):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind((address, 0))
        except OSError as exc:
            server.close()
            raise FramesError("%s: cannot listen on %s: %s"
                              % (netns, address, exc.strerror))
        server.listen(1)
    return server


def _receive(server: socket.socket, timeout: float, outcome: dict[str, Any]) -> None:
    """Accept one connection on ``server`` and read it to the end; put its
    byte count and SHA-256 into ``outcome["received"]`` (and what failed
    into ``outcome["error"]``)."""
    try:
        conn, _peer = server.accept()
    except OSError as exc:
        outcome["error"] = "accept: %s" % (exc,)
        return
    conn.settimeout(timeout)
    digest, total = hashlib.sha256(), 0
    try:
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            digest.update(chunk)
            total += len(chunk)
    except OSError as exc:
        outcome["error"] = "receive after %d bytes: %s" % (total, exc)
    finally:
        conn.close()
    outcome["received"] = {"bytes": total, "sha256": digest.hexdigest()}
