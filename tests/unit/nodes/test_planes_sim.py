"""The distribution-policy simulator (module_utils/nodes/planes_sim.py,
docs/planes.md "Simulator"): properties of each policy, not recorded
outputs."""

import numpy as np
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import planes_sim
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes_sim import (
    POLICIES,
    SHAPES,
    PortInfo,
    configure,
    lacp_hash,
    simulate,
)

SMALL = dict(nodes=4, ports=4, procs=4, message_bytes=32 * 1024)


def run(shape, policy, **fields):
    return simulate(configure(**dict(SMALL, **fields)), shape, policy)


def test_every_policy_sees_the_same_traffic():
    for shape in SHAPES:
        runs = [run(shape, policy) for policy in POLICIES]
        assert len({(r["streams"], r["packets"]) for r in runs}) == 1
        assert runs[0]["streams"] > 0


def test_port_info_registers_streams_round_robin_and_keeps_them():
    table = PortInfo(ports=3, streams_per_port=100)
    assert [table.stream_port(key) for key in (5000, 5001, 5002, 5003)] == [0, 1, 2, 0]
    assert [table.stream_port(key) for key in (5002, 5000, 5003)] == [2, 0, 0]
    assert [table.packet_port() for dummy in range(4)] == [0, 1, 2, 0]


def test_reg_info_ages_the_oldest_stream_of_a_port_out():
    table = PortInfo(ports=1, streams_per_port=2)
    table.stream_port(1)
    table.stream_port(2)
    assert set(table.port_info) == {1, 2}
    table.stream_port(3)  # the third registration on port 0 overwrites slot 0 (stream 1)
    assert set(table.port_info) == {2, 3} and table.evicted == 1
    table.stream_port(1)  # stream 1 is registered again (the paper's relocation)
    assert set(table.port_info) == {1, 3} and table.evicted == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pmcme_never_reorders_and_balances_all_to_all(seed):
    result = run("all_to_all", "pmcme", nodes=8, ports=4, procs=4, seed=seed)
    assert result["aged_out"] == 0
    assert result["out_of_order"] == 0
    assert result["tx_balance"] <= 1.02  # streams dealt round robin at every sender
    assert result["rx_balance"] <= 1.5  # each receiver gets the senders' independent deals


def test_pmcme_ages_streams_out_past_its_streams_per_port():
    assert run("all_to_all", "pmcme", streams_per_port=2)["aged_out"] > 0
    assert run("all_to_all", "pmcme")["aged_out"] == 0


def test_pmcme_spreads_small_messages_packet_by_packet():
    # under the threshold nothing is high bandwidth: every packet takes the next port
    small = run("one_to_one", "pmcme", message_bytes=6000, procs=1)
    assert small["tx_shares"].count(0.0) == 0
    big = run("one_to_one", "pmcme", procs=1)
    assert sorted(big["tx_shares"])[-1] > 0.9  # one stream, one port (its ACKs alone elsewhere)


@pytest.mark.parametrize("shape", ["all_to_all", "one_to_one", "butterfly"])
def test_round_robin_balances_the_sender_perfectly_but_reorders(shape):
    result = run(shape, "round_robin")
    assert result["tx_balance"] <= 1.05
    assert result["out_of_order_pct"] > 10
    assert run(shape, "pmcme")["out_of_order"] == 0


def test_round_robin_on_shared_switches_unbalances_the_receiver_of_many_to_one():
    # Fig. 21: one MAC on every port, the switches deliver where they last
    # learned it; the sending side of one-to-many stays balanced
    fields = dict(nodes=8, ports=8, procs=8, switches=2)
    many_to_one = run("many_to_one", "round_robin", **fields)
    one_to_many = run("one_to_many", "round_robin", **fields)
    assert many_to_one["rx_balance"] > 1.3 > one_to_many["tx_balance"]
    assert run("many_to_one", "pmcme", **fields)["rx_balance"] < 1.1


@pytest.mark.parametrize("policy", ["layer2", "layer2+3"])
def test_a_mac_or_ip_hash_puts_all_of_one_pair_on_one_port(policy):
    result = run("one_to_one", policy, procs=8)
    assert max(result["tx_shares"]) == 1.0 and max(result["rx_shares"]) == 1.0
    assert result["tx_balance"] == 4.0
    assert result["out_of_order"] == 0


def test_layer3_4_spreads_one_pair_by_ports_and_never_reorders():
    shares = [max(run("one_to_one", "layer3+4", procs=8, seed=seed)["tx_shares"]) for seed in range(4)]
    assert min(shares) < 1.0
    assert all(run("all_to_all", "layer3+4", seed=seed)["out_of_order"] == 0 for seed in range(2))


def test_single_uses_port_zero_only():
    result = run("all_to_all", "single")
    assert result["tx_shares"][0] == 1.0 and result["tx_balance"] == 4.0
    # every byte through one of 4 ports: at least 4 times the shortest time
    assert result["time_over_ideal"] >= 4.0 > run("all_to_all", "pmcme")["time_over_ideal"]


def _layer34(src_ip, dst_ip, sport, dport):
    # Linux bonding.rst: hash = source port, destination port (as in the header)
    # ^ source IP ^ destination IP; hash ^= hash >> 16; hash ^= hash >> 8; hash >>= 1
    # (header fields read as a little-endian 32-bit word)
    def word(four):
        return int.from_bytes(four, "little")
    value = word(sport.to_bytes(2, "big") + dport.to_bytes(2, "big"))
    value ^= word(src_ip.to_bytes(4, "big")) ^ word(dst_ip.to_bytes(4, "big"))
    value ^= value >> 16
    value ^= value >> 8
    return value >> 1


def test_lacp_hashes_follow_the_bonding_formulas():
    rng = np.random.default_rng(7)
    for dummy in range(200):
        macs = rng.integers(0, 256, 2)
        ips = rng.integers(0, 1 << 32, 2)
        ports = rng.integers(1, 65536, 2)
        args = [np.array([v]) for v in (macs[0], macs[1], ips[0], ips[1], ports[0], ports[1])]
        assert lacp_hash("layer2", *args)[0] == macs[0] ^ macs[1] ^ 0x0800
        assert lacp_hash("layer3+4", *args)[0] == _layer34(int(ips[0]), int(ips[1]), int(ports[0]), int(ports[1]))
        both = lacp_hash("layer2+3", *args)[0]
        value = (int(macs[0]) ^ int(macs[1]) ^ 0x0800) ^ int.from_bytes(int(ips[0]).to_bytes(4, "big"), "little") \
            ^ int.from_bytes(int(ips[1]).to_bytes(4, "big"), "little")
        value ^= value >> 16
        value ^= value >> 8
        assert both == value


def test_queues_are_fifo_at_their_speed():
    rng = np.random.default_rng(3)
    group = rng.integers(0, 5, 2000)
    arrival = rng.uniform(0, 1000, 2000)
    service = rng.uniform(0.5, 3, 2000)
    departure = planes_sim._queue(group, arrival, service)
    assert np.all(departure >= arrival + service - 1e-9)
    for label in range(5):
        mine = np.flatnonzero(group == label)
        order = mine[np.argsort(arrival[mine])]
        gaps = np.diff(departure[order])
        assert np.all(gaps >= service[order][1:] - 1e-9)  # one frame at a time, in arrival order


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="shape"):
        simulate(configure(), "ring", "pmcme")
    with pytest.raises(ValueError, match="policy"):
        simulate(configure(), "all_to_all", "balance-alb")
