# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors raised by the ethercluster.routing planning code.

Every error a user can cause names where it comes from (file, entry and
field), so a playbook can print it as it is and nothing else is needed.
"""

from __future__ import annotations


class EtherclusterError(Exception):
    """Base class of every error the planning code raises on bad input."""


class TopologyError(EtherclusterError):
    """A topology file or generator spec is invalid.

    ``problems`` holds one line per problem found; ``str()`` joins them
    under a heading that names the source file.
    """

    def __init__(self, problems, source="<topology>"):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        super().__init__(self._render())

    def _render(self):
        if len(self.problems) == 1:
            return "%s: %s" % (self.source, self.problems[0])
        lines = ["%s: %d problems:" % (self.source, len(self.problems))]
        lines.extend("  - %s" % problem for problem in self.problems)
        return "\n".join(lines)
