"""The planned_paths check of the lab (lab/wire.check_bursts) against an
emulated set of port counters: no namespaces, no root."""

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
