#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.node_network: make a Linux node's live network state
(interfaces, addresses, static routes, forwarding, rp_filter, sysctls)
match its entry of a host-routed plan; the work:
module_utils/nodes/linux_network.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: node_network
short_description: Apply a node's entry of a host-routed plan to its live Linux network state
version_added: 0.4.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Makes the live state of a Linux node match its entry C(nodes.<node>) of a host-routed plan (Stack-Ring, Stack-Mesh,
    multi-port planes; the node network contract, docs/nodes.md of the collection) - the plan's interfaces up, with
    their IPv4 address (and MAC when the plan fixes one), the static routes (multipath with C(nexthops)),
    C(net.ipv4.ip_forward), C(rp_filter) of C(all) and of every plan interface, and extra sysctls.
  - Reads the live state first (C(ip -j address show), C(ip -j route show), C(sysctl)) and runs only the iproute2 and
    sysctl commands that differ, so a second run changes nothing.
  - The routes it installs carry route protocol 233; such a route the plan no longer names is removed. Routes of any
    other protocol stay, unless the plan names their destination (then they are replaced). The plan's interfaces
    hold exactly the plan's IPv4 address; other interfaces are never touched.
  - O(state=absent) removes the plan's addresses and every route of protocol 233, and sets the sysctls back to the
    values O(state_file) recorded before the first run.
  - This module changes the live state only; the role C(ethercluster.routing.node_network) also writes the persistent
    configuration (systemd-networkd or ifupdown2 files).
options:
  node:
    description: The node's name in the plan, for messages.
    type: str
    required: true
  config:
    description:
      - The node's entry of the plan, C(nodes.<node>) - C(interfaces) (C(name), C(address), optional C(mac) and
        C(switch)), C(routes) (C(to) with C(via) and C(dev), or C(nexthops)), C(forwarding), C(rp_filter) (0, 1, 2),
        C(sysctls).
    type: dict
    required: true
  state:
    description: V(present) applies the entry; V(absent) removes what V(present) added.
    type: str
    choices: [present, absent]
    default: present
  netns:
    description: Run inside this network namespace of the machine the task runs on (a lab node; the task is delegated
      to the lab machine).
    type: str
  state_file:
    description:
      - A JSON file where the sysctl values found before the first run are kept, so that O(state=absent) can restore
        them. Not set - nothing is recorded and O(state=absent) leaves the sysctls as they are.
    type: path
attributes:
  check_mode:
    support: full
    description: Runs no command that changes anything; returns the changes it would make.
  diff_mode:
    support: full
    description: Shows every differing item (address, route, sysctl, link state) as the node has it and as planned.
requirements:
  - Linux; root; iproute2 with JSON output (C(ip -j)); procps C(sysctl)
notes:
  - docs/nodes.md of the collection.
"""

EXAMPLES = r"""
- name: Configure a Stack-Ring node
  ethercluster.routing.node_network:
    node: s1n0
    config:
      interfaces:
        - {name: east, address: 10.10.1.1/24}
        - {name: west, address: 10.10.0.129/24}
      routes:
        - {to: 10.10.2.0/24, via: 10.10.1.129, dev: east}
        - {to: 10.10.3.0/24, via: 10.10.0.1, dev: west}
      forwarding: true
      rp_filter: 0
    state_file: /var/lib/ethercluster/node_network.json
"""

RETURN = r"""
changes:
  description: Each item that differed - C(kind) (link, address, sysctl, route), C(what), C(before), C(after), C(argv).
  returned: always
  type: list
  elements: dict
commands:
  description: The commands run (or, in check mode, to run), one line each.
  returned: always
  type: list
  elements: str
  sample: ["ip address add 10.10.1.1/24 dev east", "ip route replace 10.10.2.0/24 proto 233 via 10.10.1.129 dev east"]
"""

import json
import os
import traceback

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = module_args.node_spec(
    node=dict(type="str", required=True),
    config=dict(type="dict", required=True),
    state_file=dict(type="path"),
)

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.linux_network import (
        NodeNetworkError,
        changes,
        check_node,
        diff,
        parse_links,
        parse_routes,
        parse_sysctl,
        saved_sysctls,
        wanted_sysctls,
    )
except ImportError:
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def _run(module, argv, must=True):
    prefix = ["ip", "netns", "exec", module.params["netns"]] if module.params["netns"] else []
    rc, out, err = module.run_command(prefix + argv)
    if must and rc != 0:
        raise NodeNetworkError("node %s: `%s` failed: %s" % (module.params["node"], " ".join(argv),
                                                             (err or out).strip()))
    return out


def _read_saved(path):
    if not path or not os.path.exists(path):
        return None
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle).get("sysctls", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise NodeNetworkError("state_file %s cannot be read: %s" % (path, exc))


def _write_saved(module, path, sysctls):
    """Record the sysctls' values before the first run; True when written."""
    if _read_saved(path) == sysctls:
        return False
    if not module.check_mode:
        directory = os.path.dirname(path)
        if directory and not os.path.isdir(directory):
            os.makedirs(directory, mode=0o755)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"node": module.params["node"], "sysctls": sysctls}, handle, indent=1, sort_keys=True)
    return True


def main():
    module = module_args.started_module(ARGUMENT_SPEC, IMPORT_ERROR, "node network")
    params = module.params
    state_changed = False
    try:
        node = check_node(params["node"], params["config"])
        links = parse_links(_run(module, ["ip", "-j", "address", "show"]))
        routes = parse_routes(_run(module, ["ip", "-4", "-j", "route", "show", "table", "main"]))
        live_sysctls = parse_sysctl(_run(module, ["sysctl"] + sorted(wanted_sysctls(node)), must=False))
        saved = _read_saved(params["state_file"])
        found = changes(node, links, routes, live_sysctls, params["state"], saved)
        if params["state"] == "present" and params["state_file"]:
            state_changed = _write_saved(module, params["state_file"], saved_sysctls(node, live_sysctls, saved))
        if not module.check_mode:
            for change in found:
                _run(module, change["argv"])
        if params["state"] == "absent" and params["state_file"] and os.path.exists(params["state_file"]):
            state_changed = True
            if not module.check_mode:
                os.unlink(params["state_file"])
    except (NodeNetworkError, OSError) as exc:
        module.fail_json(msg=str(exc))
    result = dict(changed=bool(found) or state_changed, changes=found,
                  commands=[" ".join(change["argv"]) for change in found])
    if module._diff and found:
        result["diff"] = diff(params["node"], found)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
