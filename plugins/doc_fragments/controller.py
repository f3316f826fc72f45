# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation fragments shared by the collection's modules: every
module is an action plugin that does its work on the controller."""

from __future__ import annotations


class ModuleDocFragment:
    """``ethercluster.routing.controller``: the attributes every module of
    the collection shares (an action plugin on the controller, no async,
    no host-loop bypass, full check mode, no diff, any POSIX controller).
    A module states only what differs or what it explains (check mode's
    details, diff support, platforms)."""

    # used beside ansible.builtin.action_common_attributes(.flow), which
    # describe these attributes (a fragment cannot extend another)
    DOCUMENTATION = r"""
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
options: {}
"""

    # ``ethercluster.routing.controller.local``: modules that never use the
    # host's connection (they plan or read files on the controller)
    # used beside ansible.builtin.action_common_attributes.conn
    LOCAL = r"""
attributes:
  become:
    support: none
  connection:
    support: none
  delegation:
    support: none
    details: The task always runs on the controller; delegation has no effect.
options: {}
"""
