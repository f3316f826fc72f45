"""The pieces of the plan outputs that need no planner: writing the output
directory (atomic, idempotent, check mode, stale files), the option
checks, the report template on a rejected input, and the SVG picture
(valid XML, one drawing per link, loads shown, readable layouts).
"""

import math
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.report import svg
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (
    EtherclusterError,
    TopologyError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import (
    INTENT_FILE,
    PICTURE_FILE,
    REPORT_FILE,
    OutputError,
    changed,
    load_topology_arg,
    plan_options,
    run_plan,
    sync_files,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.report.markdown import (
    render_report,
    report_context,
)

NS = {"svg": "http://www.w3.org/2000/svg"}


def generated(**spec):
    return topology_from_data({"generate": spec})


# ------------------------------------------------------------ sync_files
def listing(directory):
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def test_sync_creates_then_reports_unchanged(tmp_path):
    out = tmp_path / "plan"
    contents = {INTENT_FILE: '{"a": 1}\n', REPORT_FILE: "# r\n", PICTURE_FILE: "<svg/>\n"}
    first = sync_files(str(out), contents)
    assert [c["state"] for c in first] == ["created"] * 3 and changed(first)
    assert (out / INTENT_FILE).read_text() == '{"a": 1}\n'
    mtimes = {name: os.stat(out / name).st_mtime_ns for name in contents}
    second = sync_files(str(out), contents)
    assert [c["state"] for c in second] == ["unchanged"] * 3 and not changed(second)
    assert {name: os.stat(out / name).st_mtime_ns for name in contents} == mtimes
    assert listing(out) == sorted(contents)  # no temporary file left behind


def test_sync_updates_only_what_differs(tmp_path):
    contents = {INTENT_FILE: "1\n", REPORT_FILE: "r\n", PICTURE_FILE: "p\n"}
    sync_files(str(tmp_path), contents)
    changes = sync_files(str(tmp_path), dict(contents, **{REPORT_FILE: "r2\n"}))
    states = {c["name"]: c["state"] for c in changes}
    assert states == {INTENT_FILE: "unchanged", REPORT_FILE: "updated", PICTURE_FILE: "unchanged"}
    report = next(c for c in changes if c["name"] == REPORT_FILE)
    assert (report["before"], report["after"]) == ("r\n", "r2\n")
    assert (tmp_path / REPORT_FILE).read_text() == "r2\n"


def test_check_mode_touches_nothing(tmp_path):
    out = tmp_path / "new"
    changes = sync_files(str(out), {INTENT_FILE: "x\n", REPORT_FILE: "y\n"}, check_mode=True)
    assert [c["state"] for c in changes] == ["created", "created"] and changed(changes)
    assert not out.exists()
    sync_files(str(out), {INTENT_FILE: "x\n"})
    changes = sync_files(str(out), {INTENT_FILE: None}, check_mode=True)
    assert changes[0]["state"] == "stale"
    assert listing(out) == [INTENT_FILE]


def test_file_that_cannot_be_made_is_renamed_stale(tmp_path):
    sync_files(str(tmp_path), {INTENT_FILE: "old\n", PICTURE_FILE: "old\n"})
    changes = sync_files(str(tmp_path), {INTENT_FILE: None, REPORT_FILE: "why\n",
                                         PICTURE_FILE: "new\n"})
    assert {c["name"]: c["state"] for c in changes} == {
        INTENT_FILE: "stale", REPORT_FILE: "created", PICTURE_FILE: "updated"}
    assert listing(tmp_path) == sorted([INTENT_FILE + ".stale", REPORT_FILE, PICTURE_FILE])
    assert (tmp_path / (INTENT_FILE + ".stale")).read_text() == "old\n"
    again = sync_files(str(tmp_path), {INTENT_FILE: None, REPORT_FILE: "why\n"})
    assert {c["name"]: c["state"] for c in again} == {INTENT_FILE: "absent",
                                                      REPORT_FILE: "unchanged"}
    assert not changed(again)


def test_out_that_is_a_file_is_a_clear_error(tmp_path):
    blocker = tmp_path / "plan"
    blocker.write_text("not a directory")
    with pytest.raises(OutputError, match="plan exists and is not a directory"):
        sync_files(str(blocker), {REPORT_FILE: "r\n"})
    inner = blocker / "sub"
    with pytest.raises(OutputError, match=re.escape(str(blocker))):
        sync_files(str(inner), {REPORT_FILE: "r\n"})


# ------------------------------------------------------------ options
@pytest.mark.parametrize("given, field", [
    ({"assignment": "sometimes"}, "assignment"),
    ({"bank": "C"}, "bank"),
    ({"mac_learning": "magic"}, "mac_learning"),
    ({"engine_options": ["root"]}, "engine_options"),
    ({"vlan_range": [1, 2, 3]}, "vlan_range"),
    ({"vlan_range": "low-high"}, "vlan_range"),
    ({"colour": "red"}, "colour"),
])
def test_bad_option_is_named(given, field):
    with pytest.raises(OutputError, match=field):
        plan_options(**given)


def test_options_defaults_and_forms():
    options = plan_options(vlan_range="200-299", down_links="sw0:2", engine_options=None)
    assert options["vlan_range"] == [200, 299]
    assert options["down_links"] == ["sw0:2"]
    assert (options["routing"], options["assignment"], options["bank"]) == ("segment", "auto", "A")
    assert options["broadcast"] == "contained"
    assert options["engine_options"] == {}


def test_load_topology_arg_forms(tmp_path):
    path = tmp_path / "t.yml"
    path.write_text("generate: {kind: mesh, dims: [2, 2]}\n")
    assert len(load_topology_arg(str(path)).switches) == 4
    assert len(load_topology_arg({"generate": {"kind": "mesh", "dims": [3, 2]}}).switches) == 6
    with pytest.raises(OutputError, match="got int"):
        load_topology_arg(7)
    with pytest.raises(TopologyError, match=r"links\[0\]\.b: unknown switch 'sw9'"):
        load_topology_arg({"switches": {"sw0": {}, "sw1": {}},
                           "links": [{"a": "sw0:1", "b": "sw9:1"}]})


def test_unreadable_topology_gives_failure_report_and_no_outputs(tmp_path):
    result = run_plan({"switches": {"sw0": {}, "sw1": {}}, "links": [{"a": "sw0:1", "b": "sw9:1"}]})
    assert not result.accepted
    assert isinstance(result.error, EtherclusterError)
    assert result.contents[INTENT_FILE] is None and result.contents[PICTURE_FILE] is None
    report = result.contents[REPORT_FILE]
    assert "REJECTED" in report and "unknown switch 'sw9'" in report
    assert result.returned() == {"checks": []}


def test_bad_option_gives_failure_report():
    result = run_plan({"generate": {"kind": "mesh", "dims": [2, 2]}}, bank="Z")
    assert not result.accepted and "bank" in str(result.error)
    assert "REJECTED" in result.contents[REPORT_FILE]


# ------------------------------------------------------------ picture
def parse(text):
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def link_groups(root):
    return root.find("svg:g[@id='links']", NS).findall("svg:g", NS)


def path_points(d, samples=20):
    """Points along an SVG path of the forms 'Mx,y Lx,y' or 'Mx,y Qx,y x,y'."""
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
    p = np.array(numbers[0:2])
    if "Q" in d:
        c, q = np.array(numbers[2:4]), np.array(numbers[4:6])
    else:
        q = np.array(numbers[2:4])
        c = (p + q) / 2
    t = np.linspace(0, 1, samples)[:, None]
    return (1 - t) ** 2 * p + 2 * (1 - t) * t * c + t ** 2 * q


def circles(root):
    group = root.find("svg:g[@id='switches']", NS)
    result = {}
    for node in group.findall("svg:g", NS):
        circle = node.find("svg:circle", NS)
        name = node.find("svg:text", NS).text
        result[name] = (float(circle.get("cx")), float(circle.get("cy")), float(circle.get("r")))
    return result


def test_picture_of_loaded_torus():
    topology = generated(kind="torus", dims=[4, 4], hosts_per_switch=1)
    loads = np.arange(len(topology.channels), dtype=float)
    text = svg.fabric_svg(topology, loads=loads, down={3}, title="t", subtitle="s")
    root = parse(text)
    groups = link_groups(root)
    assert len(groups) == len(topology.links)
    busiest = max(topology.links, key=lambda link: loads[2 * link.index + 1])
    by_title = {g.find("svg:title", NS).text.split("\n")[0]: g for g in groups}
    top = by_title["%s -- %s, 1 Gb/s" % (busiest.a, busiest.b)]
    widths = [float(g.get("stroke-width")) for g in groups]
    assert float(top.get("stroke-width")) == max(widths)
    assert top.get("stroke") == svg.load_colour(1.0)
    down = by_title["%s -- %s, 1 Gb/s (down)" % (topology.links[3].a, topology.links[3].b)]
    assert down.get("stroke-dasharray")
    # wrap-around links are two stubs; the others one path
    wraps = svg._torus_wraps(topology)
    assert len(wraps) == 8
    for link in topology.links:
        title = "%s -- %s, 1 Gb/s" % (link.a, link.b)
        group = by_title.get(title) or by_title[title + " (down)"]
        assert len(group.findall("svg:path", NS)) == (2 if link.index in wraps else 1)
    assert set(circles(root)) == set(topology.switches)
    assert text == svg.fabric_svg(topology, loads=loads, down={3}, title="t", subtitle="s")


@pytest.mark.parametrize("spec", [
    dict(kind="torus", dims=[8, 8], links_per_neighbor=2),
    dict(kind="mesh", dims=[4, 4, 4]),
    dict(kind="fat_tree", u=4, d=8, r=2),
    dict(kind="random", switches=64, degree=4, seed=3),
    dict(kind="tree", fanout=2, depth=3),
])
def test_picture_stays_readable(spec):
    """Switches never overlap, and no link is drawn through a switch it does
    not end at (for the grid and level layouts; spring layouts cannot
    promise that)."""
    topology = generated(**spec)
    root = parse(svg.fabric_svg(topology, loads=np.ones(len(topology.channels))))
    nodes = circles(root)
    centres = list(nodes.values())
    for i, (x1, y1, r1) in enumerate(centres):
        for x2, y2, r2 in centres[i + 1:]:
            assert math.hypot(x1 - x2, y1 - y2) > r1 + r2
    if spec["kind"] == "random":
        return
    for group in link_groups(root):
        ends = re.findall(r"(sw\d+):\d+", group.find("svg:title", NS).text)
        for path in group.findall("svg:path", NS):
            points = path_points(path.get("d"))
            for name, (x, y, r) in nodes.items():
                if name in ends:
                    continue
                gap = np.hypot(points[:, 0] - x, points[:, 1] - y).min()
                assert gap >= r, "%s is drawn through %s" % (ends, name)


def test_level_layout_puts_leaves_at_the_bottom():
    """Fat trees number the leaves level 0, the tree generator the root:
    either way the leaves (the widest level) are drawn at the bottom and
    the other end of the level range at the top."""
    for spec in (dict(kind="fat_tree", u=2, d=4, r=2), dict(kind="tree", fanout=2, depth=2)):
        topology = generated(**spec)
        positions = svg.fabric_layout(topology)
        levels = {}
        for sw in topology.switches.values():
            levels.setdefault(sw.level, []).append(sw.name)
        leaf_level = max(levels, key=lambda level: len(levels[level]))
        top_level = max(levels) if leaf_level == min(levels) else min(levels)
        ys = [y for _x, y in positions.values()]
        assert {positions[name][1] for name in levels[leaf_level]} == {max(ys)}
        assert {positions[name][1] for name in levels[top_level]} == {min(ys)}


def test_bare_topology_picture_has_no_load_legend():
    topology = generated(kind="complete", switches=5)
    text = svg.fabric_svg(topology)
    root = parse(text)
    assert len(link_groups(root)) == len(topology.links)
    assert "channel load" not in text


# ---------------------------------------------------------------- configs
def sync_plan(out, topology_data, **options):
    result = run_plan(topology_data, **options)
    return result, {change["name"]: change["state"] for change in sync_files(str(out), result.contents)}


def test_an_accepted_plan_writes_every_switchs_config_in_its_platforms_syntax(tmp_path):
    data = generated(kind="mesh", dims=[2, 2]).to_data()
    data["switches"]["sw1"]["platform"] = "dell_os6"
    data["switches"]["sw2"]["platform"] = "huawei_vrp"
    data["switches"]["sw3"]["platform"] = "linux_bridge"
    result, states = sync_plan(tmp_path, data, routing="dor")
    assert result.accepted
    assert {name: state for name, state in states.items() if name.startswith("configs/")} == {
        "configs/sw0.flows": "created", "configs/sw1.cfg": "created", "configs/sw2.cfg": "created",
        "configs/sw3.sh": "created", "configs/sw3.interfaces": "created"}
    assert "switchport mode general" in (tmp_path / "configs" / "sw1.cfg").read_text()
    assert "port link-type hybrid" in (tmp_path / "configs" / "sw2.cfg").read_text()
    assert "vlan_filtering 1" in (tmp_path / "configs" / "sw3.sh").read_text()
    _result, again = sync_plan(tmp_path, data, routing="dor")
    assert set(again.values()) == {"unchanged"}


def test_configs_not_made_by_this_run_are_renamed_stale(tmp_path):
    bigger = generated(kind="mesh", dims=[3, 2]).to_data()
    _result, states = sync_plan(tmp_path, bigger, routing="dor")
    assert states["configs/sw5.flows"] == "created"
    smaller = generated(kind="mesh", dims=[2, 2]).to_data()
    _result, states = sync_plan(tmp_path, smaller, routing="dor")
    assert states["configs/sw5.flows"] == "stale" and states["configs/sw4.flows"] == "stale"
    rejected = dict(smaller)
    rejected["switches"] = {name: dict(entry, platform="h3c")
                            for name, entry in smaller["switches"].items()}
    result, states = sync_plan(tmp_path, rejected, routing="dor")
    assert not result.accepted and "has no renderer yet" in str(result.error)
    assert {states["configs/sw%d.flows" % i] for i in range(4)} == {"stale"}
    assert listing(tmp_path / "configs") == sorted(
        ["sw%d.flows.stale" % i for i in range(6)])


def test_link_speeds_in_the_report_and_the_picture():
    """Every link's speed is in its tooltip; the links not at the fabric's
    common speed are written on the picture and named in the report."""
    data = {"generate": {"kind": "torus", "dims": [4, 4], "hosts_per_switch": 1}}
    topology = generated(**data["generate"])
    assert svg.link_speed_summary(topology) == "32 at 1 Gb/s"
    slow = [{"a": str(link.a), "b": str(link.b), "speed_mbps": 100 if link.index in (2, 7) else 1000}
            for link in topology.links]
    fast = [dict(link, speed_mbps=2500) if i == 9 else link for i, link in enumerate(slow)]
    mixed = topology_from_data(dict(topology.to_data(), links=fast))
    names = ["%s--%s" % (mixed.links[i].a, mixed.links[i].b) for i in (2, 7, 9)]
    assert svg.link_speed_summary(mixed) == "1 at 2.5 Gb/s: %s; 29 at 1 Gb/s; 2 at 100 Mb/s: %s, %s" % (
        names[2], names[0], names[1])
    root = parse(svg.fabric_svg(mixed, loads=np.ones(len(mixed.channels)), title="t"))
    written = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and "b/s" in t.text]
    assert sorted(written) == ["100 Mb/s", "100 Mb/s", "2.5 Gb/s"]
    titles = [g.find("svg:title", NS).text.split("\n")[0] for g in link_groups(root)]
    assert "%s -- %s, 100 Mb/s" % (mixed.links[2].a, mixed.links[2].b) in titles
    report = render_report(report_context(mixed, {"routing": "dor"}))
    assert "| link speeds | 1 at 2.5 Gb/s: %s; 29 at 1 Gb/s; 2 at 100 Mb/s: %s, %s |" % (
        names[2], names[0], names[1]) in report
