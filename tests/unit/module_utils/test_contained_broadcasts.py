"""Contained broadcasts and ``assignment: auto``: every plan the planner
accepts (broadcast: contained, the default) delivers a broadcast from any
host to every host exactly once, entering every switch once; a renamed
plan gets the fabric's flood tree where the platforms hold it (OVS), auto
falls back to fixed source-tree paths where they do not, and says why."""

import copy
import json
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.assign.flood_tree import flood_tree
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import intent_settings
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import PlanError, plan
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.schema import intent_problems
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import PlatformError
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import render_switch
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import plan_transition
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import run_plan
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric


def topo(platform="ovs", **spec):
    spec = spec if "kind" in spec else dict({"kind": "torus", "dims": [4, 4]}, **spec)
    data = topology_from_data({"generate": spec}).to_data()
    for entry in data["switches"].values():
        entry["platform"] = platform
    return topology_from_data(data)


def copies_per_host(intent):
    """Independently of broadcast_containment, through the simulator's
    trace of each broadcast frame: {sender: {host: copies received}}."""
    fabric = Dot1qFabric(intent)
    result = {}
    for sender in sorted(fabric.hosts):
        trace = fabric.send(sender, "broadcast")
        assert not trace["storm"]
        result[sender] = {host: record["copies"] for host, record in trace["delivered"].items()}
    return result


def test_flood_tree_spans_the_fabric_from_a_central_switch():
    topology = topo(hosts_per_switch=2)
    tree = flood_tree(topology, avoided={0, 5})
    graph = nx.MultiGraph()
    for index in tree["links"]:
        link = topology.links[index]
        graph.add_edge(link.a.switch, link.b.switch, key=index)
    assert nx.is_tree(graph) and graph.number_of_nodes() == 16
    assert not {0, 5} & set(tree["links"])
    whole = topology.switch_graph()
    assert nx.eccentricity(whole, tree["root"]) == min(nx.eccentricity(whole).values())
    for host in topology.hosts.values():
        assert host.port in tree["ports"][host.switch]


@pytest.mark.parametrize("spec, engine", [
    ({"kind": "torus", "dims": [4, 4], "hosts_per_switch": 2}, "segment"),
    ({"kind": "random", "switches": 12, "degree": 3, "seed": 3}, "updown"),
    ({"kind": "fat_tree", "u": 2, "d": 4, "r": 2}, "tbtp"),
])
def test_renamed_on_ovs_floods_along_the_tree_once_per_host(spec, engine):
    result = plan(topo(**spec), engine=engine, assignment="renamed")
    intent = result.intent
    assert intent["fabric"]["broadcast"] == "contained"
    assert intent["fabric"]["broadcast_tree"]["links"]
    assert all("broadcast_ports" in entry for entry in intent["switches"].values())
    delivered = copies_per_host(intent)
    for sender, copies in delivered.items():
        others = set(intent["hosts"]) - {sender}
        assert {host: copies.get(host) for host in others} == {host: 1 for host in others}, sender
    assert intent_problems(intent) == []
    check = {c["name"]: c for c in result.checks}["broadcast_once"]
    assert check["ok"]


def test_without_the_tree_renamed_repeats_and_is_refused_by_name():
    topology = topo(platform="dell_os6")
    with pytest.raises(PlanError) as info:
        plan(topology, engine="segment", assignment="renamed")
    failed = {c["name"]: c for c in info.value.checks if not c["ok"]}
    assert set(failed) == {"broadcast_once"}
    assert "is not contained" in failed["broadcast_once"]["detail"]
    # the same plan with bounded floods is accepted, and its floods do repeat
    bounded = plan(topology, engine="segment", assignment="renamed", broadcast="bounded").intent
    delivered = copies_per_host(bounded)
    assert max(max(copies.values()) for copies in delivered.values()) > 1


def test_auto_keeps_the_engines_paths_on_ovs_and_takes_source_trees_elsewhere():
    on_ovs = plan(topo(), engine="segment")
    choice = on_ovs.intent["fabric"]["assignment_choice"]
    assert (choice["picked"], choice["paths"]) == ("renamed", "per_destination")
    assert "refused before it: fixed with per-destination paths" in choice["why"]

    on_os6 = plan(topo(platform="dell_os6"), engine="segment")
    choice = on_os6.intent["fabric"]["assignment_choice"]
    assert (choice["picked"], choice["paths"]) == ("fixed", "source_tree")
    assert on_os6.intent["fabric"]["engine_options"]["paths"] == "source_tree"
    assert "broadcast_tree" not in on_os6.intent["fabric"]
    for intent in (on_ovs.intent, on_os6.intent):
        delivered = copies_per_host(intent)
        for sender, copies in delivered.items():
            assert all(copies[h] == 1 for h in intent["hosts"] if h != sender)

    # a routing whose paths already form trees keeps them (DOR on a mesh)
    mesh = plan(topo(platform="dell_os6", kind="mesh", dims=[4, 4]), engine="dor")
    choice = mesh.intent["fabric"]["assignment_choice"]
    assert (choice["picked"], choice["paths"]) == ("fixed", "per_destination")


def test_auto_with_source_trees_asked_takes_only_them():
    result = plan(topo(), engine="updown", engine_options={"paths": "source_tree"})
    assert result.intent["fabric"]["assignment_choice"]["paths"] == "source_tree"
    assert result.intent["fabric"]["assignment"] == "fixed"


def test_auto_that_cannot_contain_says_what_each_candidate_failed():
    # 4 hosts on each of 16 Dell switches with 64-entry MAC tables: fixed
    # source trees need 16 VLANs x 64 hosts, renamed cannot hold a flood tree
    topology = topo(platform="dell_os6", hosts_per_switch=4)
    data = topology.to_data()
    for entry in data["switches"].values():
        entry["mac_table_size"] = 64
    with pytest.raises(PlanError) as info:
        plan(topology_from_data(data), engine="segment")
    message = str(info.value)
    assert "fixed with source-tree paths: " in message and "host_limit" in message
    renamed = message.split(" | renamed with per-destination paths: ")[1]
    assert "broadcast_once: one broadcast from a host on" in renamed


def test_settings_read_back_give_what_auto_picked():
    intent = plan(topo(platform="dell_os6"), engine="segment").intent
    intent["fabric"]["settings"] = {"routing": "segment", "assignment": "auto"}
    settings = intent_settings(intent)
    assert settings["assignment"] == "fixed"
    assert settings["engine_options"]["paths"] == "source_tree"


def test_transitions_move_source_tree_fabrics_from_what_was_deployed():
    # they were refused by name; the routings with a link down now keep the turn order of the trees
    topology = topo(platform="ovs")
    options = {"engine": "segment", "assignment": "fixed", "engine_options": {"paths": "source_tree"}}
    transition = plan_transition(topology, "off", "sw5:4", **options)
    assert transition.before["switches"] == plan(topology, **options).intent["switches"]
    assert transition.proof["drain"] is False and transition.proof["order_free"] is True
    assert "sw5:4--sw6:3" in transition.after["fabric"]["down_links"]


def test_ovs_renders_the_tree_as_one_broadcast_flow_per_vlan():
    intent = plan(topo(), engine="segment", assignment="renamed").intent
    name = "sw5"
    entry = intent["switches"][name]
    flows = ovs.render_flows(ovs.normalize_intent(entry, name))
    tree = [f for f in flows if f.priority == ovs.PRIORITY_BROADCAST_TREE]
    assert sorted(dict(f.match)["reg0"] for f in tree) == sorted(entry["vlans"])
    wanted = sorted("output:%s" % port for port in entry["broadcast_ports"])
    for flow in tree:
        assert dict(flow.match)["dl_dst"] == "ff:ff:ff:ff:ff:ff"
        assert sorted(flow.actions) == wanted   # renamed: untagged on every port
    # a port the switch does not use is refused, naming the field
    bad = copy.deepcopy(entry)
    bad["broadcast_ports"].append("99")
    with pytest.raises(ovs.OvsError, match=r"switches\.sw5\.broadcast_ports\[\d+\]: port 99"):
        ovs.normalize_intent(bad, name)


def test_a_platform_without_the_tree_refuses_to_render_it():
    entry = copy.deepcopy(plan(topo(), engine="segment", assignment="renamed").intent["switches"]["sw0"])
    entry["platform"] = "dell_os6"
    with pytest.raises(PlatformError, match="cannot hold broadcast_ports"):
        render_switch("sw0", entry)
    json.dumps(entry)  # still plain data


def test_the_report_and_the_picture_show_the_flood_tree():
    topology = topo()
    result = run_plan(topology.to_data(), routing="segment")
    tree = result.plan.intent["fabric"]["broadcast_tree"]
    report = result.contents["report.md"]
    assert "| VLAN assignment | renamed (picked by auto" in report
    assert ("| broadcasts | contained: along the flood tree from %s over %d links: %s |"
            % (tree["root"], len(tree["links"]), ", ".join(tree["links"]))) in report
    picture = ET.fromstring(result.contents["fabric.svg"])
    overlay = picture.find(".//{http://www.w3.org/2000/svg}g[@id='flood-tree']")
    assert overlay is not None and len(list(overlay)) >= len(tree["links"])
    fixed = run_plan(topo(platform="dell_os6").to_data(), routing="segment")
    assert "| broadcasts | contained: each VLAN floods its own tree |" in fixed.contents["report.md"]
    assert 'id="flood-tree"' not in fixed.contents["fabric.svg"]


def test_a_transition_under_auto_moves_what_auto_deployed():
    ring = topo(kind="torus", dims=[6])
    picked = plan(ring, engine="updown").intent["fabric"]["assignment_choice"]
    transition = plan_transition(ring, "off", 0, engine="updown", assignment="auto")
    assert transition.proof["assignment"] == picked["picked"]
    assert transition.before["switches"] == plan(ring, engine="updown").intent["switches"]
    # auto picking source trees (Dell OS6 cannot hold the flood tree): moved from what auto deployed too
    os6 = topo(platform="dell_os6")
    trees = plan_transition(os6, "off", "sw5:4", engine="segment", assignment="auto")
    assert trees.proof["assignment"] == "fixed"
    assert trees.before["switches"] == plan(os6, engine="segment").intent["switches"]
