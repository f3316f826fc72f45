# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch emulator ("the lab"): a fabric built from network namespaces,
veth pairs and one Open vSwitch (userspace datapath) per emulated switch.

* :mod:`.layout` turns a topology into a *layout*: plain JSON data naming
  every namespace, device, address, directory and daemon of the lab
  (pure; needs the topology model).
* :mod:`.plan` turns a layout into the ordered phases of commands and files
  that build it, and the files that describe it (pure; standard library only).
* :mod:`.runner` executes a plan on this machine, keeps the record of what it
  created, checks a lab's health and tears a lab down, whole or half-built
  (standard library only, so the ``lab`` module can carry it).

The measured facts and quirks this follows are in docs/lab.md.
"""
