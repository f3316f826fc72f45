"""ethercluster.routing.topology_info (action plugin + module stub), run
through ``ansible localhost -m ...`` and ``ansible-playbook``."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

MODULE = "ethercluster.routing.topology_info"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
PLAYBOOK = os.path.join(ROOT, "playbooks", "show_topology.yml")
DEFAULT_TOPOLOGY = os.path.join(ROOT, "inventories", "default", "topology.yml")

RING = textwrap.dedent("""\
    name: ring
    switches: {sw0: {}, sw1: {}, sw2: {mgmt_address: 198.51.100.2}}
    links:
      - {a: "sw0:2", b: "sw1:2"}
      - {a: "sw1:3", b: "sw2:2"}
      - {a: "sw2:3", b: "sw0:3", state: down}
    hosts:
      n0: {switch: sw0, port: 1, mac: "02:00:00:00:00:0a"}
      n1: {switch: sw1, port: 1, mac: "02:00:00:00:00:0b", ip: 192.0.2.11}
    """)


def test_src_file_returns_explicit_form_and_summary(ansible_cli, tmp_path):
    path = tmp_path / "ring.yml"
    path.write_text(RING, encoding="utf-8")
    expected = load_topology(str(path))

    rc, result, stderr = ansible_cli.adhoc(MODULE, {"src": str(path)}, cwd=tmp_path)

    assert rc == 0, stderr
    assert result["changed"] is False
    assert result["src"] == str(path)
    assert result["summary"] == {"name": "ring", "switches": 3, "links": 3, "links_down": 1,
                                 "channels": 6, "hosts": 2, "shape": None}
    assert result["topology"] == expected.to_data()
    # the explicit form reads back into the same fabric
    again = topology_from_data(result["topology"])
    assert again.to_data() == expected.to_data()


def test_relative_src_and_check_mode(ansible_cli, tmp_path):
    (tmp_path / "fabrics").mkdir()
    (tmp_path / "fabrics" / "ring.yml").write_text(RING, encoding="utf-8")

    rc, result, stderr = ansible_cli.adhoc(MODULE, {"src": "fabrics/ring.yml"}, "--check",
                                           cwd=tmp_path)

    assert rc == 0, stderr
    assert result["changed"] is False
    assert result["src"] == str(tmp_path / "fabrics" / "ring.yml")
    assert result["summary"]["switches"] == 3


def test_topology_data_generated_form(ansible_cli, tmp_path):
    spec = {"name": "lab", "generate": {"kind": "torus", "dims": [3, 4], "links_per_neighbor": 2,
                                        "hosts_per_switch": 2}}
    expected = topology_from_data(spec)

    rc, result, stderr = ansible_cli.adhoc(MODULE, {"topology": spec}, cwd=tmp_path)

    assert rc == 0, stderr
    assert "src" not in result
    assert result["topology"] == expected.to_data()
    assert result["summary"] == json.loads(json.dumps(expected.summary()))
    assert result["summary"]["shape"] == {"kind": "torus", "dims": [3, 4]}
    assert result["summary"]["hosts"] == 24


def test_invalid_topology_fails_with_every_problem(ansible_cli, tmp_path):
    data = {"switches": {"sw0": {}, "sw1": {"max_vlans": 5000}},
            "links": [{"a": "sw0:1", "b": "sw7:1"}]}

    rc, result, _stderr = ansible_cli.adhoc(MODULE, {"topology": data}, cwd=tmp_path)

    assert rc != 0
    assert result["changed"] is False
    assert "switches.sw1.max_vlans" in result["msg"]
    assert "links[0].b: unknown switch 'sw7'" in result["msg"]
    assert len(result["problems"]) >= 2
    assert "topology" not in result


def test_invalid_file_names_the_file(ansible_cli, tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text("switches: {sw0: {}}\nlinks: [{a: 'sw0:1'}]\n", encoding="utf-8")

    rc, result, _stderr = ansible_cli.adhoc(MODULE, {"src": str(path)}, cwd=tmp_path)

    assert rc != 0
    assert result["msg"].startswith("%s: " % path)
    assert "links[0]: needs both ends" in result["msg"]


def test_argument_errors(ansible_cli, tmp_path):
    rc, missing, _stderr = ansible_cli.adhoc(MODULE, {"src": "nowhere.yml"}, cwd=tmp_path)
    assert rc != 0 and "src: topology file 'nowhere.yml' not found" in missing["msg"]

    rc, both, _stderr = ansible_cli.adhoc(MODULE, {"src": "a.yml", "topology": {}}, cwd=tmp_path)
    assert rc != 0 and "mutually exclusive" in both["msg"]

    rc, neither, _stderr = ansible_cli.adhoc(MODULE, {}, cwd=tmp_path)
    assert rc != 0 and "one of the following is required: src, topology" in neither["msg"]

    rc, unknown, _stderr = ansible_cli.adhoc(MODULE, {"source": "a.yml"}, cwd=tmp_path)
    assert rc != 0 and "source" in unknown["msg"]


@pytest.mark.parametrize("name, module_args", [
    ("topology_info", {"src": "x.yml"}),
    ("fabric_state", {"topology": "x.yml", "timeout": 5}),
    ("ovs_switch", {"state": "gathered", "host_key_checking": False}),
])
def test_module_without_action_plugin_fails_clearly(tmp_path, name, module_args):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": module_args}), encoding="utf-8")
    module = os.path.join(ROOT, "plugins", "modules", "%s.py" % name)
    # the module's own imports resolve as in a module payload: the collection on the path
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, ".build"))
    proc = subprocess.run([sys.executable, module, str(args)], capture_output=True, text=True,
                          timeout=60, check=False, env=env)
    result = json.loads(proc.stdout)
    assert proc.returncode != 0
    assert result["failed"] is True
    assert "ethercluster.routing.%s runs on the controller through its action plugin" % name in result["msg"]
    assert "plugins/action/%s.py was not found" % name in result["msg"]


def test_show_topology_playbook(ansible_cli, tmp_path):
    expected = load_topology(DEFAULT_TOPOLOGY).summary()
    proc = ansible_cli.run("ansible-playbook", PLAYBOOK, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = "%d switches, %d links (0 down), %d channels, %d hosts, shape torus 4x4" % (
        expected["switches"], expected["links"], expected["channels"], expected["hosts"])
    assert line in proc.stdout
    assert "fabric default (%s)" % DEFAULT_TOPOLOGY in proc.stdout

    ring = tmp_path / "ring.yml"
    ring.write_text(RING, encoding="utf-8")
    proc = ansible_cli.run("ansible-playbook", PLAYBOOK, "-e", "topology=ring.yml", "--check",
                           cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 switches, 3 links (1 down), 6 channels, 2 hosts, shape irregular" in proc.stdout

    ring.write_text(RING.replace("sw2:3", "sw5:3"), encoding="utf-8")
    proc = ansible_cli.run("ansible-playbook", PLAYBOOK, "-e", "topology=%s" % ring, cwd=tmp_path)
    assert proc.returncode != 0
    assert "links[2].a: unknown switch 'sw5'" in proc.stdout + proc.stderr
