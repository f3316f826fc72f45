"""The topology model: loading, channels, lookups, validation errors."""

import os

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    Endpoint,
    load_topology,
    normalize_mac,
    topology_from_data,
)

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")
EXPLICIT = os.path.join(FIXTURES, "explicit.yml")


def explicit():
    return {
        "switches": {"sw0": {"ports": 26}, "sw1": {"ports": 26}},
        "links": [{"a": "sw0:25", "b": "sw1:25"}],
        "hosts": {"node00": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01"},
                  "node01": {"switch": "sw1", "port": "1", "mac": "02:00:00:00:00:02"}},
    }


def error_of(data, source="topo.yml"):
    with pytest.raises(TopologyError) as info:
        topology_from_data(data, source)
    return str(info.value)


# ------------------------------------------------------------------ loading
def test_explicit_file_loads_with_defaults_and_normalised_values():
    topo = load_topology(EXPLICIT)
    assert topo.name == "ring3"
    assert topo.switch_names() == ["sw0", "sw1", "sw2"]
    sw0 = topo.switches["sw0"]
    assert (sw0.platform, sw0.ports, sw0.power_profile, sw0.mgmt_address) == \
        ("ovs", 26, "pc5324", "198.51.100.10")
    assert topo.switches["sw2"].platform == "dell_os6"
    assert [link.speed_mbps for link in topo.links] == [1000, 1000, 1000, 100]
    assert topo.links[2].state == "down"
    # MACs in any notation become lower-case colon form; int ports become strings
    assert topo.hosts["node01"].mac == "02:00:00:00:00:02"
    assert topo.hosts["node01"].port == "1"
    assert topo.hosts["node02"].mac == "02:00:00:00:00:03"
    assert topo.hosts["node00"].ip == "192.0.2.1"


def test_channels_are_two_per_link_and_reverse_each_other():
    topo = load_topology(EXPLICIT)
    assert len(topo.channels) == 2 * len(topo.links)
    for channel in topo.channels:
        back = topo.reverse(channel)
        assert back.id == channel.id ^ 1 and back.link == channel.link
        assert (back.src, back.src_port, back.dst, back.dst_port) == \
            (channel.dst, channel.dst_port, channel.src, channel.src_port)
    first = topo.channels[0]
    assert str(first) == "sw0:25->sw1:25"
    assert topo.channel_from("sw1", "25") == topo.channels[1]
    assert topo.channel_from("sw0", "1") is None  # a host port is not a channel


def test_parallel_links_are_distinct_edges_and_channels():
    topo = load_topology(EXPLICIT)
    assert topo.graph.number_of_edges("sw0", "sw1") == 2
    keys = sorted(topo.graph["sw0"]["sw1"])
    assert keys == [0, 3]
    out_sw0 = [str(ch) for ch in topo.out_channels("sw0")]
    assert out_sw0 == ["sw0:25->sw1:25", "sw0:24->sw1:24"]  # link 2 is down


def test_down_links_are_left_out_of_channels_and_switch_graph():
    topo = load_topology(EXPLICIT)
    assert topo.down_links() == {2}
    assert [str(ch) for ch in topo.in_channels("sw0")] == ["sw1:25->sw0:25", "sw1:24->sw0:24"]
    graph = topo.switch_graph(down=[1])
    assert graph.number_of_edges() == 2 and not graph.has_edge("sw1", "sw2")
    assert [ch.link for ch in topo.out_channels("sw1", down=[0])] == [1, 3]


def test_link_lookup_by_end_name_and_index():
    topo = load_topology(EXPLICIT)
    assert topo.link("sw1:25").index == 0
    assert topo.link("sw0:25").index == 0
    assert topo.link("sw1:26--sw2:25").index == 1
    assert topo.link("sw2:25--sw1:26").index == 1
    assert topo.link(3).speed_mbps == 100
    with pytest.raises(TopologyError, match="no switch-to-switch link at 'sw0:1'"):
        topo.link("sw0:1")
    with pytest.raises(TopologyError, match="no link number 9"):
        topo.link(9)


def test_neighbours_and_used_ports():
    topo = load_topology(EXPLICIT)
    neighbours = topo.neighbours("sw0")
    assert {n["port"]: (n["switch"], n["remote_port"]) for n in neighbours} == {
        "25": ("sw1", "25"), "26": ("sw2", "26"), "24": ("sw1", "24")}
    assert topo.used_ports("sw0") == ["1", "24", "25", "26"]
    assert [h.name for h in topo.hosts_on("sw1")] == ["node01"]


def test_to_data_round_trips_to_an_equal_topology():
    topo = load_topology(EXPLICIT)
    again = topology_from_data(topo.to_data())
    assert again.to_data() == topo.to_data()
    assert again.channels == topo.channels


def test_generated_topology_round_trips_through_explicit_form():
    topo = topology_from_data({"generate": {"kind": "torus", "dims": [3, 4],
                                            "links_per_neighbor": 2, "hosts_per_switch": 2}})
    again = topology_from_data(topo.to_data())
    assert again.to_data() == topo.to_data()
    assert again.shape == {"kind": "torus", "dims": (3, 4)}


def test_ports_default_to_the_highest_used_port():
    topo = topology_from_data({"switches": {"a": {}, "b": {}},
                               "links": [{"a": "a:7", "b": "b:2"}]})
    assert (topo.switches["a"].ports, topo.switches["b"].ports) == (7, 2)


def test_single_switch_without_links_is_valid():
    topo = topology_from_data({"switches": {"solo": {}},
                               "hosts": {"h": {"switch": "solo", "port": "3",
                                               "mac": "02:00:00:00:00:09"}}})
    assert topo.summary()["links"] == 0 and topo.channels == []


def test_inventory_keys_are_accepted_beside_the_topology():
    data = explicit()
    data.update({"plugin": "ethercluster.routing.topology", "strict": False, "compose": {}})
    assert len(topology_from_data(data).switches) == 2


def test_normalize_mac_refuses_multicast_and_zero():
    assert normalize_mac("02:AA:bb:00:00:01") == "02:aa:bb:00:00:01"
    for bad in ("ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "00:00:00:00:00:00", "zz", 5):
        with pytest.raises(ValueError):
            normalize_mac(bad)


# ---------------------------------------------------------- validation errors
@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["links"].append({"a": "sw0:24", "b": "sw9:1"}),
     "topo.yml: links[1].b: unknown switch 'sw9' in 'sw9:1' (known: sw0, sw1)"),
    (lambda d: d["links"].append({"a": "sw0:port7", "b": "sw1:24"}),
     "links[1].a: port 'port7' is not a port number"),
    (lambda d: d["links"].append({"a": "sw0:25", "b": "sw1:24"}),
     "links[1].a: port sw0:25 is already used by links[0].a"),
    (lambda d: d["hosts"]["node01"].update(switch="sw0", port="25"),
     "hosts.node01.port: port sw0:25 is already used by links[0].a"),
    (lambda d: d["links"].append({"a": "sw0:30", "b": "sw1:24"}),
     "links[1].a: port 30 is beyond switch sw0's 26 ports (switches.sw0.ports)"),
    (lambda d: d["hosts"]["node01"].update(mac="02:00:00:00:00:01"),
     "hosts.node01.mac: 02:00:00:00:00:01 is already the MAC of host node00"),
    (lambda d: d["hosts"]["node01"].update(mac="02:00:00:00:00"),
     "hosts.node01.mac: '02:00:00:00:00' is not a MAC address"),
    (lambda d: d["hosts"]["node01"].update(mac="ff:ff:ff:ff:ff:ff"),
     "hosts.node01.mac: ff:ff:ff:ff:ff:ff is a multicast/broadcast address"),
    (lambda d: d["links"].append({"a": "sw0:3", "b": "sw0:4"}),
     "links[1]: self-loop: both ends are on switch sw0 (sw0:3, sw0:4)"),
    (lambda d: d["switches"].update(sw2={}),
     "links: the switch graph is not connected: switch sw2 cannot reach switches sw0, sw1"),
    (lambda d: d["hosts"]["node01"].update(switch="sw7"),
     "hosts.node01.switch: unknown switch 'sw7' (known: sw0, sw1)"),
    (lambda d: d["links"][0].update(speed_mbps="fast"),
     "links[0].speed_mbps: must be a whole number, got a string 'fast'"),
    (lambda d: d["links"][0].update(state="off"),
     "links[0].state: must be 'up' or 'down', got 'off'"),
    (lambda d: d["links"][0].update(colour="red"),
     "links[0].colour: unknown field"),
    (lambda d: d["switches"]["sw0"].update(max_vlans=5000),
     "switches.sw0.max_vlans: 802.1Q has at most 4094 VLANs, got 5000"),
    (lambda d: d["switches"]["sw0"].update(ports=0),
     "switches.sw0.ports: must be at least 1, got 0"),
    (lambda d: d["switches"]["sw0"].update(mgmt_address="10.0.0.300"),
     "switches.sw0.mgmt_address: '10.0.0.300' is not an IP address"),
    (lambda d: d["hosts"]["node00"].pop("mac"),
     "hosts.node00: missing mac"),
    (lambda d: d["links"].append({"a": "sw0:3"}),
     "links[1]: needs both ends, 'a' and 'b'"),
    (lambda d: d["links"].append("sw0:3-sw1:3"),
     "links[1]: must be a mapping"),
    (lambda d: d.update(extra=1),
     "unknown top-level field 'extra'"),
    (lambda d: d["hosts"].update(sw1={"switch": "sw1", "port": "2", "mac": "02:00:00:00:00:09"}),
     "hosts.sw1: 'sw1' is already a switch's name"),
    (lambda d: d["switches"].update({"9bad": {}}),
     "switches.'9bad': switch name '9bad' holds '9' (U+0039) at position 1"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_pattern="Gi1/0/"),
     "switches.sw0.interface_pattern: must be a text holding {port}"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_pattern="Gi{unit}/{port}"),
     "switches.sw0.interface_pattern: must be a text holding {port}"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_names=["Gi1/0/1"]),
     "switches.sw0.interface_names: must be a mapping of port -> interface name"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_names={"x": "Gi1/0/1"}),
     "switches.sw0.interface_names: port 'x' is not a port number"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_names={1: " Gi1/0/1"}),
     "switches.sw0.interface_names.1: interface name ' Gi1/0/1' holds a space (U+0020) at position 1"),
    (lambda d: d["switches"]["sw0"].update(platform="dell_os6", interface_names={1: "Te1/0/1", 25: "te1/0/1"}),
     "switches.sw0: ports 1 and 25 are both named 'te1/0/1'"),
    (lambda d: d["switches"]["sw0"].update(interface_pattern="eth{port}"),
     "switches.sw0: interface_pattern/interface_names do not apply to platform ovs"),
])
def test_each_validation_error_names_file_entry_and_field(mutate, expected):
    data = explicit()
    mutate(data)
    message = error_of(data)
    assert message.startswith("topo.yml: ")
    assert expected in message


def test_all_problems_are_reported_at_once():
    data = explicit()
    data["links"].append({"a": "sw9:1", "b": "sw0:1"})
    data["hosts"]["node01"]["mac"] = "nope"
    with pytest.raises(TopologyError) as info:
        topology_from_data(data, "topo.yml")
    assert len(info.value.problems) == 3  # unknown switch, sw0:1 used twice, bad MAC
    assert str(info.value).startswith("topo.yml: 3 problems:")


def test_disconnection_names_every_isolated_group():
    data = {"switches": {"a": {}, "b": {}, "c": {}, "d": {}},
            "links": [{"a": "a:1", "b": "b:1"}, {"a": "c:1", "b": "d:1"}]}
    message = error_of(data)
    assert "switches c, d cannot reach switches a, b" in message


def test_generate_and_explicit_sections_cannot_be_mixed():
    message = error_of({"generate": {"kind": "mesh", "dims": [2, 2]}, "switches": {"x": {}}})
    assert "switches: not allowed beside 'generate'" in message


def test_no_fabric_at_all():
    assert "nothing describes the fabric" in error_of({"name": "empty"})
    assert "the top level must be a mapping" in error_of(["a", "b"])
    assert "switches: must be a non-empty mapping" in error_of({"switches": {}})


def test_file_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.yml"
    with pytest.raises(TopologyError, match="nope.yml: cannot read the file"):
        load_topology(missing)
    bad = tmp_path / "bad.yml"
    bad.write_text("switches: {sw0: {}\n")
    with pytest.raises(TopologyError, match="bad.yml: not valid YAML"):
        load_topology(bad)
    dup = tmp_path / "dup.yml"
    dup.write_text("switches:\n  sw0: {}\n  sw0: {}\n")
    with pytest.raises(TopologyError, match="duplicate key 'sw0' \\(first at line 2\\)"):
        load_topology(dup)


def test_coords_must_fit_the_shape():
    data = explicit()
    data["shape"] = {"kind": "mesh", "dims": [2, 1]}
    assert "shape.dims: every dimension must be a whole number >= 2" in error_of(data)
    data["shape"] = {"kind": "mesh", "dims": [2, 2]}
    data["switches"]["sw0"]["coords"] = [0, 0]
    data["switches"]["sw1"]["coords"] = [0, 2]
    assert "switches.sw1.coords: [0, 2] does not fit shape.dims [2, 2]" in error_of(data)
    data["switches"]["sw1"]["coords"] = [0, 0]
    assert "switches.sw1.coords: [0, 0] already belongs to switch sw0" in error_of(data)
    del data["switches"]["sw1"]["coords"]
    assert "every switch of a mesh needs coords; missing on sw1" in error_of(data)


def test_endpoint_prints_as_switch_colon_port():
    assert str(Endpoint("sw3", "25")) == "sw3:25"


def test_interface_names_and_pattern_name_the_ports_and_round_trip():
    data = explicit()
    data["switch_defaults"] = {"platform": "dell_os6", "interface_pattern": "Gi1/0/{port}"}
    data["switches"]["sw0"]["interface_names"] = {25: "Te1/0/1"}
    topology = topology_from_data(data, source="topo.yml")
    sw0, sw1 = topology.switches["sw0"], topology.switches["sw1"]
    assert sw0.interface_name("25") == "Te1/0/1"
    assert sw0.interface_name(1) == "Gi1/0/1"
    assert sw1.interface_name(24) == "Gi1/0/24"
    again = topology_from_data(topology.to_data())
    assert again.switches["sw0"].interface_names == {"25": "Te1/0/1"}
    assert again.switches["sw1"].interface_name("24") == "Gi1/0/24"


def test_without_names_the_renderer_default_applies():
    topology = topology_from_data(explicit(), source="topo.yml")
    assert topology.switches["sw0"].interface_name("25") is None
