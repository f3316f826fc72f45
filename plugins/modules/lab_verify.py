#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.lab_verify: check on the wire of the lab that the
fabric does what its intent says. The action plugin of the same name
computes the expectations from the intent on the controller; this module
runs the checks on the lab machine."""

from __future__ import annotations

DOCUMENTATION = r"""
module: lab_verify
short_description: Check on the wire of the emulated lab that frames follow the intent
version_added: 0.1.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - Runs, on the machine that holds the lab (M(ethercluster.routing.lab)), checks that send real frames between the
    lab's host namespaces and read the switches' port counters, and compares what happens with what the intent says.
  - C(stp_off) every bridge has STP and RSTP off (unless the intent asks for a spanning tree) and
    C(fail_mode=secure).
  - C(broadcast) one broadcast frame from each host of O(broadcast_sources) (all sent at once) reaches every other
    host exactly as many times as the intent says (once), and C(no_storm) afterwards no port counter of any switch
    moves for O(storm_window) seconds (every flood died out).
  - C(planned_paths) a burst of O(burst_frames) unicast frames between each chosen host pair moves the rx/tx counters
    of exactly the switch ports of the path the intent plans (which the plan has checked to be the routing's path);
    the pairs are O(burst_pairs), else O(bursts) pairs chosen to cover the most inter-switch links, the longest path
    first.
  - C(ping) every host pings every other host (each ordered pair, so both ways).
  - C(tcp) a TCP transfer of O(tcp_bytes) bytes arrives intact (SHA-256); it fails when the lab's veth checksum quirk is
    not handled.
  - Every failure names the hosts, switches and ports involved. The expectations come from the IEEE 802.1Q simulator
    of the collection, which reads only the intent.
  - The checks are described in docs/deploy.md of the collection.
extends_documentation_fragment:
  - ethercluster.routing.controller
attributes:
  check_mode:
    details: The checks only send test frames and read counters; they change nothing, so they also run in check mode.
  platform:
    platforms: debian
options:
  intent:
    description: The intent (schema C(ethercluster.routing/intent/v1)), for example the C(intent) returned by
      M(ethercluster.routing.plan).
    type: dict
  src:
    description: Path of the intent file (C(intent.json)) instead of O(intent).
    type: path
  lab:
    description:
      - Name of the lab. Default is the variable C(ethercluster_lab) (the lab's inventory sets it), else the intent's
        fabric name (a lab is named after its topology by default).
    type: str
  state_root:
    description: Directory under which the labs keep their records.
    type: path
    default: /run/ethercluster-lab
  checks:
    description:
      - The checks to run. Default is every one that applies - V(stp_off), V(broadcast), V(no_storm),
        V(planned_paths), V(ping), V(tcp), and first V(learned) when the intent was planned with C(mac_learning=self).
      - V(learned) reads every switch's forwarding table and checks that it learned each host, in every VLAN, on the
        port the static plan would have installed, and holds no static entry (only for a C(mac_learning=self) intent).
      - Each one of V(learned), V(stp_off), V(broadcast), V(no_storm), V(planned_paths), V(ping), V(tcp).
    type: list
    elements: str
  bursts:
    description: Number of host pairs to send a burst between, when O(burst_pairs) is not given.
    type: int
    default: 3
  burst_pairs:
    description: 'Host pairs to send a burst between: C([[node00, node10], ...]).'
    type: list
    elements: list
  burst_frames:
    description: Frames per burst. At least 90% must be counted on every port of the path, under 10% on any other.
    type: int
    default: 400
  broadcast_sources:
    description: Hosts that each send one broadcast frame. Default is every host of the intent.
    type: list
    elements: str
  storm_window:
    description: Seconds during which no port counter may move after the broadcasts.
    type: float
    default: 2.0
  tcp_pair:
    description: 'C([client, server]) of the TCP transfer. Default is the first burst pair (the longest path).'
    type: list
    elements: str
  tcp_bytes:
    description: Bytes of the TCP transfer.
    type: int
    default: 8388608
  plan:
    description: Internal, set by the action plugin; do not set it.
    type: dict
requirements:
  - root on the lab machine (the checks enter the lab's network namespaces), iputils-ping and Open vSwitch's tools
  - networkx on the controller (the expectations come from the collection's 802.1Q simulator)
notes:
  - The broadcasts run first, while the fabric is idle, so that the storm window sees still counters; before them the
    module waits (up to 8 s) until no host has an ARP entry about to send a probe.
  - Run it against a lab that nothing else sends traffic through at the same time; other traffic moves the counters.
seealso:
  - module: ethercluster.routing.lab
  - module: ethercluster.routing.plan
  - module: ethercluster.routing.ovs_switch
"""

EXAMPLES = r"""
- name: Verify the default lab against the intent just deployed
  ethercluster.routing.lab_verify:
    src: out/deploy/intent.json

- name: Only the paths of two chosen pairs, with larger bursts
  ethercluster.routing.lab_verify:
    intent: "{{ fabric_plan.intent }}"
    lab: mesh3
    checks: [planned_paths]
    burst_pairs: [[node00, node08], [node08, node00]]
    burst_frames: 1000
"""

RETURN = r"""
passed:
  description: Whether every check passed.
  returned: always
  type: bool
summary:
  description: One line naming the checks that passed and failed, then the notes of checks that passed after a retry.
  returned: always
  type: str
  sample: "6/6 checks passed: stp_off, broadcast, no_storm, planned_paths, ping, tcp"
checks:
  description:
    - Every check run, with C(name), C(ok), C(detail) and C(problems) (each naming hosts, switches, ports).
    - A check that passed only after a retry carries a C(note) (the ping pairs that answered only in the quiet round), also
      shown in C(summary).
  returned: always
  type: list
  elements: dict
  sample:
    - name: planned_paths
      ok: false
      detail: "3 bursts of 400 frames moved the counters of the planned paths only: ..."
      problems: ["burst node00 -> node10 (400 frames, planned sw0(1>3) -> ...): sw1:2 sent 400, but is off the planned path"]
timings:
  description: Seconds each check took.
  returned: always
  type: dict
lab:
  description: The lab checked.
  returned: always
  type: str
"""

import traceback

from ansible.module_utils.basic import AnsibleModule

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.wire import (
        load_layout,
        verify,
    )
except ImportError:
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None

ARGUMENT_SPEC = dict(
    intent=dict(type="dict"),
    src=dict(type="path"),
    lab=dict(type="str"),
    state_root=dict(type="path", default="/run/ethercluster-lab"),
    checks=dict(type="list", elements="str"),
    bursts=dict(type="int", default=3),
    burst_pairs=dict(type="list", elements="list"),
    burst_frames=dict(type="int", default=400),
    broadcast_sources=dict(type="list", elements="str"),
    storm_window=dict(type="float", default=2.0),
    tcp_pair=dict(type="list", elements="str"),
    tcp_bytes=dict(type="int", default=8 << 20),
    plan=dict(type="dict"),
)


def summary_line(result):
    """``"5/6 checks passed: ...; FAILED: ..."``, then the checks' notes
    (``"(ping: 3 pairs answered only in the quiet round ...)"``)."""
    passed = [check["name"] for check in result["checks"] if check["ok"]]
    failed = [check["name"] for check in result["checks"] if not check["ok"]]
    line = "%d/%d checks passed" % (len(passed), len(result["checks"]))
    if passed:
        line += ": " + ", ".join(passed)
    if failed:
        line += "; FAILED: " + ", ".join(failed)
    notes = ["%s: %s" % (check["name"], check["note"]) for check in result["checks"] if check.get("note")]
    if notes:
        line += " (%s)" % "; ".join(notes)
    return line


def failure_message(result):
    lines = ["verification on the wire failed (%s):" % summary_line(result)]
    for check in result["checks"]:
        if not check["ok"]:
            lines.append("%s:" % check["name"])
            lines.extend("  - %s" % problem for problem in check["problems"])
    return "\n".join(lines)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if IMPORT_ERROR is not None:
        module.fail_json(msg="cannot load the lab code of ethercluster.routing",
                         exception=IMPORT_ERROR)
    params = module.params
    if params["plan"] is None or not params["lab"]:
        module.fail_json(msg="ethercluster.routing.lab_verify runs through its action plugin, "
                             "which computes the expectations from the intent; it was started as "
                             "a bare module (call it by its full name from an installed "
                             "collection)")
    try:
        layout = load_layout(params["state_root"], params["lab"])
        result = verify(layout, params["plan"], checks=params["checks"])
    except EtherclusterError as exc:
        module.fail_json(msg=str(exc), lab=params["lab"], passed=False,
                         summary="not run: %s" % exc)
    result.update(lab=params["lab"], summary=summary_line(result), changed=False)
    if not result["passed"]:
        module.fail_json(msg=failure_message(result), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
