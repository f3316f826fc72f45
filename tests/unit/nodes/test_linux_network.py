"""nodes/linux_network.py: a node's entry of the host-routed plan and its
live state (canned `ip -j` / sysctl output) in, the commands that make them
match out; idempotence (the state after the commands needs none); absent;
the schema; the path a packet takes through the plan's routes."""

from __future__ import annotations

import copy
import json
import os

import jsonschema
import pytest
from stack_fixture import mesh, ring

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes import linux_network as ln
from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.linux_network import NodeNetworkError

SCHEMA = os.path.join(os.path.dirname(ln.__file__), "schemas", "node_network.v1.schema.json")

ENTRY = {
    "interfaces": [
        {"name": "e0", "switch": "ssb0", "address": "10.10.0.2/24", "mac": "02:00:0A:0A:00:02"},
        {"name": "e1", "switch": "ssb1", "address": "10.20.1.2/24"},
    ],
    "routes": [
        {"to": "10.10.2.0/24", "via": "10.10.0.3", "dev": "e0"},
        {"to": "10.30.0.0/16", "nexthops": [{"via": "10.20.1.1", "dev": "e1"}, {"via": "10.10.0.1", "dev": "e0"}]},
    ],
    "forwarding": True,
    "rp_filter": 2,
    "sysctls": {"net.ipv4.fib_multipath_hash_policy": 1},
}


def link(name, mac, up, addresses):
    return {"ifname": name, "flags": ["BROADCAST", "UP"] if up else ["BROADCAST"], "address": mac,
            "addr_info": [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
                           "scope": "global"} for a in addresses]
            + [{"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"}]}


class FakeNode:
    """A Linux node's network state that the planned commands act on, so a
    second planning round sees what the first one did."""

    def __init__(self):
        self.links = {"lo": link("lo", "00:00:00:00:00:00", True, ["127.0.0.1/8"]),
                      "e0": link("e0", "aa:bb:cc:00:00:01", False, ["192.0.2.9/24"]),
                      "e1": link("e1", "aa:bb:cc:00:00:02", True, [])}
        self.routes = [{"dst": "192.0.2.0/24", "dev": "e0", "protocol": "kernel", "scope": "link"},
                       {"dst": "10.99.0.0/16", "gateway": "192.0.2.1", "dev": "e0", "protocol": "233"},
                       {"dst": "default", "gateway": "192.0.2.1", "dev": "e0", "protocol": "static"}]
        self.sysctls = {"net.ipv4.ip_forward": "0", "net.ipv4.conf.all.rp_filter": "1",
                        "net.ipv4.conf.e0.rp_filter": "1", "net.ipv4.conf.e1.rp_filter": "0",
                        "net.ipv4.fib_multipath_hash_policy": "0"}

    def ip_addr(self):
        return json.dumps(list(self.links.values()))

    def ip_route(self):
        return json.dumps(self.routes)

    def sysctl(self):
        return "".join("%s = %s\n" % item for item in self.sysctls.items())

    def run(self, argv):
        if argv[:2] == ["ip", "link"]:
            dev = self.links[argv[4]]
            if argv[5] == "up":
                dev["flags"].append("UP")
            else:
                dev["address"] = argv[6]
        elif argv[:2] == ["ip", "address"]:
            info = self.links[argv[5]]["addr_info"]
            local, prefixlen = argv[3].split("/")
            entry = {"family": "inet", "local": local, "prefixlen": int(prefixlen), "scope": "global"}
            if argv[2] == "add":
                info.append(entry)
            else:
                info.remove(entry)
        elif argv[:3] == ["ip", "route", "replace"]:
            self.routes = [r for r in self.routes if r["dst"] != argv[3]]
            route = {"dst": argv[3], "protocol": argv[5]}
            if argv[6] == "via":
                route.update(gateway=argv[7], dev=argv[9])
            else:
                hops = argv[6:]
                route["nexthops"] = [{"gateway": hops[n + 2], "dev": hops[n + 4]} for n in range(0, len(hops), 5)]
            self.routes.append(route)
        elif argv[:3] == ["ip", "route", "del"]:
            self.routes = [r for r in self.routes if not (r["dst"] == argv[3] and r["protocol"] == argv[5])]
        elif argv[0] == "sysctl":
            key, value = argv[3].split("=")
            self.sysctls[key] = value
        else:
            raise AssertionError(argv)

    def changes(self, node, state="present", saved=None):
        return ln.changes(node, ln.parse_links(self.ip_addr()), ln.parse_routes(self.ip_route()),
                          ln.parse_sysctl(self.sysctl()), state, saved)


def test_first_run_converges_and_second_changes_nothing():
    node = ln.check_node("n1", ENTRY)
    fake = FakeNode()
    found = fake.changes(node)
    argvs = [" ".join(change["argv"]) for change in found]
    assert argvs == [
        "ip link set dev e0 address 02:00:0a:0a:00:02",
        "ip link set dev e0 up",
        "ip address del 192.0.2.9/24 dev e0",
        "ip address add 10.10.0.2/24 dev e0",
        "ip address add 10.20.1.2/24 dev e1",
        "sysctl -q -w net.ipv4.ip_forward=1",
        "sysctl -q -w net.ipv4.conf.all.rp_filter=2",
        "sysctl -q -w net.ipv4.conf.e0.rp_filter=2",
        "sysctl -q -w net.ipv4.conf.e1.rp_filter=2",
        "sysctl -q -w net.ipv4.fib_multipath_hash_policy=1",
        "ip route replace 10.10.2.0/24 proto 233 via 10.10.0.3 dev e0",
        "ip route replace 10.30.0.0/16 proto 233 nexthop via 10.10.0.1 dev e0 nexthop via 10.20.1.1 dev e1",
        "ip route del 10.99.0.0/16 proto 233",
    ]
    for change in found:
        fake.run(change["argv"])
    assert fake.changes(node) == []
    # the default route of another protocol is left alone
    assert any(r["dst"] == "default" for r in fake.routes)


def test_a_route_of_another_protocol_to_a_planned_destination_is_replaced():
    node = ln.check_node("n1", ENTRY)
    fake = FakeNode()
    fake.routes.append({"dst": "10.10.2.0/24", "gateway": "10.10.0.3", "dev": "e0", "protocol": "static"})
    found = [c for c in fake.changes(node) if c["what"] == "route 10.10.2.0/24"]
    assert found[0]["before"] == "10.10.2.0/24 via 10.10.0.3 dev e0 proto static"
    assert found[0]["argv"][:3] == ["ip", "route", "replace"]


def test_absent_removes_what_present_added_and_restores_sysctls():
    node = ln.check_node("n1", ENTRY)
    fake = FakeNode()
    before = dict(fake.sysctls)
    saved = ln.saved_sysctls(node, ln.parse_sysctl(fake.sysctl()), None)
    for change in fake.changes(node):
        fake.run(change["argv"])
    # a later run keeps the first values
    assert ln.saved_sysctls(node, ln.parse_sysctl(fake.sysctl()), saved) == saved
    gone = fake.changes(node, "absent", saved)
    # routes first: deleting an address flushes the routes through its subnet
    assert [change["kind"] for change in gone] == ["route"] * 2 + ["sysctl"] * 5 + ["address"] * 2
    for change in gone:
        fake.run(change["argv"])
    assert fake.sysctls == before
    assert not [r for r in fake.routes if r["protocol"] == ln.ROUTE_PROTOCOL]
    assert ln.parse_links(fake.ip_addr())["e0"]["addresses"] == []
    assert fake.changes(node, "absent", saved) == []


def test_diff_shows_before_and_after():
    node = ln.check_node("n1", ENTRY)
    result = ln.diff("n1", FakeNode().changes(node))
    assert "e0 address 192.0.2.9/24: 192.0.2.9/24" in result["before"]
    assert "route 10.10.2.0/24: 10.10.2.0/24 via 10.10.0.3 dev e0" in result["after"]
    assert "net.ipv4.ip_forward: 1" in result["after"]


def test_missing_interface_and_unknown_sysctl_are_named():
    node = ln.check_node("n1", ENTRY)
    fake = FakeNode()
    del fake.links["e1"]
    with pytest.raises(NodeNetworkError, match="node n1: interface e1 is not on the node"):
        fake.changes(node)
    fake = FakeNode()
    del fake.sysctls["net.ipv4.fib_multipath_hash_policy"]
    with pytest.raises(NodeNetworkError, match="fib_multipath_hash_policy does not exist"):
        fake.changes(node)


@pytest.mark.parametrize("path, value, message, in_schema", [
    (("interfaces", 0, "name"), "a-very-long-ifname", "not a Linux interface name", True),
    (("interfaces", 0, "address"), "10.10.0.2", "needs its prefix length", True),
    (("interfaces", 0, "mac"), "03:00:00:00:00:01", "not a unicast MAC", True),
    (("routes", 0, "dev"), "e9", "dev 'e9' is not one of the node's interfaces", False),
    (("routes", 0, "to"), "10.10.2.1/24", "is not an IPv4 network", False),
    (("rp_filter",), 3, "rp_filter must be 0", True),
    (("forwarding",), "yes", "forwarding must be true or false", True),
])
def test_bad_entries_are_refused_naming_the_field(path, value, message, in_schema):
    entry = copy.deepcopy(ENTRY)
    target = entry
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(NodeNetworkError, match=message):
        ln.check_node("n1", entry)
    # what a JSON schema can tell (not: cross references, host bits) it tells too
    errors = list(jsonschema.Draft7Validator(json.load(open(SCHEMA, encoding="utf-8"))).iter_errors(
        {"nodes": {"n1": entry}, "switches": {"ssb0": {"attached": [["n1", "e0"]]}}}))
    assert bool(errors) == in_schema


def test_via_and_nexthops_together_are_refused():
    entry = copy.deepcopy(ENTRY)
    entry["routes"][1]["via"] = "10.10.0.1"
    with pytest.raises(NodeNetworkError, match="either via/dev or nexthops"):
        ln.check_node("n1", entry)


@pytest.mark.parametrize("plan", [ring(4, 3), mesh(3)], ids=["ring4x3", "mesh3x3"])
def test_fixtures_follow_the_schema_and_their_routes_reach_every_address(plan):
    jsonschema.validate(plan, json.load(open(SCHEMA, encoding="utf-8")))
    for name, entry in plan["nodes"].items():
        ln.check_node(name, entry)
    owners = ln.address_owners(plan["nodes"])
    forwards, cache = [], {}
    for src in plan["nodes"]:
        for address, owner in owners.items():
            if owner == src:
                continue
            paths = ln.planned_paths(plan["nodes"], src, address, cache=cache)
            assert len(paths) == 1 and src not in paths[0] and owner not in paths[0]
            forwards.append(len(paths[0]))
    assert max(forwards) == (1 if "s0n0" in plan["nodes"] else 2)


def test_ring_paths_follow_gateway_balancing():
    plan = ring(4, 3)
    # node 1 of stage 1 reaches stage 3's East address through node 1 of stage 0 (Table 1: 10.10.3.0 via W)
    assert ln.planned_paths(plan["nodes"], "s1n1", "10.10.3.2") == [["s0n1"]]
    assert ln.planned_paths(plan["nodes"], "s1n1", "10.10.1.3") == [[]]


def test_multipath_gives_every_path_and_a_loop_is_refused():
    nodes = {
        "a": {"interfaces": [{"name": "e0", "address": "10.0.1.1/24"}, {"name": "e1", "address": "10.0.2.1/24"}],
              "routes": [{"to": "10.0.3.0/24", "nexthops": [{"via": "10.0.1.2", "dev": "e0"},
                                                            {"via": "10.0.2.2", "dev": "e1"}]}]},
        "b": {"interfaces": [{"name": "e0", "address": "10.0.1.2/24"}, {"name": "e1", "address": "10.0.3.2/24"}],
              "forwarding": True},
        "c": {"interfaces": [{"name": "e0", "address": "10.0.2.2/24"}, {"name": "e1", "address": "10.0.3.3/24"}],
              "forwarding": True},
        "d": {"interfaces": [{"name": "e0", "address": "10.0.3.4/24"}]},
    }
    assert ln.planned_paths(nodes, "a", "10.0.3.4") == [["b"], ["c"]]
    nodes["a"]["forwarding"] = True
    nodes["b"]["routes"] = [{"to": "10.0.9.0/24", "via": "10.0.1.1", "dev": "e0"}]
    nodes["a"]["routes"].append({"to": "10.0.9.0/24", "via": "10.0.1.2", "dev": "e0"})
    with pytest.raises(NodeNetworkError, match="loops"):
        ln.planned_paths(nodes, "a", "10.0.9.9")
    with pytest.raises(NodeNetworkError, match="node d: no route to 10.0.1.1"):
        ln.planned_paths(nodes, "d", "10.0.1.1")
    nodes["a"]["forwarding"] = nodes["c"]["forwarding"] = False
    with pytest.raises(NodeNetworkError, match="node c would forward from a to 10.0.3.4, but its forwarding is off"):
        ln.planned_paths(nodes, "a", "10.0.3.4")


# the one `ip -j` parser of node_network and node_planes: node_network's filters are the defaults,
# node_planes' options keep every scope, route and next hop in the kernel's order, and refuse non-lists
LINKS = [link("lo", "00:00:00:00:00:00", True, ["127.0.0.1/8"]),
         dict(link("e1", "AA:BB:CC:00:00:02", True, ["10.20.1.2/24"]), ifindex=7)]
LINKS[0]["addr_info"].append({"family": "inet", "local": "10.97.0.1", "prefixlen": 32, "scope": "host"})
ROUTES = [{"dst": "default", "gateway": "192.0.2.1", "dev": "e0", "protocol": "static"},
          {"dst": "10.10.0.0/24", "dev": "e0", "protocol": "kernel", "scope": "link", "prefsrc": "10.10.0.2"},
          {"dst": "10.66.0.0/16", "type": "blackhole", "protocol": "233"},
          {"dst": "10.97.0.2", "protocol": "234", "prefsrc": "10.97.0.1",
           "nexthops": [{"gateway": "10.97.2.2", "dev": "e2"}, {"gateway": "10.97.10.2", "dev": "e10", "flags": ["onlink"]}]}]


def test_links_are_read_with_node_networks_scope_filter_or_every_scope():
    links = ln.parse_links(json.dumps(LINKS))
    assert links["e1"] == {"up": True, "mac": "aa:bb:cc:00:00:02", "ifindex": 7, "addresses": ["10.20.1.2/24"]}
    assert links["lo"]["addresses"] == ["127.0.0.1/8"]  # link() marks every address global
    assert ln.parse_links(json.dumps(LINKS), scope=None)["lo"]["addresses"] == ["10.97.0.1/32", "127.0.0.1/8"]


def test_routes_are_read_with_node_networks_filters_or_as_the_kernel_lists_them():
    routes = ln.parse_routes(json.dumps(ROUTES))
    assert sorted(routes) == ["0.0.0.0/0", "10.10.0.0/24", "10.97.0.2/32"]  # the blackhole is left out
    assert routes["10.10.0.0/24"] == {"protocol": "kernel", "src": "10.10.0.2", "nexthops": []}  # connected
    # sorted by device name, then address (the plan's order: check_node)
    assert routes["10.97.0.2/32"]["nexthops"] == [{"via": "10.97.10.2", "dev": "e10", "onlink": True},
                                                  {"via": "10.97.2.2", "dev": "e2"}]
    every = ln.parse_routes(json.dumps(ROUTES), gateways_only=False, sort_hops=False)
    assert every["10.66.0.0/16"]["nexthops"] == [{"via": None, "dev": None}]
    assert every["10.10.0.0/24"]["nexthops"] == [{"via": None, "dev": "e0"}]
    assert every["10.97.0.2/32"]["nexthops"] == [{"via": "10.97.2.2", "dev": "e2"},
                                                 {"via": "10.97.10.2", "dev": "e10", "onlink": True}]


@pytest.mark.parametrize("text", ["{}", "null", '"x"'])
def test_output_that_is_not_a_json_list_is_no_state_or_with_strict_an_error(text):
    assert ln.parse_links(text) == {} and ln.parse_routes(text) == {}
    with pytest.raises(NodeNetworkError, match=r"cannot read `ip -j address show`: a JSON list was expected"):
        ln.parse_links(text, strict=True)
    with pytest.raises(NodeNetworkError, match=r"cannot read `ip -j route show`: a JSON list was expected"):
        ln.parse_routes(text, strict=True)
    with pytest.raises(NodeNetworkError, match=r"cannot read `ip -j route show`: "):
        ln.parse_routes("[{")


def test_route_commands_and_texts():
    one = [{"via": "10.0.0.2", "dev": "e0"}]
    two = [{"via": "10.0.0.2", "dev": "e0", "onlink": True}, {"via": "10.0.1.2", "dev": "e1"}]
    assert ln.route_argv("replace", "10.9.0.0/16", one) == "ip route replace 10.9.0.0/16 proto 233 via 10.0.0.2 dev e0".split()
    assert ln.route_argv("replace", "10.9.0.1/32", two, "234", "10.8.0.1") == (
        "ip route replace 10.9.0.1/32 proto 234 src 10.8.0.1 nexthop via 10.0.0.2 dev e0 onlink nexthop via 10.0.1.2 dev e1".split())
    assert ln.route_argv("del", "10.9.0.1/32", two, "234", "10.8.0.1") == "ip route del 10.9.0.1/32 proto 234".split()
    assert ln.route_text("10.9.0.0/16", one) == "10.9.0.0/16 via 10.0.0.2 dev e0"
    assert ln.route_text("10.9.0.1/32", two, "10.8.0.1") == "10.9.0.1/32 src 10.8.0.1 via 10.0.0.2 dev e0 onlink via 10.0.1.2 dev e1"
    assert ln.route_text("10.9.0.0/24", []) == "10.9.0.0/24 connected"


def test_an_onlink_route_to_a_planned_destination_is_replaced_by_the_plans():
    node = ln.check_node("n1", ENTRY)
    fake = FakeNode()
    for change in fake.changes(node):
        fake.run(change["argv"])
    route = next(r for r in fake.routes if r["dst"] == "10.10.2.0/24")
    route["flags"] = ["onlink"]
    (found,) = fake.changes(node)
    assert found["before"] == "10.10.2.0/24 via 10.10.0.3 dev e0 onlink proto 233"
    assert found["argv"] == "ip route replace 10.10.2.0/24 proto 233 via 10.10.0.3 dev e0".split()


def test_diff_lines_can_lead_with_the_kind():
    found = [ln.change("route", "10.9.0.1/32", "", "10.9.0.1/32 via 10.0.0.2 dev e0", []),
             ln.change("address", "lo 10.9.0.1/32", "10.9.0.1/32", "", [])]
    assert ln.diff("n0", found, kinds=True) == {
        "before": "address lo 10.9.0.1/32: 10.9.0.1/32\n", "after": "route 10.9.0.1/32: 10.9.0.1/32 via 10.0.0.2 dev e0\n",
        "before_header": "node n0 (live)", "after_header": "node n0 (plan)"}
    assert ln.diff("n0", found)["before"] == "lo 10.9.0.1/32: 10.9.0.1/32\n"
