# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation fragments shared by the collection's modules: every
module is an action plugin that does its work on the controller."""

from __future__ import annotations


class ModuleDocFragment:
    """``ethercluster.routing.controller``: the attributes every module of
    the collection shares (an action plugin on the controller, no async,
    no host-loop bypass, full check mode, no diff, any POSIX controller),
    each with its meaning, so a module lists this fragment alone and states
    only what differs or what it explains (check mode's details, diff
    support, platforms)."""

    DOCUMENTATION = r"""
attributes:
  action:
    description: An action plugin runs the module's work on the controller.
    support: full
  async:
    description: Whether the task may run with the C(async) keyword.
    support: none
  bypass_host_loop:
    description: Whether the task runs once for all hosts instead of once per host.
    support: none
  check_mode:
    description: Whether the task runs in check mode, predicting C(changed) without changing anything.
    support: full
  diff_mode:
    description: Whether the task returns what it changed (or would change) in diff mode.
    support: none
  platform:
    description: The systems the task can act on.
    support: N/A
    platforms: posix
options: {}
"""

    # ``ethercluster.routing.controller.local``: modules that never use the
    # host's connection (they plan or read files on the controller). This and
    # the fragments below are listed before ``ethercluster.routing.controller``:
    # the first fragment's value of an attribute field wins (here the platform)
    LOCAL = r"""
attributes:
  become:
    description: Whether become keywords apply to the task.
    support: none
  connection:
    description: Whether the task uses the host's connection.
    support: none
  delegation:
    description: Whether C(delegate_to) changes where the task runs.
    support: none
    details: The task always runs on the controller; delegation has no effect.
  platform:
    description: The systems the task can act on.
    support: N/A
    platforms: all
notes:
  - A relative path of a controller file is looked up like other controller-side files (the role's or
    playbook's C(files/) directory, then the playbook directory), then relative to the current directory.
options: {}
"""

    # ``ethercluster.routing.controller.plan_files``: modules that compute a plan
    # and, given O(out), write its files
    PLAN_FILES = r"""
attributes:
  check_mode:
    details: Computes the whole plan and reports which files would change; writes nothing.
  diff_mode:
    support: full
    details: Shows how the plan's main file in O(out) changes (C(intent.json) of a routing plan, C(nodes.yml) of a
      host-routed one).
"""

    # ``ethercluster.routing.controller.design``: modules that plan a host-routed
    # design given as a file or inline (the planes and Stack-Ring/Stack-Mesh plans)
    DESIGN = r"""
options:
  design:
    description:
      - Path of the design file (YAML; a top-level C(design:) mapping, or the mapping itself), read with the
        collection's input limits (size, nesting, aliases, duplicate keys).
      - Exactly one of O(design) and O(design_data) is required.
    type: path
"""

    # ``ethercluster.routing.controller.deployed_fabric``: modules that act on a
    # deployed fabric, reaching every switch, and must know how its routing was
    # planned (literal text: ansible-test reads fragments without running them)
    DEPLOYED_FABRIC = r"""
options:
  topology:
    description: The topology file; the inventory must have every switch of it.
    type: path
    required: true
  routing:
    description: Routing engine, as for M(ethercluster.routing.plan); must be the deployed one.
    type: str
    default: segment
  assignment:
    description:
      - VLAN assignment, V(fixed) or V(renamed); must be the deployed one.
      - V(auto) takes what assignment auto picks for the fabric with the topology file's links (what
        C(deploy_routing.yml) pushed with the default); a fabric auto gave source-tree paths is refused.
    type: str
    default: renamed
    choices: [auto, fixed, renamed]
  engine_options:
    description: Options of the routing engine, as deployed.
    type: dict
  host_key_checking:
    description: Refuse a switch whose host key is unknown or different.
    type: bool
    default: true
  timeout:
    description: Seconds allowed for connecting and for each read and write on a switch.
    type: float
    default: 30
"""
