"""Arithmetic of the UDP probes (module_utils/lab/probes.py), without a lab:
a receiving agent fed datagrams (lost, duplicated, reordered, foreign) and
the summary of hand-made agent records: per pair sent/received/lost, the
loss timeline, the attribution of losses to transition windows, the
warm-up cut and send errors."""

import os
import signal
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import probes

HOSTS = {name: {"netns": "ns-" + name, "dev": "eth0", "mac": "02:00:00:00:00:0%d" % n,
                "address": "10.64.0.%d" % n} for n, name in enumerate(["a", "b", "c"], 1)}


class FakeSocket:
    def __init__(self, datagrams):
        self.datagrams = list(datagrams)

    def recv(self, size):
        if not self.datagrams:
            raise BlockingIOError()
        return self.datagrams.pop(0)


def datagram(source, target, sequence, run_id=7):
    return probes.DATAGRAM.pack(probes.MAGIC, run_id, source, target, sequence, 0.0).ljust(64, b".")


def test_the_receiver_counts_duplicates_reordering_and_foreign_datagrams():
    agent = probes._Agent("b", HOSTS, run_id=7, interval=0.01, port=1, drain_s=0)
    # from a (index 0) to b (index 1): 0, 1, 3, 2 (late), 3 again, 5; 4 lost
    arriving = [datagram(0, 1, n) for n in (0, 1, 3, 2, 3, 5)]
    arriving += [datagram(0, 2, 9), datagram(0, 1, 6, run_id=8), b"short"]  # not for b / other run
    agent._receive(FakeSocket(arriving))
    assert probes._ranges(agent.received[0]) == [[0, 3], [5, 5]]
    assert agent.duplicates == {0: 1}
    assert agent.reordered == {0: 1}
    assert agent.foreign == 3


def record(name, index, sent, received, start=1000.0, interval_ms=10, send_errors=None):
    return {"host": name, "index": index, "start": start, "interval": interval_ms / 1000,
            "sent": sent, "ticks_ms": [n * interval_ms for n in range(sent)],
            "received": received, "duplicates": {}, "reordered": {},
            "send_errors": send_errors or {}}


def test_summary_counts_losses_per_pair_and_attributes_them_to_windows():
    results = {
        # a sent 100 datagrams to b and c; b lost 40-44 (sent at 1000.40-1000.44 s) and 90
        "a": record("a", 0, 100, {"b": [[0, 99]], "c": [[0, 99]]}),
        "b": record("b", 1, 100, {"a": [[0, 39], [45, 89], [91, 99]], "c": [[0, 99]]}),
        "c": record("c", 2, 100, {"a": [[0, 99]], "b": [[0, 99]]}),
    }
    windows = [{"name": "off", "start": 1000.35, "end": 1000.5},
               {"name": "on", "start": 1000.6, "end": 1000.7}]
    summary = probes.summarise(results, windows=windows, bucket_s=0.1, margin_s=0.0)
    assert summary["pairs"] == 6
    assert summary["per_pair"]["a->b"] == {"sent": 100, "received": 94, "lost": 6,
                                           "duplicates": 0, "reordered": 0, "send_errors": 0}
    assert summary["totals"]["sent"] == 600 and summary["totals"]["lost"] == 6
    assert list(summary["lossy_pairs"]) == ["a->b"]
    assert [(w["name"], w["lost"], w["pairs"]) for w in summary["windows"]] == \
        [("off", 5, {"a->b": 5}), ("on", 0, {})]
    assert summary["outside"] == 1  # number 90, sent at 1000.9 s
    assert summary["timeline"] == [{"t": 0.4, "lost": 5}, {"t": 0.9, "lost": 1}]
    table = probes.loss_table(summary)
    assert table[2] == "| off | 0.1 | 5 | 1 | no |"
    assert table[-1].startswith("6 host pairs, 600 datagrams sent")


def test_warm_up_and_send_errors_are_not_losses():
    results = {
        "a": record("a", 0, 50, {"b": [[0, 49]]}, send_errors={"b": [30]}),
        "b": record("b", 1, 50, {"a": [[10, 29], [31, 49]]}),
    }
    summary = probes.summarise(results, since=1000.1)  # tick 10 and later count
    assert summary["per_pair"]["a->b"] == {"sent": 39, "received": 39, "lost": 0,
                                           "duplicates": 0, "reordered": 0, "send_errors": 1}
    assert summary["per_pair"]["b->a"]["sent"] == 40
    everything = probes.summarise(results)
    assert everything["per_pair"]["a->b"]["lost"] == 10


@settings(max_examples=50, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=200))
def test_ranges_and_missing_are_complements(marks):
    ranges = probes._ranges(bytearray(marks))
    missing = probes._missing(len(marks), ranges)
    assert missing == [n for n, seen in enumerate(marks) if not seen]


def test_start_refuses_bad_input_naming_it(tmp_path):
    layout = {"lab": "pw-x", "dir": str(tmp_path), "hosts": HOSTS}
    with pytest.raises(probes.ProbeError, match="no host"):
        probes.start(layout, hosts=["a", "z"])
    with pytest.raises(probes.ProbeError, match="interval"):
        probes.start(layout, interval=0)
    assert probes.stop(layout) is None  # never started


def test_a_late_agent_sends_one_tick_and_never_a_burst_of_the_ticks_it_missed():
    # on time: the next tick is one interval after the one due
    assert probes.next_tick_after(10.0, 10.001, 0.02) == (10.02, 0)
    # woke 1 s late: the 50 ticks due meanwhile are skipped, not sent at once
    following, skipped = probes.next_tick_after(10.0, 11.0, 0.02)
    assert following == pytest.approx(11.02) and skipped == 50
    # exactly one interval late: that one tick is skipped
    assert probes.next_tick_after(10.0, 10.02, 0.02) == (pytest.approx(10.04), 1)


def late_agent_main(late_s):
    """An agent body on loopback (no namespace): host c binds ``late_s`` late."""
    def main(me, hosts, run_id, interval, port, drain_s, directory):
        if me == "c":
            time.sleep(late_s)
        probes.probe_and_record(probes._Agent(me, hosts, run_id, interval, port, drain_s,
                                              directory=directory))
    return main


@pytest.fixture
def loopback_lab(tmp_path):
    """A probe lab of hosts a, b, c on loopback addresses; its agents are
    stopped whatever the test did."""
    hosts = {name: dict(HOSTS[name], address="127.0.0.%d" % n) for n, name in enumerate("abc", 11)}
    layout = {"lab": "pw-loopback", "dir": str(tmp_path), "hosts": hosts}
    yield layout
    record = probes.read_record(probes.probe_directory(layout))
    for pid in (record or {}).get("pids", {}).values():
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def test_start_waits_for_every_socket_and_stop_lets_no_receiver_close_early(loopback_lab, monkeypatch):
    # c binds its socket 1.5 s after the others (a starved agent on a busy
    # machine): with a fixed 0.1 s warm-up, the 150 datagrams a and b sent
    # to it meanwhile were counted as lost (the redeploy lab test's 442)
    monkeypatch.setattr(probes, "_agent_main", late_agent_main(1.5))
    layout = loopback_lab
    started = time.monotonic()
    record = probes.start(layout, port=47999, warmup_s=0.1)
    assert time.monotonic() - started >= 1.5  # waited for c
    assert record["measured_from"] >= record["started"] + 1.5
    time.sleep(0.5)
    summary = probes.stop(layout)
    assert summary["totals"]["sent"] >= 3 * 2 * 40 and summary["totals"]["lost"] == 0
    assert sorted(name for name in os.listdir(probes.probe_directory(layout)) if name.endswith(probes.QUIET)) \
        == ["a.quiet", "b.quiet", "c.quiet"]
    assert not probes.running(layout)


def test_start_names_an_agent_that_never_gets_ready(loopback_lab, monkeypatch):
    monkeypatch.setattr(probes, "_agent_main", late_agent_main(30))
    layout = loopback_lab
    with pytest.raises(probes.ProbeError, match=r"lab pw-loopback: probe agent\(s\) of c not bound after 1 s"):
        probes.start(layout, port=47998, ready_timeout_s=1.0)
    assert not probes.running(layout)


def test_a_window_says_when_its_last_datagram_was_lost_and_counts_a_failed_switchs_hosts_apart():
    results = {
        # a lost 42-43 from b
        "a": record("a", 0, 100, {"b": [[0, 41], [44, 99]], "c": [[0, 99]]}),
        # b lost 40-44 and 47 from a; c (a failed switch's host) nothing from a after 39
        "b": record("b", 1, 100, {"a": [[0, 39], [45, 46], [48, 99]], "c": [[0, 99]]}),
        "c": record("c", 2, 100, {"a": [[0, 39]], "b": [[0, 99]]}),
    }
    window = {"name": "cut", "start": 1000.4, "end": 1001.0, "exclude_hosts": ["c"]}
    summary = probes.summarise(results, windows=[window], margin_s=0.0)
    cut = summary["windows"][0]
    assert cut["lost"] == 8 and cut["pairs"] == {"a->b": 6, "b->a": 2} and cut["excluded"] == 60
    assert cut["last_lost_s"] == pytest.approx(0.07)          # datagram 47, sent 70 ms after the cut
    # per pair: which pairs took longest to deliver again
    assert cut["pairs_last_lost_s"] == {"a->b": pytest.approx(0.07), "b->a": pytest.approx(0.03)}
    assert summary["outside"] == 0
    quiet = probes.summarise(results, windows=[{"name": "q", "start": 1000.0, "end": 1000.3}], margin_s=0.0)
    assert quiet["windows"][0]["last_lost_s"] is None
