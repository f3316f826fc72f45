"""The node_learning module through ansible (its own ArgumentSpec and
AnsibleModule): check mode reads the host and lists the iproute2 commands
without running them (--diff shows them), tagged_frames configures and in
check mode sends nothing, and wrong arguments are refused by name. Real
VLAN devices and raw sockets need root and a NIC: the lab's molecule
scenario mesh3x3_dor_fixed_self sends the frames."""

import os

import pytest

MODULE = "ethercluster.routing.node_learning"
VLANS = [{"vlan": 100, "device": "lo.100", "address": "10.254.0.1/28"},
         {"vlan": 101, "device": "lo.101", "address": "10.254.0.17/28", "broadcast": "10.254.0.31"}]


@pytest.mark.skipif(not os.path.exists("/sbin/ip") and not os.path.exists("/usr/sbin/ip"),
                    reason="iproute2 (ip) is not installed")
def test_vlan_interfaces_in_check_mode_lists_the_commands_and_runs_none(ansible_cli, tmp_path):
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"host": "n0", "method": "vlan_interfaces", "parent": "lo",
                                                    "vlans": VLANS}, "--check", "--diff", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["changed"] is True and result["sent"] == {} and result["vlans"] == 2
    assert result["commands"] == [
        "ip link add link lo name lo.100 type vlan id 100",
        "ip address add 10.254.0.1/28 broadcast 10.254.0.15 dev lo.100",
        "ip link set lo.100 up",
        "ip link add link lo name lo.101 type vlan id 101",
        "ip address add 10.254.0.17/28 broadcast 10.254.0.31 dev lo.101",
        "ip link set lo.101 up"]
    assert not os.path.exists("/sys/class/net/lo.100")


def test_vlan_interfaces_absent_of_nothing_changes_nothing(ansible_cli, tmp_path):
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"host": "n0", "method": "vlan_interfaces", "parent": "lo",
                                                    "state": "absent", "vlans": VLANS}, "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["changed"] is False and result["commands"] == []


def test_tagged_frames_in_check_mode_sends_nothing_and_reports_no_change(ansible_cli, tmp_path):
    rc, result, stderr = ansible_cli.adhoc(MODULE, {"host": "n0", "method": "tagged_frames", "parent": "lo",
                                                    "mac": "02:00:00:00:00:01", "vlans": VLANS},
                                           "--check", cwd=tmp_path)
    assert rc == 0, (result, stderr)
    assert result["changed"] is False and result["sent"] == {} and result["commands"] == []


@pytest.mark.parametrize("args, message", [
    ({"method": "tagged_frames"}, "host n0: method tagged_frames needs mac"),
    ({"method": "vlan_interfaces", "parent": "no-such-nic"}, "host n0: no interface no-such-nic"),
    ({"method": "tagged_frames", "mac": "02:00:00:00:00:01", "count": 0}, "host n0: count must be at least 1"),
    ({"method": "tagged_frames", "mac": "02:00:00:00:00:01",
      "vlans": [{"vlan": 5000, "device": "lo.5000", "address": "10.0.0.1/24"}]},
     "host n0 VLAN 5000: a VLAN ID must be 1-4094"),
])
def test_wrong_arguments_are_refused_naming_the_host(ansible_cli, tmp_path, args, message):
    rc, result, stderr = ansible_cli.adhoc(MODULE, dict({"host": "n0", "parent": "lo", "vlans": VLANS}, **args),
                                           "--check", cwd=tmp_path)
    assert rc != 0
    assert message in result["msg"], result
