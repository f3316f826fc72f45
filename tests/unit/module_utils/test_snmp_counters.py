"""IF-MIB port counters (module_utils/power/snmp_counters.py), without an agent:
a topology port is named by the switch's interface names, else a pattern,
else itself; ifName entries map ports to ifIndex, and ports the switch does
not have are named in the error. (The lab test reads a real snmpd.)"""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.power import snmp_counters as sc
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

TOPOLOGY = topology_from_data({
    "name": "two",
    "switches": {"sw0": {"platform": "dell_os6", "interface_pattern": "GigabitEthernet1/0/{port}"},
                 "sw1": {}},
    "links": [{"a": "sw0:1", "b": "sw1:1"}],
    "hosts": {"h0": {"switch": "sw0", "port": "2", "mac": "02:00:00:00:00:01"},
              "h1": {"switch": "sw1", "port": "2", "mac": "02:00:00:00:00:02"}},
})


def test_ports_are_named_by_the_topology_else_the_pattern_else_themselves():
    assert sc.port_if_names(TOPOLOGY, "sw0", ["1", "2"], "p{port}") == {
        "1": "GigabitEthernet1/0/1", "2": "GigabitEthernet1/0/2"}
    assert sc.port_if_names(TOPOLOGY, "sw1", ["1", "2"], "p{port}") == {"1": "p1", "2": "p2"}
    assert sc.port_if_names(TOPOLOGY, "sw1", ["1"]) == {"1": "1"}


def test_if_names_map_ports_to_if_indexes_and_missing_ports_are_named():
    walked = {1: "lo", 5: "p1", 7: "p2", 9: "mgmt0"}
    assert sc.match_ports(walked, {"1": "p1", "2": "p2"}, "sw1") == {"1": 5, "2": 7}
    with pytest.raises(sc.SnmpError, match=r"sw1: no interface p3 \(port 3\)"):
        sc.match_ports(walked, {"1": "p1", "3": "p3"}, "sw1")


def test_an_unreachable_agent_is_an_error_naming_the_switch():
    pytest.importorskip("pysnmp")
    with pytest.raises(sc.SnmpError, match=r"sw0 \(127\.0\.0\.1:9\)"):
        sc.read_counters("sw0", "127.0.0.1", {"1": "p1"}, port=9, timeout=0.2, retries=0)
