"""Frame and TCP tools the lab tests run inside host namespaces
(``ip netns exec NS python lab_frames.py ...``). Standard library only.

  send IFACE DST SRC ETHERTYPE COUNT [VLAN]   raw Ethernet frames (802.1Q tag if VLAN)
  count IFACE ETHERTYPE SECONDS               print {source MAC: frames} received
  tcp-recv ADDRESS PORT                       accept one connection, print bytes and sha256
  tcp-send ADDRESS PORT BYTES                 send BYTES pseudo-random bytes
"""

import hashlib
import json
import random
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def mac_bytes(text):
    return bytes(int(part, 16) for part in text.split(":"))


def mac_text(raw):
    return ":".join("%02x" % byte for byte in raw)


def send(iface, dst, src, ethertype, count, vlan=None):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    header = mac_bytes(dst) + mac_bytes(src)
    if vlan is not None:
        header += struct.pack("!HH", 0x8100, vlan & 0xFFF)
    frame = header + struct.pack("!H", ethertype) + b"ethercluster lab test".ljust(46, b".")
    for number in range(count):
        sock.send(frame)
        if number % 20 == 19:
            time.sleep(0.002)  # the userspace datapath drops what its socket cannot hold
    sock.close()


def count(iface, ethertype, seconds):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((iface, 0))
    sock.settimeout(0.1)
    print("ready", flush=True)
    seen = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            data, address = sock.recvfrom(65535)
        except socket.timeout:
            continue
        if address[2] == PACKET_OUTGOING or len(data) < 14:
            continue
        kind = struct.unpack("!H", data[12:14])[0]
        if kind == 0x8100 and len(data) >= 18:
            kind = struct.unpack("!H", data[16:18])[0]
        if kind == ethertype:
            source = mac_text(data[6:12])
            seen[source] = seen.get(source, 0) + 1
    print(json.dumps(seen), flush=True)


def tcp_recv(address, port):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, port))
    server.listen(1)
    server.settimeout(20)
    print("ready", flush=True)
    conn, _address = server.accept()
    conn.settimeout(20)
    digest, total = hashlib.sha256(), 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        digest.update(chunk)
        total += len(chunk)
    print(json.dumps({"bytes": total, "sha256": digest.hexdigest()}), flush=True)


def tcp_send(address, port, size):
    data = random.Random(size).randbytes(size)
    conn = socket.create_connection((address, port), timeout=20)
    conn.sendall(data)
    conn.close()
    print(json.dumps({"bytes": size, "sha256": hashlib.sha256(data).hexdigest()}), flush=True)


def main(argv):
    command = argv[0]
    if command == "send":
        vlan = int(argv[6]) if len(argv) > 6 else None
        send(argv[1], argv[2], argv[3], int(argv[4], 0), int(argv[5]), vlan)
    elif command == "count":
        count(argv[1], int(argv[2], 0), float(argv[3]))
    elif command == "tcp-recv":
        tcp_recv(argv[1], int(argv[2]))
    elif command == "tcp-send":
        tcp_send(argv[1], int(argv[2]), int(argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
