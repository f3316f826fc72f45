"""The ethercluster.routing.topology inventory plugin, run through
ansible-inventory (see tests/unit/plugins/conftest.py)."""

import os
import textwrap

import pytest

from ansible_collections.ethercluster.routing.plugins.inventory.topology import InventoryModule
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
DEFAULT_INVENTORY = os.path.join(ROOT, "inventories", "default", "topology.yml")

EXPLICIT = textwrap.dedent("""\
    plugin: ethercluster.routing.topology
    name: rack
    switch_defaults: {platform: ovs, ports: 26}
    switches:
      sw0: {power_profile: pc5324, mgmt_address: 198.51.100.10}
      sw1: {}
      sw2: {platform: dell-os6, mac_table_size: 1024, max_vlans: 64}
    links:
      - {a: "sw0:25", b: "sw1:25", speed_mbps: 1000}
      - {a: "sw1:26", b: "sw2:25"}
      - {a: "sw2:26", b: "sw0:26", state: down}
      - {a: "sw0:24", b: "sw1:24", speed_mbps: 100}
    hosts:
      node00: {switch: sw0, port: "1", mac: "02:00:00:00:00:01", ip: 192.0.2.1}
      node01: {switch: sw1, port: 2, mac: "02-00-00-00-00-02"}
      node02: {switch: sw0, port: "3", mac: "0200.0000.0003"}
    """)


@pytest.fixture
def explicit_file(tmp_path):
    path = tmp_path / "rack.yml"
    path.write_text(EXPLICIT, encoding="utf-8")
    return path


def test_explicit_fabric_groups_and_hostvars(ansible_cli, explicit_file):
    topology = load_topology(str(explicit_file))
    groups, hostvars = ansible_cli.inventory_list(explicit_file)

    assert groups["switches"] == {"sw0", "sw1", "sw2"}
    assert groups["nodes"] == {"node00", "node01", "node02"}
    # platform groups, with characters a group name cannot hold replaced
    assert groups["platform_ovs"] == {"sw0", "sw1"}
    assert groups["platform_dell_os6"] == {"sw2"}

    sw0 = hostvars["sw0"]
    assert sw0["platform"] == "ovs"
    assert sw0["ports"] == 26
    assert sw0["power_profile"] == "pc5324"
    assert sw0["mgmt_address"] == sw0["ansible_host"] == "198.51.100.10"
    assert sw0["hosts_attached"] == ["node00", "node02"]
    assert sw0["neighbours"] == topology.neighbours("sw0")
    assert {n["port"]: n["state"] for n in sw0["neighbours"]} == {"25": "up", "26": "down", "24": "up"}
    assert "coords" not in sw0 and "level" not in sw0

    sw2 = hostvars["sw2"]
    assert (sw2["platform"], sw2["mac_table_size"], sw2["max_vlans"]) == ("dell-os6", 1024, 64)
    assert sw2["power_profile"] is None
    assert "ansible_host" not in sw2 and "mgmt_address" not in sw2
    assert hostvars["sw1"]["hosts_attached"] == ["node01"]

    assert hostvars["node00"]["mac"] == "02:00:00:00:00:01"
    assert hostvars["node00"]["switch"] == "sw0"
    assert hostvars["node00"]["switch_port"] == "1"
    assert hostvars["node00"]["ip"] == hostvars["node00"]["ansible_host"] == "192.0.2.1"
    # MACs come normalised, ports as strings, and no address means no ansible_host
    assert hostvars["node01"]["mac"] == "02:00:00:00:00:02"
    assert hostvars["node01"]["switch_port"] == "2"
    assert "ip" not in hostvars["node01"] and "ansible_host" not in hostvars["node01"]
    assert "port" not in hostvars["node01"]  # reserved Ansible name, not used

    for name in hostvars:
        assert hostvars[name]["ethercluster_topology_file"] == str(explicit_file)


def test_default_inventory_is_the_4x4_torus(ansible_cli):
    topology = load_topology(DEFAULT_INVENTORY)
    assert topology.shape == {"kind": "torus", "dims": (4, 4)}
    groups, hostvars = ansible_cli.inventory_list(DEFAULT_INVENTORY)

    assert groups["switches"] == set(topology.switches) and len(topology.switches) == 16
    assert groups["nodes"] == set(topology.hosts) and len(topology.hosts) == 16
    assert groups["platform_ovs"] == set(topology.switches)
    for name, switch in topology.switches.items():
        assert hostvars[name]["coords"] == list(switch.coords)
        assert len(hostvars[name]["neighbours"]) == 4  # a torus switch has four neighbours
        assert hostvars[name]["ethercluster_topology_file"] == DEFAULT_INVENTORY
    for name, host in topology.hosts.items():
        assert hostvars[name]["switch"] == host.switch
        assert hostvars[name]["switch_port"] == host.port


def test_graph_and_fat_tree_levels(ansible_cli, tmp_path):
    path = tmp_path / "tree.yaml"
    path.write_text("plugin: ethercluster.routing.topology\n"
                    "generate: {kind: fat_tree, u: 2, d: 2, r: 2, hosts_per_switch: 1}\n",
                    encoding="utf-8")
    expected = topology_from_data({"generate": {"kind": "fat_tree", "u": 2, "d": 2, "r": 2,
                                                "hosts_per_switch": 1}})
    proc = ansible_cli.run("ansible-inventory", "-i", path, "--graph", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "@switches:" in proc.stdout and "@nodes:" in proc.stdout
    for name in list(expected.switches) + list(expected.hosts):
        assert "--%s\n" % name in proc.stdout

    _groups, hostvars = ansible_cli.inventory_list(path)
    levels = {name: hostvars[name]["level"] for name in expected.switches}
    assert levels == {name: sw.level for name, sw in expected.switches.items()}
    assert 0 in levels.values() and max(levels.values()) > 0


def test_constructed_options(ansible_cli, tmp_path):
    path = tmp_path / "constructed.yml"
    path.write_text(EXPLICIT + textwrap.dedent("""\
        compose:
          fabric_role: "'edge' if hosts_attached else 'core'"
        groups:
          managed: ansible_host is defined
        keyed_groups:
          - key: switch
            prefix: cabled
        """), encoding="utf-8")
    groups, hostvars = ansible_cli.inventory_list(path)
    assert hostvars["sw0"]["fabric_role"] == "edge"
    assert hostvars["sw2"]["fabric_role"] == "core"
    assert groups["managed"] == {"sw0", "node00"}
    assert groups["cabled_sw0"] == {"node00", "node02"}
    assert groups["cabled_sw1"] == {"node01"}


def test_invalid_topology_fails_naming_file_entry_and_field(ansible_cli, tmp_path):
    path = tmp_path / "broken.yml"
    path.write_text(EXPLICIT.replace('b: "sw2:25"', 'b: "sw9:25"'), encoding="utf-8")
    proc = ansible_cli.run("ansible-inventory", "-i", path, "--list", cwd=tmp_path)
    assert proc.returncode != 0  # ansible.cfg: any_unparsed_is_failed
    assert "%s: links[1].b: unknown switch 'sw9'" % path in proc.stderr


def test_node_named_like_a_switch_is_refused(ansible_cli, tmp_path):
    path = tmp_path / "clash.yml"
    path.write_text(EXPLICIT.replace("node02:", "sw1:"), encoding="utf-8")
    proc = ansible_cli.run("ansible-inventory", "-i", path, "--list", cwd=tmp_path)
    assert proc.returncode != 0
    assert "hosts.sw1: 'sw1' is already a switch's name" in proc.stderr


@pytest.mark.parametrize("name, text, accepted", [
    ("a.yml", "plugin: ethercluster.routing.topology\ngenerate: {kind: mesh}\n", True),
    ("a.yaml", "# lab\nplugin: 'ethercluster.routing.topology'  # the fabric\n", True),
    ("a.yml", "{plugin: ethercluster.routing.topology, generate: {kind: mesh}}\n", True),
    ("a.yml", "plugin: ansible.builtin.constructed\n", False),
    ("a.yml", "all:\n  hosts:\n    sw0:\n", False),
    ("a.json", "plugin: ethercluster.routing.topology\n", False),
    ("a.yml", "plugin: ethercluster.routing.topology_other\n", False),
])
def test_verify_file(tmp_path, name, text, accepted):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert InventoryModule().verify_file(str(path)) is accepted


def test_verify_file_missing(tmp_path):
    assert InventoryModule().verify_file(str(tmp_path / "nope.yml")) is False
