# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transition executor's drivers for CLI switches (``dell_os6``,
``huawei_vrp``) and for fabrics that mix platforms.

:class:`CliDriver` reaches a switch through a *CLI session*: anything with
``command(text) -> output`` (one exec-mode command), ``configure(lines)``
(the lines sent in configuration mode, which is left afterwards) and
``close()``. The action plugins open one over Ansible's own
``ansible.netcommon.network_cli`` connection with the collection's
cliconf/terminal plugins (plugin_utils/connections.py); the unit tests
drive the emulated OS6 interpreter directly.

* ``read``: the platform's configuration and interface status commands
  (:mod:`..platforms.cli_state`), parsed into the form the OVS read gives,
  so :func:`.transition_run.holds` and ``resume_index`` judge a CLI switch
  as they judge an OVS one (a push interrupted midway is found again);
* ``write``: only the lines that differ (the declarative difference of
  :mod:`..platforms.cli_diff`, as ``cli_config`` pushes a deploy);
* ``carrier``: the port's link state in the interface status.

:class:`SwitchDrivers` picks the driver per switch by its platform, so one
transition can span ``ovs``, ``dell_os6`` and ``huawei_vrp`` switches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import EtherclusterError
from ..platforms import cli_state
from .session_pool import SessionPool

Data = dict[str, Any]


class CliDriverError(EtherclusterError):
    """A CLI switch cannot be read or written (names the switch and port)."""


class CliDriver(SessionPool):
    """Reach CLI switches: ``open_session(switch)`` returns a CLI session
    (module doc); ``platforms`` is ``{switch: platform}``,
    ``interface_names`` ``{switch: {port: interface}}`` (the topology's
    names; a switch without one uses the platform's default pattern).
    Sessions are opened once and kept."""

    def __init__(self, open_session: Callable[[str], Any], platforms: Mapping[str, str],
                 interface_names: Mapping[str, Mapping[Any, str] | None] | None = None) -> None:
        super().__init__(open_session)
        self.platforms = dict(platforms)
        self.interface_names = dict(interface_names or {})
        self.retried: list[str] = []  # the OVS driver's rewrites; a CLI write is never repeated

    def platform(self, switch: str) -> str:
        """The CLI platform of ``switch``."""
        platform = self.platforms.get(switch)
        cli_state.check_platform(str(platform), switch)
        return str(platform)

    def _status(self, switch: str) -> str:
        return self._session(switch).command(cli_state.STATUS_COMMAND[self.platform(switch)])

    def read(self, switch: str) -> Data:
        """The switch's state (:func:`..platforms.cli_state.state`): its
        configuration and interface status, two commands."""
        platform = self.platform(switch)
        session = self._session(switch)
        config = session.command(cli_state.CONFIG_COMMAND[platform])
        return cli_state.state(platform, config, self._status(switch),
                               self.interface_names.get(switch), switch)

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """Send the lines that take the switch from ``current`` (its read)
        to ``desired`` (:func:`..platforms.cli_state.desired`); ``changes``
        (the OVS comparison) only says that something differs."""
        lines = cli_state.write_commands(current, desired, switch)
        if lines:
            self._session(switch).configure(lines)

    def carrier(self, switch: str, port: str) -> str:
        """``"up"`` or ``"down"``: the port's link state in the status."""
        found = self.carriers(switch).get(str(port))
        if found is None:
            raise CliDriverError("%s: the interface status lists no interface of port %s" % (switch, port))
        return found

    def carriers(self, switch: str) -> dict[str, str]:
        """``{port: "up"/"down"}`` of every topology port the interface
        status lists (one command): what the transitions' carrier watch polls."""
        state = cli_state.state(self.platform(switch), "", self._status(switch),
                                self.interface_names.get(switch), switch)
        return {port: entry["link"] for port, entry in state["ports"].items()}

    def counters(self, switch: str) -> dict[str, dict[str, int]]:
        """Port counters are read over SNMP on CLI switches (power_save's
        snmp source), not over the CLI."""
        raise CliDriverError("%s: port counters of a %s switch are read over SNMP (counters source "
                             "snmp), not over its CLI" % (switch, self.platform(switch)))


class SwitchDrivers:
    """One driver per switch (``{switch: driver}``, the same driver object
    may serve many): a transition spanning several platforms."""

    def __init__(self, drivers: Mapping[str, Any]) -> None:
        self.drivers = dict(drivers)

    def _of(self, switch: str) -> Any:
        driver = self.drivers.get(switch)
        if driver is None:
            raise CliDriverError("%s: no driver for this switch (not in the topology?)" % switch)
        return driver

    @property
    def retried(self) -> list[str]:
        """Every driver's repeated writes."""
        found: list[str] = []
        for driver in self._distinct():
            found += list(getattr(driver, "retried", []))
        return found

    def _distinct(self) -> list[Any]:
        distinct: list[Any] = []
        for driver in self.drivers.values():
            if not any(driver is seen for seen in distinct):
                distinct.append(driver)
        return distinct

    def read(self, switch: str) -> Data:
        """The switch's state through its platform's driver."""
        return self._of(switch).read(switch)

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """Write through the switch's platform's driver."""
        self._of(switch).write(switch, changes, desired, current)

    def carrier(self, switch: str, port: str) -> str:
        """The port's carrier through the switch's platform's driver."""
        return self._of(switch).carrier(switch, port)

    def carriers(self, switch: str) -> dict[str, str]:
        """``{port: carrier}`` of the switch through its platform's driver
        (one ``carrier`` call per port the state lists when it has no
        ``carriers``)."""
        driver = self._of(switch)
        if hasattr(driver, "carriers"):
            return driver.carriers(switch)
        return {port: driver.carrier(switch, port) for port in driver.read(switch)["ports"]}

    def counters(self, switch: str) -> dict[str, dict[str, int]]:
        """The switch's port counters through its platform's driver."""
        return self._of(switch).counters(switch)

    def close(self) -> None:
        """Close every driver."""
        for driver in self._distinct():
            driver.close()
