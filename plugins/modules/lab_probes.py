#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.lab_probes: UDP probes between every pair of the
lab's hosts, to count the frames a transition loses (the work:
module_utils/lab/probes.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: lab_probes
short_description: Start and stop UDP probes between every host pair of the lab and count the losses
version_added: 0.2.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - O(state=started) forks one agent per host of the lab (M(ethercluster.routing.lab)), in the host's network
    namespace; every agent sends one UDP datagram with a sequence number to every other host every O(interval_ms)
    and receives theirs, in the background, until stopped. The hosts' neighbour (ARP) entries are made permanent
    while the probes run. The task returns once every agent's socket is bound and O(warmup_s) has passed; datagrams
    sent before that are not counted (the emulator's datapath caches the flows of each new pair).
  - O(state=stopped) stops every agent's sending first, waits O(drain_s) for the datagrams in flight, then stops the
    receivers (none closes while another agent still sends to it), and returns
    per host pair sent, received, lost, duplicates and reordered datagrams, a timeline of the losses (time buckets)
    and, for each of O(windows) (the wall-clock start and end of a transition), the datagrams lost in it.
  - Records and the summary are written under the lab's directory (C(probes/)).
  - Runs on the lab machine as root.
options:
  lab:
    description: Name of the lab.
    type: str
    required: true
  state:
    description: V(started) starts the probes, V(stopped) stops them and returns the counts.
    type: str
    choices: [started, stopped]
    default: started
  interval_ms:
    description: Milliseconds between two datagrams of one host to each other host.
    type: float
    default: 10
  port:
    description: UDP port of the probes.
    type: int
    default: 47000
  hosts:
    description: Hosts that take part. Default is every host of the lab.
    type: list
    elements: str
  warmup_s:
    description: Seconds, after every agent's socket is bound, whose losses are not counted; the task returns after
      them.
    type: float
    default: 1.0
  drain_s:
    description: Seconds every agent keeps receiving after the last one stopped sending.
    type: float
    default: 0.5
  windows:
    description: With O(state=stopped), the transitions to attribute losses to, each C(name) (or C(transition)),
      C(start) and C(end) (wall clock, seconds since the epoch, as M(ethercluster.routing.link_transition) returns
      them and logs them), and optionally C(exclude_hosts), hosts whose pairs' losses in the window are counted apart
      (C(excluded), for a failed switch's own hosts); other keys are ignored.
    type: list
    elements: dict
  bucket_ms:
    description: Width of a bucket of the loss timeline.
    type: float
    default: 100
  margin_ms:
    description: A loss counts for a window when its datagram was sent at most this long before its start or after
      its end.
    type: float
    default: 200
  state_root:
    description: Directory holding the labs.
    type: path
    default: /run/ethercluster-lab
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Says whether it would start or stop the probes; does neither.
  diff_mode:
    support: none
  platform:
    platforms: posix
requirements:
  - root on the lab machine (network namespaces)
seealso:
  - module: ethercluster.routing.lab
  - module: ethercluster.routing.link_transition
"""

EXAMPLES = r"""
- name: Start the probes
  ethercluster.routing.lab_probes:
    lab: mol-torus4-power
    state: started

- name: Stop them and count the losses of each transition
  ethercluster.routing.lab_probes:
    lab: mol-torus4-power
    state: stopped
    windows:
      - {name: "off sw0:2", start: 1795000000.1, end: 1795000004.2}
  register: probes
"""

RETURN = r"""
running:
  description: Whether the probes run after the task.
  returned: always
  type: bool
totals:
  description: Over all host pairs, sent, received, lost, duplicates, reordered and send_errors.
  returned: O(state=stopped)
  type: dict
pairs:
  description: Number of ordered host pairs probed.
  returned: O(state=stopped)
  type: int
lossy_pairs:
  description: The counts of each ordered pair (C(src->dst)) that lost a datagram.
  returned: O(state=stopped)
  type: dict
timeline:
  description: Lost datagrams per time bucket (C(t), seconds after the start; only non-empty buckets).
  returned: O(state=stopped)
  type: list
  elements: dict
windows:
  description: The O(windows) with C(lost) (datagrams lost in it), C(pairs) (per pair), C(last_lost_s) (the send
    time of its last lost datagram, seconds after its start, so how long its pairs took to deliver again; null when
    none was lost) and, with C(exclude_hosts), C(excluded).
  returned: O(state=stopped)
  type: list
  elements: dict
table:
  description: The losses per window as a Markdown table (one line each), then the totals.
  returned: O(state=stopped)
  type: list
  elements: str
outside:
  description: Datagrams lost in no window.
  returned: O(state=stopped)
  type: int
duration_s:
  description: Seconds the probes ran.
  returned: O(state=stopped)
  type: float
directory:
  description: Where the records and summary.json are.
  returned: O(state=stopped)
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab import probes
    from ansible_collections.ethercluster.routing.plugins.module_utils.lab.wire import load_layout
except ImportError as exc:  # pragma: no cover
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            lab=dict(type="str", required=True),
            state=dict(type="str", default="started", choices=["started", "stopped"]),
            interval_ms=dict(type="float", default=10.0),
            port=dict(type="int", default=47000),
            hosts=dict(type="list", elements="str"),
            warmup_s=dict(type="float", default=1.0),
            drain_s=dict(type="float", default=0.5),
            windows=dict(type="list", elements="dict"),
            bucket_ms=dict(type="float", default=100.0),
            margin_ms=dict(type="float", default=200.0),
            state_root=dict(type="path", default="/run/ethercluster-lab"),
        ),
        supports_check_mode=True,
    )
    if IMPORT_ERROR is not None:
        module.fail_json(msg="cannot load the lab code of ethercluster.routing: %s" % IMPORT_ERROR)
    params = module.params
    try:
        layout = load_layout(params["state_root"], params["lab"])
        current = probes.running(layout)
        if params["state"] == "started":
            if current is not None:
                module.exit_json(changed=False, running=True, msg="probes already run",
                                 started=current["started"])
            if module.check_mode:
                module.exit_json(changed=True, running=False)
            record = probes.start(layout, interval=params["interval_ms"] / 1000.0,
                                  port=params["port"], drain_s=params["drain_s"],
                                  hosts=params["hosts"], warmup_s=params["warmup_s"])
            module.exit_json(changed=True, running=True, started=record["started"],
                             measured_from=record["measured_from"], hosts=record["hosts"],
                             interval_ms=params["interval_ms"])
        if current is None and (probes.read_record(probes.probe_directory(layout)) or {}).get(
                "state") != "running":
            module.exit_json(changed=False, running=False, msg="no probes run in this lab")
        if module.check_mode:
            module.exit_json(changed=True, running=True)
        windows = []
        for position, window in enumerate(params["windows"] or []):
            try:
                windows.append({"name": str(window.get("name") or window.get("transition")
                                            or position + 1),
                                "start": float(window["start"]), "end": float(window["end"]),
                                "drain": bool(window.get("drain", False)),
                                "exclude_hosts": [str(host) for host in window.get("exclude_hosts") or []]})
            except (KeyError, TypeError, ValueError):
                module.fail_json(msg="windows[%d]: needs name, start and end (wall-clock seconds), "
                                     "got %r" % (position, window))
        summary = probes.stop(layout, windows=windows, bucket_s=params["bucket_ms"] / 1000.0,
                              margin_s=params["margin_ms"] / 1000.0)
        summary.pop("per_pair", None)  # in summary.json
        summary["table"] = probes.loss_table(summary)
        module.exit_json(changed=True, running=False, **summary)
    except EtherclusterError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
