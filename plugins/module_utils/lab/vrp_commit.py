# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two-stage configuration and trial commits of the lab's emulated Huawei
VRP CLI (:mod:`.vrp_cli`), for a switch emulated as a VRP8 one
(CloudEngine; ``"two_stage": true`` in its ``cli.json``). The S5700 the
emulator stands for otherwise (VRP5) has neither: there ``system-view`` is
the immediate mode and these commands are unknown.

As Huawei documents VRP8 ("Selecting a Mode for the Configuration to Take
Effect"; the ``commit`` and ``display configuration trial status``
command references; docs/reliability.md, "Commit-confirm"):

* ``system-view`` enters the two-stage mode: configuration commands edit a
  candidate (prompt ``[~sw0]``, ``[*sw0]`` once the candidate differs from
  the running configuration); ``commit`` makes it the running one;
  ``system-view immediately`` is the immediate mode (``[sw0]``);
* ``commit trial [SECONDS] [persist ID]`` (60-65535 s, default 600) commits
  and starts a trial run: unless confirmed within SECONDS, the switch goes
  back to the configuration it ran before. ``commit`` in the same session,
  or ``commit persist ID`` in any session for a trial started with that
  persist ID, confirms it; a trial started without ``persist`` can only be
  confirmed in its own session;
* ``display configuration trial status`` (every view): ``Trial status:
  ACTIVE`` or ``INACTIVE``, the seconds left and the persist ID;
* leaving the system view (``return``, ``quit``) with an uncommitted
  candidate asks ``[Y(yes)/N(no)/C(cancel)]``: commit it, discard it, or
  stay; a session that ends discards it.

The interpreter only asks for the trial (``trial_request``) and its
confirmation (``trial_confirm``); the session (:mod:`.cli_emulator`) runs
the timer process that rolls the switch back. Not emulated: ``abort
trial``, ``display configuration candidate``, configuration locks.
"""

from __future__ import annotations

import copy
import time
from typing import Any

TRIAL_MIN_S, TRIAL_MAX_S, TRIAL_DEFAULT_S = 60, 65535, 600
UNCOMMITTED_QUESTION = ("Warning: Uncommitted configurations found, commit them before exiting? "
                        "[Y(yes)/N(no)/C(cancel)]:")
CHOOSE_AGAIN = "Error: Please choose 'YES', 'NO' or 'CANCEL' first before pressing 'Enter'. [Y/N/C]:"
# the state a commit makes the running configuration (attributes of VrpCli)
STATE = ("hostname", "stp", "mac_aging_s", "vlans", "ports", "statics")


class Refused(Exception):
    """A command VRP refuses in this state; the message is what it prints."""


class WrongWord(Exception):
    """A parameter out of range; the argument is the index of the word."""


class TwoStage:
    """The two-stage half of :class:`.vrp_cli.VrpCli` (a mixin: it works on
    the interpreter's configuration attributes, :data:`STATE`)."""

    two_stage = False  # the switch has the two-stage mode (VRP8)
    staged = False  # the current system view is two-stage
    changed = False
    apply_due = False
    mode = "user"
    _base: dict[str, Any] | None = None  # the running configuration while a candidate is edited
    _question: str | None = None

    def init_two_stage(self, two_stage: bool) -> None:
        """No trial, no candidate; the two-stage mode when ``two_stage``."""
        self.two_stage = bool(two_stage)
        self.staged = False
        self._base = None
        # {"at": wall clock, "persist": ID or None, "mine": started in this session} while one runs
        self.trial: dict[str, Any] | None = None
        self.trial_request: dict[str, Any] | None = None  # {"seconds", "persist", "rollback"}: for the session
        self.trial_confirm = False  # the session stops the trial's timer

    # ------------------------------------------------------ candidate
    def snapshot(self) -> dict[str, Any]:
        """A copy of the configuration state."""
        return {name: copy.deepcopy(getattr(self, name)) for name in STATE}

    def restore(self, state: dict[str, Any]) -> None:
        """Make ``state`` (a :meth:`snapshot`) the configuration state."""
        for name in STATE:
            setattr(self, name, copy.deepcopy(state[name]))

    def pending(self) -> bool:
        """Whether the two-stage candidate differs from the running configuration."""
        return self.staged and self._base is not None and self.snapshot() != self._base

    def edited(self) -> None:
        """A configuration command changed something: in the immediate mode
        it runs now (applied when the system view is left); in the two-stage
        mode only the candidate changed."""
        if not self.staged:
            self.changed = True

    def prompt_mark(self) -> str:
        """``~`` or ``*`` in a two-stage view's prompt, '' elsewhere."""
        if not self.staged or self.mode == "user":
            return ""
        return "*" if self.pending() else "~"

    def running_state(self) -> dict[str, Any] | None:
        """The running configuration while an uncommitted candidate is
        edited (what ``display current-configuration`` shows), else None."""
        return self._base if self.pending() else None

    def enter_system(self, lower: list[str]) -> str | None:
        """``system-view`` (``immediately``) of a two-stage switch; None
        when the switch has no two-stage mode (the caller's system view)."""
        if not self.two_stage or lower not in (["system-view"], ["system-view", "immediately"]):
            return None
        self.mode = "system"
        self.staged = len(lower) == 1
        self._base = self.snapshot() if self.staged else None
        return "Enter system view, return user view with return command.\n"

    def leave_staged(self) -> str | None:
        """``return``/``quit`` out of the system view: with an uncommitted
        candidate VRP asks what to do with it (None: nothing to ask)."""
        if not self.pending():
            self.staged, self._base = False, None
            return None
        self._question = "uncommitted"
        return UNCOMMITTED_QUESTION

    def answer_uncommitted(self, text: str) -> tuple[bool, str]:
        """The answer to :data:`UNCOMMITTED_QUESTION`: (leave the system
        view, what to print). Y commits, N discards, C stays."""
        choice = text.strip().lower()
        if choice in ("y", "yes"):
            self._commit_candidate()
            self.staged, self._base = False, None
            return True, "\n"
        if choice in ("n", "no"):
            self.restore(self._base or self.snapshot())
            self.staged, self._base = False, None
            return True, "\n"
        if choice in ("c", "cancel"):
            return False, "\n"
        self._question = "uncommitted"
        return False, "\n" + CHOOSE_AGAIN

    # ---------------------------------------------------------- commit
    def commit_command(self, words: list[str], lower: list[str]) -> str | None:
        """``commit``, ``commit trial [SECONDS] [persist ID]``, ``commit
        persist ID`` in a two-stage view (None elsewhere: unknown)."""
        if not self.staged or lower[:1] != ["commit"]:
            return None
        trial, seconds, persist = _commit_words(words, lower)
        if trial:
            return self._start_trial(seconds, persist)
        if self.trial is not None and (persist is not None or not self.trial["mine"]):
            if persist is None or persist != self.trial["persist"]:
                raise Refused("Error: A trial run started by another session is in progress; "
                              "commit persist ID confirms it.")
        elif persist is not None:
            raise Refused("Error: No trial run with persist ID %s is in progress." % persist)
        output = ""
        if self.trial is not None:
            self.trial, self.trial_confirm = None, True
            output = "Info: The trial run was confirmed.\n"
        self._commit_candidate()
        return output

    def _start_trial(self, seconds: int, persist: str | None) -> str:
        if self.trial is not None:
            raise Refused("Error: A trial run is in progress: confirm it (commit) or wait until it ends.")
        rollback = self.running_config()  # type: ignore[attr-defined]  # VrpCli's
        self._commit_candidate()
        self.trial_request = {"seconds": seconds, "persist": persist, "rollback": rollback}
        self.trial = {"at": time.time() + seconds, "persist": persist, "mine": True}
        return ("Info: Trial run: the configuration goes back to the one before this commit in %d seconds "
                "unless the trial is confirmed (commit%s).\n" % (seconds, " persist %s" % persist if persist else ""))

    def _commit_candidate(self) -> None:
        """The candidate becomes the running configuration (the session
        stores it and brings the data plane in line)."""
        if self.pending():
            self.apply_due = True
        self._base = self.snapshot()

    def trial_status(self) -> str:
        """``display configuration trial status``."""
        if self.trial is None:
            return "Trial status: INACTIVE\nTrial time left (sec): 0\n"
        left = max(0, int(round(self.trial["at"] - time.time())))
        persist = "Persist id: %s\n" % self.trial["persist"] if self.trial["persist"] else ""
        return "Trial status: ACTIVE\n%sTrial time left (sec): %d\n" % (persist, left)


def _commit_words(words: list[str], lower: list[str]) -> tuple[bool, int, str | None]:
    """(trial, seconds, persist ID) of a ``commit`` line; WrongWord at the
    first word that does not fit ``commit [trial [SECONDS]] [persist ID]``."""
    index, trial, seconds, persist = 1, False, TRIAL_DEFAULT_S, None
    if lower[index:index + 1] == ["trial"]:
        trial, index = True, index + 1
        if index < len(lower) and lower[index].isdigit():
            if not TRIAL_MIN_S <= int(lower[index]) <= TRIAL_MAX_S:
                raise WrongWord(index)
            seconds, index = int(lower[index]), index + 1
    if lower[index:index + 1] == ["persist"]:
        # an ID: visible characters, not starting with a digit, not a lone hyphen
        if index + 1 >= len(words) or words[index + 1][0].isdigit() or words[index + 1] == "-":
            raise WrongWord(min(index + 1, len(words) - 1))
        persist, index = words[index + 1], index + 2
    if index != len(words):
        raise WrongWord(index)
    return trial, seconds, persist
