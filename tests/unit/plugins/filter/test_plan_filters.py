"""The vlan_assignment and static_mac_table filters: called directly
(FilterModule) and through Ansible's Jinja (a playbook run), documented
for ansible-doc, and consistent with the intent of the plan module."""

import json
import os
import subprocess
import textwrap

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ethercluster.routing.plugins.filter.plan import FilterModule
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import run_plan
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    topology_from_data,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
DEFAULT_TOPOLOGY = os.path.join(ROOT, "inventories", "default", "topology.yml")
FILTERS = FilterModule().filters()
MESH = {"generate": {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 2}}
FAT_TREE = {"generate": {"kind": "fat_tree", "u": 2, "d": 4, "r": 2}}


def entry_key(entry):
    return (entry["mac"], entry["vlan"], entry["port"])


def test_filter_module_exports_both_filters():
    assert {"vlan_assignment", "static_mac_table"} <= set(FILTERS)


@pytest.mark.parametrize("data, engine, assignment", [
    (MESH, "dor", "fixed"),
    (MESH, "segment", "renamed"),
    (FAT_TREE, "updown", "renamed"),
])
def test_filters_agree_with_the_plan_intent(data, engine, assignment):
    """The filters give exactly the VLANs, port memberships and static
    entries the plan module puts in the intent, for the same options."""
    vlans = FILTERS["vlan_assignment"](data, engine, assignment)
    macs = FILTERS["static_mac_table"](data, engine, assignment)
    outcome = run_plan(data, routing=engine, assignment=assignment,
                       broadcast="bounded" if assignment == "renamed" else "contained")
    assert outcome.accepted, outcome.error
    intent = outcome.plan.intent
    json.dumps(vlans), json.dumps(macs)  # plain data
    assert set(vlans) == set(macs) == set(intent["switches"])
    for name, entry in intent["switches"].items():
        assert vlans[name]["vlans"] == entry["vlans"]
        assert set(vlans[name]["ports"]) == set(entry["ports"])
        for port, member in vlans[name]["ports"].items():
            planned = entry["ports"][port]
            assert (member["pvid"], sorted(member["untagged"]), sorted(member["tagged"])) == (
                planned["pvid"], sorted(planned["untagged"]), sorted(planned["tagged"]))
        assert sorted(macs[name], key=entry_key) == sorted(entry["static_macs"], key=entry_key)


def test_assignment_covers_every_used_port_and_host():
    topology = topology_from_data(MESH)
    vlans = FILTERS["vlan_assignment"](MESH, "dor", "renamed")
    macs = FILTERS["static_mac_table"](MESH, "dor", "renamed")
    for name in topology.switches:
        assert set(vlans[name]["ports"]) == set(topology.used_ports(name))
        for port in vlans[name]["ports"].values():
            assert port["pvid"] in vlans[name]["vlans"]
    # §3.3: every host is registered on its own switch, on its own port
    for host in topology.hosts.values():
        own = [entry for entry in macs[host.switch] if entry["mac"] == host.mac]
        assert own and {entry["port"] for entry in own} == {host.port}


def test_path_and_data_give_the_same_result():
    from_path = FILTERS["static_mac_table"](DEFAULT_TOPOLOGY, "stp", "fixed")
    data = load_topology(DEFAULT_TOPOLOGY).to_data()
    assert FILTERS["static_mac_table"](data, "stp", "fixed") == from_path


def test_bank_b_is_disjoint_from_bank_a():
    a = FILTERS["vlan_assignment"](MESH, "dor", "fixed", bank="A")
    b = FILTERS["vlan_assignment"](MESH, "dor", "fixed", bank="B")
    ids_a = {vlan for entry in a.values() for vlan in entry["vlans"]}
    ids_b = {vlan for entry in b.values() for vlan in entry["vlans"]}
    assert ids_a and ids_b and not ids_a & ids_b


@pytest.mark.parametrize("args, kwargs, words", [
    (({"switches": {"sw0": {}, "sw1": {}}, "links": [{"a": "sw0:1", "b": "sw9:1"}]},), {},
     ["vlan_assignment", "links[0].b", "sw9"]),
    ((MESH, "fastest"), {}, ["vlan_assignment", "fastest", "segment"]),
    ((MESH, "dor", "sometimes"), {}, ["vlan_assignment", "assignment", "sometimes"]),
    ((MESH, "dor"), {"down_links": ["sw42:1"]}, ["vlan_assignment", "sw42"]),
    ((42,), {}, ["vlan_assignment", "int"]),
    # up*/down* paths from a fat-tree leaf are no tree: fixed VLANs cannot carry them
    ((FAT_TREE, "updown", "fixed"), {}, ["vlan_assignment", "sw0", "tree"]),
])
def test_bad_input_is_a_filter_error_naming_it(args, kwargs, words):
    with pytest.raises(AnsibleFilterError) as info:
        FILTERS["vlan_assignment"](*args, **kwargs)
    for word in words:
        assert word in str(info.value)
    with pytest.raises(AnsibleFilterError, match="static_mac_table"):
        FILTERS["static_mac_table"](*args, **kwargs)


def test_filters_through_ansible_and_their_docs(ansible_cli, tmp_path):
    playbook = tmp_path / "filters.yml"
    playbook.write_text(textwrap.dedent("""\
        - name: Use the plan filters
          hosts: localhost
          gather_facts: false
          vars:
            fabric: {generate: {kind: mesh, dims: [2, 2]}}
          tasks:
            - name: Both filters
              ansible.builtin.debug:
                msg:
                  vlans: "{{ fabric | ethercluster.routing.vlan_assignment('dor', 'fixed') }}"
                  macs: "{{ fabric | ethercluster.routing.static_mac_table('dor', 'fixed') }}"
        """))
    env = ansible_cli.env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), str(playbook)], cwd=str(tmp_path),
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    msg = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"]
    data = {"generate": {"kind": "mesh", "dims": [2, 2]}}
    assert msg["vlans"] == FILTERS["vlan_assignment"](data, "dor", "fixed")
    assert msg["macs"] == FILTERS["static_mac_table"](data, "dor", "fixed")

    names = ["ethercluster.routing." + name for name in ("vlan_assignment", "static_mac_table")]
    proc = ansible_cli.run("ansible-doc", "-t", "filter", "--json", *names, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    docs = json.loads(proc.stdout)
    for name in names:
        doc = docs[name]
        assert "ethercluster.routing." + doc["doc"]["name"] == name
        assert {"_input", "engine", "assignment", "bank"} <= set(doc["doc"]["options"])
        assert doc["examples"] and doc["return"]["_value"]
