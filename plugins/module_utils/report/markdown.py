# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.md of a plan: what a person reads before pushing the intent.

The text comes from the Jinja2 template ``templates/report.md.j2`` beside
this file; :func:`report_context` gathers the numbers into plain data
(usable for other renderings too) and :func:`render_report` fills the
template. A rejected plan gets a report as well: the error and every
check that ran, so the operator sees why nothing was written.
"""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, Any

import jinja2

from ..platforms.common import strict_environment
from .svg import link_speed_summary

if TYPE_CHECKING:
    from ..fabric.topology import Topology

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
REPORT_TEMPLATE = "report.md.j2"


def _md_cell(value: Any) -> str:
    """Text safe inside one Markdown table cell."""
    text = " ".join(str(value if value is not None else "").split())
    return text.replace("|", "\\|")


@functools.lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    """The Jinja2 environment of the report template (strict, Markdown filters);
    made once, so that the template is compiled once per process, not on every
    report (30 ms each: most of the time of a refused plan)."""
    env = strict_environment(TEMPLATE_DIR)
    env.filters["md_cell"] = _md_cell
    env.filters["count_of"] = lambda count, noun: "%s %s%s" % (
        count, noun, "" if count == 1 else ("es" if noun.endswith("ch") else "s"))
    env.filters["tojson"] = lambda value: json.dumps(value, sort_keys=True)
    return env


def _number(value: Any) -> int | float:
    """A figure for the report: whole numbers as int, else 3 decimals."""
    value = float(value)
    return int(round(value)) if abs(value - round(value)) < 1e-9 else round(value, 3)


def fabric_facts(topology: Topology) -> dict[str, Any]:
    """Counts of a topology for the report header."""
    shape = None
    if topology.shape:
        shape = "%s %s" % ("x".join(str(k) for k in topology.shape["dims"]), topology.shape["kind"])
    return {"name": topology.name, "source": topology.source,
            "switches": len(topology.switches), "links": len(topology.links),
            "links_down": len(topology.down_links()), "hosts": len(topology.hosts),
            "shape": shape, "link_speeds": link_speed_summary(topology)}


def switch_rows(topology: Topology, intent: dict[str, Any] | None = None,
                host_limits: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """One row per switch: platform, hosts, VLANs and static entries held
    (from the intent when there is one) against the switch's limits."""
    held = (intent or {}).get("switches", {})
    host_limits = host_limits or {}
    rows = []
    for sw in topology.switches.values():
        entry = held.get(sw.name)
        rows.append({
            "name": sw.name, "platform": sw.platform, "hosts": len(topology.hosts_on(sw.name)),
            "vlans": len(entry.get("vlans", ())) if entry is not None else None,
            "max_vlans": sw.max_vlans,
            "static": len(entry.get("static_macs", ())) if entry is not None else None,
            "mac_table_size": sw.mac_table_size,
            "host_limit": host_limits.get(sw.name),
        })
    return rows


def host_limit_summary(intent: dict[str, Any] | None) -> tuple[dict[str, int], dict[str, Any] | None]:
    """§3.7 eq. 1 from the intent (``intent.host_limits``): per switch
    H = T // V, and the smallest one with its T and V (None without intent)."""
    if not intent:
        return {}, None
    from ..intent.build import host_limits

    limits = host_limits(intent)
    per_switch = {name: entry["H"] for name, entry in limits["switches"].items()}
    switch = limits["fabric"]["switch"]
    if switch is None:
        return per_switch, None
    entry = limits["switches"][switch]
    return per_switch, {"limit": entry["H"], "switch": switch, "table_size": entry["T"],
                        "vlans": entry["V"]}


def report_context(topology: Topology | None, options: dict[str, Any], plan: Any = None,
                   error: BaseException | None = None, checks: list[dict[str, Any]] | None = None,
                   loads_summary: dict[str, Any] | None = None, files: dict[str, str] | None = None,
                   source: str | None = None) -> dict[str, Any]:
    """Plain data for the report.

    ``options``: the planning options (routing, engine_options, assignment,
    bank, vlan_range, mac_learning, traffic, down_links). ``plan``: the Plan
    (with ``error``: the partial plan of a rejected input, whose intent is
    shown for its numbers only), or None; ``checks``: the checks that ran. ``loads_summary``:
    {max_channel_load, average_hops, busiest} when known. ``files``: output
    file name -> one line saying what it holds. ``topology`` is None when
    it could not be read; ``source`` then says what was given.
    """
    intent = plan.intent if plan is not None else None
    fabric, smallest, rows = _fabric_part(topology, intent, source)
    metrics = None
    if loads_summary is not None:
        metrics = {"traffic": options.get("traffic") or "uniform",
                   "max_channel_load": _number(loads_summary["max_channel_load"]),
                   "average_hops": _number(loads_summary["average_hops"]),
                   "busiest": list(loads_summary.get("busiest") or [])}
    planned = (intent or {}).get("fabric", {})
    vlans_used = None
    if intent is not None:
        vlans_used = intent.get("fabric", {}).get("vlans_used")
    return {
        "accepted": plan is not None and error is None,
        "error": str(error) if error is not None else None,
        "schema": (intent or {}).get("schema"),
        "intent_shown": intent is not None,
        "fabric": fabric,
        "routing": {"engine": options.get("routing"),
                    "options": dict(planned.get("engine_options")
                                    or options.get("engine_options") or {}),
                    "down_links": list(planned.get("down_links") or ())
                    or [str(ref) for ref in options.get("down_links") or ()],
                    "blocked_links": list(planned.get("blocked_links") or ())},
        "learning": _learning_summary((intent or {}).get("mac_learning")),
        "assignment": {"kind": planned.get("assignment") or options.get("assignment"),
                       "asked": options.get("assignment"), "bank": options.get("bank"),
                       "broadcast": planned.get("broadcast") or options.get("broadcast"),
                       "broadcast_tree": planned.get("broadcast_tree"),
                       "vlan_range": (intent or {}).get("fabric", {}).get("vlan_range")
                       or options.get("vlan_range"),
                       "mac_learning": options.get("mac_learning")},
        "vlans_used": vlans_used,
        "metrics": metrics,
        "host_limit": smallest,
        "checks": [{"name": c.get("name"), "ok": bool(c.get("ok")), "switch": c.get("switch"),
                    "detail": c.get("detail")} for c in (checks or ())],
        "switches": rows,
        "files": dict(files or {}),
    }


def _fabric_part(topology: Topology | None, intent: dict[str, Any] | None,
                 source: str | None) -> tuple[dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]:
    """The report's fabric facts, smallest host limit and switch rows."""
    if topology is None:
        return {"name": "(topology not loaded)", "source": source or "?", "switches": None}, None, []
    fabric = fabric_facts(topology)
    per_switch, smallest = host_limit_summary(intent)
    return fabric, smallest, switch_rows(topology, intent, per_switch)


def _learning_summary(learning: dict[str, Any] | None) -> str | None:
    """One line on the mac_learning: self host-side plan (§3.3), or None."""
    if not learning:
        return None
    vlans = len(learning.get("vlans", []))
    repeat = learning.get("repeat_every_s")
    when = ("once: no switch ages learned entries (MAC aging time 0)" if not repeat else
            "every %s s, before the shortest MAC aging time of the switches (%s s) runs out"
            % (repeat, learning.get("aging_time_s")))
    return ("%d hosts send a broadcast in every VLAN (%d VLAN%s, learning addresses from %s; "
            "role node_learning: VLAN interfaces and ping -b, or tagged frames) %s; the "
            "interfaces and commands are in intent.json under mac_learning.hosts"
            % (len(learning.get("hosts", {})), vlans, "" if vlans == 1 else "s",
               learning.get("network"), when))


def render_report(context: dict[str, Any]) -> str:
    """report.md text for a context from :func:`report_context`."""
    return _environment().get_template(REPORT_TEMPLATE).render(**context)
