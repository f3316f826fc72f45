"""The hostile-input campaign's case generator (issue 18 item 1).

Deterministic (seeded): the same cases on every run. Each case is a
``Case(kind, name, content, names)``: ``content`` is the text (or bytes)
of the file, ``names`` the strings of which the refusal must hold at
least one (the field, switch, port, link or line it is about; empty: any
refusal naming the file will do, for mutations at random paths the field
list is the path's own keys).
"""

import copy
import functools
import json
import random
from typing import NamedTuple

import yaml

SEED = 18


class Case(NamedTuple):
    kind: str
    name: str
    content: object  # str or bytes (the file), or a callable writing it (huge files)
    names: tuple


EXPLICIT = {
    "plugin": "ethercluster.routing.topology",
    "name": "ring3",
    "switch_defaults": {"platform": "ovs", "ports": 26, "mac_table_size": 8192, "max_vlans": 256},
    "switches": {"sw0": {"power_profile": "pc5324", "mgmt_address": "198.51.100.10"},
                 "sw1": {}, "sw2": {"platform": "dell_os6", "interface_pattern": "Gi1/0/{port}"}},
    "links": [{"a": "sw0:25", "b": "sw1:25", "speed_mbps": 1000}, {"a": "sw1:26", "b": "sw2:25"},
              {"a": "sw2:26", "b": "sw0:26", "state": "down"}, {"a": "sw0:24", "b": "sw1:24", "speed_mbps": 100}],
    "hosts": {"node00": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01", "ip": "192.0.2.1"},
              "node01": {"switch": "sw1", "port": 1, "mac": "02-00-00-00-00-02"},
              "node02": {"switch": "sw2", "port": "1", "mac": "0200.0000.0003"}},
    "fabric": {"routing": "updown", "assignment": "renamed", "broadcast": "bounded"},
}
GENERATED = [
    {"kind": "mesh", "dims": [2, 2], "hosts_per_switch": 1},
    {"kind": "torus", "dims": [3, 2], "links_per_neighbor": 1},
    {"kind": "fat_tree", "u": 2, "d": 2, "r": 1, "hosts_per_switch": 1},
    {"kind": "myri_clos", "dims": [2, 2]},
    {"kind": "complete", "switches": 3, "links_per_pair": 1},
    {"kind": "tree", "fanout": 2, "depth": 1, "width": 1},
    {"kind": "m_tree", "dims": [2, 2]},
    {"kind": "random", "switches": 4, "degree": 2, "seed": 3, "faults": 0},
]
WRONG_VALUES = [None, True, False, -1, 0, 1.5, float("nan"), float("inf"), 2 ** 64, -(2 ** 70), "", "x",
                "sw9", "sw0:999999", [], [1, 2], {}, {"x": 1}, "\u202esw0", "sw\u200b0", "\U0001f600",
                "9" * 400, "a" * 5000, "02:00:00:00:00:01", "ff:ff:ff:ff:ff:ff", "up", "down", "1e9"]
UNICODE = ["sw\u00e9", "\u0441w0", "sw0\u200d", "\u202eSW", "\U0001f4a9", "sw\u0301", "\uff53\uff57\uff10", "sw0\x00",
           "sw0\u2028", "\u0663", "\ufeffsw0", "sw\ud7ff", "\u00a0sw", "\u0661\u0662"]
OUT_OF_RANGE = [-1, 0, 4095, 65536, 2 ** 31, 2 ** 63, 10 ** 30, -(10 ** 30), float("nan"), float("-inf"), 1e308]


def _paths(data):
    """Every path (a tuple of keys and indexes) into ``data``, breadth first."""
    found, queue = [], [((), data)]
    while queue:
        path, node = queue.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            found.append(path + (key,))
            queue.append((path + (key,), child))
    return found


def _set(data, path, value, delete=False):
    """A copy of ``data`` with ``value`` at ``path`` (or the entry deleted)."""
    copied = copy.deepcopy(data)
    parent = functools.reduce(lambda node, step: node[step], path[:-1], copied)
    if delete:
        parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    return copied


def _labels(path):
    """What a refusal about ``path`` may name: its keys and the dotted /
    indexed spellings of the entries it lies in."""
    names = set()
    for step in path:
        names.add(str(step) if not isinstance(step, int) else "[%d]" % step)
    return tuple(sorted(names))


def _dump(data):
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10 ** 6)


def _wrong_types(rng, base, base_name, count, kind):
    paths = list(_paths(base))
    for number in range(count):
        path = rng.choice(paths)
        value = rng.choice(WRONG_VALUES)
        delete = rng.random() < 0.15
        yield Case(kind, "%s-%s-%d" % (kind, base_name, number), _dump(_set(base, path, value, delete)),
                   _labels(path))


def _reference_cases():
    cases = []
    refs = [
        (("links", 0, "a"), "sw9:25", "links[0].a"), (("links", 1, "b"), "nosuch:1", "links[1].b"),
        (("hosts", "node00", "switch"), "sw7", "hosts.node00.switch"),
        (("fabric", "engine_options"), {"root": "sw42"}, "sw42"),
        (("fabric", "routing"), "ospf", "fabric.routing"), (("fabric", "bank"), "C", "fabric.bank"),
        (("switches", "sw0", "platform"), "cisco_ios", "switches.sw0.platform"),
        (("switches", "sw1", "power_profile"), "no_such_profile", "switches.sw1.power_profile"),
        (("links", 2, "state"), "half", "links[2].state"), (("shape",), {"kind": "mesh", "dims": [3, 1]}, "shape"),
        (("switches", "sw0", "flow_control"), {"off": ["99"]}, "switches.sw0.flow_control"),
        (("switches", "sw0", "interface_names"), {"30": "Gi1/0/1"}, "switches.sw0"),
        (("fabric", "traffic"), {"node99": {"node00": 1}}, "fabric.traffic"),
        (("fabric", "vlan_range"), [4000, 100], "fabric.vlan_range"),
        (("fabric", "unknown_setting"), 1, "fabric.unknown_setting"),
        (("fabric", "max_broadcast_copies"), "9" * 5000, "fabric.max_broadcast_copies"),
        (("fabric", "vlan_range"), [float("-inf"), 1], "fabric.vlan_range"),
        (("switches", "sw0", "typo_field"), 1, "switches.sw0"), (("links", 0, "speed"), 10, "links[0]"),
    ]
    for number, (path, value, field) in enumerate(refs):
        cases.append(Case("unknown reference", "ref-%d" % number, _dump(_set(EXPLICIT, path, value)), (field,)))
    for number, spec in enumerate(GENERATED):
        cases.append(Case("unknown reference", "ref-gen-kind-%d" % number,
                          _dump({"generate": dict(spec, kind=spec["kind"] + "x")}), ("generate.kind",)))
        cases.append(Case("unknown reference", "ref-gen-field-%d" % number,
                          _dump({"generate": dict(spec, colour="red")}), ("generate",)))
    return cases


def _duplicate_cases():
    text = _dump(EXPLICIT)
    cases = []
    for number, (old, new) in enumerate([("  sw1: {}\n", "  sw1: {}\n  sw1: {}\n"),
                                         ("  node01:", "  node00:"), ("  sw2:", "  sw0:"),
                                         ("name: ring3\n", "name: ring3\nname: ring4\n"),
                                         ("switches:", "hosts:\n  z: 1\nswitches:")]):
        cases.append(Case("duplicates", "dup-key-%d" % number, text.replace(old, new, 1), ("duplicate key",)))
    dups = [
        (("links", 3, "a"), "sw0:25", "links[3].a"), (("hosts", "node01", "mac"), "02:00:00:00:00:01", "hosts.node01.mac"),
        (("hosts", "node01", "port"), "24", "hosts.node01.port"), (("links", 1, "b"), "sw1:26", "links[1]"),
        (("hosts", "node02", "switch"), "sw0", "hosts.node02"),
        (("switches", "sw1", "interface_names"), {1: "x1", "1": "x2"}, "switches.sw1"),
        (("switches", "sw2", "interface_names"), {25: "Gi1/0/26"}, "switches.sw2"),
    ]
    for number, (path, value, field) in enumerate(dups):
        cases.append(Case("duplicates", "dup-use-%d" % number, _dump(_set(EXPLICIT, path, value)), (field,)))
    doubled = copy.deepcopy(EXPLICIT)
    doubled["links"].append(dict(doubled["links"][0]))
    cases.append(Case("duplicates", "dup-link", _dump(doubled), ("links[4]",)))
    return cases


def _range_cases():
    fields = [("switch_defaults", "ports"), ("switches", "sw0", "ports"), ("switches", "sw1", "max_vlans"),
              ("switches", "sw1", "mac_table_size"), ("links", 0, "speed_mbps"), ("hosts", "node00", "port"),
              ("fabric", "max_broadcast_copies"), ("switches", "sw0", "coords"), ("switches", "sw0", "level"),
              ("fabric", "vlan_range")]
    cases = []
    for field in fields:
        for value in OUT_OF_RANGE:
            if field[-1] == "coords" or field[-1] == "vlan_range":
                value = [value, 1]
            cases.append(Case("out-of-range numbers", "range-%s-%r" % (".".join(map(str, field)), value),
                              _dump(_set(EXPLICIT, field, value)), _labels(field)))
    for value in OUT_OF_RANGE:
        cases.append(Case("out-of-range numbers", "range-link-port-%r" % value,
                          _dump(_set(EXPLICIT, ("links", 0, "a"), "sw0:%s" % value)), ("links[0].a",)))
    return cases


def _unicode_cases():
    cases = []
    for text in UNICODE:
        renamed = copy.deepcopy(EXPLICIT)
        renamed["switches"][text] = renamed["switches"].pop("sw1")
        cases.append(Case("unicode", "uni-switch-%r" % text, _dump(renamed), ("switches",)))
        for path in [("name",), ("hosts", "node00", "mac"), ("hosts", "node00", "ip"), ("links", 0, "a"),
                     ("switches", "sw2", "interface_pattern"), ("switches", "sw0", "platform"),
                     ("hosts", "node01", "port"), ("links", 0, "state")]:
            value = text + "{port}" if path[-1] == "interface_pattern" else text
            cases.append(Case("unicode", "uni-%s-%r" % (".".join(map(str, path)), text),
                              _dump(_set(EXPLICIT, path, value)), _labels(path)))
        hosts = copy.deepcopy(EXPLICIT)
        hosts["hosts"]["n" + text] = hosts["hosts"].pop("node02")
        cases.append(Case("unicode", "uni-host-%r" % text, _dump(hosts), ("hosts",)))
    cases.append(Case("unicode", "uni-not-utf8", b"name: \xff\xfe\nswitches: {sw0: {}}\n", ("utf-8", "UTF-8", "decode")))
    cases.append(Case("unicode", "uni-bom-utf16", "name: x\n".encode("utf-16"), ("utf-8", "UTF-8", "decode")))
    return cases


def alias_bomb(levels, width, where):
    """A billion-laughs document with its bomb in ``where`` (a top-level key)."""
    lines = ["%s:" % where, "  - &a0 [%s]" % ", ".join(['"lol"'] * width)]
    for level in range(1, levels):
        lines.append("  - &a%d [%s]" % (level, ", ".join(["*a%d" % (level - 1)] * width)))
    return "\n".join(lines) + "\nswitches: {sw0: {}}\n"


def _bomb_cases():
    cases = []
    for where in ("links", "hosts", "name", "fabric", "generate", "shape"):
        for levels, width in ((9, 9), (6, 20), (20, 3), (4, 100), (30, 2)):
            cases.append(Case("YAML alias bombs", "bomb-%s-%dx%d" % (where, levels, width),
                              alias_bomb(levels, width, where), ("aliases expanded", "nodes")))
    for number, text in enumerate(["switches:\n  sw0: &x {coords: [*x]}\n", "a: &l [*l]\nswitches: {}\n",
                                   "switches: &s {sw0: *s}\n"]):
        cases.append(Case("YAML alias bombs", "bomb-recursive-%d" % number, text, ("alias", "line")))
    merge = "base: &b {ports: 8}\nm0: &m0 {<<: [*b, *b]}\n"
    merge += "".join("m%d: &m%d {<<: [*m%d, *m%d]}\n" % (i, i, i - 1, i - 1) for i in range(1, 40))
    cases.append(Case("YAML alias bombs", "bomb-merge-keys", merge + "switches: {sw0: *m39}\n", ("line", "switches")))
    return cases


def _deep_cases():
    cases = []
    for depth in (28, 29, 30, 40, 100, 1000, 20000):
        cases.append(Case("deep nesting", "deep-flow-%d" % depth,
                          "switches:\n  sw0: {coords: %s1%s}\n" % ("[" * depth, "]" * depth),
                          ("nests", "switches.sw0.coords")))
        cases.append(Case("deep nesting", "deep-map-%d" % depth,
                          "fabric: %s1%s\n" % ("{a: " * depth, "}" * depth), ("nests", "fabric")))
    for depth in (29, 60, 500):
        block = "switches:\n  sw0:\n    coords:\n" + "".join("%s-\n" % ("  " * (i + 3)) for i in range(depth - 1)) \
            + "%s- 1\n" % ("  " * (depth + 2))
        cases.append(Case("deep nesting", "deep-block-%d" % depth, block, ("nests", "switches.sw0.coords")))
    return cases


def _huge_cases():
    def sparse(size):
        def write(path):
            with open(path, "wb") as handle:
                handle.write(b"name: huge\n")
                handle.truncate(size)
        return write

    many = "switches:\n" + "".join("  s%d: {}\n" % i for i in range(5000))
    links = "switches: {a: {}, b: {}}\nlinks:\n" + "".join('  - {a: "a:%d", b: "b:%d"}\n' % (i, i) for i in range(1, 33000))
    # one host entry shared by 66,000 names: over the count limit, yet quick to parse
    hosts = "switches: {a: {}}\nx: &h {switch: a, port: 1, mac: 02:00:00:00:00:01}\nhosts:\n" + "".join(
        "  h%d: *h\n" % i for i in range(66000))
    long_name = "name: %s\nswitches: {sw0: {}}\n" % ("n" * 3_000_000)
    return [Case("huge files", "huge-sparse-40MB", sparse(40_000_000), ("bytes",)),
            Case("huge files", "huge-sparse-limit+1", sparse(32 * 1024 * 1024 + 1), ("bytes",)),
            Case("huge files", "huge-5000-switches", many, ("switches",)),
            Case("huge files", "huge-33000-links", links, ("links",)),
            # 2.6 MB, 400,000 nodes: took 8 s per entry point and 200 MiB to refuse when the links were
            # counted after building (199,000 links: 20 s and 500 MiB)
            Case("huge files", "huge-80000-links", links.split("\n", 2)[0] + "\nlinks:\n" + "".join(
                '  - {a: "a:%d", b: "b:%d"}\n' % (i, i) for i in range(1, 80000)), ("links: 79999 entries",)),
            Case("huge files", "huge-66000-hosts", hosts, ("hosts",)),
            Case("huge files", "huge-3MB-name", long_name, ("name",))]


ABSURD = [
    {"kind": "mesh", "dims": [10 ** 6]}, {"kind": "torus", "dims": [2 ** 31, 2]}, {"kind": "mesh", "dims": [65, 64]},
    {"kind": "torus", "dims": [64, 64], "links_per_neighbor": 5}, {"kind": "mesh", "dims": [2] * 200},
    {"kind": "mesh", "dims": [10 ** 300, 10 ** 300]}, {"kind": "complete", "switches": 10 ** 9},
    {"kind": "complete", "switches": 300, "links_per_pair": 16}, {"kind": "tree", "fanout": 1000, "depth": 16},
    {"kind": "tree", "fanout": 2, "depth": 10 ** 6}, {"kind": "fat_tree", "u": 64, "d": 128, "r": 8},
    {"kind": "fat_tree", "u": 2, "d": 4, "r": 10 ** 9}, {"kind": "random", "switches": 10 ** 12, "degree": 4},
    {"kind": "random", "switches": 64, "degree": 10 ** 6}, {"kind": "random", "switches": 4096, "degree": 64},
    {"kind": "mesh", "dims": [4, 4], "hosts_per_switch": 10 ** 9}, {"kind": "torus", "dims": [64, 64], "hosts_per_switch": 17},
    {"kind": "mesh", "dims": [4, 4], "faults": 10 ** 9}, {"kind": "mesh", "dims": [4, 4], "faults": 0.999999},
    {"kind": "mesh", "dims": [4, 4], "seed": 2 ** 64}, {"kind": "random", "seed": -(2 ** 80)},
    {"kind": "myri_clos", "dims": [5000, 5000]}, {"kind": "myri_clos", "dims": [3, 3], "links_per_neighbor": 10 ** 5},
    {"kind": "m_tree", "dims": [4096, 4096]}, {"kind": "m_tree", "dims": [4, 4], "root": [9, 9]},
    {"kind": "mesh", "dims": [float("inf")]}, {"kind": "mesh", "dims": [float("nan"), 2]},
    {"kind": "mesh", "dims": []}, {"kind": "mesh", "dims": [1]}, {"kind": "mesh", "dims": [0, 4]},
    {"kind": "torus", "dims": "4x4"}, {"kind": "tree", "fanout": -3, "depth": 2}, {"kind": "tree", "width": 17},
    {"kind": "complete", "switches": 1}, {"kind": "random", "switches": 3, "degree": 3},
]


def _absurd_cases(rng):
    cases = []
    for number, spec in enumerate(ABSURD):
        fields = tuple("generate.%s" % key for key in spec if key != "kind") or ("generate",)
        cases.append(Case("absurd generate: sizes", "absurd-%d" % number, _dump({"generate": spec}), fields + ("generate",)))
    big = [10 ** 5, 2 ** 40, 10 ** 100, -5, 3.5, "12", None, [4], float("inf")]
    for number in range(100):
        spec = copy.deepcopy(rng.choice(GENERATED))
        key = rng.choice(["dims", "hosts_per_switch", "links_per_neighbor", "faults", "seed", "u", "d", "r",
                          "switches", "links_per_pair", "fanout", "depth", "width", "degree", "root"])
        value = rng.choice(big)
        if key in ("dims", "root") and rng.random() < 0.7:
            value = [value] * rng.randint(1, 4)
        spec[key] = value
        cases.append(Case("absurd generate: sizes", "absurd-rand-%d" % number, _dump({"generate": spec}),
                          ("generate.%s" % key, "generate")))
    return cases


def _garbled_yaml_cases(rng):
    base = _dump(EXPLICIT)
    cases = []
    for number in range(80):
        chars = list(base)
        for _turn in range(rng.randint(1, 6)):
            chars[rng.randrange(len(chars))] = rng.choice("{}[]:,-&*!|>'\"#%@`\t \n?")
        cases.append(Case("garbled YAML text", "garble-%d" % number, "".join(chars), ()))
    lines = base.splitlines()
    for index in range(len(lines)):
        cut = list(lines)
        cut[index] = cut[index][: len(cut[index]) // 2]
        cases.append(Case("garbled YAML text", "cut-line-%d" % index, "\n".join(cut) + "\n", ()))
    for number, text in enumerate(["", "---\n", "- 1\n- 2\n", "42\n", "!!python/object:os.system {}\n",
                                   "switches: !!binary aGVsbG8=\n", "switches: !!set {a, b}\n",
                                   "switches: 2001-01-01\n", "--- a\n--- b\n", "\x00\x01\x02", "%YAML 9.9\n---\na: 1\n",
                                   "switches: {? [a, b] : {}}\n", "switches: {sw0: {}}\nlinks: {a: 1}\n",
                                   "generate: {kind: mesh, dims: [2, 2]}\nswitches: {sw0: {}}\n"]):
        cases.append(Case("garbled YAML text", "odd-doc-%d" % number, text, ()))
    return cases


def topology_cases():
    """Every topology case of the campaign (at least 1,000)."""
    rng = random.Random(SEED)
    cases = list(_wrong_types(rng, EXPLICIT, "explicit", 260, "wrong types"))
    for number, spec in enumerate(GENERATED):
        cases.extend(_wrong_types(rng, {"generate": spec, "switch_defaults": {"platform": "ovs", "ports": 26}},
                                  "generate%d" % number, 25, "wrong types"))
    cases += _reference_cases() + _duplicate_cases() + _range_cases() + _unicode_cases()
    cases += _bomb_cases() + _deep_cases() + _huge_cases() + _absurd_cases(rng) + _garbled_yaml_cases(rng)
    return cases


# ------------------------------------------------------------------ intents
INTENT_VALUES = WRONG_VALUES + [5000, -1, 4094, 10 ** 20, "Gi1/0/1\nreload", "02:00:00:00:00:0g", "\u0661"]


def _json(data):
    return json.dumps(data, allow_nan=True)


def intent_cases(intent):
    """Mutations of a valid intent (at least 300), as JSON or YAML text."""
    rng = random.Random(SEED + 1)
    cases = []
    paths = list(_paths(intent))
    for number in range(260):
        path = rng.choice(paths)
        delete = rng.random() < 0.2
        value = rng.choice(INTENT_VALUES)
        cases.append(Case("intent: wrong types / out of range", "intent-mut-%d" % number,
                          _json(_set(intent, path, value, delete)), _labels(path)))
    sw0 = sorted(intent["switches"])[0]
    refs = [
        (("switches", sw0, "static_macs", 0, "port"), "99"), (("switches", sw0, "static_macs", 0, "vlan"), 4000),
        (("switches", sw0, "ports", "1", "pvid"), 4001), (("switches", sw0, "platform"), "cisco_ios"),
        (("schema",), "ethercluster.routing/intent/v2"), (("fabric", "routing"), 7),
        (("switches", sw0, "ports", "1", "peer"), "nosuch:1"), (("switches", sw0, "interface_names"), {"1": "Gi1/0/1", "2": "Gi1/0/1"}),
    ]
    for number, (path, value) in enumerate(refs):
        try:
            mutated = _set(intent, path, value)
        except (KeyError, IndexError, TypeError):
            continue
        cases.append(Case("intent: unknown references", "intent-ref-%d" % number, _json(mutated), _labels(path)))
    text = _json(intent)
    for number in range(25):
        chars = list(text)
        for _turn in range(rng.randint(1, 4)):
            chars[rng.randrange(len(chars))] = rng.choice('{}[]:,"\\\x00\u2028')
        cases.append(Case("intent: garbled JSON", "intent-garble-%d" % number, "".join(chars), ()))
    for number, cut in enumerate((0, 1, len(text) // 3, len(text) - 1)):
        cases.append(Case("intent: garbled JSON", "intent-cut-%d" % number, text[:cut], ()))
    cases.append(Case("intent: deep nesting", "intent-deep-json", "[" * 200000 + "]" * 200000, ("JSON", "schema")))
    cases.append(Case("intent: deep nesting", "intent-deep-yaml.yml", "a: " + "[" * 5000 + "]" * 5000 + "\n", ("nests",)))
    cases.append(Case("intent: YAML alias bombs", "intent-bomb.yml", alias_bomb(9, 9, "switches"), ("aliases expanded",)))
    cases.append(Case("intent: duplicates", "intent-dup-keys", text.replace('"schema"', '"schema": 1, "schema"', 1), ("schema",)))
    cases.append(Case("intent: unicode", "intent-not-utf8", b'{"schema": "\xff"}', ("cannot read",)))
    for number, value in enumerate(["", "null", "[]", "42", '"x"', "NaN", '{"schema": "ethercluster.routing/intent/v1"}']):
        cases.append(Case("intent: wrong types / out of range", "intent-doc-%d" % number, value, ()))
    return cases


# ------------------------------------------------------------ CLI outputs
GARBAGE = ["\x00\x01\x02", "\u2028", "\ufffd" * 50, "9" * 5000, "\u0663\u0664", "-" * 1000, "  ", "\t\t",
           "vlan 1-4094", "vlan 4094-1", "vlan 0", "vlan 99999999999999999999", "interface", "exit", "return", "#",
           "switchport general pvid %s" % ("9" * 5000), "switchport general allowed vlan add 1-4094 tagged",
           "port hybrid tagged vlan 1 to 4094", "port hybrid pvid vlan %s" % ("9" * 5000), "speed %s" % ("7" * 5000),
           "mac address-table static zzzz.zzzz.zzzz vlan 1 interface Gi1/0/1",
           "mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan %s" % ("1" * 5000),
           "mac address-table aging-time %s" % ("3" * 5000), "mac-address aging-time %s" % ("3" * 5000),
           "cookie=0x%s,table=0,priority=1,actions=drop" % ("f" * 5000), "table=0,actions=output:%s" % ("9" * 5000),
           "table=0,in_port=%s,actions=drop" % ("9" * 5000), "actions=", "table=x,actions=drop",
           " %s(veth0): addr:00:00:00:00:00:00" % ("9" * 5000), " 1(", "qdisc tbf 1: dev veth0 root rate 9e999bit"]


def _garble(rng, text, cli_lines):
    lines = text.splitlines()
    how = rng.randrange(8)
    if how == 0 and lines:  # drop lines
        for _turn in range(rng.randint(1, max(1, len(lines) // 4))):
            lines.pop(rng.randrange(len(lines)))
    elif how == 1 and lines:  # insert garbage lines
        for _turn in range(rng.randint(1, 5)):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(GARBAGE + cli_lines))
    elif how == 2:  # truncate anywhere
        return text[: rng.randrange(len(text) + 1)]
    elif how == 3:  # flip characters
        chars = list(text)
        for _turn in range(rng.randint(1, 20)):
            chars[rng.randrange(len(chars))] = rng.choice("0123456789-,/: \n\r\x00\u2028zZ")
        return "".join(chars)
    elif how == 4 and lines:  # repeat lines (a pager that stutters)
        index = rng.randrange(len(lines))
        lines[index:index] = [lines[index]] * rng.randint(2, 300)
    elif how == 5 and lines:  # shuffle
        rng.shuffle(lines)
    elif how == 6:  # CR LF, pager prompts, ANSI escapes
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n--More-- \x08\x08\x08\n", "\x1b[K\n"]))
    else:  # digits replaced by huge or unicode numbers
        return "".join(rng.choice(["9" * 5000, "\u0663", "0", "65536", "4095"]) if ch.isdigit() and rng.random() < 0.05
                       else ch for ch in text)
    return "\n".join(lines) + "\n"


def cli_cases(texts):
    """Garbled device outputs (at least 100 per platform): ``texts`` maps
    platform -> a valid output of it."""
    rng = random.Random(SEED + 2)
    cases = []
    for platform, text in sorted(texts.items()):
        own = [line for line in text.splitlines() if line.strip()]
        for number in range(110):
            cases.append(Case("CLI output: %s" % platform, "%s-%d" % (platform, number), _garble(rng, text, own), ()))
        for number, line in enumerate(GARBAGE):
            cases.append(Case("CLI output: %s" % platform, "%s-garbage-%d" % (platform, number),
                              text + line + "\n" + text[: len(text) // 2], ()))
    return cases
