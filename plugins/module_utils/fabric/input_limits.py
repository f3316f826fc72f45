# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Size limits of topology input, and the YAML loader that enforces them.

A topology file is read by the controller before anything else looks at
it, so a hostile or mistyped file must be refused cheaply: before it is
read when it is too large (``read_text``), before any Python object is
built when its YAML nests too deep or its aliases expand too far
(``load_yaml_text``), and before any entry is validated when it lists too
many switches, links or hosts (``check_counts``). Generators check the same
maxima from their parameters before generating (:mod:`generators`).

Every refusal is a :class:`TopologyError` naming the file (and the line,
for YAML), so Ansible never shows a traceback. The maxima and their
reasons are documented in docs/topology.md ("Limits").
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from ..errors import TopologyError

# The benchmarks plan fabrics of up to 1,024 switches and 16,384 hosts; the
# maxima leave four times that room and still keep planning tractable.
MAX_SWITCHES = 4096
MAX_LINKS = 32768  # 8 links per switch at the maximum switch count
MAX_HOSTS = 65536
# A topology file at every maximum above is about 8 MiB of YAML.
MAX_FILE_BYTES = 32 * 1024 * 1024
# A topology nests 5 or 6 levels (top, switches, switch, interface_names,
# value); 32 leaves room for inventory options while keeping the parser's
# C recursion far from the stack (deep nesting crashes libyaml's composer).
MAX_DEPTH = 32
# Nodes after alias expansion: a file at every maximum holds about 1.4
# million (65,536 hosts of ~10 nodes, 32,768 links of ~9, switches with
# interface names); an alias bomb is refused after measuring, not expanding.
MAX_YAML_NODES = 2_000_000

LIMITS_DOC = "docs/topology.md, 'Limits'"

_MERGE_TAG = "tag:yaml.org,2002:merge"
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser where built


class UniqueKeyLoader(_BaseLoader):
    """Safe loader (libyaml's when available) that refuses duplicate
    mapping keys instead of silently keeping the last one (two switches
    with one name is a typo, not a merge). YAML 1.1 merge keys
    (``<<: *defaults``) work: the keys written beside them override the
    merged ones, as the merge key type defines."""


def _construct_unique_mapping(loader, node, deep=False):
    seen = {}
    for key_node, dummy in node.value:
        if key_node.tag == _MERGE_TAG:
            continue  # flattened by construct_mapping; explicit keys win over merged ones
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark,
                "duplicate key %r (first at line %d)" % (key, seen[key] + 1), key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                _construct_unique_mapping)


def _too_large(what: str, size: int, limit: int, unit: str) -> str:
    return "%s is %d %s, more than the %d %s a topology file may have (%s)" % (
        what, size, unit, limit, unit, LIMITS_DOC)


def read_text(path: Any, source: str | None = None) -> str:
    """The text of the topology file at ``path``, refused before reading
    when it is larger than :data:`MAX_FILE_BYTES` (and, for a device or a
    growing file that ``stat`` cannot size, after reading one byte more).
    Raises TopologyError naming ``source`` (default: the path)."""
    source = str(path) if source is None else source
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise TopologyError(_too_large("the file", size, MAX_FILE_BYTES, "bytes"), source)
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TopologyError("cannot read the file: %s" % (exc.strerror or exc), source)
    except UnicodeDecodeError as exc:
        raise TopologyError("not UTF-8 text: %s" % exc, source)
    if len(text) > MAX_FILE_BYTES:
        raise TopologyError("the file holds more than the %d characters a topology file may have (%s)"
                            % (MAX_FILE_BYTES, LIMITS_DOC), source)
    return text


class _Measure:
    """The running count of :func:`measure_yaml`: nodes so far (aliases
    expanded), the deepest level reached, per anchor the (expanded size,
    height) of its node, and the open collections ``[size, height, anchor]``."""

    def __init__(self, source: str, count_entries: bool = False) -> None:
        self.source = source
        self.total = 0
        self.deepest = 0
        self.anchors: dict[str, tuple[int, int]] = {}
        self.stack: list[list] = []
        # with count_entries: the entries of the top-level switches, links and
        # hosts, counted here so that an oversized file is refused before
        # PyYAML builds it (seconds per 100,000 entries)
        self.counts: dict[str, int] | None = {} if count_entries else None
        self.top_children = 0
        self.top_key: Any = None

    def node(self, size: int, height: int, event: Any) -> None:
        """Account one complete node (scalar or alias) at the current level."""
        self.total += size
        reach = len(self.stack) + height
        self.deepest = max(self.deepest, reach)
        if reach > MAX_DEPTH:
            raise TopologyError("line %d: the YAML nests %d levels deep, more than the %d a topology "
                                "file may have (%s)" % (_line(event), reach, MAX_DEPTH, LIMITS_DOC),
                                self.source)
        if self.total > MAX_YAML_NODES:
            raise TopologyError(
                "line %d: with its aliases expanded the YAML holds more than %d nodes, the most a "
                "topology file may have (%s); an alias bomb?" % (_line(event), MAX_YAML_NODES, LIMITS_DOC),
                self.source)

    def finish(self, size: int, height: int) -> None:
        """A node is complete: it counts in its parent collection."""
        if self.stack:
            self.stack[-1][0] += size
            self.stack[-1][1] = max(self.stack[-1][1], height + 1)
            self.stack[-1][3] += 1
        if len(self.stack) == 1:
            self.top_children += 1

    def _start(self, event: Any) -> None:
        """A collection opens: a frame ``[size, height, anchor, children,
        counted field, merge keys]``."""
        field = None
        if self.counts is not None and len(self.stack) == 1 and self.top_children % 2 == 1 \
                and self.top_key in COUNTED:
            field = self.top_key
        self.stack.append([1, 1, event.anchor, 0, field, 0])

    def _end(self, event: Any) -> list:
        frame = self.stack.pop()
        if frame[4] is not None and self.counts is not None:
            # a merge key (<<) adds entries of its own, counted when built
            self.counts[frame[4]] = frame[3] // 2 - frame[5] if isinstance(event, yaml.MappingEndEvent) else frame[3]
        return frame

    def alias(self, event: Any) -> None:
        """An alias costs its anchor's expanded size, in constant time."""
        name = event.anchor or ""
        if any(frame[2] == name for frame in self.stack):
            raise TopologyError("line %d: alias *%s refers to a node that contains it (a recursive "
                                "structure cannot describe a fabric)" % (_line(event), name), self.source)
        # an undefined alias counts as one node; the loader reports it with its line
        size, height = self.anchors.get(name, (1, 1))
        self.node(size, height, event)
        self.finish(size, height)

    def event(self, event: Any) -> None:
        """Account one parser event."""
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self.node(1, 1, event)
            self._start(event)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            size, height, anchor = self._end(event)[:3]
            if anchor is not None:
                self.anchors[anchor] = (size, height)
            self.finish(size, height)
        elif isinstance(event, yaml.ScalarEvent):
            if len(self.stack) == 1 and self.top_children % 2 == 0:
                self.top_key = event.value
            elif len(self.stack) == 2 and self.stack[-1][4] is not None and self.stack[-1][3] % 2 == 0 \
                    and event.value == "<<":
                self.stack[-1][5] += 1
            self.node(1, 1, event)
            if event.anchor is not None:
                self.anchors[event.anchor] = (1, 1)
            self.finish(1, 1)
        elif isinstance(event, yaml.AliasEvent):
            self.alias(event)
        elif isinstance(event, yaml.DocumentStartEvent):
            self.anchors = {}


def measure_yaml(text: str, source: str = "<topology>", count_entries: bool = False) -> tuple[int, int]:
    """Measure YAML text without building it: ``(nodes, depth)``, the node
    count with every alias expanded and the deepest nesting (the top level
    is 1). Works on the parser's events, remembering per anchor the size
    and height of its node, so an alias is counted in constant time and a
    billion-laughs file is measured, not expanded. Raises TopologyError
    naming the line of the offending node when the text nests deeper than
    :data:`MAX_DEPTH`, expands beyond :data:`MAX_YAML_NODES` or holds an
    alias inside its own anchor (a recursive structure); yaml.YAMLError
    when it is not YAML at all. With ``count_entries`` (a topology file)
    also when the top-level ``switches``, ``links`` or ``hosts`` hold more
    entries than their maxima (:func:`check_counts`' refusal)."""
    measure = _Measure(source, count_entries)
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            measure.event(event)
    except yaml.MarkedYAMLError as exc:
        # libyaml >= 0.2.6 (PyYAML 6.0.3+) refuses flow nesting past 1000
        # levels while scanning ahead, before the parser yields the event at
        # which our own limit would have refused it: same refusal, its line
        if "nesting depth" not in (exc.problem or "") or exc.problem_mark is None:
            raise
        raise TopologyError("line %d: the YAML nests deeper than its parser allows, more than the %d a "
                            "topology file may have (%s)"
                            % (exc.problem_mark.line + 1, MAX_DEPTH, LIMITS_DOC), source) from None
    problems = _count_problems(measure.counts or {})
    if problems:
        raise TopologyError(problems, source)
    return measure.total, measure.deepest


def _line(event):
    return event.start_mark.line + 1


def _at(mark: Any) -> str:
    return "line %d, column %d" % (mark.line + 1, mark.column + 1)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error as one line that names lines, not PyYAML's
    ``"<unicode string>"``. An unclosed ``[`` or ``{`` is reported where
    it opens (PyYAML's problem mark is where it gave up, often lines later)."""
    if not isinstance(exc, yaml.MarkedYAMLError) or (exc.problem_mark is None and exc.context_mark is None):
        return " ".join(str(exc).split())
    problem, context = exc.problem or "", exc.context or ""
    if exc.problem_mark is None:
        return "%s: %s" % (_at(exc.context_mark), context or problem)
    if not context or exc.context_mark is None:
        return "%s: %s" % (_at(exc.problem_mark), problem)
    if context.startswith("while parsing a flow"):
        return "%s: %s opened here is not closed: %s (at %s)" % (
            _at(exc.context_mark), context[len("while parsing "):], problem, _at(exc.problem_mark))
    return "%s: %s (%s at %s)" % (_at(exc.problem_mark), problem, context, _at(exc.context_mark))


def load_yaml_text(text: str, source: str = "<topology>", count_entries: bool = False) -> Any:
    """Parse YAML text into plain data, safely: refused (TopologyError
    naming ``source``) when longer than :data:`MAX_FILE_BYTES`, when
    :func:`measure_yaml` finds it too deep or too large once aliases are
    expanded, when a mapping repeats a key, or when it is not valid YAML.
    The limits are checked before any node is built (with
    ``count_entries``, a topology file's entry counts too)."""
    if len(text) > MAX_FILE_BYTES:
        raise TopologyError(_too_large("the text", len(text), MAX_FILE_BYTES, "characters"), source)
    try:
        measure_yaml(text, source, count_entries)
        loader = UniqueKeyLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise TopologyError("not valid YAML: %s" % yaml_problem(exc), source)
    except (ValueError, TypeError, RecursionError) as exc:
        # e.g. an integer of more digits than Python converts
        raise TopologyError("not valid YAML: %s" % exc, source)


COUNTED = ("switches", "links", "hosts")


def _count_problems(counts: dict[str, int]) -> list[str]:
    """One line per field of ``counts`` (switches, links, hosts -> entries)
    over its maximum, in that order."""
    limits = {"switches": MAX_SWITCHES, "links": MAX_LINKS, "hosts": MAX_HOSTS}
    return ["%s: %d entries, more than the %d a topology may have (%s)" % (field, counts[field], limits[field], LIMITS_DOC)
            for field in COUNTED if counts.get(field, 0) > limits[field]]


def check_counts(data: Any, source: str = "<topology>") -> None:
    """Refuse explicit topology data listing more switches, links or hosts
    than the maxima, before any entry is validated (validation time and
    every later stage grow with these counts)."""
    if not isinstance(data, dict):
        return
    problems = _count_problems({field: len(entries) for field, entries in data.items()
                                if field in COUNTED and isinstance(entries, (dict, list))})
    if problems:
        raise TopologyError(problems, source)
