# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""From planning options to the files of an offline plan, and the writing
of those files: the pure-Python half of the ``ethercluster.routing.plan``
action plugin (and of the ``vlan_assignment``/``static_mac_table`` filters).

An output directory holds:

* ``intent.json`` -- the switch intent (schema ``ethercluster.routing/intent/v1``),
  written only when every check passed;
* ``configs/<switch>.<ext>`` -- each switch's configuration in its
  platform's own syntax (platforms/render.py), written with the intent;
* ``report.md`` -- the numbers and every check with its result, written on
  success and on failure (a rejected plan's report says why);
* ``fabric.svg`` -- the fabric with each link coloured by channel load.

A rejected input must not leave an earlier, now stale ``intent.json``
looking current: it is renamed ``intent.json.stale`` (kept for inspection;
nothing reads that name), and so is every file in ``configs/`` that this run
does not make, and ``fabric.svg`` when the topology
itself cannot be read. Files are replaced atomically and only when their
content changes, so a second run with the same input changes nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EtherclusterError
from ..intent.documents import plain_data
from ..intent.schema import validate_intent
from .svg import fabric_svg
from .markdown import render_report, report_context
from ..platforms.render import CONFIG_DIR, render_configs
from ..fabric.topology import Topology, load_topology, topology_from_data

if TYPE_CHECKING:
    from ..routing.base import RoutingFunction
    from ..assign.vlans import Assignment

INTENT_FILE = "intent.json"
REPORT_FILE = "report.md"
PICTURE_FILE = "fabric.svg"
OUTPUT_FILES = (INTENT_FILE, REPORT_FILE, PICTURE_FILE)
CONFIGS_NOTE = "configs/<switch>.<ext>"
STALE_SUFFIX = ".stale"

ASSIGNMENTS = ("auto", "fixed", "renamed")
BROADCAST = ("contained", "bounded")
BANKS = ("A", "B")
MAC_LEARNING = ("static", "self")

PLAN_DEFAULTS: dict[str, Any] = {
    "routing": "segment",
    "engine_options": None,
    "assignment": "auto",
    "down_links": (),
    "bank": "A",
    "vlan_range": None,
    "mac_learning": "static",
    "traffic": "uniform",
    "max_broadcast_copies": None,  # None: the planner's default
    "broadcast": "contained",
}

FILE_NOTES = {
    INTENT_FILE: "the switch intent: per switch VLANs, port PVIDs and memberships, static MAC entries",
    REPORT_FILE: "this report",
    PICTURE_FILE: "the fabric, each link coloured and thickened by its channel load",
    CONFIGS_NOTE: "each switch's configuration in its platform's syntax (docs/platforms.md)",
}


class OutputError(EtherclusterError):
    """The output directory or one of its files cannot be read or written."""


def load_topology_arg(value: Any, source: str = "topology data") -> Topology:
    """A Topology from what a plugin was given: a Topology, topology data (a
    mapping in the file's form) or the path of a topology file."""
    if isinstance(value, Topology):
        return value
    if isinstance(value, Mapping):
        return topology_from_data(plain_data(value), source=source)
    if isinstance(value, str):
        return load_topology(str(value))
    raise OutputError("%s: must be topology data (a mapping with 'switches'/'links'/'hosts' or "
                      "with 'generate') or the path of a topology file, got %s"
                      % (source, type(value).__name__))


def plan_options(**given: Any) -> dict[str, Any]:
    """The planning options with defaults filled in and the enumerations
    checked (the plugins' argument specs check them too; the filters rely
    on this). Raises OutputError naming the option."""
    options = dict(PLAN_DEFAULTS)
    for key, value in given.items():
        if key not in PLAN_DEFAULTS:
            raise OutputError("unknown planning option %r (options: %s)"
                              % (key, ", ".join(sorted(PLAN_DEFAULTS))))
        if value is not None:
            options[key] = plain_data(value)
    for key, allowed in (("assignment", ASSIGNMENTS), ("bank", BANKS),
                         ("mac_learning", MAC_LEARNING), ("broadcast", BROADCAST)):
        if options[key] not in allowed:
            raise OutputError("%s: must be one of %s, got %r"
                              % (key, ", ".join(allowed), options[key]))
    limit = options["max_broadcast_copies"]
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise OutputError("max_broadcast_copies: must be a whole number >= 0, got %r" % (limit,))
    if options["engine_options"] is not None and not isinstance(options["engine_options"], dict):
        raise OutputError("engine_options: must be a mapping of engine option -> value, got %r"
                          % (options["engine_options"],))
    options["engine_options"] = dict(options["engine_options"] or {})
    down = options["down_links"]
    options["down_links"] = list(down) if isinstance(down, (list, tuple)) else [down]
    vlan_range = options["vlan_range"]
    if vlan_range is not None:
        if isinstance(vlan_range, str) and vlan_range.count("-") == 1:
            vlan_range = vlan_range.split("-")
        try:
            first, last = (int(value) for value in vlan_range)
        except (TypeError, ValueError):
            raise OutputError("vlan_range: must be [first, last] (or \"first-last\"), got %r"
                              % (options["vlan_range"],)) from None
        options["vlan_range"] = [first, last]
    return options


def compute_plan(topology: Topology, options: dict[str, Any]) -> Any:
    """Run the planner (``intent.plan``) with ``options`` from :func:`plan_options`."""
    from ..intent.build import plan  # the planner imports every engine; load it when used

    return plan(topology, engine=options["routing"], assignment=options["assignment"],
                engine_options=options["engine_options"], down=options["down_links"],
                bank=options["bank"],
                vlan_range=tuple(options["vlan_range"]) if options["vlan_range"] else None,
                mac_learning=options["mac_learning"], traffic=options["traffic"],
                broadcast=options["broadcast"],
                **({} if options["max_broadcast_copies"] is None
                   else {"max_broadcast_copies": options["max_broadcast_copies"]}))


_SCALARS = (str, int, float, bool, type(None))


def _json_default(value: Any) -> Any:
    """JSON for what ``json`` cannot encode itself (numpy, tuples, sets)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)
    raise TypeError("%s is not JSON data" % type(value).__name__)


def json_data(value: Any) -> Any:
    """``value`` as plain JSON data (a deep copy; numpy scalars and arrays,
    tuples and sets become numbers and lists)."""
    return json.loads(json.dumps(value, default=_json_default))


def _is_leaf(value: Any) -> bool:
    """Scalars, lists of scalars, and mappings of those: written on one line."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, list):
        return all(isinstance(item, _SCALARS) for item in value)
    if isinstance(value, dict):
        return all(isinstance(item, _SCALARS)
                   or (isinstance(item, list) and all(isinstance(x, _SCALARS) for x in item))
                   for item in value.values())
    return False


def _json_lines(value: Any, pad: str, out: list[str], encode: Callable[[Any], str]) -> None:
    """Append the text of ``value`` to ``out``: leaves on one line, the rest nested."""
    if _is_leaf(value):
        out.append(encode(value))
        return
    inner = pad + "  "
    items = list(value.items()) if isinstance(value, dict) else list(value)
    if not items:
        out.append("{}" if isinstance(value, dict) else "[]")
        return
    out.append("{\n" if isinstance(value, dict) else "[\n")
    last = len(items) - 1
    for position, item in enumerate(items):
        out.append(inner)
        if isinstance(value, dict):
            key, item = item
            out.append(encode(str(key)))
            out.append(": ")
        _json_lines(item, inner, out, encode)
        out.append(",\n" if position < last else "\n")
    out.append(pad + ("}" if isinstance(value, dict) else "]"))


def intent_text(intent: dict[str, Any]) -> str:
    """intent.json's text: key order as planned, and one line per link,
    host, port and static MAC entry -- smaller than one line per field, and
    a diff between two plans shows whole entries. The intent is checked
    against the shipped schema first: nothing writes an intent outside
    its contract."""
    data = json_data(intent)
    validate_intent(data, INTENT_FILE)
    out: list[str] = []
    _json_lines(data, "", out,
                json.JSONEncoder(separators=(", ", ": "), ensure_ascii=False).encode)
    out.append("\n")
    return "".join(out)


def channel_loads_of(topology: Topology, routing: RoutingFunction | None,
                     metrics: Mapping[str, Any] | None, traffic: Any) -> np.ndarray | None:
    """Per-channel load for the picture: the plan's own figures when it
    carries them, else computed from the routing's paths (None when there
    is no routing, or the traffic pattern is what made the plan fail)."""
    for key in LOAD_KEYS:
        loads = (metrics or {}).get(key)
        if loads is None:
            continue
        if isinstance(loads, Mapping):      # keyed by channel id or channel string
            by_name = {str(ch): ch.id for ch in topology.channels}
            array = np.zeros(len(topology.channels))
            for channel, value in loads.items():
                index: Any = by_name.get(channel, channel)   # a name, else an id
                array[int(index)] = float(value)
            return array
        if len(loads) == len(topology.channels):
            return np.asarray(loads, dtype=float)
    if routing is None:
        return None
    from ..verify import metrics as metrics_module

    try:
        pattern = metrics_module.traffic_pattern(topology, traffic) if isinstance(traffic, str) \
            else traffic
        return metrics_module.channel_loads(topology, routing.paths(), pattern)
    except EtherclusterError:
        return None


def loads_summary(metrics: Mapping[str, Any] | None, topology: Topology,
                  loads: np.ndarray | None) -> dict[str, Any] | None:
    """max_channel_load, average_hops and the busiest channels for the report."""
    metrics = metrics or {}
    if "max_channel_load" not in metrics or "average_hops" not in metrics:
        return None
    busiest = metrics.get("busiest_channels") or metrics.get("busiest") or []
    if not busiest and loads is not None:
        order = np.argsort(-np.asarray(loads), kind="stable")[:5]
        busiest = ["%s = %s" % (topology.channels[i], plain_data(loads[i])) for i in order
                   if loads[i] > 0]
    return {"max_channel_load": metrics["max_channel_load"], "average_hops": metrics["average_hops"],
            "busiest": [str(item) for item in busiest]}


def switch_notes(intent: dict[str, Any] | None) -> dict[str, str]:
    """Tooltip line per switch for the picture."""
    notes = {}
    for name, entry in (intent or {}).get("switches", {}).items():
        notes[name] = "VLANs %d, static MAC entries %d" % (
            len(entry.get("vlans", ())), len(entry.get("static_macs", ())))
    return notes


def picture(topology: Topology, options: dict[str, Any], plan: Any = None, loads: np.ndarray | None = None,
            summary: dict[str, Any] | None = None, rejected: bool = False) -> str:
    """fabric.svg text."""
    subtitle = "routing %s, %s VLAN assignment" % (options["routing"], options["assignment"])
    if summary is not None:
        subtitle += ": max channel load %g, average hops %g (%s traffic)" % (
            round(float(summary["max_channel_load"]), 3), round(float(summary["average_hops"]), 3),
            options["traffic"])
    if rejected:
        subtitle += " - REJECTED plan"
    down = set()
    routing = getattr(plan, "routing", None)
    if routing is not None:
        down = set(routing.down)
    tree = (getattr(getattr(plan, "assignment", None), "broadcast_tree", None) or {}).get("links", ())
    return fabric_svg(topology, loads=loads, down=down, flood_tree=tree,
                      title="fabric %s (%d switches, %d hosts)"
                      % (topology.name, len(topology.switches), len(topology.hosts)),
                      subtitle=subtitle, switch_notes=switch_notes(getattr(plan, "intent", None)))


class PlanResult:
    """What an offline plan produced: the plan (or the error), and the text
    of every output file that can be made (None: cannot be made -- an
    earlier file of that name is stale)."""

    def __init__(self, options: dict[str, Any], topology: Topology | None = None, plan: Any = None,
                 error: BaseException | None = None, checks: list[dict[str, Any]] | None = None,
                 loads: np.ndarray | None = None, summary: dict[str, Any] | None = None) -> None:
        self.options = options
        self.topology = topology
        self.plan = plan
        self.error = error
        self.checks = list(checks or ())
        self.loads = loads
        self.summary = summary
        self.contents: dict[str, str | None] = {}

    @property
    def accepted(self) -> bool:
        """True when the plan passed every check."""
        return self.plan is not None and self.error is None

    def returned(self) -> dict[str, Any]:
        """The plan as plain data for a module result."""
        if not self.accepted:
            return {"checks": json_data(self.checks)}
        return {"intent": json_data(self.plan.intent), "checks": json_data(self.plan.checks),
                "metrics": json_data(_without_arrays(self.plan.metrics)),
                "host_limit": json_data(self.plan.host_limit)}


LOAD_KEYS = ("channel_loads", "loads", "per_channel_loads")


def _without_arrays(metrics: Mapping[str, Any] | None) -> dict[str, Any]:
    """The plan's metrics minus the per-channel loads (fabric.svg shows them)."""
    return {key: value for key, value in (metrics or {}).items()
            if key not in LOAD_KEYS and not isinstance(value, np.ndarray)}


def run_plan(topology: Any, source: str = "topology data", **given: Any) -> PlanResult:
    """Plan ``topology`` (a Topology, topology data or a file path) and make
    the outputs. ``source`` names data in messages (e.g. the option that
    held it). Never raises EtherclusterError: a bad input comes back as
    ``result.error`` with ``accepted`` False and no intent."""
    options = None
    try:
        options = plan_options(**given)
    except EtherclusterError as exc:
        result = PlanResult(dict(PLAN_DEFAULTS, **{k: v for k, v in given.items()
                                                   if k in PLAN_DEFAULTS}), error=exc)
        result.contents = {REPORT_FILE: _failure_report(result, topology_source(topology, source)),
                           PICTURE_FILE: None, INTENT_FILE: None}
        return result
    try:
        loaded = load_topology_arg(topology, source)
    except EtherclusterError as exc:
        result = PlanResult(options, error=exc)
        result.contents = {REPORT_FILE: _failure_report(result, topology_source(topology, source)),
                           PICTURE_FILE: None, INTENT_FILE: None}
        return result
    try:
        plan = compute_plan(loaded, options)
        configs = render_configs(plan.intent)
    except EtherclusterError as exc:
        # a PlanError carries the partial plan (routing, metrics, every check
        # run, maybe the rejected intent): the report and picture show them
        partial = getattr(exc, "plan", None)
        checks = getattr(partial, "checks", None) or getattr(exc, "checks", None)
        result = PlanResult(options, loaded, error=exc, checks=checks)
        routing = getattr(partial, "routing", None)
        metrics = getattr(partial, "metrics", None)
        if routing is not None:
            result.loads = channel_loads_of(loaded, routing, metrics, options["traffic"])
        result.summary = loads_summary(metrics, loaded, result.loads)
        result.contents = {
            REPORT_FILE: render_report(report_context(
                loaded, options, plan=partial, error=exc, checks=result.checks,
                loads_summary=result.summary, files=_file_notes(accepted=False))),
            PICTURE_FILE: picture(loaded, options, plan=partial, loads=result.loads,
                                  summary=result.summary, rejected=True),
            INTENT_FILE: None,
        }
        return result
    result = PlanResult(options, loaded, plan=plan, checks=plan.checks)
    result.loads = channel_loads_of(loaded, plan.routing, plan.metrics, options["traffic"])
    result.summary = loads_summary(plan.metrics, loaded, result.loads)
    result.contents = {
        INTENT_FILE: intent_text(plan.intent),
        REPORT_FILE: render_report(report_context(
            loaded, options, plan=plan, checks=plan.checks, loads_summary=result.summary,
            files=_file_notes(accepted=True))),
        PICTURE_FILE: picture(loaded, options, plan=plan, loads=result.loads, summary=result.summary),
    }
    result.contents.update(configs)
    return result


def topology_source(topology: Any, source: str = "topology data") -> str:
    """What the report names as the topology's origin."""
    if isinstance(topology, Topology):
        return topology.source
    if isinstance(topology, str):
        return topology
    return source


def _file_notes(accepted: bool) -> dict[str, str]:
    """What each output file holds, or why it was not written."""
    notes = dict(FILE_NOTES)
    if not accepted:
        notes[INTENT_FILE] = ("not written (the plan was rejected); an earlier one, if any, "
                              "is renamed intent.json.stale")
        notes[CONFIGS_NOTE] = "not written; earlier ones, if any, are renamed *.stale"
    return notes


def _failure_report(result: PlanResult, source: str) -> str:
    """report.md of a run that could not even load its options or topology."""
    context = report_context(None, result.options, error=result.error, source=source,
                             files={REPORT_FILE: "this report",
                                    INTENT_FILE: "not written; an earlier one, if any, is renamed "
                                                 "intent.json.stale",
                                    PICTURE_FILE: "not drawn (no topology); an earlier one, if "
                                                  "any, is renamed fabric.svg.stale"})
    return render_report(context)


# ---------------------------------------------------------------- files
def _read(path: str) -> str | None:
    """A file's text, or None when there is no such file."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputError("%s: cannot read it: %s" % (path, getattr(exc, "strerror", None) or exc))


def _write_atomically(path: str, text: str) -> None:
    """Replace ``path`` by ``text`` in one rename (mode 0666 less the umask)."""
    directory = os.path.dirname(path)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=directory, delete=False,
                                         prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(handle.name, 0o666 & ~umask)
        os.replace(handle.name, path)
    except BaseException:
        if os.path.exists(handle.name):
            os.unlink(handle.name)
        raise


def sync_files(out_dir: str, contents: Mapping[str, str | None], check_mode: bool = False) -> list[dict[str, Any]]:
    """Bring ``out_dir`` to ``contents`` (file name -> text, or None for a
    file this run cannot make: an existing one is renamed NAME.stale).

    Returns one entry per file: ``{"name", "path", "state", "before", "after"}``
    with state ``created``, ``updated``, ``unchanged``, ``stale`` (renamed to
    NAME.stale) or ``absent``; ``before``/``after`` are the texts (None when
    there is none). In check mode nothing is touched and the states say
    what would happen. Raises OutputError naming the path on I/O problems.
    """
    out_dir = os.path.abspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise OutputError("out: %s exists and is not a directory" % out_dir)
    changes: list[dict[str, Any]] = []
    # configs/: the files this run makes, and any other one found there
    # (a switch gone, or a rejected plan), which is stale
    configs = sorted(name for name in contents if name.startswith(CONFIG_DIR + "/"))
    found = os.path.join(out_dir, CONFIG_DIR)
    if os.path.isdir(found):
        configs += sorted("%s/%s" % (CONFIG_DIR, entry) for entry in os.listdir(found)
                          if not entry.endswith(STALE_SUFFIX) and not entry.startswith(".")
                          and "%s/%s" % (CONFIG_DIR, entry) not in contents)
    for name in OUTPUT_FILES + tuple(configs):
        if name not in contents and not name.startswith(CONFIG_DIR + "/"):
            continue
        path = os.path.join(out_dir, name)
        before = _read(path) if os.path.isdir(out_dir) else None
        after = contents.get(name)
        if after is None:
            state = "stale" if before is not None else "absent"
        elif before is None:
            state = "created"
        else:
            state = "unchanged" if before == after else "updated"
        changes.append({"name": name, "path": path, "state": state, "before": before,
                        "after": after})
    if check_mode or all(change["state"] in ("unchanged", "absent") for change in changes):
        return changes
    try:
        os.makedirs(out_dir, exist_ok=True)
        for change in changes:
            if change["state"] in ("created", "updated"):
                os.makedirs(os.path.dirname(change["path"]), exist_ok=True)
                _write_atomically(change["path"], change["after"])
            elif change["state"] == "stale":
                os.replace(change["path"], change["path"] + STALE_SUFFIX)
    except OSError as exc:
        raise OutputError("out: cannot write in %s: %s"
                          % (exc.filename or out_dir, exc.strerror or exc)) from None
    return changes


def changed(changes: list[dict[str, Any]]) -> bool:
    """True when :func:`sync_files` changed (or would change) something."""
    return any(change["state"] not in ("unchanged", "absent") for change in changes)


# ---------------------------------------------------------------- filters
def _routing_and_assignment(topology: Topology, options: dict[str, Any]) -> tuple[RoutingFunction, Assignment]:
    """The verified routing of ``options`` and its VLAN assignment."""
    from ..verify.cdg import assert_deadlock_free
    from ..routing import compute_routing
    from ..assign.vlans import assign_vlans

    routing = compute_routing(topology, options["routing"], down=options["down_links"],
                              **options["engine_options"])
    assert_deadlock_free(routing)
    vlan_range = tuple(options["vlan_range"]) if options["vlan_range"] else None
    return routing, assign_vlans(routing, options["assignment"], bank=options["bank"],
                                 vlan_range=vlan_range)


def vlan_assignment_data(topology: Any, **given: Any) -> Any:
    """Per switch ``{"vlans": [...], "ports": {port: {"pvid", "untagged",
    "tagged"}}}`` of the fixed or renamed VLAN assignment (switch-tagged
    paper §3.2) of a deadlock-free routing of ``topology``."""
    options = plan_options(**given)
    topology = load_topology_arg(topology)
    _routing, assignment = _routing_and_assignment(topology, options)
    return json_data(assignment.switches)


def static_mac_table_data(topology: Any, **given: Any) -> Any:
    """Per switch the static MAC entries ``[{"mac", "vlan", "port"}]``
    (switch-tagged paper §3.3) for the routing and VLAN assignment."""
    from ..assign.macs import static_mac_table

    options = plan_options(**given)
    topology = load_topology_arg(topology)
    routing, assignment = _routing_and_assignment(topology, options)
    return json_data(static_mac_table(topology, routing, assignment))
