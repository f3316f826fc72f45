"""The receive buffer of the packet sockets through which each emulated
switch reads its ports (layout.PORT_RECEIVE_BUFFER says why; docs/lab.md,
"Under load"): the layout carries the size, lab_up sets it on the running
ovs-vswitchd's sockets through pidfd_getfd. The descriptor copy is tested
on a real child process (its own UDP socket: a packet socket needs root);
the lab's packet sockets in tests/integration/lab/test_lab_lifecycle.py."""

import errno
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import runner
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import PORT_RECEIVE_BUFFER, lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.plan import LabError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"


@pytest.fixture(scope="module")
def ring3():
    return load_topology(FIXTURES / "ring3_topology.yml")


def test_the_layout_carries_the_size_and_its_hash_changes_with_it(ring3):
    layout = lab_layout(ring3, name="r3")
    assert layout["port_receive_buffer"] == PORT_RECEIVE_BUFFER == 2 * 1024 * 1024
    kernel = lab_layout(ring3, name="r3", port_receive_buffer=0)
    assert kernel["port_receive_buffer"] == 0
    # a lab built with the kernel's buffers is rebuilt by the next lab_up
    assert runner.layout_hash(layout) != runner.layout_hash(kernel)


@pytest.mark.parametrize("size", [1000, 512 * 1024 * 1024, True, "2M", 2.5])
def test_a_bad_size_is_refused_naming_the_option(ring3, size):
    with pytest.raises(LabError) as raised:
        lab_layout(ring3, name="r3", port_receive_buffer=size)
    assert str(raised.value) == "port_receive_buffer: bytes, 0 or from 65536 to 268435456, got %r" % (size,)


CHILD = textwrap.dedent("""
    import socket, sys
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    print(udp.fileno(), udp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), flush=True)
    sys.stdin.readline()
    print(udp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), flush=True)
""")


def test_a_copied_descriptor_is_the_other_process_socket():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        fd, before = (int(word) for word in child.stdout.readline().split())
        assert fd in runner.socket_fds(child.pid)
        try:
            copy = runner.process_fd(child.pid, fd)
        except OSError as exc:  # a kernel before 5.6, or a ptrace policy that forbids it
            pytest.fail("pidfd_getfd refused on this machine: %s" % exc)
        with socket.socket(fileno=copy) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        # not a packet socket: enlarge_packet_sockets leaves it alone
        assert runner.enlarge_packet_sockets(child.pid, 4 * 1024 * 1024) == []
        child.stdin.write("\n")
        child.stdin.flush()
        after = int(child.stdout.readline())
        assert after != before and after == 2 * 65536  # the kernel doubles what it is asked
    finally:
        child.kill()
        child.wait()
    with pytest.raises(OSError):
        runner.process_fd(child.pid, fd)  # gone


def _layout(tmp_path, pids, size=PORT_RECEIVE_BUFFER):
    switches = {}
    for name, pid in pids.items():
        directory = tmp_path / name
        directory.mkdir()
        if pid is not None:
            (directory / "ovs-vswitchd.pid").write_text("%d\n" % pid)
        switches[name] = {"dir": str(directory), "ports": {"1": {"dev": "p1"}, "2": {"dev": "p2"}}}
    return {"switches": switches, "port_receive_buffer": size}


def test_every_switch_gets_the_size_and_a_late_port_is_waited_for(tmp_path):
    layout = _layout(tmp_path, {"sw0": 100, "sw1": 200})
    calls = []

    def enlarge(pid, size):
        calls.append((pid, size))
        # sw1's second port opens after its first read
        return ["p1", "p2"] if pid == 100 or len(calls) > 2 else ["p1"]

    assert runner.enlarge_port_buffers(layout, enlarge=enlarge) == {"bytes": PORT_RECEIVE_BUFFER, "switches": 2}
    assert calls == [(100, PORT_RECEIVE_BUFFER), (200, PORT_RECEIVE_BUFFER), (200, PORT_RECEIVE_BUFFER)]


def test_a_port_never_opened_is_named_and_a_refusal_is_reported(tmp_path):
    layout = _layout(tmp_path, {"sw0": 100})
    with pytest.raises(LabError) as raised:
        runner.enlarge_port_buffers(layout, enlarge=lambda pid, size: ["p1"], wait=0.1)
    assert str(raised.value) == "sw0: ovs-vswitchd (pid 100) reads no packet socket on p2"

    def refused(pid, size):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    assert runner.enlarge_port_buffers(layout, enlarge=refused) == {
        "bytes": 0, "not_set": "sw0: [Errno 1] Operation not permitted"}
    assert runner.enlarge_port_buffers(dict(layout, port_receive_buffer=0), enlarge=refused) == {
        "bytes": 0, "not_set": "port_receive_buffer is 0"}
    (tmp_path / "later").mkdir()
    with pytest.raises(LabError) as raised:
        runner.enlarge_port_buffers(_layout(tmp_path / "later", {"sw3": None}))
    assert str(raised.value) == "sw3: ovs-vswitchd has no pid: cannot size its port buffers"


def test_a_descriptor_reused_by_a_file_meanwhile_is_skipped_and_closed():
    copies = []

    def getfd(pid, fd):
        copies.append(os.open(os.devnull, os.O_RDONLY))  # the socket closed, its number reused by a file
        return copies[-1]

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM):  # so that this process has a socket to list
        assert runner.enlarge_packet_sockets(os.getpid(), 65536, getfd=getfd) == []
    assert copies
    for copy in copies:
        with pytest.raises(OSError):
            os.fstat(copy)


def test_a_python_without_pidfd_open_leaves_the_kernel_size_and_says_why(tmp_path, monkeypatch):
    monkeypatch.delattr(runner.os, "pidfd_open")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM):  # a socket to copy
        layout = _layout(tmp_path, {"sw0": os.getpid()})
        assert runner.enlarge_port_buffers(layout) == {
            "bytes": 0, "not_set": "sw0: [Errno %d] this Python has no os.pidfd_open" % errno.ENOSYS}
