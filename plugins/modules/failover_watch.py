#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of ethercluster.routing.failover_watch; the work is done by
the action plugin of the same name, on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: failover_watch
short_description: Resident failover responder, watches every fabric port's carrier and fails over with pre-planned moves
version_added: 0.3.0
author:
  - ethercluster.routing developers (@ethercluster)
description:
  - A long-running task (docs/failover.md, "The resident responder"). Before any failure it reads every switch (the
    fabric must hold its base routing), opens and keeps the switches' sessions (their Ansible connections), and plans
    and proves the move to the backup of every covered single link failure (the stored C(failover.json) when it
    fits), so that a failure costs only the pushes.
  - Once planned, it arms the base in one parallel push, proven like a move's window. Each switch's base rows get,
    for the destinations they lack, the port the planned backups take from that input port, rows no base frame reads;
    each flip completes its backup rows from the base. A frame that meets a switch in the other state mid-failover
    is then still forwarded, so far more switches flip in one proven round (on the 4x4 torus 2.1 instead of 3.7
    urgent rounds per link failure, 1.4 instead of 2.9 per switch failure). After a restore the base is armed again;
    when the task stops on the base it writes the plain base back. Check mode arms nothing.
  - It then watches the carrier of every fabric port, one long poll per switch that answers as soon as the switch sends
    its OpenFlow port status message (C(ovs-ofctl monitor)), and acts on a change once the carriers held still for
    O(settle_s); whole switches failing at once, links going down that both ends answered (each with another fabric
    port up) after half of O(settle_s), links going down that one end has not answered yet after its answer (up to
    five times O(settle_s)). A link is down when either end lost carrier; a switch has failed when all its
    fabric ports lost carrier, all its links are down as its neighbours see them, or its session died.
  - On a link or switch failure it runs the planned move's urgent pushes -- parallel rounds, each proven by
    simulating every mix of old and new switches it can make; a round writes the switches it flips (each with the
    backup bank) and those whose old bank the install completes, the others get the backup bank afterwards --
    logs the recovery, and runs the other flips, the drain wait and the old bank's removal in the background. A failed
    switch is never read or written. A failure that arrives meanwhile is queued and planned on the state the fabric
    then holds (a backup of the backup, computed on the spot, for a link and for a switch that fails while a
    link's backup holds; such a switch, when back, is first written alone with its entry in the held routing);
    without a detour or a proven order, or a failure while a switch's backup holds, nothing is pushed and the log
    says only a halt-and-drain recovers.
  - When every failed link (or the failed switch) has carrier again, the planned restore brings the base routing
    back.
  - Started on a fabric that holds the backup of one of its planned failovers (a responder before it died or was
    stopped while a failure was held, or C(link_failed.yml) ran by hand), it takes that failure over without writing
    anything (segment-based routing's backup manager) and the failure's return runs the planned restore; the
    C(ready) event names it (C(resumed)). A fabric on neither the base nor such a backup is refused, nothing written,
    naming the switches that hold neither.
  - Every event goes to O(log), one JSON object per line, with wall-clock times and the proof's summary.
  - It stops after O(duration_s), after O(max_events) handled events, or when O(stop_file) exists.
  - On a fabric with C(dell_os6) or C(huawei_vrp) switches (mixed with C(ovs) ones or not) each switch is reached
    through its platform's driver, as the link transitions reach it, and polled every O(cli_interval_s), since such
    switches send no port status message to wait for (and at once on their SNMP C(linkDown) or C(linkUp)
    notification, with O(traps_listen)). They apply a configuration line by line, so nothing is armed and no rounds
    are made; a move runs as planned (the backup bank installed, then one flip per switch, the changing switches
    first), as C(link_failed.yml) runs it, and every push reads the switch first. C(linux_bridge) switches are
    refused.
  - A routing with source-tree paths (the fixed assignment's trees, what an OS6 fabric carries) gets the backups
    C(link_failed.yml) applies, the trees that crossed the link repaired; a second link failure repairs the held
    trees under the base's turn order. Its switch failures are not planned (nothing pushed, the log says so).
attributes:
  check_mode:
    details: Detects and logs what it would do (the steps and their proof); changes nothing.
extends_documentation_fragment:
  - ethercluster.routing.controller
  - ethercluster.routing.controller.deployed_fabric
options:
  intent_dir:
    description: The directory of the deployed intent, where C(failover.json) is kept (optional).
    type: path
  plan_options:
    description: The deployed plan's other settings; the role passes those of the deployed intent.
    type: dict
  log:
    description: Controller file that gets one JSON line per event.
    type: path
    required: true
  duration_s:
    description: Stop after this many seconds (0 for no limit).
    type: float
    default: 0
  max_events:
    description: Stop after this many handled events (0 for no limit).
    type: int
    default: 0
  stop_file:
    description: Stop as soon as this controller file exists.
    type: path
  preplan:
    description: The failures to plan before watching (link names or ends, switch names); default every link and every
      switch.
    type: list
    elements: str
  hold_s:
    description: How long one long poll waits on a switch for a change before it answers anyway (seconds).
    type: float
    default: 5.0
  interval_s:
    description: How often the long poll reads the ports on a switch where it cannot wait for the switch's port status
      messages (seconds).
    type: float
    default: 0.05
  cli_interval_s:
    description:
      - How often the interface status of a C(dell_os6) or C(huawei_vrp) switch is read (seconds). Those switches
        send the responder no port status message to wait for, so on a fabric with any of them every switch is polled
        (one C(show interfaces status) / C(display interface brief) per switch and interval, over its
        C(network_cli) session); a failure is seen within about this long plus the read.
    type: float
    default: 1.0
  traps_listen:
    description:
      - Where to receive the switches' SNMPv2c C(linkDown) and C(linkUp) notifications (C(ADDRESS:PORT), as
        C(0.0.0.0:162)), on a fabric whose switches are polled (O(cli_interval_s)). A notification from a switch (told
        apart by its sender address, the switch's C(ansible_host)) makes that switch's interface status be read at
        once; the poll every O(cli_interval_s) stays as the fallback, so a lost trap costs at most one interval.
        The state is always the read, never the trap's content.
      - Each switch must send its notifications there (docs/failover.md, "SNMP traps"). Ignored, with a warning,
        on a fabric of C(ovs) switches only.
    type: str
  traps_community:
    description: The SNMPv2c community the notifications must carry; others are counted as ignored.
    type: str
    default: public
  settle_s:
    description: How long the carriers must hold still before a change is acted on (seconds), so that the links of a
      failed switch, seen going down one after the other, make one switch failure. A switch whose every link is down
      is acted on at once; links going down that both ends answered, after half of it; links going down that one end
      has not answered yet wait for that end, up to five times it.
    type: float
    default: 0.2
  wait_s:
    description: How long (seconds) old-bank frames may drain after the last switch flipped, before that bank goes.
    type: float
    default: 1.0
  max_parallel:
    description: Bound on the switches written at once by one parallel push (default all).
    type: int
  kept_shell:
    description:
      - Push through a shell kept open on each switch (C(ansible.netcommon.network_cli) over paramiko with the
        C(ethercluster.routing.posix_shell) terminal and cliconf plugins, set up from the switch's C(ssh) variables);
        each write is then a line over an open channel instead of a new SSH session, which is most of a push's time on
        a loaded switch. A switch reached over another connection plugin or with become keeps its ordinary sessions (a
        warning names it; RV(kept_shells) lists the others). Host keys are checked as paramiko checks them (its
        C(known_hosts) files, not the ssh client's C(UserKnownHostsFile)); a host may set
        C(ansible_paramiko_host_key_checking).
      - The long polls always use the switch's ordinary connection.
    type: bool
    default: true
requirements:
  - PyYAML, networkx, numpy and scipy on the controller, and what the switches' connection plugin needs (for C(ssh),
    OpenSSH; with O(kept_shell), paramiko, which the C(ansible) package's C(ansible.netcommon) uses).
seealso:
  - module: ethercluster.routing.failover
"""

EXAMPLES = r"""
- name: Watch the fabric for an hour (as a service, see docs/failover.md)
  ethercluster.routing.failover_watch:
    topology: inventories/default/topology.yml
    intent_dir: intended
    log: /var/log/ethercluster/failover.jsonl
    duration_s: 3600
    stop_file: /run/ethercluster/failover.stop
"""

RETURN = r"""
events:
  description: Every event logged (C(event), C(at) wall clock, C(name), C(kind), the proof's summary where planned).
  returned: always
  type: list
  elements: dict
handled:
  description: How many events were handled (failovers, restores, refusals).
  returned: always
  type: int
kept_shells:
  description: The switches whose pushes went through a kept shell (O(kept_shell)); the others opened an SSH session
    per push.
  returned: always
  type: list
  elements: str
planned:
  description: The link and switch failures planned before watching.
  returned: always
  type: list
  elements: str
armed:
  description: The switches that held continuation rows while watching (empty in check mode).
  returned: always
  type: list
  elements: str
resumed:
  description: The failure whose backup the fabric held when the task started, taken over and held (none when the
    fabric held its base routing).
  returned: always
  type: str
"""

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args

ARGUMENT_SPEC = {
    **module_args.DEPLOYED_FABRIC_SPEC,
    "intent_dir": {"type": "path"},
    "plan_options": {"type": "dict"},
    "log": {"type": "path", "required": True},
    "duration_s": {"type": "float", "default": 0},
    "max_events": {"type": "int", "default": 0},
    "stop_file": {"type": "path"},
    "preplan": {"type": "list", "elements": "str"},
    "hold_s": {"type": "float", "default": 5.0},
    "interval_s": {"type": "float", "default": 0.05},
    "cli_interval_s": {"type": "float", "default": 1.0},
    "traps_listen": {"type": "str"},
    "traps_community": {"type": "str", "default": "public", "no_log": True},
    "settle_s": {"type": "float", "default": 0.2},
    "wait_s": {"type": "float", "default": 1.0},
    "max_parallel": {"type": "int"},
    "kept_shell": {"type": "bool", "default": True},
    **module_args.SWITCH_SESSION_SPEC,
}


def main():
    module_args.refuse_bare_run("failover_watch", ARGUMENT_SPEC)


if __name__ == "__main__":
    main()
