# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A picture of the fabric as SVG: switches, links coloured and thickened
by channel load, a legend, and tooltips with the numbers.

Positions (:func:`fabric_layout`) come from what the topology knows:

* ``coords`` (meshes, tori, m-trees): a grid, dimension 0 to the right and
  dimension 1 downwards; further dimensions tile the 2-D slices side by side.
  A torus wrap-around link is drawn as two short stubs leaving the grid at
  both ends (a line across the whole row would hide the row's own links).
* ``level`` (fat trees, trees): one row per level, the widest level at the
  bottom; within a row switches sit at the mean position of their
  neighbours in the row below (fewer crossings).
* otherwise a networkx layout: Kamada-Kawai up to 100 switches, a seeded
  spring layout above, so the picture is the same on every run.

The writer is plain string formatting (no plotting library); coordinates
are rounded so the output is byte-for-byte stable.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

import networkx as nx
import numpy as np

if TYPE_CHECKING:
    from ..fabric.topology import Link, Topology

GRID_STEP = 80.0          # px between neighbouring switches on a grid
MARGIN = 50.0
HEADER = 64.0             # title lines above the drawing
LEGEND = 110.0            # colour bar below the drawing
NODE_RADIUS = 14.0
STUB = 0.32               # wrap-link stub length, in grid steps
PARALLEL_BEND = 0.16      # bow of parallel links, in grid steps, per link
LABEL_LINKS_UP_TO = 160   # above this many links only the busiest get a number
SPRING_SEED = 7
KAMADA_KAWAI_UP_TO = 100  # its O(n^2) optimisation gets slow beyond (0.7 s at 64)

# Colour ramp for channel load, light (idle) to dark red (busiest); the
# stops are ColorBrewer's "YlOrRd" with a blue start so low load stays
# visible on white.
_RAMP = ((0.0, (116, 169, 207)), (0.35, (254, 204, 92)), (0.7, (253, 141, 60)),
         (1.0, (189, 0, 38)))
_IDLE = "#b8b8b8"
_DOWN = "#d0d0d0"
_TREE = "#6a3d9a"   # the broadcast flood tree overlay
_SPEED = "#1b5e20"  # labels of links not at the fabric's common speed


# ---------------------------------------------------------------- layout
def speed_text(mbps: int) -> str:
    """``mbps`` as people write link speeds: 100 Mb/s, 1 Gb/s, 2.5 Gb/s."""
    return "%g Gb/s" % (mbps / 1000.0) if mbps >= 1000 else "%d Mb/s" % mbps


def common_link_speed(topology: Topology) -> int | None:
    """The speed most links of ``topology`` run at (the fastest of a tie),
    or None when it has no link; the picture labels only the others."""
    counts = Counter(link.speed_mbps for link in topology.links)
    return max(counts, key=lambda speed: (counts[speed], speed)) if counts else None


def link_speed_summary(topology: Topology, limit: int = 12) -> str:
    """One line on the links' speeds: how many run at each speed, fastest
    first, naming (up to ``limit``) the links that are not at the common
    speed, e.g. ``31 at 1 Gb/s; 1 at 100 Mb/s: sw5:4--sw6:3``."""
    common = common_link_speed(topology)
    by_speed: dict[int, list[str]] = {}
    for link in topology.links:
        by_speed.setdefault(link.speed_mbps, []).append("%s--%s" % (link.a, link.b))
    parts = []
    for speed in sorted(by_speed, reverse=True):
        names = by_speed[speed]
        part = "%d at %s" % (len(names), speed_text(speed))
        if speed != common:
            part += ": " + ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
        parts.append(part)
    return "; ".join(parts) or "no links"


def fabric_layout(topology: Topology) -> dict[str, tuple[float, float]]:
    """Switch name -> (x, y) in grid steps (floats, y grows downwards).

    Also usable on its own, e.g. to place switches in another drawing."""
    switches = list(topology.switches.values())
    if switches and all(sw.coords is not None for sw in switches) \
            and len({len(sw.coords) for sw in switches}) == 1:
        return _grid_layout(topology, switches)
    if switches and all(sw.level is not None for sw in switches):
        return _level_layout(topology, switches)
    return _graph_layout(topology)


def _grid_layout(topology, switches):
    """Grid coordinates; dimensions beyond two tile 2-D slices."""
    ndim = len(switches[0].coords)
    if topology.shape is not None:
        dims = list(topology.shape["dims"])
    else:
        dims = [max(sw.coords[d] for sw in switches) + 1 for d in range(ndim)]
    if ndim == 1:
        return {sw.name: (float(sw.coords[0]), 0.0) for sw in switches}
    # dimensions 2.. tile the (dim0 x dim1) slices in a near-square grid
    slices = 1
    for size in dims[2:]:
        slices *= size
    columns = max(1, math.ceil(math.sqrt(slices)))
    positions = {}
    for sw in switches:
        tile = 0
        for d in range(ndim - 1, 1, -1):
            tile = tile * dims[d] + sw.coords[d]
        row, column = divmod(tile, columns)
        positions[sw.name] = (float(sw.coords[0] + column * (dims[0] + 1)),
                              float(sw.coords[1] + row * (dims[1] + 1)))
    return positions


def _level_layout(topology, switches):
    """One row per level, each row ordered under its neighbours below."""
    levels = {}
    for sw in switches:
        levels.setdefault(sw.level, []).append(sw.name)
    order = sorted(levels)
    # The widest level holds the leaves (fat trees number leaves 0, the tree
    # generator numbers the root 0): draw it at the bottom either way.
    if len(levels[order[0]]) < len(levels[order[-1]]):
        order.reverse()
    width = max(len(names) for names in levels.values())
    graph = topology.graph
    positions = {}
    below = set()
    for depth, level in enumerate(order):          # bottom row first
        names = levels[level]
        if below:
            names = sorted(names, key=lambda name: _barycentre(name, graph, below, positions,
                                                               width, topology))
        spacing = width / len(names)
        y = float(len(order) - 1 - depth) * 1.6     # levels further apart than grid rows
        for slot, name in enumerate(names):
            positions[name] = ((slot + 0.5) * spacing - 0.5, y)
        below = set(names)
    return positions


def _barycentre(name: str, graph: Any, below: set[str], positions: Mapping[str, tuple[float, float]],
                default: float, topology: Topology) -> tuple[float, int]:
    """Sort key of a switch: the mean x of its neighbours in the row below."""
    xs = [positions[other][0] for other in graph.neighbors(name) if other in below]
    return (sum(xs) / len(xs) if xs else default, topology.switches[name].index)


def _graph_layout(topology: Topology) -> dict[str, tuple[float, float]]:
    """A force-directed layout for fabrics without coordinates or levels."""
    graph = nx.Graph()
    graph.add_nodes_from(topology.switch_names())
    graph.add_edges_from((link.a.switch, link.b.switch) for link in topology.links)
    n = graph.number_of_nodes()
    if n == 1:
        return {next(iter(graph)): (0.0, 0.0)}
    # scale so that neighbours end up about one grid step apart
    scale = max(1.0, math.sqrt(n) * 0.9)
    if n <= KAMADA_KAWAI_UP_TO:
        raw = nx.kamada_kawai_layout(graph, scale=scale)
    else:
        raw = nx.spring_layout(graph, seed=SPRING_SEED, scale=scale, iterations=100)
    return {name: (float(x), float(y)) for name, (x, y) in raw.items()}


# ---------------------------------------------------------------- colours
def load_colour(fraction: float) -> str:
    """Hex colour of a load as a fraction (0..1) of the busiest channel."""
    fraction = min(1.0, max(0.0, float(fraction)))
    for (lo, c_lo), (hi, c_hi) in zip(_RAMP, _RAMP[1:]):
        if fraction <= hi:
            t = (fraction - lo) / (hi - lo) if hi > lo else 0.0
            rgb = [round(a + (b - a) * t) for a, b in zip(c_lo, c_hi)]
            return "#%02x%02x%02x" % tuple(rgb)
    return "#%02x%02x%02x" % _RAMP[-1][1]


def _number(value: Any) -> str:
    """A load as text: whole numbers without decimals."""
    value = float(value)
    return "%d" % round(value) if abs(value - round(value)) < 1e-9 else "%.2f" % value


def _f(value: float) -> str:
    """A coordinate as SVG text (one decimal, never -0.0)."""
    text = "%.1f" % value
    return "0.0" if text == "-0.0" else text


# ---------------------------------------------------------------- drawing
def fabric_svg(topology: Topology, loads: Sequence[float] | np.ndarray | None = None,
               down: Iterable[int] = (), title: str | None = None, subtitle: str | None = None,
               switch_notes: Mapping[str, str] | None = None, flood_tree: Iterable[int] = ()) -> str:
    """The fabric as an SVG document (a str).

    ``loads``: per channel id, the channel's load (e.g. from
    ``metrics.channel_loads``), or None to draw the bare topology.
    ``down``: link indexes drawn as down besides those down in the file.
    ``title``/``subtitle``: the two header lines. ``switch_notes``: switch
    name -> extra tooltip text (e.g. "VLANs 4, static entries 60").
    ``flood_tree``: link indexes of the broadcast flood tree, drawn as a
    dotted line along each (group ``flood-tree``) and named in tooltips.
    """
    title = title or "fabric %s" % topology.name
    positions = {name: (x * GRID_STEP, y * GRID_STEP)
                 for name, (x, y) in fabric_layout(topology).items()}
    down_links = set(down) | topology.down_links()
    max_load = None
    if loads is not None:
        max_load = max((float(loads[ch.id]) for ch in topology.channels
                        if ch.link not in down_links), default=0.0)
    wraps = _torus_wraps(topology)
    faint = _cross_tile_links(topology)
    drawn, extent = _link_geometry(topology, positions, wraps)

    low = np.vstack(extent).min(axis=0)
    high = np.vstack(extent).max(axis=0)
    shift = (MARGIN - low[0], HEADER + MARGIN / 2 - low[1])
    # wide enough for the header lines too (about 0.6 em per character)
    text_width = max(0.62 * 16 * len(title), 0.6 * 12 * len(subtitle or ""))
    width = max(float(high[0] - low[0]) + 2 * MARGIN, text_width + MARGIN, 460.0)
    legend_top = float(high[1] - low[1]) + HEADER + MARGIN
    height = legend_top + LEGEND
    at = _placer(shift)

    out = _header(width, height, title, subtitle)
    links, labels = _link_elements(topology, drawn, down_links, loads, max_load, faint, at, shift,
                                   set(flood_tree))
    out.extend(links)
    out.extend(_switch_elements(topology, positions, switch_notes or {}, at))
    out.append('<g id="link-loads" font-size="9" text-anchor="middle" fill="#222222" '
               'stroke="#ffffff" stroke-width="3" paint-order="stroke">')
    out.extend(labels)
    out.append('</g>')
    out.extend(_legend(max_load, legend_top, bool(wraps), bool(down_links), bool(faint)))
    out.append('</svg>')
    return "\n".join(out) + "\n"


def _link_geometry(topology: Topology, positions: Mapping[str, tuple[float, float]],
                   wraps: set[int]) -> tuple[list[tuple], list[np.ndarray]]:
    """Per link ``(link, geometry, label position)``, parallel links bowed
    apart and links kept off the switches they pass; and the arrays of
    points the drawing must hold."""
    names = topology.switch_names()
    centres = np.array([positions[name] for name in names])
    groups: dict[frozenset[str], list[Link]] = {}
    for link in topology.links:
        groups.setdefault(frozenset((link.a.switch, link.b.switch)), []).append(link)

    drawn = []          # (link, geometry, label position)
    extent = [centres - NODE_RADIUS, centres + NODE_RADIUS]
    for link in topology.links:
        siblings = groups[frozenset((link.a.switch, link.b.switch))]
        offset = (siblings.index(link) - (len(siblings) - 1) / 2.0) * PARALLEL_BEND * GRID_STEP
        p, q = positions[link.a.switch], positions[link.b.switch]
        if link.index in wraps:
            geometry, label = _wrap_stubs(p, q, offset)
            extent.append(np.array([pt for segment in geometry for pt in segment[1:]]))
        else:
            others = np.array([name not in (link.a.switch, link.b.switch) for name in names])
            offset = _clear_offset(p, q, offset, centres[others])
            geometry, label = _bow(p, q, offset)
            extent.append(_curve_points(p, q, offset))
        drawn.append((link, geometry, label))
    return drawn, extent


def _placer(shift: tuple[float, float]) -> Callable[[Sequence[float]], tuple[str, str]]:
    """The function giving the SVG coordinates (text) of a layout point."""
    def at(point: Sequence[float]) -> tuple[str, str]:
        return _f(point[0] + shift[0]), _f(point[1] + shift[1])
    return at


def _header(width: float, height: float, title: str, subtitle: str | None) -> list[str]:
    """The SVG's opening lines: root element, title, background, headers."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" '
           'font-family="Helvetica, Arial, sans-serif">' % (_f(width), _f(height), _f(width), _f(height)),
           '<title>%s</title>' % escape(title),
           '<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>' % (_f(width), _f(height)),
           '<text x="%s" y="24" font-size="16" font-weight="bold">%s</text>' % (_f(MARGIN / 2), escape(title))]
    if subtitle:
        out.append('<text x="%s" y="44" font-size="12" fill="#444444">%s</text>'
                   % (_f(MARGIN / 2), escape(subtitle)))
    return out


def _link_elements(topology: Topology, drawn: list[tuple], down: set[int],
                   loads: Sequence[float] | np.ndarray | None, max_load: float | None,
                   faint: set[int], at: Callable[[Sequence[float]], tuple[str, str]],
                   shift: tuple[float, float], tree: set[int] | None = None) -> tuple[list[str], list[str]]:
    """The links group (coloured and sized by load, with tooltips), the
    flood tree's dotted overlay and the load labels to draw above
    everything."""
    tree = tree or set()
    overlay = []
    label_all = len(topology.links) <= LABEL_LINKS_UP_TO
    common = common_link_speed(topology)
    out = ['<g id="links" fill="none">']
    labels = []
    for link, geometry, label in drawn:
        is_down = link.index in down
        tooltip = "%s -- %s, %s" % (link.a, link.b, speed_text(link.speed_mbps))
        style = ""
        if link.speed_mbps != common:  # the odd speeds are written on the link
            labels.append('<text x="%s" y="%s" fill="%s">%s</text>'
                          % (at(label)[0], _f(label[1] + shift[1] - 8), _SPEED, speed_text(link.speed_mbps)))
        if is_down:
            colour, stroke = _DOWN, 1.5
            style = ' stroke-dasharray="5,4"'
            tooltip += " (down)"
        elif loads is None or max_load is None:
            colour, stroke = "#555555", 2.0
        else:
            a_to_b, b_to_a = float(loads[2 * link.index]), float(loads[2 * link.index + 1])
            load = max(a_to_b, b_to_a)
            fraction = load / max_load if max_load > 0 else 0.0
            colour = load_colour(fraction) if load > 0 else _IDLE
            stroke = 1.5 + 5.0 * fraction
            tooltip += "\n%s -> %s: load %s\n%s -> %s: load %s" % (
                link.a, link.b, _number(a_to_b), link.b, link.a, _number(b_to_a))
            if label_all or (max_load > 0 and load >= 0.9 * max_load):
                labels.append('<text x="%s" y="%s">%s</text>'
                              % (at(label)[0], _f(label[1] + shift[1] + 3), _number(load)))
        if link.index in faint:
            style += ' stroke-opacity="0.45"'
        if link.index in tree:
            tooltip += "\non the broadcast flood tree"
            overlay.append("".join(_path(segment, at) for segment in geometry))
        out.append('<g stroke="%s" stroke-width="%s"%s><title>%s</title>%s</g>'
                   % (colour, _f(stroke), style, escape(tooltip),
                      "".join(_path(segment, at) for segment in geometry)))
    out.append('</g>')
    if overlay:
        out.append('<g id="flood-tree" fill="none" stroke="%s" stroke-width="1.2" '
                   'stroke-dasharray="1,3">%s</g>' % (_TREE, "".join(overlay)))
    return out, labels


def _switch_elements(topology: Topology, positions: Mapping[str, tuple[float, float]],
                     switch_notes: Mapping[str, str],
                     at: Callable[[Sequence[float]], tuple[str, str]]) -> list[str]:
    """The switches group: a labelled circle per switch with its tooltip."""
    out = ['<g id="switches">']
    for sw in topology.switches.values():
        x, y = at(positions[sw.name])
        hosts = len(topology.hosts_on(sw.name))
        tooltip = "%s (%s): %d host%s" % (sw.name, sw.platform, hosts, "" if hosts == 1 else "s")
        if sw.name in switch_notes:
            tooltip += "\n" + switch_notes[sw.name]
        font = 9 if len(sw.name) <= 4 else max(6, 9 - (len(sw.name) - 4))
        out.append('<g><title>%s</title><circle cx="%s" cy="%s" r="%s" fill="#ffffff" '
                   'stroke="#1f3b57" stroke-width="2"/><text x="%s" y="%s" font-size="%d" '
                   'text-anchor="middle">%s</text></g>'
                   % (escape(tooltip), x, y, _f(NODE_RADIUS), x, _f(float(y) + 3), font,
                      escape(sw.name)))
    out.append('</g>')
    return out


def _torus_wraps(topology):
    """Link indexes of torus wrap-around links (ends k-1 apart in one dimension)."""
    shape = topology.shape
    if not shape or shape["kind"] != "torus":
        return set()
    wraps = set()
    for link in topology.links:
        a = topology.switches[link.a.switch].coords
        b = topology.switches[link.b.switch].coords
        differing = [d for d in range(len(a)) if a[d] != b[d]]
        if len(differing) == 1:
            d = differing[0]
            if shape["dims"][d] > 2 and abs(a[d] - b[d]) == shape["dims"][d] - 1:
                wraps.add(link.index)
    return wraps


def _cross_tile_links(topology):
    """On a grid of 3 or more dimensions, the links between 2-D slices
    (drawn faint so each slice's own grid stays readable)."""
    switches = topology.switches
    faint = set()
    for link in topology.links:
        a, b = switches[link.a.switch].coords, switches[link.b.switch].coords
        if a is not None and b is not None and len(a) > 2 and a[2:] != b[2:]:
            faint.add(link.index)
    return faint


def _curve_points(p, q, offset, samples=24):
    """Points along the drawn link (straight, or the quadratic bow)."""
    t = np.linspace(0.0, 1.0, samples)[:, None]
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return (1 - t) ** 2 * p + 2 * (1 - t) * t * _control(p, q, offset) + t ** 2 * q


def _control(p, q, offset):
    # the control point pushed sideways by 2*offset puts the bow's apex at offset
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    d = q - p
    length = float(np.hypot(*d)) or 1.0
    return (p + q) / 2 + np.array([-d[1], d[0]]) / length * offset * 2


def _clear_offset(p, q, offset, others):
    """A bow for the link p-q that keeps it off every other switch's circle:
    a link between non-neighbours on a grid (across slices, or a long
    explicit link) would otherwise run straight through the switches between."""
    if not len(others):
        return offset
    clearance = NODE_RADIUS + 4.0
    length = math.hypot(q[0] - p[0], q[1] - p[1])
    sign = 1.0 if offset >= 0 else -1.0
    for extra in (0.0, 0.08, 0.12, 0.16, 0.2, 0.25, 0.3, 0.38, 0.45, 0.55):
        for side in (sign, -sign):
            candidate = offset + side * extra * length
            points = _curve_points(p, q, candidate)
            gaps = np.sqrt(((points[:, None, :] - others[None, :, :]) ** 2).sum(axis=2))
            if gaps.min() >= clearance:
                return candidate
    return offset + sign * 0.12 * length


def _bow(p, q, offset):
    """Geometry of a straight or bowed link, and where its load label goes."""
    if abs(offset) < 1e-9:
        return [("L", p, q)], ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
    control = _control(p, q, offset)
    apex = 0.25 * np.asarray(p) + 0.5 * control + 0.25 * np.asarray(q)
    return [("Q", p, tuple(control), q)], (float(apex[0]), float(apex[1]))


def _wrap_stubs(p, q, offset):
    """A torus wrap link: two stubs pointing out of the grid, away from each other."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    stub = STUB * GRID_STEP
    sx, sy = -uy * offset, ux * offset      # parallel wrap links side by side
    segments = []
    for (x, y), sign in ((p, -1.0), (q, 1.0)):
        segments.append(("L", (x + sx, y + sy), (x + sign * ux * stub + sx, y + sign * uy * stub + sy)))
    label = (p[0] - ux * stub * 0.7 + sx - uy * 8, p[1] - uy * stub * 0.7 + sy + ux * 8)
    return segments, label


def _path(segment, at):
    kind, *points = segment
    coords = [",".join(at(point)) for point in points]
    if kind == "L":
        return '<path d="M%s L%s"/>' % tuple(coords)
    return '<path d="M%s Q%s %s"/>' % tuple(coords)


def _legend(max_load, top, has_wraps, has_down, has_faint):
    y = top + 18
    x = MARGIN / 2
    parts = ['<g id="legend" font-size="11">']
    if max_load is not None:
        parts.append('<defs><linearGradient id="load-ramp">%s</linearGradient></defs>'
                     % "".join('<stop offset="%s%%" stop-color="%s"/>' % (_f(stop * 100), load_colour(stop))
                               for stop, _rgb in _RAMP))
        parts.append('<text x="%s" y="%s">channel load (the busier direction of each link):</text>'
                     % (_f(x), _f(y)))
        parts.append('<text x="%s" y="%s" text-anchor="end">0</text>' % (_f(x + 4), _f(y + 20)))
        parts.append('<rect x="%s" y="%s" width="160" height="10" fill="url(#load-ramp)" '
                     'stroke="#888888"/>' % (_f(x + 8), _f(y + 10)))
        parts.append('<text x="%s" y="%s">%s (max)</text>' % (_f(x + 172), _f(y + 20), _number(max_load)))
    notes = []
    if has_wraps:
        notes.append("stubs at the border: torus wrap-around links")
    if has_faint:
        notes.append("faint: links between the 2-D slices")
    if has_down:
        notes.append("dashed: link down")
    notes.append("hover for ports, loads and hosts")
    for line, note in enumerate(notes):
        parts.append('<text x="%s" y="%s" fill="#444444">%s</text>'
                     % (_f(x), _f(y + 40 + 14 * line), escape(note)))
    parts.append('</g>')
    return parts
