# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ansible-rulebook event source carrier_watch
(extensions/eda/plugins/event_source/carrier_watch.py): it follows the
responder's JSON-lines log and emits one event per detected carrier change,
only those written after it started unless asked for the whole file, and a
line written in two parts once."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

_PATH = Path(__file__).resolve().parents[3] / "extensions" / "eda" / "plugins" / "event_source" / "carrier_watch.py"
_SPEC = importlib.util.spec_from_file_location("carrier_watch", _PATH)
carrier_watch = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(carrier_watch)


def _line(event, **fields):
    return json.dumps(dict(fields, event=event, at=1.5)) + "\n"


async def _follow(path, writes, args, expected):
    """Run the source while ``writes`` (texts) are appended, until it queued
    ``expected`` events (or 30 s passed); the events it queued."""
    queue = asyncio.Queue()
    task = asyncio.ensure_future(carrier_watch.main(queue, dict(args, log=str(path), poll_s=0.01)))
    await asyncio.sleep(0)      # it takes its starting position
    for text in writes:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
        await asyncio.sleep(0.02)   # a chance to read a half-written line
    for _tick in range(3000):
        if queue.qsize() >= expected:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)   # nothing more comes
    task.cancel()
    found = []
    while not queue.empty():
        found.append(queue.get_nowait())
    return found


def test_detected_changes_written_after_the_start_become_events(tmp_path):
    log = tmp_path / "watch.jsonl"
    log.write_text(_line("detected", kind="link_down", name="old", link=1))
    whole = _line("detected", kind="link_down", name="sw5:4--sw6:3", link=10)
    writes = [_line("ready", planned=[]), whole[:20], whole[20:], _line("recovered", name="sw5:4--sw6:3"),
              _line("detected", kind="switch_down", name="sw2"), "not json\n"]
    found = asyncio.run(_follow(log, writes, {}, 2))
    assert found == [{"carrier": {"kind": "link_down", "name": "sw5:4--sw6:3", "link": 10, "at": 1.5}},
                     {"carrier": {"kind": "switch_down", "name": "sw2", "link": None, "at": 1.5}}]


def test_from_start_also_emits_what_the_file_holds(tmp_path):
    log = tmp_path / "watch.jsonl"
    log.write_text(_line("detected", kind="link_up", name="old", link=1))
    found = asyncio.run(_follow(log, [], {"from_start": True}, 1))
    assert [event["carrier"]["name"] for event in found] == ["old"]
