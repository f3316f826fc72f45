"""The dell_os6, huawei_vrp and linux_bridge renderers and their parsers.

* golden files: a small fixed intent renders to exactly the texts in
  tests/unit/fixtures/platforms/<platform>/<switch>.txt (reviewed by hand
  against each platform's CLI reference);
* round trip: intent -> render -> parse gives the same switch intent, for
  the intents the real plan makes (several fabrics, both assignments)
  and for random intents (hypothesis);
* parsers read running-config spellings, skip interfaces that are not
  topology ports, honour an interface-name map; bad intents and texts
  fail with errors naming the switch and port.
"""

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    dell_os6, huawei_vrp, linux_bridge)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import PlatformError
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import render_configs
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "platforms"
SMALL = yaml.safe_load((FIXTURES / "small_intent.yml").read_text())

# (platform directory, golden suffix, render, parse)
FORMATS = [
    ("dell_os6", "txt", dell_os6.render, dell_os6.parse),
    ("huawei_vrp", "txt", huawei_vrp.render, huawei_vrp.parse),
    ("linux_bridge", "txt", linux_bridge.render, linux_bridge.parse),
    ("linux_bridge", "interfaces.txt", linux_bridge.render_interfaces, linux_bridge.parse_interfaces),
]
LINUX = {"linux_bridge"}
FORMAT_IDS = ["dell_os6", "huawei_vrp", "linux_bridge", "ifupdown2"]


def expected_intent(entry, pvid_needs_membership=False):
    """What a config text can hold of an intent entry, computed here
    independently of the platform code: the five port fields with sorted
    lists, sorted VLANs, static entries sorted by (VLAN, MAC). With
    ``pvid_needs_membership`` (Linux bridge), a PVID that is not one of
    the port's VLANs is no PVID and a VLAN without member port is not held.
    802.3x flow control: on where the entry does not say."""
    ports = {}
    for port in sorted(entry["ports"], key=int):
        config = entry["ports"][port]
        pvid = config["pvid"]
        if pvid_needs_membership and pvid not in config["untagged"] + config["tagged"]:
            pvid = None
        ports[str(port)] = {"pvid": pvid, "untagged": sorted(config["untagged"]),
                            "tagged": sorted(config["tagged"]), "admin": config["admin"],
                            "speed_mbps": config["speed_mbps"],
                            "flow_control": config.get("flow_control", True)}
    statics = sorted(entry["static_macs"], key=lambda item: (item["vlan"], item["mac"]))
    vlans = sorted(entry["vlans"])
    if pvid_needs_membership:
        vlans = [vlan for vlan in vlans if any(vlan in port["untagged"] + port["tagged"] for port in ports.values())]
    return {"stp": entry["stp"], "vlans": vlans, "ports": ports,
            "static_macs": [{"mac": item["mac"], "vlan": item["vlan"], "port": str(item["port"])}
                            for item in statics]}


@pytest.mark.parametrize("switch", sorted(SMALL["switches"]))
@pytest.mark.parametrize("platform, suffix, render, parse", FORMATS, ids=FORMAT_IDS)
def test_golden_rendering(platform, suffix, render, parse, switch):
    golden = (FIXTURES / platform / ("%s.%s" % (switch, suffix))).read_text()
    assert render(SMALL["switches"][switch], switch) == golden


@pytest.mark.parametrize("switch", sorted(SMALL["switches"]))
@pytest.mark.parametrize("platform, suffix, render, parse", FORMATS, ids=FORMAT_IDS)
def test_golden_file_parses_to_the_intent(platform, suffix, render, parse, switch):
    golden = (FIXTURES / platform / ("%s.%s" % (switch, suffix))).read_text()
    assert parse(golden, switch=switch) == expected_intent(SMALL["switches"][switch])


MESH = {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 2}
TORUS = {"kind": "torus", "dims": [4, 4], "links_per_neighbor": 2, "hosts_per_switch": 1}
FAT_TREE = {"kind": "fat_tree", "u": 2, "d": 2, "r": 2, "hosts_per_switch": 2}
RANDOM = {"kind": "random", "switches": 10, "degree": 3, "seed": 4, "hosts_per_switch": 1}
# (fabric, engine, assignment): the fixed assignment needs paths that form a
# tree per source (§3.2.1), so it is planned with engines that give them
PLANS = [
    (MESH, "dor", "fixed"), (MESH, "segment", "renamed"),
    (TORUS, "stp", "fixed"), (TORUS, "segment", "renamed"),
    (FAT_TREE, "segment", "fixed"), (FAT_TREE, "segment", "renamed"),
    (RANDOM, "updown", "fixed"), (RANDOM, "segment", "renamed"),
]


@pytest.fixture(scope="module", params=PLANS, ids=lambda param: "%s-%s-%s" % (param[0]["kind"], param[1], param[2]))
def planned_intent(request):
    fabric, engine, assignment = request.param
    return plan(topology_from_data({"generate": fabric}), engine=engine, assignment=assignment,
                broadcast="bounded" if assignment == "renamed" else "contained").intent


@pytest.mark.parametrize("platform, suffix, render, parse", FORMATS, ids=FORMAT_IDS)
def test_round_trip_of_planned_intents(planned_intent, platform, suffix, render, parse):
    assert planned_intent["switches"]
    for name, entry in planned_intent["switches"].items():
        text = render(entry, name)
        assert parse(text, switch=name) == expected_intent(entry, platform in LINUX), name


MACS = st.integers(0, 2 ** 46 - 1).map(lambda value: ":".join("%02x" % byte for byte in (value * 4 + 2).to_bytes(6, "big")))


@st.composite
def switch_intents(draw):
    vlans = sorted(draw(st.sets(st.integers(2, 4094), min_size=1, max_size=30)))
    ports = {}
    # 802.3x: the same on every port (what OS6, switch-wide, can hold), or drawn per port
    uniform = draw(st.sampled_from([True, False, None]))
    for port in sorted(draw(st.sets(st.integers(1, 52), min_size=1, max_size=8))):
        members = draw(st.lists(st.sampled_from(vlans), unique=True, min_size=1))
        untagged = draw(st.sets(st.sampled_from(members))) if members else set()
        tagged = set(members) - untagged
        ports[str(port)] = {"pvid": draw(st.one_of(st.none(), st.sampled_from(members))),
                            "untagged": sorted(untagged), "tagged": sorted(tagged),
                            "admin": draw(st.sampled_from(["up", "down"])),
                            "speed_mbps": draw(st.sampled_from([None, 100, 1000, 10000])),
                            "flow_control": draw(st.booleans()) if uniform is None else uniform}
    used = sorted({vlan for entry in ports.values() for vlan in entry["untagged"] + entry["tagged"]})
    statics = {}
    for mac in draw(st.lists(MACS, max_size=6)):
        port = draw(st.sampled_from(sorted(ports)))
        vlan = draw(st.sampled_from(ports[port]["untagged"] + ports[port]["tagged"]))
        statics[(mac, vlan)] = port
    return {"platform": "any", "stp": False, "vlans": used, "ports": ports,
            "static_macs": [{"mac": mac, "vlan": vlan, "port": port} for (mac, vlan), port in statics.items()]}


@settings(max_examples=60, deadline=None)
@given(switch_intents())
def test_round_trip_of_random_intents(entry):
    mixed = len({port["flow_control"] for port in entry["ports"].values()}) > 1
    for platform, suffix, render, parse in FORMATS:
        if platform == "dell_os6" and mixed:
            with pytest.raises(PlatformError, match="sets 802.3x flow control for the whole switch"):
                render(entry, "swX")
            continue
        assert parse(render(entry, "swX"), switch="swX") == expected_intent(entry, platform in LINUX), \
            (platform, suffix)


def test_huawei_splits_vlan_lists_at_ten_items():
    vlans = list(range(100, 124, 2))  # twelve separate IDs
    entry = {"stp": False, "vlans": vlans,
             "ports": {"1": {"pvid": 100, "untagged": vlans, "tagged": [], "admin": "up", "speed_mbps": None}},
             "static_macs": []}
    text = huawei_vrp.render(entry, "sw7")
    untagged_lines = [line for line in text.splitlines() if line.startswith(" port hybrid untagged vlan")]
    batch_lines = [line for line in text.splitlines() if line.startswith("vlan batch")]
    assert len(untagged_lines) == 2 and len(batch_lines) == 2
    assert all(len(line.replace("batch", "").split("vlan ", 1)[1].split()) <= 10 for line in untagged_lines + batch_lines)
    assert huawei_vrp.parse(text) == expected_intent(entry)


def test_dell_vlan_list_compresses_runs():
    assert dell_os6.vlan_list([105, 100, 101, 102, 200]) == "100-102,105,200"


def test_interface_name_map_is_used_both_ways():
    entry = SMALL["switches"]["sw1"]
    names = {"3": "Te1/0/3"}
    text = dell_os6.render(entry, "sw1", interface_names=names)
    assert "interface Te1/0/3\n" in text and "interface Gi1/0/3\n" not in text
    assert "mac address-table static 0200.0000.0002 vlan 30 interface Te1/0/3\n" in text
    assert dell_os6.parse(text, interface_names=names) == expected_intent(entry)
    # without the map, Te1/0/3 is not a topology port: it is skipped
    assert set(dell_os6.parse(text)["ports"]) == {"1"}
    script = linux_bridge.render(entry, "sw1", interface_names={"1": "eth7"})
    assert "bridge vlan add dev eth7 vid 30 pvid untagged" in script
    assert linux_bridge.parse(script, interface_names={"1": "eth7"}) == expected_intent(entry)


def test_dell_parser_reads_running_config_spellings():
    running = "\n".join([
        "!Current Configuration:",
        "no spanning-tree",
        "vlan database",
        "vlan 10,20-21",
        "exit",
        "interface vlan 10",            # not a topology port
        "ip address 192.0.2.1 255.255.255.0",
        "shutdown",                     # of interface vlan 10 (no "exit" before the next one)
        "interface gigabitethernet 1/0/4",
        "switchport mode general",
        "switchport general allowed vlan add 10,20 untagged",
        "switchport general allowed vlan add 21 tagged",
        "switchport general allowed vlan remove 20",
        "switchport general pvid 10",
        "shutdown",
        "exit",
        "mac address-table static 02aa.bbcc.ddee vlan 21 interface gigabitethernet 1/0/4",
    ])
    assert dell_os6.parse(running) == {
        "stp": False, "vlans": [10, 20, 21],
        "ports": {"4": {"pvid": 10, "untagged": [10], "tagged": [21], "admin": "down", "speed_mbps": None,
                        "flow_control": False}},  # no "flowcontrol" line: off
        "static_macs": [{"mac": "02:aa:bb:cc:dd:ee", "vlan": 21, "port": "4"}]}
    assert all(port["flow_control"] for port in dell_os6.parse("flowcontrol\n" + running)["ports"].values())


def test_huawei_parser_reads_stp_default_and_undo():
    text = "\n".join([
        "vlan batch 10 to 12",
        "#",
        "interface GigabitEthernet0/0/2",
        " port link-type hybrid",
        " port hybrid tagged vlan 10 to 12",
        " undo port hybrid vlan 11",
        " port hybrid pvid vlan 10",
        "#",
        "interface Vlanif10",
        " ip address 192.0.2.1 255.255.255.0",
        "#",
        "return",
    ])
    parsed = huawei_vrp.parse(text)
    assert parsed["stp"] is True  # no "stp disable": VRP runs STP
    assert parsed["ports"] == {"2": {"pvid": 10, "untagged": [], "tagged": [10, 12], "admin": "up",
                                     "speed_mbps": None, "flow_control": False}}  # VRP's default: off
    assert huawei_vrp.parse(text.replace(" port hybrid pvid vlan 10", " port hybrid pvid vlan 10\n flow-control")
                            )["ports"]["2"]["flow_control"] is True


def test_parsers_refuse_ports_not_in_general_or_hybrid_mode():
    with pytest.raises(PlatformError, match="port 5 is not in switchport mode general"):
        dell_os6.parse("interface Gi1/0/5\nswitchport mode trunk\nexit\n", switch="sw3")
    with pytest.raises(PlatformError, match="port 5 is not a hybrid port"):
        huawei_vrp.parse("interface GigabitEthernet0/0/5\n port link-type trunk\n#\n", switch="sw3")


def test_a_pvid_outside_the_port_vlans():
    entry = {"stp": False, "vlans": [10, 20],
             "ports": {"7": {"pvid": 20, "untagged": [10], "tagged": [], "admin": "up", "speed_mbps": None},
                       "8": {"pvid": 20, "untagged": [20], "tagged": [], "admin": "up", "speed_mbps": None}},
             "static_macs": []}
    # general/hybrid ports hold it as it is
    assert dell_os6.parse(dell_os6.render(entry, "sw4")) == expected_intent(entry)
    assert huawei_vrp.parse(huawei_vrp.render(entry, "sw4")) == expected_intent(entry)
    # a Linux bridge port gets no PVID at all (untagged frames dropped)
    script = linux_bridge.render(entry, "sw4")
    assert "bridge vlan add dev swp7 vid 10 untagged\n" in script
    assert "dev swp7 vid 20" not in script
    parsed = linux_bridge.parse(script)
    assert parsed["ports"]["7"]["pvid"] is None and parsed["ports"]["8"]["pvid"] == 20
    assert parsed == linux_bridge.effective_intent(entry, "sw4")


def test_linux_bridge_leaves_out_a_vlan_without_member_port():
    entry = {"stp": False, "vlans": [10, 30],
             "ports": {"1": {"pvid": 30, "untagged": [10], "tagged": [], "admin": "up", "speed_mbps": None}},
             "static_macs": []}
    for render, parse in ((linux_bridge.render, linux_bridge.parse),
                          (linux_bridge.render_interfaces, linux_bridge.parse_interfaces)):
        parsed = parse(render(entry, "sw5"))
        assert parsed["vlans"] == [10] and parsed["ports"]["1"]["pvid"] is None
    assert dell_os6.parse(dell_os6.render(entry, "sw5"))["vlans"] == [10, 30]


@pytest.mark.parametrize("change, message", [
    (lambda e: e["ports"]["1"].update(untagged=[10, 4095]), "switch sw0 port 1: untagged: VLAN ID"),
    (lambda e: e["ports"]["1"].update(tagged=[10]), "switch sw0 port 1: VLAN 10 both tagged and untagged"),
    (lambda e: e["ports"]["2"].update(pvid=99), "switch sw0 port 2: pvid 99 is not in the switch's vlans"),
    (lambda e: e["ports"]["2"].update(admin="off"), "switch sw0 port 2: admin must be up or down"),
    (lambda e: e["static_macs"].append({"mac": "02:00:00:00:00:09", "vlan": 12, "port": "2"}),
     r"switch sw0 static_macs\[3\]: port 2 is not a member of VLAN 12"),
    (lambda e: e["static_macs"].append({"mac": "zz", "vlan": 10, "port": "2"}),
     r"switch sw0 static_macs\[3\]: mac: not a MAC address"),
    (lambda e: e.update(stp="no"), "switch sw0: stp must be true or false"),
])
@pytest.mark.parametrize("render", [dell_os6.render, huawei_vrp.render, linux_bridge.render,
                                    linux_bridge.render_interfaces])
def test_bad_intents_fail_naming_switch_and_port(render, change, message):
    entry = yaml.safe_load(yaml.safe_dump(SMALL["switches"]["sw0"]))
    change(entry)
    with pytest.raises(EtherclusterError, match=message):
        render(entry, "sw0")


def test_interface_map_must_not_name_one_interface_twice():
    with pytest.raises(PlatformError, match="switch sw0: interface_names maps two ports"):
        dell_os6.render(SMALL["switches"]["sw0"], "sw0", interface_names={"1": "Gi1/0/9", "2": "Gi1/0/9"})


def test_topology_interface_names_reach_the_rendered_configs_through_the_intent():
    topology = topology_from_data({
        "generate": {"kind": "mesh", "dims": [2, 2], "hosts_per_switch": 1},
        "switch_defaults": {"platform": "dell_os6", "interface_pattern": "Te1/0/{port}"}})
    intent = plan(topology, engine="dor", assignment="fixed").intent
    entry = intent["switches"]["sw0"]
    assert entry["interface_names"] == {port: "Te1/0/%s" % port for port in entry["ports"]}
    text = render_configs(intent)["configs/sw0.cfg"]
    assert "interface Te1/0/1\n" in text and "interface Gi1/0/" not in text
    # the parser reads it back with the same names, to the same switch intent
    assert dell_os6.parse(text, entry["interface_names"], "sw0") == expected_intent(entry, False)
