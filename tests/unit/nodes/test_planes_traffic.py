"""The planes4x4 scenario's traffic helper (extensions/molecule/planes4x4/files/
planes_traffic.py): which connections count as a client's streams, how the
ports are read from one ``ip -s -j link`` answer, and the imbalance."""

import importlib.util
import json
import pathlib

import pytest

HELPER = pathlib.Path(__file__).resolve().parents[3] / "extensions/molecule/planes4x4/files/planes_traffic.py"


@pytest.fixture(name="traffic", scope="module")
def fixture_traffic():
    spec = importlib.util.spec_from_file_location("planes_traffic", HELPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_connections_to_the_servers_ports_are_streams(traffic):
    # ss -tnH state established: Recv-Q Send-Q Local Peer; the first two are a
    # client's control and data stream, the third the far end of a peer's stream
    # (its peer port is ephemeral), the fourth some other service
    out = ("0      0      10.97.255.1:40112   10.97.255.2:5300\n"
           "0      85000  10.97.255.1:40114   10.97.255.2:5300\n"
           "0      0      10.97.255.1:5301    10.97.255.2:51230\n"
           "0      0      10.97.255.1:40200   10.97.255.3:22\n"
           "\n")
    assert traffic.connected_streams(out, {5300, 5301, 5302, 5303}) == 2
    assert traffic.connected_streams(out, {5302}) == 0


def test_ipv6_peers_are_parsed_by_their_last_colon(traffic):
    out = "0 0 [fd00::1]:40112 [fd00::2]:5302\n"
    assert traffic.connected_streams(out, {5302}) == 1


def test_ports_are_read_from_one_link_listing(traffic):
    links = [{"ifname": "lo", "stats64": {"tx": {"bytes": 1}, "rx": {"bytes": 1}}},
             {"ifname": "e0", "stats64": {"tx": {"bytes": 100}, "rx": {"bytes": 7}}},
             {"ifname": "e1", "stats64": {"tx": {"bytes": 200}, "rx": {"bytes": 9}}}]
    assert traffic.port_counters(links, ["e0", "e1"]) == {"e0": {"tx": 100, "rx": 7}, "e1": {"tx": 200, "rx": 9}}


def test_a_missing_port_is_named(traffic):
    links = [{"ifname": "e0", "stats64": {"tx": {"bytes": 100}, "rx": {"bytes": 7}}}]
    with pytest.raises(SystemExit, match="no port e1"):
        traffic.port_counters(links, ["e0", "e1"])


def test_report_takes_the_window_deltas_and_the_worst_node(traffic):
    plan = {"nodes": {"n0": {}, "n1": {}}}
    zero = {name: 0 for name in traffic.COUNTERS}

    def node(tx, rx, retrans):
        return {"ports": {"e%d" % i: {"tx": t, "rx": r} for i, (t, r) in enumerate(zip(tx, rx))},
                "nstat": dict(zero, TcpRetransSegs=retrans)}

    before = {"n0": node([10, 10], [5, 5], 3), "n1": node([0, 0], [0, 0], 0)}
    after = {"n0": node([110, 110], [105, 85], 5), "n1": node([90, 110], [100, 100], 4)}
    result = traffic.report(plan, before, after, 2e6, 3)
    assert result["nodes"]["n0"]["ports"]["e1"] == {"tx": 100, "rx": 80}
    assert result["nodes"]["n0"]["tx_imbalance"] == 0.0
    assert result["nodes"]["n0"]["rx_imbalance"] == pytest.approx(0.1111, abs=1e-4)
    assert result["max_tx_imbalance"] == 0.1  # n1: 90 and 110 around 100
    assert result["counters"]["TcpRetransSegs"] == 6
    assert result["goodput_mbit_s"] == 2.0
    json.dumps(result)  # printed as JSON by main()
