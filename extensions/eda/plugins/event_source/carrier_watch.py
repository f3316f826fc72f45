# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ethercluster.routing.carrier_watch: an ansible-rulebook event source that
emits the carrier events of the fabric (docs/failover.md, "Event-Driven
Ansible").

The detection is the resident responder's (playbooks/failover_watch.yml run
in check mode: it keeps a session per switch, long-polls every fabric
port's carrier, and logs what it detects and what it would do, changing
nothing). This source follows that JSON-lines log and puts one event per
detected change on the rulebook's queue::

    {"carrier": {"kind": "link_down" | "link_up" | "switch_down" | "switch_up",
                 "name": "sw5:4--sw6:3", "link": 10, "at": 1764080000.1}}

A rulebook then runs link_failed.yml / link_restored.yml with the link
(extensions/eda/rulebooks/failover.yml). Arguments:

* ``log`` (required): the responder's log file;
* ``from_start`` (default false): also emit the events already in the file;
* ``poll_s`` (default 0.05): how often the file is checked for new lines.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any


def carrier_events(lines: list[str]) -> list[dict[str, Any]]:
    """The events of the responder's log lines (``detected`` entries only)."""
    found = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("event") == "detected":
            found.append({"carrier": {key: entry.get(key) for key in ("kind", "name", "link", "at")}})
    return found


async def main(queue: asyncio.Queue, args: dict[str, Any]) -> None:
    """Follow ``args["log"]`` and put each detected carrier change on ``queue``."""
    path = os.path.expanduser(str(args["log"]))
    poll_s = float(args.get("poll_s", 0.05))
    position = None if args.get("from_start") else (os.path.getsize(path) if os.path.exists(path) else 0)
    pending = ""
    while True:
        if os.path.exists(path):
            size = os.path.getsize(path)
            if position is None or size < position:   # first look, or the log was rotated
                position = 0 if position is None or size < position else position
            if size > position:
                with open(path, encoding="utf-8") as handle:
                    handle.seek(position)
                    text = pending + handle.read()
                    position = handle.tell()
                *lines, pending = text.split("\n")
                for event in carrier_events(lines):
                    await queue.put(event)
        await asyncio.sleep(poll_s)


if __name__ == "__main__":
    # python carrier_watch.py LOG: print the events as they come

    class _Print:
        """A queue that prints."""

        async def put(self, event: dict[str, Any]) -> None:
            """Print one event."""
            print(json.dumps(event))

    import sys
    asyncio.run(main(_Print(), {"log": sys.argv[1], "from_start": True}))  # type: ignore[arg-type]
