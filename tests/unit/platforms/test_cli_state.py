"""The state of a CLI switch read from its show commands
(module_utils/platforms/cli_state.py): the interface status tables of
OS6 (``show interfaces status``) and VRP (``display interface brief``),
and the configuration + status -> the form the OVS read gives, on which
the transitions' "does it hold this entry" comparison and the fabric
state (bank, PVIDs, down links, speeds) work unchanged."""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_state, dell_os6, huawei_vrp, ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import PlatformError
from ansible_collections.ethercluster.routing.plugins.module_utils.power.fabric_state import switch_state

# as an N1548 prints it (6.x): the description may hold spaces; a port
# that is down shows N/A duplex and an Unknown speed
OS6_STATUS = """
Port      Description               Vlan  Duplex Speed   Neg  Link  Flow Ctrl
                                                              State Status
--------- ------------------------- ----- ------ ------- ---- ----- ---------
Gi1/0/1   node00 eth1               Gen   Full   1000    Auto Up    Inactive
Gi1/0/2   to sw1 port 2             Gen   N/A    Unknown Off  Down  Inactive
Gi1/0/3                             Gen   Full   100     Off  Up    Active
Te1/0/1                             1     N/A    Unknown Auto Down  Inactive

Oob   Type                           Link State
---   ------------------------------ ----------
oob   Out-Of-Band                    Up
"""

# as an S5720 prints it: the legend, then one row per interface; *down is
# administratively down, (l) a loopback marker
VRP_STATUS = """PHY: Physical
*down: administratively down
(l): loopback
(s): spoofing
(E): E-Trunk down
(b): BFD down
(e): ETHOAM down
(dl): DLDP down
(d): Dampening Suppressed
InUti/OutUti: input utility/output utility
Interface                   PHY   Protocol InUti OutUti   inErrors  outErrors
GigabitEthernet0/0/1        up    up       0.01%  0.01%          0          0
GigabitEthernet0/0/2        *down down        0%     0%          0          0
GigabitEthernet0/0/3        down  down        0%     0%          0          0
GigabitEthernet0/0/4        up(l) up          0%     0%          0          0
MEth0/0/1                   up    up          0%     0%          0          0
NULL0                       up    up(s)       0%     0%          0          0
Vlanif1                     down  down        --     --          0          0
"""

ENTRY = {"stp": False, "vlans": [100, 101], "static_macs": [{"mac": "02:00:00:00:00:01", "vlan": 100, "port": "1"}],
         "ports": {"1": {"pvid": 100, "untagged": [100, 101], "tagged": [], "admin": "up", "speed_mbps": 1000},
                   "2": {"pvid": 101, "untagged": [100, 101], "tagged": [], "admin": "down", "speed_mbps": 1000},
                   "3": {"pvid": 101, "untagged": [101], "tagged": [100], "admin": "up", "speed_mbps": 100}}}


def test_os6_status_rows_are_read_from_the_right():
    assert cli_state.parse_os6_status(OS6_STATUS) == {
        "Gi1/0/1": {"link": "up", "speed_mbps": 1000},
        "Gi1/0/2": {"link": "down", "speed_mbps": None},
        "Gi1/0/3": {"link": "up", "speed_mbps": 100},
        "Te1/0/1": {"link": "down", "speed_mbps": None},
    }


def test_vrp_brief_rows_give_carrier_and_admin_state():
    found = cli_state.parse_vrp_status(VRP_STATUS)
    assert found["GigabitEthernet0/0/1"] == {"link": "up", "admin": "up", "speed_mbps": None}
    assert found["GigabitEthernet0/0/2"] == {"link": "down", "admin": "down", "speed_mbps": None}
    assert found["GigabitEthernet0/0/3"] == {"link": "down", "admin": "up", "speed_mbps": None}
    assert found["GigabitEthernet0/0/4"]["link"] == "up"
    assert "MEth0/0/1" not in found and "NULL0" not in found and "Vlanif1" not in found


@pytest.mark.parametrize("platform, status", [("dell_os6", OS6_STATUS), ("huawei_vrp", VRP_STATUS)])
def test_a_deployed_switch_reads_as_the_entry_it_holds(platform, status):
    entry = dict(ENTRY, platform=platform)
    module = {"dell_os6": dell_os6, "huawei_vrp": huawei_vrp}[platform]
    state = cli_state.state(platform, module.render(entry, "sw0"), status, None, "sw0")
    wanted = cli_state.desired(entry, "sw0")
    assert not ovs.compare(state, wanted, "sw0").changed
    assert state["ports"]["2"]["admin"] == "down" and state["ports"]["2"]["link"] == "down"
    assert state["ports"]["1"]["link"] == "up" and state["ports"]["3"]["speed_mbps"] == 100
    # the fabric state reads the bank and PVIDs from the same flows as on OVS
    summary = switch_state("sw0", state)
    assert summary["banks"] == ["A"] and summary["ports"]["2"]["pvid"] == 101
    # another entry (a port up again, a PVID moved) is not held, and the
    # write sends only the lines that differ
    moved = dict(entry, ports=dict(entry["ports"], **{"2": dict(entry["ports"]["2"], admin="up", pvid=100)}))
    assert ovs.compare(state, cli_state.desired(moved, "sw0"), "sw0").changed
    lines = cli_state.write_commands(state, cli_state.desired(moved, "sw0"), "sw0")
    interface = module.INTERFACE_PATTERN.format(port=2)
    assert lines[0] == "interface %s" % interface and len(lines) == 4
    assert any("pvid" in line and "100" in line for line in lines)
    assert lines[-2] in ("no shutdown", "undo shutdown")


def test_an_undeployed_switch_holds_no_pipeline_and_every_port_is_listed():
    state = cli_state.state("dell_os6", "!Current Configuration:\nconfigure\nexit\n", OS6_STATUS, None, "sw0")
    assert state["flows"] == []
    assert sorted(state["ports"]) == ["1", "2", "3"]  # Te1/0/1 is no topology port of the pattern


def test_the_topologys_interface_names_map_the_status_rows():
    names = {"1": "Te1/0/1", "2": "Gi1/0/2"}
    entry = dict(ENTRY, platform="dell_os6", interface_names=names,
                 ports={port: ENTRY["ports"][port] for port in ("1", "2")}, static_macs=[])
    state = cli_state.state("dell_os6", dell_os6.render(entry, "sw0", names), OS6_STATUS, names, "sw0")
    assert state["ports"]["1"]["dev"] == "Te1/0/1" and state["ports"]["1"]["link"] == "down"
    assert not ovs.compare(state, cli_state.desired(entry, "sw0"), "sw0").changed


def test_an_unknown_platform_is_named():
    with pytest.raises(PlatformError, match="switch sw3: platform 'linux_bridge' has no CLI state reader"):
        cli_state.state("linux_bridge", "", "", None, "sw3")
    with pytest.raises(PlatformError, match="ovs renderer only|no CLI state reader"):
        cli_state.desired(dict(ENTRY, platform="linux_bridge"), "sw3")
