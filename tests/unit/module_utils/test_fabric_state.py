"""Reading the fabric's state from the switches (module_utils/power/fabric_state.py):
a real OVS 3.1 answer parses into ports, PVIDs and banks; planned intents
in bank A / bank B / both read back as that bank; a link is down when
either end is admin down; ends at different speeds, empty switches and
mixed banks are reported, the latter naming which switch holds what and
how to finish."""

from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.power import fabric_state as fs
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"
RING = load_topology(FIXTURES / "ring3_topology.yml")


def held(entry, switch, link="up"):
    """What a switch holding ``entry`` answers, parsed (as ovs.parse_state gives)."""
    state = ovs.render(entry, switch)
    for port, value in state["ports"].items():
        value.update(dev="p" + port, ofport=int(port), link=link)
    return state


def fabric(bank="A", down=()):
    intent = plan(RING, down=down, bank=bank).intent
    return intent, {sw: held(entry, sw) for sw, entry in intent["switches"].items()}


def test_a_real_ovs_answer_gives_ports_pvids_and_vlans():
    state = ovs.parse_state((FIXTURES / "ovs31_sw1_read.txt").read_text())
    summary = fs.switch_state("sw1", state)
    vlans, pvids = fs.pipeline_vlans(state["flows"])
    assert pvids == {"1": 20, "2": 10, "3": 22}
    assert vlans == {10, 20, 22}
    # the fixture's hand-written IDs are below bank A: "other"
    assert summary["banks"] == ["other"] and summary["pvid_banks"] == ["other"]
    assert set(summary["ports"]) == {"1", "2", "3"}
    assert summary["ports"]["2"]["pvid"] == 10


@pytest.mark.parametrize("bank", ["A", "B"])
def test_a_deployed_fabric_reads_as_its_bank_with_every_link_up(bank):
    intent, states = fabric(bank)
    state = fs.fabric_state(RING, states)
    assert state["bank"] == bank and state["settled"] and state["problems"] == []
    assert state["down"] == [] and state["down_links"] == []
    assert state["speeds"] == {link.name: 1000 for link in RING.links}
    low, high = fs.VLAN_BANKS[bank]
    for sw, entry in intent["switches"].items():
        pvids = {port: value["pvid"] for port, value in entry["ports"].items()}
        assert {port: value["pvid"] for port, value in
                state["switches"][sw]["ports"].items()} == pvids
        assert all(low <= pvid <= high for pvid in pvids.values())


def test_a_link_is_down_when_one_end_is_admin_down():
    intent, states = fabric()
    states["sw2"]["ports"]["2"]["admin"] = "down"  # sw2:2 is the far end of sw1:3
    state = fs.fabric_state(RING, states)
    assert state["down"] == [1]
    assert state["down_links"] == ["sw1:3--sw2:2"]
    assert state["links"][1]["ends"]["sw1:3"]["admin"] == "up"
    assert fs.link_state(state, RING, "sw1:3")["admin"] == "down"


def test_ends_at_different_speeds_are_a_problem_naming_the_link():
    intent, states = fabric()
    states["sw0"]["ports"]["2"]["speed_mbps"] = 100
    state = fs.fabric_state(RING, states)
    assert not state["settled"]
    assert "sw0:2--sw1:2" not in state["speeds"]
    assert state["problems"] == ["link sw0:2--sw1:2: the ends run at different speeds "
                                 "(sw0:2 100 Mb/s, sw1:2 1000 Mb/s)"]


def test_mixed_banks_say_who_holds_what_and_to_rerun_the_playbook():
    a_intent, a_states = fabric("A")
    b_intent, b_states = fabric("B")
    states = dict(a_states, sw2=b_states["sw2"])
    state = fs.fabric_state(RING, states)
    assert state["bank"] is None and not state["settled"]
    message = state["problems"][0]
    assert "bank A on sw0, sw1" in message and "bank B on sw2" in message
    assert "Re-run the same playbook" in message


def test_switches_not_deployed_and_missing_ports_are_named():
    intent, states = fabric()
    states["sw1"]["flows"] = []
    state = fs.fabric_state(RING, states)
    assert any("sw1 hold no pipeline" in problem for problem in state["problems"])
    del states["sw1"]["ports"]["3"]
    with pytest.raises(fs.FabricStateError, match="link sw1:3--sw2:2: switch sw1 has no port 3"):
        fs.fabric_state(RING, states)
    with pytest.raises(fs.FabricStateError, match="no state read from switch"):
        fs.fabric_state(RING, {"sw0": states["sw0"]})


def test_bank_of_follows_the_bank_table():
    assert fs.bank_of(100) == "A" and fs.bank_of(1999) == "A"
    assert fs.bank_of(2100) == "B" and fs.bank_of(3999) == "B"
    assert fs.bank_of(2000) is None and fs.bank_of(10) is None


def test_port_counters_of_a_real_ovs_answer():
    counters = fs.parse_port_bytes((FIXTURES / "ovs31_sw0_dump_ports.txt").read_text())
    assert set(counters) == {"1", "2", "3", "4"}  # LOCAL left out
    assert counters["1"] == {"rx_bytes": 336, "tx_bytes": 336, "rx_packets": 4, "tx_packets": 4}
    assert counters["4"]["tx_bytes"] == 42 and counters["2"]["tx_bytes"] == 0
    assert fs.counters_script("br0") == "ovs-ofctl -O OpenFlow13 dump-ports br0\n"
    with pytest.raises(fs.FabricStateError, match="bridge"):
        fs.counters_script("br0; reboot")
