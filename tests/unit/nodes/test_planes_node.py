"""One node's spreading mode (module_utils/nodes/planes_node.py and
planes_node_bpf.py, role node_planes): what each mode wants from a real
planes plan, the changes computed against a live state, the eBPF maps'
bytes, and the refusals naming the node, port or field."""

import json
import struct

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import linux_network as ln
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import planes_node as pn
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import planes_node_bpf as pb
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.planes import plan_planes


@pytest.fixture(name="plan")
def fixture_plan():
    return plan_planes({"kind": "planes", "nodes": 3, "ports": 4})


def _view(plan, node="n0"):
    view = pn.node_view(plan, node)
    view["instance"] = node
    return view


def _live_links(view, addresses=None, up=True):
    """ip -j address show output for the node's ports (plan MACs, given addresses)."""
    items = [{"ifindex": 1, "ifname": "lo", "address": "00:00:00:00:00:00", "flags": ["UP"],
              "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]}]
    for index, port in enumerate(view["ports"]):
        info = [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1])}
                for a in (addresses or {}).get(port["name"], [])]
        items.append({"ifindex": 10 + index, "ifname": port["name"], "address": port["mac"],
                      "flags": ["UP"] if up else [], "addr_info": info})
    return pn.live_links(json.dumps(items))


def test_view_takes_primary_ports_and_peers_from_the_planes_plan(plan):
    view = _view(plan, "n1")
    assert view["primary"] == "10.97.0.2/32" and view["primary_dev"] == "e0"
    assert [port["name"] for port in view["ports"]] == ["e0", "e1", "e2", "e3"]
    assert [port["address"] for port in view["ports"]] == ["10.97.%d.2/24" % plane for plane in range(4)]
    assert [peer["name"] for peer in view["peers"]] == ["n0", "n2"]


def test_single_uses_port_0_only(plan):
    want = pn.wanted(_view(plan), "single")
    assert want["addresses"] == {"e0": ["10.97.0.1/24"]}
    assert want["routes"] == {} and want["sysctls"] == {} and want["bpf"] is False


def test_pmcme_keeps_every_port_address_and_loosens_reverse_path_filtering(plan):
    want = pn.wanted(_view(plan), "pmcme")
    assert want["addresses"] == {"e%d" % p: ["10.97.%d.1/24" % p] for p in range(4)}
    assert want["routes"] == {}  # the peers' primaries are in port 0's connected subnet
    assert want["sysctls"]["net.ipv4.conf.e3.rp_filter"] == "2"
    assert want["sysctls"]["net.ipv4.conf.e1.arp_ignore"] == "1"
    assert pn.HASH_POLICY not in want["sysctls"] and want["bpf"] is True


def test_l4_multipath_moves_the_primary_to_lo_and_routes_over_every_plane(plan):
    want = pn.wanted(_view(plan), "l4_multipath")
    assert want["addresses"]["lo"] == ["10.97.0.1/32"] and want["addresses"]["e0"] == []
    route = want["routes"]["10.97.0.2/32"]
    assert route["src"] == "10.97.0.1"
    assert route["nexthops"] == [{"via": "10.97.0.2", "dev": "e0", "onlink": True},
                                 {"via": "10.97.1.2", "dev": "e1"}, {"via": "10.97.2.2", "dev": "e2"},
                                 {"via": "10.97.3.2", "dev": "e3"}]
    assert want["sysctls"][pn.HASH_POLICY] == "1"
    assert "net.ipv4.conf.e0.arp_ignore" not in want["sysctls"]  # e0 answers ARP for the primary on lo
    argv = ln.route_argv("replace", "10.97.0.2/32", route["nexthops"], pn.ROUTE_PROTOCOL, route["src"])
    assert argv[:8] == ["ip", "route", "replace", "10.97.0.2/32", "proto", "234", "src", "10.97.0.1"]
    assert argv[8:14] == ["nexthop", "via", "10.97.0.2", "dev", "e0", "onlink"]


def test_a_primary_outside_the_ports_lives_on_lo_with_a_route_through_port_0(plan):
    for index, name in enumerate(sorted(plan["nodes"])):
        plan["node_planes"][name]["primary"]["address"] = "10.96.0.%d" % (index + 1)
    want = pn.wanted(_view(plan), "single")
    assert want["addresses"] == {"lo": ["10.96.0.1/32"], "e0": ["10.97.0.1/24"]}
    assert want["routes"]["10.96.0.2/32"] == {"src": "10.96.0.1", "nexthops": [{"via": "10.97.0.2", "dev": "e0"}]}


def test_changes_from_a_bare_node_then_nothing_once_applied(plan):
    view = _view(plan)
    want = pn.wanted(view, "l4_multipath")
    links = _live_links(view, up=False)
    found = pn.link_changes(want, view, links) + pn.address_changes(want["addresses"], pn.planned_addresses(view), links)
    assert ["ip", "link", "set", "dev", "e2", "up"] in [item["argv"] for item in found]
    assert ["ip", "address", "add", "10.97.0.1/32", "dev", "lo", "scope", "host"] in [item["argv"] for item in found]
    applied = _live_links(view, {dev: list(items) for dev, items in want["addresses"].items()})
    applied["lo"]["addresses"].append("10.97.0.1/32")
    assert pn.address_changes(want["addresses"], pn.planned_addresses(view), applied) == []
    live_routes = pn.live_routes(_kernel_routes(want["routes"]))
    assert pn.route_changes(want["routes"], live_routes) == []
    assert [item["after"] for item in pn.route_changes({}, live_routes)] == ["", ""]


def test_a_mode_change_removes_what_the_old_mode_added(plan):
    view = _view(plan)
    old = pn.wanted(view, "l4_multipath")
    links = _live_links(view, old["addresses"])
    links["lo"]["addresses"].append("10.97.0.1/32")
    new = pn.wanted(view, "pmcme")
    argvs = [item["argv"] for item in pn.address_changes(new["addresses"], pn.planned_addresses(view), links)]
    assert argvs == [["ip", "address", "add", "10.97.0.1/24", "dev", "e0"], ["ip", "address", "del", "10.97.0.1/32", "dev", "lo"]]


def test_sysctls_are_saved_once_and_put_back():
    want = {"net.ipv4.conf.e1.rp_filter": "2", pn.HASH_POLICY: "1"}
    live = {"net.ipv4.conf.e1.rp_filter": "1", pn.HASH_POLICY: "0"}
    saved = pn.saved_sysctls(want, live, {})
    assert saved == {"net.ipv4.conf.e1.rp_filter": "1", pn.HASH_POLICY: "0"}
    assert [item["argv"][-1] for item in pn.sysctl_changes(want, live, saved)] == ["net.ipv4.conf.e1.rp_filter=2",
                                                                                   pn.HASH_POLICY + "=1"]
    # a later run sees its own values: nothing to do, the originals stay saved
    now = {"net.ipv4.conf.e1.rp_filter": "2", pn.HASH_POLICY: "1"}
    assert pn.sysctl_changes(want, now, saved) == [] and pn.saved_sysctls(want, now, saved) == saved
    # absent (nothing wanted) puts the originals back
    restored = [item["argv"][-1] for item in pn.sysctl_changes({}, now, saved)]
    assert restored == ["net.ipv4.conf.e1.rp_filter=1", pn.HASH_POLICY + "=0"]


def test_map_entries_hold_the_config_the_ports_and_table_2(plan):
    view = _view(plan)
    links = _live_links(view)
    entries = pb.map_entries(view, links, 7000, 100)
    (config,) = entries["pmc_config"].values()
    assert struct.unpack("<IIII", bytes.fromhex(config.replace(" ", ""))) == (4, 7000, 100, 0)
    port3 = entries["pmc_ports"]["03 00 00 00"]
    ifindex, mac, _pad = struct.unpack("<I6sH", bytes.fromhex(port3.replace(" ", "")))
    assert ifindex == 13 and mac.hex(":") == view["ports"][3]["mac"]
    # Table 2: (destination master MAC, port X) -> destination's port X MAC, for every peer and X > 0
    table = {}
    for key, value in entries["pmc_mac_table"].items():
        master, port = struct.unpack("<6sH", bytes.fromhex(key.replace(" ", "")))
        table[(master.hex(":"), port)] = bytes.fromhex(value.replace(" ", ""))[:6].hex(":")
    expected = {(row["destination_node"], row["destination_port"]): row["new_mac"] for row in plan["mac_table"]
                if row["node"] != "n0" and row["destination_port"] > 0}
    assert table == expected


def test_bpf_present_from_nothing_then_nothing_when_everything_matches(plan):
    view = _view(plan)
    entries = pb.map_entries(view, _live_links(view), 7000, 100)
    bare = {"mounted": False, "pinned": False, "prog_ids": {pb.EGRESS: None, pb.INGRESS: None}, "attached": {},
            "clsact": set(), "maps": {}, "built_sha": None, "source_sha": "abc", "source_changed": True}
    argvs = [item["argv"] for item in pb.present_changes(view, bare, entries, "/w/n0.o", ["clang"])]
    assert argvs[0] == ["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"] and ["clang"] in argvs
    assert ["tc", "qdisc", "add", "dev", "e3", "clsact"] in argvs
    attach = [argv for argv in argvs if argv[:3] == ["tc", "filter", "replace"]]
    assert [(argv[4], argv[5]) for argv in attach] == [("e0", "egress")] + [("e%d" % p, "ingress") for p in range(4)]
    loaded = {"mounted": True, "pinned": True, "prog_ids": {pb.EGRESS: 7, pb.INGRESS: 8},
              "attached": {"e0 egress": 7, "e0 ingress": 8, "e1 ingress": 8, "e2 ingress": 8, "e3 ingress": 8},
              "clsact": {"e0", "e1", "e2", "e3"}, "maps": entries, "built_sha": "abc", "source_sha": "abc",
              "source_changed": False}
    assert pb.present_changes(view, loaded, entries, "/w/n0.o", ["clang"]) == []
    stale = dict(loaded, maps=dict(entries, pmc_mac_table=dict(entries["pmc_mac_table"], **{"aa bb": "cc"})))
    assert [item["argv"][2] for item in pb.present_changes(view, stale, entries, "/w/n0.o", ["clang"])] == ["delete"]
    gone = pb.absent_changes(view, loaded, ["e0", "e1", "e2", "e3"])
    assert [item["argv"][:3] for item in gone].count(["tc", "filter", "del"]) == 5
    assert gone[-1]["argv"] == ["rm", "-rf", "/sys/fs/bpf/ethercluster_planes/n0"]


def test_tc_and_bpftool_output_is_read():
    text = json.dumps([{"pref": 49, "kind": "bpf"}, {"pref": 49, "kind": "bpf", "options": {"prog": {"id": 107}}}])
    assert pb.parse_filter(text) == 107 and pb.parse_filter("[]") is None
    assert pb.has_clsact(json.dumps([{"kind": "noqueue"}, {"kind": "clsact"}]))
    dump = json.dumps([{"key": ["0x00", "0x01"], "value": ["0xff"], "formatted": {}}])
    assert pb.parse_map_dump(dump) == {"00 01": "ff"}


@pytest.mark.parametrize("mutate, message", [
    (lambda plan: plan["nodes"]["n1"]["interfaces"].pop(), "node n1 has 3 ports, node n0 has 4"),
    (lambda plan: plan["nodes"]["n0"]["interfaces"][2].update(address="10.97.2.1"), "interfaces[2].address"),
    (lambda plan: plan["nodes"]["n0"]["interfaces"][1].update(mac="nope"), "nodes.n0.interfaces[1].mac"),
    (lambda plan: plan["node_planes"].pop("n0"), "primary address is missing"),
])
def test_bad_plans_are_refused_naming_the_field(plan, mutate, message):
    mutate(plan)
    with pytest.raises(pn.PlanesNodeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        pn.node_view(plan, "n0")


def test_refusals_name_node_and_port(plan):
    view = _view(plan)
    links = _live_links(view)
    del links["e2"]
    with pytest.raises(pn.PlanesNodeError, match="node n0: port e2 of the plan is not an interface"):
        pn.link_changes(pn.wanted(view, "pmcme"), view, links)
    with pytest.raises(pn.PlanesNodeError, match="per_port 101"):
        pb.map_entries(view, _live_links(view), 7000, 101)
    with pytest.raises(pn.PlanesNodeError, match="mode 'lacp'"):
        pn.wanted(view, "lacp")
    with pytest.raises(pn.PlanesNodeError, match="node n0 is not in nodes"):
        pn.node_view({"nodes": {}}, "n0")


def _kernel_routes(routes):
    """ip -j route show proto 234 output holding ``routes`` (destination -> {src, nexthops})."""
    return json.dumps([{"dst": dst.split("/")[0], "protocol": "234", "prefsrc": route["src"], "flags": [],
                        "nexthops": [{"gateway": hop["via"], "dev": hop["dev"], "flags": ["onlink"] if hop.get("onlink") else []}
                                     for hop in route["nexthops"]]} for dst, route in routes.items()])


def test_routes_keep_the_planes_order_past_ten_ports():
    # node_network sorts next hops by device name (e10 before e2); node_planes keeps the kernel's order,
    # the order it gave them in, so an applied route of 11 planes needs no change
    view = _view(plan_planes({"kind": "planes", "nodes": 2, "ports": 11}))
    want = pn.wanted(view, "l4_multipath")
    live = pn.live_routes(_kernel_routes(want["routes"]))
    assert [hop["dev"] for hop in live["10.97.0.2/32"]["nexthops"]] == ["e%d" % port for port in range(11)]
    assert pn.route_changes(want["routes"], live) == []


def test_route_changes_and_diff_text(plan):
    view = _view(plan)
    want = pn.wanted(view, "l4_multipath")
    # a default route of our protocol (none of ours) is read as 0.0.0.0/0 and deleted
    live = pn.live_routes(json.dumps([{"dst": "default", "gateway": "10.97.1.9", "dev": "e1", "protocol": "234"}]))
    found = pn.route_changes(want["routes"], live)
    assert [item["argv"] for item in found][-1] == ["ip", "route", "del", "0.0.0.0/0", "proto", "234"]
    assert found[0]["after"] == ("10.97.0.2/32 src 10.97.0.1 via 10.97.0.2 dev e0 onlink via 10.97.1.2 dev e1 "
                                 "via 10.97.2.2 dev e2 via 10.97.3.2 dev e3")
    text = pn.diff("n0", found)
    assert text["before"] == "route 0.0.0.0/0: 0.0.0.0/0 via 10.97.1.9 dev e1\n"
    assert text["after"].splitlines()[0] == "route 10.97.0.2/32: " + found[0]["after"]
    assert (text["before_header"], text["after_header"]) == ("node n0 (live)", "node n0 (plan)")


@pytest.mark.parametrize("text", ["{}", "null"])
def test_output_that_is_not_a_json_list_is_refused(text):
    with pytest.raises(EtherclusterError, match="cannot read `ip -j address show`: a JSON list was expected"):
        pn.live_links(text)
    with pytest.raises(EtherclusterError, match="cannot read `ip -j route show`: a JSON list was expected"):
        pn.live_routes(text)
