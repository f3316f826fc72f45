# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One session per switch, opened on first use and kept: what every
transition driver (:class:`.transition_run.OvsDriver`,
:class:`.cli_driver.CliDriver`) holds. Standard library only."""

from __future__ import annotations

import selectors
import threading
import time
from collections.abc import Callable
from typing import Any


class SessionPool:
    """``open_session(switch)`` returns a session (anything with
    ``close()``); :meth:`_session` opens each switch's once, from any
    thread; :meth:`close` closes them all."""

    def __init__(self, open_session: Callable[[str], Any]) -> None:
        self.open_session = open_session
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _session(self, switch: str) -> Any:
        with self._lock:
            session = self._sessions.get(switch)
        if session is None:
            session = self.open_session(switch)
            with self._lock:
                self._sessions[switch] = session
        return session

    def close(self) -> None:
        """Close every session opened (best effort)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            try:
                session.close()
            except Exception:  # pylint: disable=broad-except  # closing is best effort
                pass


def answers(pending: dict[str, Any], clock: Callable[[], float] = time.monotonic
            ) -> dict[str, tuple[Any, BaseException | None, float]]:
    """Wait for scripts sent to several switches at once (``{switch:
    pending}``, each with ``fileno()`` and ``result()``, as a kept shell's
    ``begin`` returns them) and take each answer as it comes: ``{switch:
    (output or None, error or None, seconds from now to its answer)}``.
    One thread waits for all of them, so no answer waits for a thread to
    be started or scheduled (on a loaded controller, starting eight threads
    cost 0.1 s)."""
    started = clock()
    done: dict[str, tuple[Any, BaseException | None, float]] = {}

    def take(switch: str) -> None:
        try:
            done[switch] = (pending[switch].result(), None, round(clock() - started, 3))
        except Exception as exc:  # pylint: disable=broad-except  # the caller reports each switch's error
            done[switch] = (None, exc, round(clock() - started, 3))

    with selectors.DefaultSelector() as selector:
        for switch, call in pending.items():
            if call.fileno() < 0:      # sent again when its answer is asked for
                take(switch)
            else:
                selector.register(call.fileno(), selectors.EVENT_READ, switch)
        while len(done) < len(pending):
            for key, _events in selector.select():
                selector.unregister(key.fileobj)
                take(key.data)
    return done
