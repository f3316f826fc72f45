"""The planned_paths check of the lab (lab/wire.check_bursts) against an
emulated set of port counters, and the ping check (lab/wire.check_ping)
against emulated ping runs: no namespaces, no root."""

import subprocess

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import wire


class _Counters:
    """Port counters that move as the frames sent go: every burst's
    frames raise rx and tx along ``taken[(src, dst)]``, the path the fabric
    really takes (in_port, out_port per switch)."""

    def __init__(self, taken):
        self.taken = taken
        self.counts = {(switch, port): (0, 0) for switch, ports in PORTS.items() for port in ports}
        self.sent = []

    def read(self, _layout):
        return dict(self.counts)

    def send(self, sock, _data, count):
        self.sent.append(count)
        for switch, in_port, out_port in self.taken[sock.name]:
            rx, tx = self.counts.get((switch, in_port), (0, 0))
            self.counts[(switch, in_port)] = (rx + count, tx)
            rx, tx = self.counts.get((switch, out_port), (0, 0))
            self.counts[(switch, out_port)] = (rx, tx + count)


LAYOUT = {"hosts": {"h0": {"netns": "n0", "dev": "d0", "mac": "02:00:00:00:00:01"},
                    "h1": {"netns": "n1", "dev": "d1", "mac": "02:00:00:00:00:02"}}}
PORTS = {"sw0": ("1", "2", "3"), "sw1": ("1", "2", "3"), "sw2": ("1", "2")}
PLANNED = [("sw0", "1", "2"), ("sw1", "2", "1")]


def _bursts():
    path = [{"switch": switch, "in_port": in_port, "out_port": out_port}
            for switch, in_port, out_port in PLANNED]
    back = [{"switch": switch, "in_port": out_port, "out_port": in_port}
            for switch, in_port, out_port in reversed(PLANNED)]
    return [{"src": "h0", "dst": "h1", "path": path}, {"src": "h1", "dst": "h0", "path": back}]


class _Socket:
    def __init__(self, name):
        self.name = name

    def close(self):
        pass


def _run(monkeypatch, taken):
    counters = _Counters(taken)
    monkeypatch.setattr(wire, "port_counters", counters.read)
    monkeypatch.setattr(wire.frames, "packet_socket", lambda netns, dev: _Socket(netns))
    monkeypatch.setattr(wire.frames, "send_frames", counters.send)
    return wire.check_bursts(LAYOUT, _bursts(), count=400, settle_s=0), counters


def test_every_burst_sends_its_frames_and_passes_on_its_planned_path(monkeypatch):
    taken = {"n0": PLANNED, "n1": [(sw, out_port, in_port) for sw, in_port, out_port in reversed(PLANNED)]}
    result, counters = _run(monkeypatch, taken)
    assert counters.sent == [400, 400]
    assert result["ok"], result["problems"]


def test_a_burst_off_its_planned_path_is_named(monkeypatch):
    detour = [("sw0", "1", "3"), ("sw2", "1", "2"), ("sw1", "3", "1")]
    taken = {"n0": detour, "n1": [(sw, out_port, in_port) for sw, in_port, out_port in reversed(PLANNED)]}
    result, counters = _run(monkeypatch, taken)
    assert counters.sent == [400, 400] and not result["ok"]
    assert any("burst h0 -> h1 (400 frames" in problem and "sw0:2 sent 0 (on the planned path: >= 360)"
               in problem for problem in result["problems"])
    assert any("sw2:2 sent 400, but is off the planned path" in problem for problem in result["problems"])
    assert not any("burst h1 -> h0" in problem for problem in result["problems"])


# ------------------------------------------------------------------ ping
class _Pinger:
    """Stands in for ``ip netns exec NS sh -c SCRIPT`` of the ping check:
    a pair in ``slow`` misses the first (loaded) round's timeouts and
    answers in the quiet round; a pair in ``cut`` never answers."""

    def __init__(self, layout, slow=(), cut=()):
        self.host_of = {host["netns"]: name for name, host in layout["hosts"].items()}
        self.name_of = {host["address"]: name for name, host in layout["hosts"].items()}
        self.slow, self.cut = set(slow), set(cut)
        self.tried = []  # (round, source, target)

    def run(self, argv, env=None, timeout=20):
        del env, timeout
        source, script = self.host_of[argv[3]], argv[-1]
        quiet = wire.QUIET_ROUND in script
        lines = []
        for address in script.split("for a in ", 1)[1].split(";", 1)[0].split():
            target = self.name_of[address]
            self.tried.append(("quiet" if quiet else "first", source, target))
            answered = (source, target) not in self.cut and (quiet or (source, target) not in self.slow)
            lines.append("%d %s" % (0 if answered else 1, address))
        return subprocess.CompletedProcess(argv, 0, "\n".join(lines) + "\n", "")


def _ping_layout(count):
    return {"hosts": {"h%d" % i: {"netns": "n%d" % i, "address": "10.0.0.%d" % (i + 1)}
                      for i in range(count)}}


def test_ping_pairs_that_time_out_under_load_answer_in_the_quiet_round(monkeypatch):
    layout = _ping_layout(8)
    pinger = _Pinger(layout, slow=[("h0", "h5"), ("h3", "h1")])
    monkeypatch.setattr(wire, "_run", pinger.run)
    result = wire.check_ping(layout)
    assert result["ok"], result["problems"]
    assert "56 ordered host pairs ping" in result["detail"]
    assert result["note"] == "2 pairs answered only in the quiet round (timeouts under load)"
    assert result["note"] in result["detail"]
    assert sorted(t for t in pinger.tried if t[0] == "quiet") == [("quiet", "h0", "h5"), ("quiet", "h3", "h1")]


def test_ping_a_cut_pair_fails_both_rounds_and_is_named(monkeypatch):
    layout = _ping_layout(8)
    pinger = _Pinger(layout, slow=[("h2", "h4")], cut=[("h6", "h7")])
    monkeypatch.setattr(wire, "_run", pinger.run)
    result = wire.check_ping(layout)
    assert not result["ok"]
    assert result["problems"] == ["h6 (10.0.0.7) cannot ping h7 (10.0.0.8)"]
    assert ("quiet", "h6", "h7") in pinger.tried and ("quiet", "h2", "h4") in pinger.tried


def test_ping_many_failures_are_a_fault_not_load_and_get_no_quiet_round(monkeypatch):
    layout = _ping_layout(8)
    cut = [("h0", "h%d" % i) for i in range(1, 8)] + [("h%d" % i, "h0") for i in range(1, 8)]
    cut += [("h1", "h%d" % i) for i in range(2, 8)] + [("h%d" % i, "h1") for i in range(2, 8)]
    pinger = _Pinger(layout, cut=cut)  # 26 of 56 pairs: over the quiet round's share
    monkeypatch.setattr(wire, "_run", pinger.run)
    result = wire.check_ping(layout)
    assert not result["ok"]
    assert not any(t[0] == "quiet" for t in pinger.tried)
    assert "h0 (10.0.0.1) cannot ping h1 (10.0.0.2)" in result["problems"]
    assert result["problems"][-1] == "... and %d more" % (len(cut) - wire.PROBLEM_LIMIT)


class _Ofctl:
    """ovs-ofctl answering with the given (returncode, stderr) in turn."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, argv, env=None):
        self.calls += 1
        code, stderr = self.answers.pop(0)
        return subprocess.CompletedProcess(argv, code, "ports" if code == 0 else "", stderr)


DROPPED = "ovs-ofctl: br0: failed to connect to socket (Broken pipe)\n"


def test_a_read_whose_connection_vswitchd_dropped_is_run_again():
    ofctl = _Ofctl((1, DROPPED), (1, DROPPED), (0, ""))
    assert wire.ofctl_read(["ovs-ofctl"], pause_s=0, run=ofctl).stdout == "ports" and ofctl.calls == 3
    # three drops in a row: the last failure is returned (the caller names the switch)
    ofctl = _Ofctl(*[(1, DROPPED)] * 3)
    assert wire.ofctl_read(["ovs-ofctl"], pause_s=0, run=ofctl).returncode == 1 and ofctl.calls == 3
    # any other failure is not repeated
    ofctl = _Ofctl((1, "ovs-ofctl: br0 is not a bridge or a socket\n"))
    assert wire.ofctl_read(["ovs-ofctl"], pause_s=0, run=ofctl).returncode == 1 and ofctl.calls == 1
