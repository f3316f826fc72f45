# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files of a Stack-Ring/Stack-Mesh plan (docs/stack.md, "The plan's
files"): ``nodes.yml`` (the node network contract: ``nodes`` and
``switches``, what the role node_network and the host-routed lab read),
``stack_plan.json`` (the whole plan: design, subnets, forwarding tables,
checks, capacity) and ``report.md`` (the same for a reader), and writing
them into a directory only when their content changes."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import yaml

from ..errors import EtherclusterError

NODES_FILE = "nodes.yml"
PLAN_FILE = "stack_plan.json"
REPORT_FILE = "report.md"
# the report lists every stage's table up to this many stages/groups
TABLES_IN_FULL = 16


class StackOutputError(EtherclusterError):
    """The plan's directory cannot be written; the message names the path."""


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(_cell(value) for value in row) + " |" for row in rows)
    return lines + [""]


def _design_lines(plan: dict) -> list[str]:
    design = plan["design"]
    shape = ("%d stages of %d nodes" % (design["stages"], design["nodes_per_stage"])
             if design["kind"] == "stack_ring" else
             "%d x %d groups of %d nodes" % (design["groups"][0], design["groups"][1], design["nodes_per_group"]))
    lines = ["# Stack plan: %s, %s" % (design["kind"], shape), ""]
    rows = [[key, "" if value is None else value] for key, value in design.items()]
    lines += _table(["design field", "value"], rows)
    lines += ["%d nodes, %d SSBs of %d switches (%d ports each), %d subnets." % (
        len(plan["nodes"]), len(plan["switches"]), design["switches_per_stack"],
        design["switch_ports"], len(plan["subnets"])), ""]
    return lines


def _check_lines(plan: dict) -> list[str]:
    checks = plan["checks"]
    most, expected = checks["most_forwards"], checks["expected_forwards"]
    scope = "every node" if checks["complete"] else "a sample of %d nodes (the plan is above the walk budget)" \
        % checks["sources"]
    lines = ["## Checks: %s" % ("passed" if checks["passed"] else "FAILED"), "",
             "The planned tables were walked from %s to every address of the plan (%d walks), "
             "matching like Linux: own addresses, then the longest prefix." % (scope, checks["walks"]), ""]
    transit = [count for count in checks["transit"].values() if count]
    rows = [["every address reached", checks["delivered"]],
            ["loops", checks["loops"]],
            ["most software forwards, node pairs (nearest address)", "%d (fewest possible: %d)"
             % (most["pairs"], expected["pairs"])],
            ["most software forwards, any address",
             "%d (fewest possible: %d)" % (most["addresses"], expected["addresses"])],
            ["every walk as short as the fabric allows", checks["shortest"]],
            ["forwarding nodes in use / transit walks per node (min-max)", "%d / %s" % (
                len(transit), "%d-%d" % (min(transit), max(transit)) if transit else "none")]]
    lines += _table(["check", "result"], rows)
    if checks["failures"]:
        lines += ["Failures (%d, the first %d):" % (checks["failure_count"], len(checks["failures"])), ""]
        lines += ["- %s" % failure for failure in checks["failures"]] + [""]
    return lines


def _forwarding_lines(plan: dict) -> list[str]:
    lines = ["## Forwarding tables (Table 1's form)", "",
             "Per stage/group; a gateway `A + x` is address A plus the node's rank x (node x forwards "
             "through node x of the neighbouring stage/group).", ""]
    tables = list(plan["forwarding_table"].items())
    for label, rows in tables[:TABLES_IN_FULL]:
        lines += ["### %s" % label, ""]
        lines += _table(["network", "switch", "interface", "gateway"],
                        [[row["network"], row["switch"], row["interface"], row["gateway"]] for row in rows])
    if len(tables) > TABLES_IN_FULL:
        lines += ["(%d more in %s)" % (len(tables) - TABLES_IN_FULL, PLAN_FILE), ""]
    return lines


def _capacity_lines(plan: dict) -> list[str]:
    capacity = plan["capacity"]
    hardware = capacity["hardware"]
    lines = ["## Scalability (the paper's Table 2 on this hardware)", "",
             "%d-port switches, %d per stack, %s Gb/s links; ring and mesh at this design's stages/groups, "
             "the tree two levels with two-link bundles." % (hardware["switch_ports"], hardware["switches_per_stack"],
                                                             hardware["link_gbps"]), ""]
    rows = [[row["topology"], row["switches"], row["nodes"], row["software_forwards"], row["hops"],
             row["bisection_gbps"]] for row in capacity["table2"]]
    lines += _table(["topology", "switches", "nodes", "software forwards", "hops", "bisection Gb/s"], rows)
    planned = capacity["planned"]
    lines += ["This plan: %d nodes (%d extra forwarders), bisection %s Gb/s." % (
        planned["nodes"], planned["forwarders"], planned["bisection_gbps"]), ""]
    return lines


def render_report(plan: dict) -> str:
    """report.md of a plan."""
    lines = _design_lines(plan) + _check_lines(plan) + _forwarding_lines(plan) + _capacity_lines(plan)
    return "\n".join(lines).rstrip() + "\n"


def plan_files(plan: dict) -> dict[str, str]:
    """The texts of the plan's three files, deterministic (same plan, same bytes)."""
    contract = {"nodes": plan["nodes"], "switches": plan["switches"]}
    header = "# The node network contract of a %s plan (ethercluster.routing.stack_plan); do not edit.\n" \
        % plan["design"]["kind"]
    return {NODES_FILE: header + yaml.safe_dump(contract, sort_keys=False, default_flow_style=None, width=160),
            PLAN_FILE: json.dumps(plan, indent=1, sort_keys=True) + "\n",
            REPORT_FILE: render_report(plan)}


def _replace(path: str, text: str) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=".stack.", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def write_files(out_dir: str, contents: dict[str, str], check_mode: bool = False) -> list[dict[str, Any]]:
    """Bring ``out_dir`` to ``contents``: per file ``{name, path, state
    (created/updated/unchanged), before, after}``; nothing is written in
    check mode or when every file is unchanged. StackOutputError names
    the path it cannot write."""
    out_dir = os.path.abspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise StackOutputError("out: %s exists and is not a directory" % out_dir)
    changes = []
    for name, after in contents.items():
        path = os.path.join(out_dir, name)
        try:
            with open(path, encoding="utf-8") as handle:
                before: str | None = handle.read()
        except FileNotFoundError:
            before = None
        except (OSError, UnicodeDecodeError) as exc:
            raise StackOutputError("out: cannot read %s: %s" % (path, exc)) from None
        state = "created" if before is None else ("unchanged" if before == after else "updated")
        changes.append({"name": name, "path": path, "state": state, "before": before, "after": after})
    if check_mode:
        return changes
    try:
        os.makedirs(out_dir, exist_ok=True)
        for change in changes:
            if change["state"] != "unchanged":
                _replace(str(change["path"]), contents[str(change["name"])])
    except OSError as exc:
        raise StackOutputError("out: cannot write in %s: %s" % (exc.filename or out_dir, exc.strerror or exc)) from None
    return changes
