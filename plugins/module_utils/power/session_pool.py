# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One session per switch, opened on first use and kept: what every
transition driver (:class:`.transition_run.OvsDriver`,
:class:`.cli_driver.CliDriver`) holds. Standard library only."""

from __future__ import annotations

import threading
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
