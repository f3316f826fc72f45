# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The expectations of the on-the-wire verification (lab/expect.py): planned
paths equal the routing function's paths, burst pairs cover the fabric,
broadcast copies follow the VLAN assignment, and bad requests or intents
are refused naming the host."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.expect import (
    ExpectError,
    choose_burst_pairs,
    expected_broadcast,
    planned_path,
    verification_plan,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

RING3_INTENT = Path(__file__).resolve().parents[1] / "fixtures" / "lab" / "ring3_intent.yml"


@pytest.fixture(scope="module")
def mesh_dor_fixed():
    topology = topology_from_data({"generate": {"kind": "mesh", "dims": [4, 4],
                                                "hosts_per_switch": 1}})
    return plan(topology, engine="dor", assignment="fixed")


@pytest.fixture(scope="module")
def torus_segment_renamed():
    topology = topology_from_data({"generate": {"kind": "torus", "dims": [4, 4],
                                                "hosts_per_switch": 1}})
    return plan(topology, engine="segment", assignment="renamed", broadcast="bounded")


def _host_of_switch(intent):
    return {host["switch"]: name for name, host in sorted(intent["hosts"].items())}


@pytest.mark.parametrize("fixture", ["mesh_dor_fixed", "torus_segment_renamed"])
def test_planned_paths_are_the_routing_functions_paths(fixture, request):
    """Every hop between switches of the planned path is the channel the
    routing chose (RoutingFunction.path), and the path starts and ends on
    the hosts' ports."""
    fabric_plan = request.getfixturevalue(fixture)
    intent, routing = fabric_plan.intent, fabric_plan.routing
    topology = routing.topology
    fabric = Dot1qFabric(intent)
    host_at = _host_of_switch(intent)
    for (src, dst), channels in routing.paths().items():
        hops = planned_path(fabric, host_at[src], host_at[dst])
        assert len(hops) == len(channels) + 1
        assert (hops[0]["switch"], hops[0]["in_port"]) == (src, intent["hosts"][host_at[src]]["port"])
        assert (hops[-1]["switch"], hops[-1]["out_port"]) == (dst, intent["hosts"][host_at[dst]]["port"])
        for hop, channel_id, following in zip(hops, channels, hops[1:]):
            channel = topology.channels[channel_id]
            assert (hop["switch"], hop["out_port"]) == (channel.src, str(channel.src_port))
            assert (following["switch"], following["in_port"]) == (channel.dst,
                                                                   str(channel.dst_port))


def test_planned_path_of_the_hand_written_ring_intent():
    intent = yaml.safe_load(RING3_INTENT.read_text())
    hops = planned_path(Dot1qFabric(intent), "h0a", "h2")
    assert hops == [{"switch": "sw0", "in_port": "1", "out_port": "2"},
                    {"switch": "sw1", "in_port": "2", "out_port": "3"},
                    {"switch": "sw2", "in_port": "2", "out_port": "1"}]


def test_burst_pairs_start_with_a_longest_path_and_each_adds_new_channels(torus_segment_renamed):
    routing = torus_segment_renamed.routing
    fabric = Dot1qFabric(torus_segment_renamed.intent)
    host_at = _host_of_switch(torus_segment_renamed.intent)
    switch_of = {host: switch for switch, host in host_at.items()}
    longest = max(len(channels) for channels in routing.paths().values())
    pairs = choose_burst_pairs(fabric, 5)
    assert len(pairs) == 5 and len(set(pairs)) == 5
    lengths = [len(routing.path(switch_of[a], switch_of[b])) for a, b in pairs]
    assert lengths[0] == longest
    covered = set()
    for a, b in pairs:
        channels = set(routing.path(switch_of[a], switch_of[b]))
        assert channels - covered, (a, b)
        covered |= channels


def test_burst_pairs_stop_when_nothing_new_is_covered():
    intent = yaml.safe_load(RING3_INTENT.read_text())
    pairs = choose_burst_pairs(Dot1qFabric(intent), 50)
    # 3 switches, 6 directed inter-switch channels at most: fewer pairs than asked
    assert 1 <= len(pairs) <= 6


def test_fixed_assignment_delivers_one_copy_of_a_broadcast_to_every_host(mesh_dor_fixed):
    """A fixed VLAN is a tree: a broadcast floods it once (paper §3.4)."""
    fabric = Dot1qFabric(mesh_dor_fixed.intent)
    for source in mesh_dor_fixed.intent["hosts"]:
        copies = expected_broadcast(fabric, source)
        assert copies == {host: 1 for host in mesh_dor_fixed.intent["hosts"] if host != source}


def test_renamed_assignment_reaches_every_host_at_least_once(torus_segment_renamed):
    fabric = Dot1qFabric(torus_segment_renamed.intent)
    hosts = set(torus_segment_renamed.intent["hosts"])
    for source in sorted(hosts):
        copies = expected_broadcast(fabric, source)
        assert hosts - {source} <= {host for host, count in copies.items() if count >= 1}
        assert all(isinstance(count, int) for count in copies.values())


def test_verification_plan_defaults(torus_segment_renamed):
    intent = torus_segment_renamed.intent
    data = verification_plan(intent, bursts=2)
    json.dumps(data)  # plain data: it travels to the module as arguments
    assert set(data["hosts"]) == set(intent["hosts"])
    assert set(data["broadcast"]) == set(intent["hosts"])
    assert data["stp"] == {switch: False for switch in intent["switches"]}
    assert len(data["bursts"]) == 2
    first = data["bursts"][0]
    assert data["tcp"]["client"] == first["src"] and data["tcp"]["server"] == first["dst"]
    assert data["storm_window_s"] == 2.0 and data["burst_frames"] == 400


def test_verification_plan_takes_chosen_pairs(torus_segment_renamed):
    data = verification_plan(torus_segment_renamed.intent, burst_pairs=[["node03", "node12"]],
                             broadcast_sources=["node05"], tcp_pair=["node01", "node02"])
    assert [(b["src"], b["dst"]) for b in data["bursts"]] == [("node03", "node12")]
    assert list(data["broadcast"]) == ["node05"]
    assert data["tcp"] == {"client": "node01", "server": "node02", "bytes": 8 << 20}


@pytest.mark.parametrize("kwargs, message", [
    ({"burst_pairs": [["node00", "node99"]]}, r"burst_pairs\[0\]: unknown host 'node99'"),
    ({"burst_pairs": [["node00", "node00"]]}, r"burst_pairs\[0\]: give \[source host, destination"),
    ({"broadcast_sources": ["nodeX"]}, r"broadcast_sources: unknown host 'nodeX'"),
    ({"tcp_pair": ["node01"]}, r"tcp_pair: give \[client host, server host\]"),
])
def test_bad_requests_are_refused_naming_the_host(torus_segment_renamed, kwargs, message):
    with pytest.raises(ExpectError, match=message) as raised:
        verification_plan(torus_segment_renamed.intent, **kwargs)
    assert isinstance(raised.value, EtherclusterError)


def test_a_missing_static_entry_is_named_with_the_pair():
    intent = yaml.safe_load(RING3_INTENT.read_text())
    broken = copy.deepcopy(intent)
    # sw1 forgets where h2 is: h0a -> h2 would flood at sw1
    broken["switches"]["sw1"]["static_macs"] = [
        entry for entry in broken["switches"]["sw1"]["static_macs"]
        if entry["mac"] != intent["hosts"]["h2"]["mac"]]
    with pytest.raises(ExpectError, match=r"does not deliver h0a -> h2 by static entries"):
        verification_plan(broken, burst_pairs=[["h0a", "h2"]])


def test_an_intent_that_storms_is_refused_naming_the_source():
    intent = yaml.safe_load(RING3_INTENT.read_text())
    looped = copy.deepcopy(intent)
    for switch in looped["switches"].values():
        switch["vlans"] = [10]
        switch["static_macs"] = []
        for port in switch["ports"].values():
            port.update(pvid=10, untagged=[10], tagged=[])
    with pytest.raises(ExpectError, match=r"a broadcast from h0a loops forever"):
        expected_broadcast(Dot1qFabric(looped), "h0a")


def test_an_intent_without_switches_is_refused():
    with pytest.raises(ExpectError, match="cannot be simulated"):
        verification_plan({"hosts": {}})
