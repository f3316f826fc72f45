# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_planes module's work on the node: read the live state, compute
the changes (planes_node, planes_node_bpf), run them, keep the state file.

Standard library only. ``run(argv) -> (rc, stdout, stderr)`` runs a command
(AnsibleModule.run_command in the module); everything runs in the caller's
network namespace (the module enters the lab's namespace first, with
setns(2) only: the mount namespace, where the pins live, stays the
machine's).

The state file ``<workdir>/<node>.json`` holds what ``absent`` needs to
undo: the sysctls' values found before the first change, the clsact qdiscs
the role added, the mode and the hash of the eBPF source the object was
built from.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
from typing import Any, Callable

from . import planes_node as pn
from . import planes_node_bpf as pb

Runner = Callable[[list[str]], tuple[int, str, str]]
CLONE_NEWNET = 0x40000000


def enter_netns(name: str) -> None:
    """Move this process into network namespace ``name`` (/run/netns/<name>)."""
    path = os.path.join("/run/netns", name)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise pn.PlanesNodeError("network namespace %s: %s" % (name, exc.strerror))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise pn.PlanesNodeError("cannot enter network namespace %s: %s (needs root)"
                                     % (name, os.strerror(ctypes.get_errno())))
    finally:
        os.close(fd)


def _out(run: Runner, argv: list[str]) -> str:
    """stdout of a command that must succeed."""
    rc, out, err = run(argv)
    if rc != 0:
        raise pn.PlanesNodeError("%s: exit %d: %s" % (" ".join(argv), rc, (err or out).strip()))
    return out


def read_sysctls(names: list[str]) -> dict[str, str | None]:
    """Current values (None: no such sysctl)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            with open(pn.sysctl_path(name)) as handle:
                found[name] = handle.read().strip()
        except OSError:
            found[name] = None
    return found


def compile_argv(source: str, obj: str) -> list[str]:
    """clang for the PMCME program (the multiarch include dir holds asm/types.h)."""
    argv = ["clang", "-O2", "-g", "-target", "bpf", "-mcpu=v3"]
    multiarch = "/usr/include/%s-linux-gnu" % platform.machine()
    if os.path.isdir(multiarch):
        argv.append("-I" + multiarch)
    return argv + ["-c", source, "-o", obj]


def source_sha(source: str) -> str:
    """sha256 of the eBPF source (a new source is built and loaded again);
    empty when the file is not there yet (check mode before the role's copy:
    the build is reported; a real run without it fails in clang, naming it)."""
    try:
        with open(source, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return ""


def read_bpf(run: Runner, view: dict[str, Any], saved: dict[str, Any], source: str | None, obj: str) -> dict[str, Any]:
    """The live eBPF state (keys: see planes_node_bpf.absent_changes)."""
    pins = pb.pin_dir(view["instance"])
    mounted = os.path.isdir(pb.BPF_MOUNT) and any(
        line.split()[1:3] == [pb.BPF_MOUNT, "bpf"] for line in open("/proc/self/mounts"))
    live: dict[str, Any] = {"mounted": mounted, "pinned": os.path.isdir(pins), "prog_ids": {}, "attached": {},
                            "clsact": set(), "maps": {}, "built_sha": saved.get("built_sha"),
                            "source_sha": source_sha(source) if source else None}
    for prog in (pb.EGRESS, pb.INGRESS):
        rc, out, _err = run(["bpftool", "-j", "prog", "show", "pinned", "%s/prog/%s" % (pins, prog)]) \
            if live["pinned"] else (1, "", "")
        live["prog_ids"][prog] = json.loads(out).get("id") if rc == 0 and out.strip() else None
    for dev, way, _prog in pb.attachments(view):
        if pb.has_clsact(_out(run, ["tc", "-j", "qdisc", "show", "dev", dev])):
            live["clsact"].add(dev)
            live["attached"]["%s %s" % (dev, way)] = pb.parse_filter(_out(run, ["tc", "-j", "filter", "show", "dev", dev, way]))
    for name in pb.CONFIG_MAPS if None not in live["prog_ids"].values() else ():
        live["maps"][name] = pb.parse_map_dump(_out(run, ["bpftool", "-j", "map", "dump", "pinned", "%s/maps/%s" % (pins, name)]))
    live["source_changed"] = bool(source) and (live["built_sha"] != live["source_sha"] or not os.path.exists(obj))
    return live


def instance(args: dict[str, Any]) -> str:
    """The name of the node's pins, object and state file: the node's, or in
    a lab its namespace's (unique on the lab machine)."""
    return str(args.get("netns") or args["node"])


def load_saved(path: str) -> dict[str, Any]:
    """The state file (empty when there is none)."""
    try:
        with open(path) as handle:
            saved = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise pn.PlanesNodeError("state file %s: %s" % (path, exc))
    return saved if isinstance(saved, dict) else {}


def plan_changes(run: Runner, args: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The changes for ``args`` (the module's parameters) and the state file's
    content afterwards."""
    view = pn.node_view(args["plan"], args["node"])
    view["instance"] = instance(args)
    present = args["state"] == "present"
    want: dict[str, Any] = pn.wanted(view, args["mode"]) if present else {
        "addresses": {}, "routes": {}, "sysctls": {}, "macs": {}, "bpf": False}
    state_path = os.path.join(args["workdir"], "%s.json" % view["instance"])
    obj = os.path.join(args["workdir"], "%s.pmcme.o" % view["instance"])
    saved = load_saved(state_path)
    links = pn.live_links(_out(run, ["ip", "-j", "address", "show"]))
    routes = pn.live_routes(_out(run, ["ip", "-j", "route", "show", "proto", pn.ROUTE_PROTOCOL]))
    names = sorted(set(want["sysctls"]) | set(saved.get("sysctls", {})))
    live_sysctls = read_sysctls(names)
    found = pn.link_changes(want, view, links) if present else []
    found += pn.address_changes(want["addresses"], pn.planned_addresses(view), links)
    found += pn.sysctl_changes(want["sysctls"], live_sysctls, saved.get("sysctls", {}))
    found += pn.route_changes(want["routes"], routes)
    after = {"mode": args["mode"], "sysctls": pn.saved_sysctls(want["sysctls"], live_sysctls, saved.get("sysctls", {}))}
    found += _bpf_changes(run, args, view, want, links, saved, obj, after)
    order = pn.ORDER_PRESENT if present else pn.ORDER_ABSENT
    found.sort(key=lambda item: order.index(item["kind"]) if item["kind"] in order else len(order))
    return found, after


def _bpf_changes(run: Runner, args: dict[str, Any], view: dict[str, Any], want: dict[str, Any],
                 links: dict[str, dict[str, Any]], saved: dict[str, Any], obj: str, after: dict[str, Any]) -> list[dict[str, Any]]:
    """The eBPF changes; records in ``after`` what absent will need."""
    created = list(saved.get("clsact", []))
    if want["bpf"]:
        if not args["source"]:
            raise pn.PlanesNodeError("mode pmcme needs source (the eBPF C file on the node)")
        pb.check_ports(view)
        live = read_bpf(run, view, saved, args["source"], obj)
        entries = pb.map_entries(view, links, args["threshold"], args["per_port"])
        found = pb.present_changes(view, live, entries, obj, compile_argv(args["source"], obj))
        created += [item["what"].split()[0] for item in found if item["argv"][:3] == ["tc", "qdisc", "add"]]
        after.update({"clsact": sorted(set(created)), "built_sha": live["source_sha"]})
        return found
    if not created and not os.path.isdir(pb.pin_dir(view["instance"])):
        return []
    live = read_bpf(run, view, saved, None, obj)
    found = pb.absent_changes(view, live, created)
    if os.path.exists(obj):
        found.append(pn.change("bpf", "object", obj, "", ["rm", "-f", obj]))
    return found


def apply(run: Runner, args: dict[str, Any], check_mode: bool) -> dict[str, Any]:
    """Compute, and unless ``check_mode`` run, the changes; returns the
    module's result (changed, changes, commands, diff)."""
    found, after = plan_changes(run, args)
    state_path = os.path.join(args["workdir"], "%s.json" % instance(args))
    if not check_mode:
        os.makedirs(args["workdir"], mode=0o700, exist_ok=True)
        for item in found:
            _out(run, item["argv"])
        if args["state"] == "present":
            with open(state_path, "w") as handle:
                json.dump(after, handle, indent=1, sort_keys=True)
        elif os.path.exists(state_path):
            os.unlink(state_path)
    return {"changed": bool(found), "commands": [" ".join(item["argv"]) for item in found],
            "changes": [{key: item[key] for key in ("kind", "what", "before", "after")} for item in found],
            "diff": pn.diff(args["node"], found), "pin_dir": pb.pin_dir(instance(args)) if args["mode"] == "pmcme" else None}
