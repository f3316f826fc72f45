"""Input size limits (module_utils/input_limits, docs/topology.md "Limits"):
hostile or absurd topology files and generator specs are refused with a
TopologyError naming the file, line or field, before they are expanded."""

import subprocess
import sys
import textwrap

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import input_limits
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import (
    topology_file_settings,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.generators import (
    MAX_HOSTS_PER_SWITCH,
    Size,
    planned_size,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.input_limits import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_HOSTS,
    MAX_LINKS,
    MAX_SWITCHES,
    MAX_YAML_NODES,
    check_counts,
    load_yaml_text,
    measure_yaml,
    read_text,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    load_topology,
    parse_yaml,
    topology_from_data,
)


def billion_laughs(levels=9, width=9):
    """The classic alias bomb, placed in a switch entry: ``width ** levels``
    strings once expanded (9 ** 9 = 387 million), a few hundred bytes written."""
    lines = ["switches:", "  sw0:", "    coords:",
             '      - &a0 [%s]' % ", ".join(['"lol"'] * width)]
    for level in range(1, levels):
        lines.append("      - &a%d [%s]" % (level, ", ".join(["*a%d" % (level - 1)] * width)))
    lines += ["  sw1: {}", "links:", '  - {a: "sw0:1", b: "sw1:1"}']
    return "\n".join(lines) + "\n"


def nested(depth, flow=True):
    """A switch whose coords are ``depth`` nested lists: the YAML nests
    ``depth + 4`` levels (top mapping, switches, sw0, the lists, a number)."""
    inner = "[" * depth + "1" + "]" * depth
    return "switches:\n  sw0: {coords: %s}\n" % inner if flow else \
        "switches:\n  sw0:\n    coords:\n" + "".join(
            "%s-\n" % ("  " * (level + 3)) for level in range(depth - 1)) + "%s- 1\n" % ("  " * (depth + 2))


# ------------------------------------------------------------- YAML limits
def test_billion_laughs_is_refused_naming_file_and_the_alias_line(tmp_path):
    path = tmp_path / "bomb.yml"
    path.write_text(billion_laughs(), encoding="utf-8")
    with pytest.raises(TopologyError) as info:
        load_topology(path)
    message = str(info.value)
    # the alias that takes the count over the cap: a list of *a5 (9**6 = 531,441 nodes each)
    assert message.startswith("%s: line 10: with its aliases expanded the YAML holds more than %d nodes"
                              % (path, MAX_YAML_NODES))
    assert "docs/topology.md, 'Limits'" in message


def test_alias_expansion_is_counted_not_performed():
    # 9 ** 5 strings per top alias: measured exactly, under the cap
    nodes, depth = measure_yaml(textwrap.dedent("""\
        a: &a0 [x, x, x, x, x, x, x, x, x]
        b: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]
        c: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]
        d: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]
        e: [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]
        """))
    a0 = 10
    a1 = 1 + 9 * a0
    a2 = 1 + 9 * a1
    a3 = 1 + 9 * a2
    e = 1 + 9 * a3
    assert nodes == 1 + 5 + a0 + a1 + a2 + a3 + e
    assert depth == 7  # top mapping, list e, the lists of a3, a2, a1, a0, then a string


@pytest.mark.parametrize("text, nodes, depth", [
    ("x: [1, [2, {a: b}]]\n", 9, 5),
    ("a: &a [1, 2]\nb: [*a, *a]\n", 13, 4),
    ("plain\n", 1, 1),
    ("a: &d {x: 1}\nb: {<<: *d, y: 2}\n", 13, 4),
])
def test_measure_counts_nodes_and_depth_exactly(text, nodes, depth):
    assert measure_yaml(text) == (nodes, depth)


def test_node_cap_names_the_line_that_crosses_it(monkeypatch):
    monkeypatch.setattr(input_limits, "MAX_YAML_NODES", 12)
    text = "a: &a [1, 2]\nb: [*a, *a]\n"  # 13 nodes; the second *a makes the 13th
    with pytest.raises(TopologyError, match=r"^t\.yml: line 2: with its aliases expanded the YAML "
                                            r"holds more than 12 nodes"):
        load_yaml_text(text, "t.yml")
    monkeypatch.setattr(input_limits, "MAX_YAML_NODES", 13)
    assert load_yaml_text(text, "t.yml") == {"a": [1, 2], "b": [[1, 2], [1, 2]]}


@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_nesting_deeper_than_the_limit_is_refused(flow):
    at_limit = nested(MAX_DEPTH - 4, flow)
    assert measure_yaml(at_limit)[1] == MAX_DEPTH
    assert isinstance(load_yaml_text(at_limit, "deep.yml"), dict)
    with pytest.raises(TopologyError, match=r"^deep\.yml: line \d+: the YAML nests 33 levels deep, "
                                            r"more than the 32 a topology file may have"):
        load_yaml_text(nested(MAX_DEPTH - 3, flow), "deep.yml")


def test_nesting_through_an_alias_counts_the_anchored_depth():
    text = "a: &deep %s\nb: [[*deep]]\n" % ("[" * 29 + "1" + "]" * 29)
    # *deep reaches 29 lists + a scalar below level 4: 33 levels
    with pytest.raises(TopologyError, match=r"^t\.yml: line 2: the YAML nests 33 levels deep"):
        load_yaml_text(text, "t.yml")


def test_very_deep_nesting_is_refused_without_crashing(tmp_path):
    """libyaml's composer recurses in C and kills the process on such a file;
    the limit refuses it from the parser's events first."""
    path = tmp_path / "deep.yml"
    path.write_text(nested(100000), encoding="utf-8")
    refused = (r"deep\.yml: line 2: the YAML nests (33 levels deep|deeper than its parser allows), "
               r"more than the 32 a topology")
    with pytest.raises(TopologyError, match=refused):
        load_topology(path)


def test_plan_settings_of_a_deep_file_do_not_crash_the_controller(tmp_path):
    # the plan action reads the file's fabric: block first; run it in a child
    # process, since a regression would be a segmentation fault
    path = tmp_path / "deep.yml"
    path.write_text(nested(100000), encoding="utf-8")
    code = ("import sys; sys.path[:0] = %r\n"
            "from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings "
            "import topology_file_settings\n"
            "print(topology_file_settings(%r))" % (sys.path, str(path)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=False)
    assert (proc.returncode, proc.stdout.strip()) == (0, "{}"), proc.stderr
    assert topology_file_settings(path) == {}


def test_recursive_alias_is_refused():
    with pytest.raises(TopologyError, match=r"^r\.yml: line 2: alias \*loop refers to a node that contains it"):
        load_yaml_text("switches:\n  sw0: &loop {coords: [*loop]}\n", "r.yml")


@pytest.mark.parametrize("text, message", [
    # an unclosed bracket is named where it opens, not where PyYAML gave up
    ("switches: {sw0: {}\n",
     "line 1, column 11: a flow mapping opened here is not closed: "
     "did not find expected ',' or '}' (at line 2, column 1)"),
    ("name: x\ngenerate:\n  dims: [4, 4\nfoo: 1\n",
     "line 3, column 9: a flow sequence opened here is not closed: did not find expected ',' or ']' "
     "(at line 4, column 4)"),
    ("a: 1\n b: 2\n", "line 2, column 3: mapping values are not allowed in this context"),
    ("a: \"x\n",
     "line 2, column 1: found unexpected end of stream (while scanning a quoted scalar at "
     "line 1, column 4)"),
    ("a: *nowhere\n", "line 1, column 4: found undefined alias"),
])
def test_invalid_yaml_names_its_lines(text, message):
    with pytest.raises(TopologyError) as info:
        parse_yaml(text, "b.yml")
    assert str(info.value).startswith("b.yml: not valid YAML: " + message)
    assert "<unicode string>" not in str(info.value)


# ----------------------------------------------------------- file size
def test_oversized_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.yml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no 32 MiB written
    expected = "%s: the file is %d bytes, more than the %d bytes a topology file may have" % (
        path, MAX_FILE_BYTES + 1, MAX_FILE_BYTES)
    with pytest.raises(TopologyError) as info:
        load_topology(path)
    assert str(info.value).startswith(expected)
    with open(path, "r+b") as handle:
        handle.truncate(MAX_FILE_BYTES)
        handle.seek(0)
        handle.write(b"name: edge\n")
    assert read_text(path).startswith("name: edge\n")


def test_a_file_stat_cannot_size_is_read_no_further_than_the_limit():
    with pytest.raises(TopologyError, match=r"^/dev/zero: the file holds more than the %d characters"
                       % MAX_FILE_BYTES):
        read_text("/dev/zero")


def test_oversized_text_is_refused():
    with pytest.raises(TopologyError, match=r"^t\.yml: the text is %d characters, more than"
                       % (MAX_FILE_BYTES + 1)):
        load_yaml_text("#" * (MAX_FILE_BYTES + 1), "t.yml")


def test_unreadable_and_missing_files_still_name_the_file(tmp_path):
    with pytest.raises(TopologyError, match=r"nope\.yml: cannot read the file"):
        load_topology(tmp_path / "nope.yml")
    path = tmp_path / "latin1.yml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(TopologyError, match=r"latin1\.yml: not UTF-8 text"):
        load_topology(path)


# ------------------------------------------------------- merge and duplicates
def test_merge_keys_work_and_explicit_keys_win(tmp_path):
    path = tmp_path / "merge.yml"
    path.write_text(textwrap.dedent("""\
        switches:
          sw0: &os6 {platform: dell_os6, ports: 26, max_vlans: 64}
          sw1: {<<: *os6, ports: 28}
          sw2:
            <<: [{mac_table_size: 1024}, *os6]
            max_vlans: 128
        links:
          - {a: "sw0:25", b: "sw1:25"}
          - {a: "sw1:26", b: "sw2:25"}
        """), encoding="utf-8")
    topo = load_topology(path)
    sw1, sw2 = topo.switches["sw1"], topo.switches["sw2"]
    assert (sw1.platform, sw1.ports, sw1.max_vlans) == ("dell_os6", 28, 64)
    assert (sw2.platform, sw2.ports, sw2.max_vlans, sw2.mac_table_size) == ("dell_os6", 26, 128, 1024)


def test_duplicate_keys_are_refused_naming_the_key_and_both_lines(tmp_path):
    path = tmp_path / "dup.yml"
    path.write_text("switches:\n  sw0: {}\n  sw1: {}\n  sw0: {}\n", encoding="utf-8")
    with pytest.raises(TopologyError) as info:
        load_topology(path)
    message = str(info.value)
    assert message.startswith("%s: not valid YAML" % path)
    assert "duplicate key 'sw0' (first at line 2)" in message and "line 4" in message
    # beside a merge key too: the explicit keys must still be unique
    with pytest.raises(TopologyError, match=r"duplicate key 'ports' \(first at line 2\)"):
        parse_yaml("base: &b {ports: 1}\nsw: {<<: *b, ports: 2,\n  ports: 3}\n", "d.yml")


# ------------------------------------------------------------- counts
@pytest.mark.parametrize("field, limit, entries", [
    ("switches", MAX_SWITCHES, lambda n: {"s%d" % i: {} for i in range(n)}),
    ("links", MAX_LINKS, lambda n: [{}] * n),
    ("hosts", MAX_HOSTS, lambda n: {"h%d" % i: {} for i in range(n)}),
])
def test_explicit_counts_over_the_maxima_are_refused_before_validation(field, limit, entries):
    data = {"switches": {"sw0": {}}, field: entries(limit + 1)}
    with pytest.raises(TopologyError) as info:
        topology_from_data(data, "big.yml")
    # one problem only: no entry was looked at
    assert info.value.problems == ["%s: %d entries, more than the %d a topology may have "
                                   "(docs/topology.md, 'Limits')" % (field, limit + 1, limit)]
    check_counts({field: entries(limit)}, "big.yml")  # at the limit: accepted


# ------------------------------------------------------------ generators
def refusal(data):
    """The message topology_from_data refuses ``data`` (read from gen.yml) with."""
    with pytest.raises(TopologyError) as info:
        topology_from_data(data, "gen.yml")
    return str(info.value)


OVER = [
    ({"kind": "mesh", "dims": [256, 256]}, "generate.dims: [256, 256] would make 65536 switches"),
    ({"kind": "torus", "dims": [64, 65]}, "generate.dims: [64, 65] would make 4160 switches"),
    ({"kind": "torus", "dims": [64, 64], "links_per_neighbor": 5},
     "generate.links_per_neighbor: [64, 64] with 5 links per neighbour would make 40960 links"),
    ({"kind": "mesh", "dims": [2] * 65}, "generate.dims: 65 dimensions would make at least 2^65 switches"),
    ({"kind": "fat_tree", "u": 2, "d": 64, "r": 8},
     "generate.u, generate.d, generate.r: a fat tree (u=2, d=64, r=8) would make"),
    ({"kind": "fat_tree", "u": 8, "d": 64, "r": 2, "links_per_neighbor": 8},
     "generate.links_per_neighbor: a fat tree (u=8, d=64, r=2) with 8 links per neighbour would make 36864 links"),
    ({"kind": "myri_clos", "dims": [4000, 97]}, "generate.dims: [4000, 97] would make 4097 switches"),
    ({"kind": "myri_clos", "dims": [2000, 20]}, "generate.dims: [2000, 20] would make 40000 links"),
    ({"kind": "complete", "switches": 724}, "generate.switches: a complete graph of 724 switches would make 261726 links"),
    ({"kind": "complete", "switches": 5000}, "generate.switches: a complete graph would make 5000 switches"),
    ({"kind": "complete", "switches": 200, "links_per_pair": 2},
     "generate.links_per_pair: a complete graph of 200 switches with 2 links per pair would make 39800 links"),
    ({"kind": "tree", "depth": 15}, "generate.fanout, generate.depth: a tree of fanout 2 and depth 15 would make "
                                    "65535 switches"),
    ({"kind": "tree", "fanout": 4000, "depth": 1, "width": 9},
     "generate.width: a tree of fanout 4000 and depth 1 with 9 links per parent-child pair would make 36000 links"),
    ({"kind": "m_tree", "dims": [100, 100]}, "generate.dims: [100, 100] would make 10000 switches"),
    ({"kind": "random", "switches": 65536}, "generate.switches: a random fabric would make 65536 switches"),
    ({"kind": "random", "switches": 4096, "degree": 17},
     "generate.switches, generate.degree: 4096 switches of degree 17 would make 34816 links"),
    ({"kind": "mesh", "dims": [64, 64], "hosts_per_switch": 17},
     "generate.hosts_per_switch: 4096 switches with hosts, 17 hosts each, would make 69632 hosts"),
]


@pytest.mark.parametrize("spec, expected", OVER, ids=[
    "%s-%d" % (spec["kind"], n) for n, (spec, dummy) in enumerate(OVER)])
def test_every_generator_over_its_limit_is_refused_naming_the_field(spec, expected):
    message = refusal({"generate": spec})
    assert message.startswith("gen.yml: " + expected), message
    assert "more than the" in message and "(docs/topology.md, 'Limits')" in message
    with pytest.raises(TopologyError):
        planned_size(spec)


AT_LIMIT = [
    ({"kind": "torus", "dims": [64, 64], "links_per_neighbor": 4, "hosts_per_switch": 16},
     Size(MAX_SWITCHES, MAX_LINKS, MAX_HOSTS)),
    ({"kind": "mesh", "dims": [4096]}, Size(4096, 4095, 4096)),
    # a level-1 pod: 64 leaves + 8 switches, 512 links; 8 such pods + 8 switches on top
    ({"kind": "fat_tree", "u": 8, "d": 64, "r": 2}, Size(8 * 72 + 8, 8 * 512 + 512, 512)),
    ({"kind": "myri_clos", "dims": [4000, 8]}, Size(4008, 32000, 4008)),
    ({"kind": "complete", "switches": 256}, Size(256, 32640, 256)),
    ({"kind": "tree", "fanout": 4, "depth": 5, "width": 8}, Size(1365, 1364 * 8, 1365)),
    ({"kind": "tree", "fanout": 4095, "depth": 1, "hosts_per_switch": 16}, Size(4096, 4095, 65536)),
    ({"kind": "m_tree", "dims": [64, 64]}, Size(4096, 4095, 4096)),
    ({"kind": "random", "switches": 4096, "degree": 16}, Size(4096, 32768, 4096)),
    ({"kind": "mesh", "dims": [2, 2], "hosts_per_switch": MAX_HOSTS_PER_SWITCH}, Size(4, 4, 4096)),
]


@pytest.mark.parametrize("spec, size", AT_LIMIT, ids=[spec["kind"] for spec, dummy in AT_LIMIT])
def test_specs_at_the_limits_are_accepted(spec, size):
    """Checked on the planned size: generating thousands of switches here
    would only slow the suite down (the next test ties the two together)."""
    assert planned_size(spec) == size


@pytest.mark.parametrize("spec", [
    {"kind": "mesh", "dims": [3, 4, 2], "links_per_neighbor": 2, "hosts_per_switch": 3},
    {"kind": "torus", "dims": [2, 5, 3], "hosts_per_switch": 0},
    {"kind": "fat_tree", "u": 2, "d": 4, "r": 3, "links_per_neighbor": 2},
    {"kind": "fat_tree", "u": 3, "d": 3, "r": 1},
    {"kind": "fat_tree", "u": 2, "d": 6, "r": 2, "hosts_per_switch": 2},
    {"kind": "myri_clos", "dims": [3, 5], "links_per_neighbor": 3},
    {"kind": "complete", "switches": 7, "links_per_pair": 2},
    {"kind": "tree", "fanout": 3, "depth": 3, "width": 2},
    {"kind": "tree", "depth": 0},
    {"kind": "m_tree", "dims": [3, 4, 2]},
    {"kind": "random", "switches": 9, "degree": 3},
], ids=lambda spec: spec["kind"])
def test_planned_size_is_what_the_generator_makes(spec):
    topo = topology_from_data({"generate": spec})
    assert planned_size(spec) == (len(topo.switches), len(topo.links), len(topo.hosts))


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "mesh", "dims": [4, 4], "faults": float("nan")},
     "generate.faults: must be a count of links (a whole number) or a fraction below 1, got nan"),
    ({"kind": "mesh", "dims": [4, 4], "faults": float("inf")}, "generate.faults: must be a count"),
    ({"kind": "mesh", "dims": [4, 4], "faults": -1}, "generate.faults: must be a count"),
    ({"kind": "mesh", "dims": [4, 4], "faults": 2.5}, "generate.faults: must be a count"),
    ({"kind": "mesh", "dims": [4, 4], "faults": "3"}, "generate.faults: must be a count"),
    ({"kind": "mesh", "dims": [4, 4], "faults": 1e300},
     "generate.faults: only 9 links can be removed without disconnecting the fabric, about 10^300 asked"),
    ({"kind": "mesh", "dims": [4, 4], "faults": 10 ** 4000},
     "generate.faults: only 9 links can be removed without disconnecting the fabric, about 10^4000 asked"),
    ({"kind": "mesh", "dims": [4, float("nan")]}, "generate.dims: bad dimensions [4, nan]"),
    ({"kind": "mesh", "dims": [10 ** 4000, 10 ** 4000]},
     "...(8006 characters) would make about 10^8000 switches"),
    ({"kind": "fat_tree", "u": float("inf")}, "generate.u: must be a whole number at least 1, got inf"),
    ({"kind": "fat_tree", "u": 10 ** 50, "d": 10 ** 50, "r": 1},
     "generate.u, generate.d, generate.r: a fat tree (u=1000"),
    ({"kind": "tree", "fanout": 10 ** 300, "depth": 16}, "would make about 10^4800 switches"),
    ({"kind": "tree", "depth": 17}, "generate.depth: must be a whole number from 0 to 16, got 17"),
    ({"kind": "random", "switches": 1.5}, "generate.switches: must be a whole number at least 2, got 1.5"),
    ({"kind": "mesh", "dims": [4, 4], "seed": 10 ** 30},
     "generate.seed: must be a whole number from 0 to 9223372036854775807, got 1000000000000000000000000000000"),
    ({"kind": "mesh", "dims": [4, 4], "hosts_per_switch": 10 ** 9},
     "generate.hosts_per_switch: must be a whole number from 0 to 1024, got 1000000000"),
])
def test_nan_inf_and_huge_generator_fields_are_refused_naming_the_field(spec, expected):
    message = refusal({"generate": spec})
    assert message.startswith("gen.yml: ") and expected in message, message


def test_nan_written_in_yaml_names_the_field():
    data = parse_yaml("generate: {kind: torus, dims: [4, 4], faults: .nan}\n", "nan.yml")
    with pytest.raises(TopologyError, match=r"^nan\.yml: generate\.faults: must be a count of links"):
        topology_from_data(data, "nan.yml")
