#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation and argument spec of ethercluster.routing.plan; the work
is done by the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: plan
short_description: Plan deadlock-free switch-tagged VLAN routing for an Ethernet fabric, offline
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Computes, on the controller, what every switch of a fabric must hold so that all links carry
    traffic without deadlock or broadcast storm - the switch I(intent) (schema
    C(ethercluster.routing/intent/v1)) - and returns it together with every check, the routing's
    channel-load metrics and the host limit.
  - "The pipeline: read the topology (O(topology) or O(topology_data)); run the routing engine
    O(routing); verify it on the channel dependency graph; assign VLANs (O(assignment): fixed or renamed,
    switch-tagged VLAN routing paper section 3.2) from the VLAN ID bank O(bank); build static MAC tables
    (section 3.3, or the self-learning plan with O(mac_learning=self)); check VLANs per switch against
    C(max_vlans), static entries against C(mac_table_size), hosts against H = T/V (section 3.7 equation 1),
    storm freedom (section 3.4, theorem 1) and the acyclic channel dependency graph."
  - With O(out), writes three files into that directory - C(intent.json) (only when every check passed),
    C(report.md) (the numbers and every check with its result) and C(fabric.svg) (the fabric with each
    link coloured by its channel load) - and reports C(changed) only when a file's content changed.
  - A rejected input (bad topology, unknown engine or option, a failed check) fails the task with a
    message that names the switch, link or field, and writes no intent. An C(intent.json) left by an
    earlier run in O(out) is then renamed C(intent.json.stale) so that nothing mistakes it for the plan
    of this input; C(report.md) is rewritten to say why the plan was rejected.
  - "Fabric settings (the routing engine and its options, the assignment, bank, VLAN range, broadcast limit,
    MAC learning and traffic pattern) come in layers, the later winning field by field: the built-in defaults,
    the topology file's top-level C(fabric:) mapping, O(settings), then the options of the same name given to
    this task. The merged settings are recorded in the intent as C(fabric.settings), so link transitions read
    back what was deployed (docs/roles.md)."
  - Contacts no device. The file formats are described in docs/plan.md and docs/topology.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller.local
  - ethercluster.routing.controller.plan_files
  - ethercluster.routing.controller
options:
  topology:
    description:
      - Path of the topology file (YAML, explicit or generated form).
    type: path
  topology_data:
    description:
      - The topology as data, in the same form as the file.
    type: dict
  routing:
    description:
      - The routing engine, one of the collection's engines.
      - V(dor), V(west_first), V(north_last) and V(negative_first) need a mesh or torus;
        V(updown), V(tbtp), V(stp) and V(segment) take any topology.
      - An unknown name fails the task with the list of engines.
      - Default is the topology file's C(fabric.routing), else V(segment).
    type: str
  engine_options:
    description:
      - "Options of the routing engine, for example C({root: sw5}) for V(updown) or C({seed: 3}) for V(segment)."
      - "C({paths: source_tree}) gives every engine a tree of legal paths per source; C({paths: paper}) the
        switch-tagged paper's own path sets (section 4.1, Table 3) for V(dor) on a mesh or a torus with two cables
        per neighbour pair, V(north_last) on a 2-D mesh and V(updown) on a generated fat tree."
      - An option the engine does not know fails the task, naming it.
      - Default is the topology file's C(fabric.engine_options), else none.
    type: dict
  assignment:
    description:
      - The VLAN assignment that implements the routing on the switches.
      - V(fixed) gives every source switch's tree of paths a VLAN (the frame keeps it, N x N -> P);
        V(renamed) gives every input port a PVID and lets switches re-tag frames (C x N -> C, fewer VLANs).
      - V(auto) tries fixed with the engine's own paths (when they form a tree per source), then fixed with
        source-tree paths (engine option C(paths=source_tree)), then renamed, and keeps the first plan that
        passes every check (limits and broadcast containment included); check C(assignment_choice) says why.
        With C(paths=paper) it tries fixed, then renamed, on the paper's paths.
      - Default is the topology file's C(fabric.assignment), else V(auto).
    type: str
    choices: [auto, fixed, renamed]
  down_links:
    description:
      - Links the routing must not use, beside those whose state is C(down) in the topology;
        each as C(switch:port) of either end.
    type: list
    elements: str
    default: []
  bank:
    description:
      - The bank of VLAN IDs to draw from. The two banks are disjoint, so a new routing can be built
        in one bank beside the one in service in the other.
      - Default is the topology file's C(fabric.bank), else V(A).
    type: str
    choices: [A, B]
  vlan_range:
    description:
      - The VLAN IDs of both banks, as C([first, last]), instead of the default banks (A 100-1999,
        B 2100-3999); bank A takes the lower half, bank B the upper half.
      - IDs 0, 1, 4095 and the IDs the switches' platforms reserve are never used.
      - Default is the topology file's C(fabric.vlan_range), else the default banks.
    type: list
    elements: int
  max_broadcast_copies:
    description:
      - The most times one broadcast (say an ARP request) may cross a switch-to-switch link before it
        dies out; a plan above it is rejected (check C(broadcast_copies)). A fixed assignment floods along
        one tree; a renamed one floods along every path of the routing, which can be exponentially many.
      - Default is the topology file's C(fabric.max_broadcast_copies), else 100000.
    type: int
  broadcast:
    description:
      - V(contained) accepts a plan only if one broadcast from any host reaches every host exactly once
        and enters every switch once (a flood tree; check C(broadcast_once)).
      - V(bounded) accepts floods that reach a host several times, up to O(max_broadcast_copies).
      - Default is the topology file's C(fabric.broadcast), else V(contained).
    type: str
    choices: [contained, bounded]
  mac_learning:
    description:
      - V(static) registers every host's MAC address statically on every switch, in every VLAN in which
        frames to it can arrive (paper section 3.3).
      - V(self) leaves the switches to learn; the intent then carries the host-side plan (a per-VLAN virtual
        interface and address per host, and the broadcast ping to repeat before the aging time).
      - Default is the topology file's C(fabric.mac_learning), else V(static).
    type: str
    choices: [static, self]
  traffic:
    description:
      - The traffic pattern the channel-load metrics and the picture are computed for
        (V(uniform), V(bit_reversal), V(matrix_transpose) or V(random_permutation)).
      - Default is the topology file's C(fabric.traffic), else V(uniform).
    type: str
  settings:
    description:
      - Fabric settings, in the form of the topology file's C(fabric:) mapping (fields C(routing),
        C(engine_options), C(assignment), C(bank), C(vlan_range), C(max_broadcast_copies), C(mac_learning),
        C(traffic)); each overrides the topology file's field. A null value is not set.
      - The options of the same names given to this task override these.
      - A malformed field fails the task naming C(settings.<field>) (C(fabric.<field>) and the file for the
        topology file's block), and writes no intent.
    type: dict
  out:
    description:
      - Directory to write C(intent.json), C(report.md) and C(fabric.svg) into; created when missing.
      - A relative path is relative to the current directory.
      - Without it nothing is written and the task never reports a change.
    type: path
requirements:
  - networkx, numpy, scipy, netaddr, jinja2 and PyYAML on the controller (the collection's requirements.txt)
notes:
  - Exactly one of O(topology) and O(topology_data) is required.
  - Files are replaced atomically, and only when their content changes.
  - Large intents are not shown in full by C(--diff); see C(intent.json) itself.
seealso:
  - module: ethercluster.routing.topology_info
  - plugin: ethercluster.routing.vlan_assignment
    plugin_type: filter
  - plugin: ethercluster.routing.static_mac_table
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Plan the default lab with segment-based routing and renamed VLANs
  ethercluster.routing.plan:
    topology: inventories/default/topology.yml
    out: out/plan
  register: plan

- name: Show what the plan needs
  ansible.builtin.debug:
    msg: >-
      {{ plan.intent.fabric.vlans_used }} VLANs,
      max channel load {{ plan.metrics.max_channel_load }},
      {{ plan.checks | rejectattr('ok') | list | length }} failed checks

- name: Plan a 3x3 mesh given as data with dimension-order routing and fixed VLANs, one link avoided
  ethercluster.routing.plan:
    topology_data:
      name: lab
      generate: {kind: mesh, dims: [3, 3], hosts_per_switch: 2}
    routing: dor
    assignment: fixed
    down_links: ["sw0:2"]
    bank: B
  register: plan_b

- name: Up*/down* rooted at sw5, intent only (no files)
  ethercluster.routing.plan:
    topology: inventories/default/topology.yml
    routing: updown
    engine_options:
      root: sw5
  register: plan_updown

- name: The settings of the topology file's fabric block, with the bank overridden
  ethercluster.routing.plan:
    topology: fabric/topology.yml
    settings:
      bank: B
    out: intended
  register: plan_b_bank
"""

RETURN = r"""
intent:
  description:
    - The switch intent (schema C(ethercluster.routing/intent/v1)) - C(schema), C(fabric), C(links), C(hosts)
      and C(switches) with per switch C(vlans), C(ports) (C(pvid), C(untagged), C(tagged), C(admin),
      C(speed_mbps)) and C(static_macs). The same data as C(intent.json).
  returned: success
  type: dict
  sample:
    schema: ethercluster.routing/intent/v1
    fabric:
      assignment: renamed
      routing: segment
      vlans_used: 4
      settings: {routing: segment, engine_options: {}, assignment: renamed, bank: A, vlan_range: null,
                 max_broadcast_copies: null, mac_learning: static, traffic: uniform}
    links:
      - {a: "sw0:2", b: "sw1:2", state: up, speed_mbps: 1000}
    hosts:
      node00: {mac: "02:00:00:00:00:01", switch: sw0, port: "1"}
    switches:
      sw0:
        platform: ovs
        stp: false
        vlans: [100, 101]
        ports:
          "1": {pvid: 100, untagged: [100, 101], tagged: [], admin: up, speed_mbps: 1000}
        static_macs:
          - {mac: "02:00:00:00:00:02", vlan: 100, port: "2"}
checks:
  description:
    - Every check that ran, in order, each C({name, ok, detail, switch}) (C(switch) is null for fabric-wide checks).
    - On failure, the checks that ran before the plan was rejected.
  returned: always
  type: list
  elements: dict
  sample:
    - {name: cdg_acyclic, ok: true, detail: "channel dependency graph has no cycle", switch: null}
metrics:
  description: Routing quality under O(traffic) - C(max_channel_load), C(average_hops) and the busiest channels.
  returned: success
  type: dict
  sample: {max_channel_load: 48, average_hops: 2.133}
host_limit:
  description: The host limit H = T/V of paper section 3.7 equation 1, per switch and for the fabric.
  returned: success
  type: dict
files:
  description:
    - Per output file (C(intent.json), C(report.md), C(fabric.svg)) its C(path) and C(state) -
      C(created), C(updated), C(unchanged), C(stale) (an earlier file renamed C(NAME.stale) because this
      input cannot produce it) or C(absent). In check mode, what would happen.
  returned: when O(out) is given
  type: dict
  sample:
    intent.json: {path: /srv/fabric/out/plan/intent.json, state: unchanged}
    report.md: {path: /srv/fabric/out/plan/report.md, state: updated}
settings:
  description:
    - The fabric settings the plan used (also in the intent as C(fabric.settings)); null fields are the
      planner's defaults.
  returned: when the settings were valid
  type: dict
  sample: {routing: dor, engine_options: {}, assignment: fixed, bank: A, vlan_range: null,
           max_broadcast_copies: null, mac_learning: static, traffic: uniform}
settings_sources:
  description: Per setting, where its value came from - V(default), V(topology), V(settings) or V(options).
  returned: when the settings were valid
  type: dict
  sample: {routing: topology, assignment: topology, bank: settings, traffic: default}
out:
  description: Absolute path of the output directory.
  returned: when O(out) is given
  type: str
  sample: /srv/fabric/out/plan
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_RULES = module_args.file_or_data("topology")
ARGUMENT_SPEC = {
    "topology": {"type": "path"},
    "topology_data": {"type": "dict"},
    "routing": {"type": "str"},
    "engine_options": {"type": "dict"},
    "assignment": {"type": "str", "choices": ["auto", "fixed", "renamed"]},
    "down_links": {"type": "list", "elements": "str", "default": []},
    "bank": {"type": "str", "choices": ["A", "B"]},
    "vlan_range": {"type": "list", "elements": "int"},
    "mac_learning": {"type": "str", "choices": ["static", "self"]},
    "traffic": {"type": "str"},
    "max_broadcast_copies": {"type": "int"},
    "broadcast": {"type": "str", "choices": ["contained", "bounded"]},
    "settings": {"type": "dict"},
    "out": {"type": "path"},
}


def main():
    module_args.refuse_bare_run("plan", ARGUMENT_SPEC, **ARGUMENT_RULES)


if __name__ == "__main__":
    main()
