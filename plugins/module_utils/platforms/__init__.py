# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Platform renderers: one switch's intent (docs: docs/intent.md) -> what a switch
of that platform must hold, a parser of what it holds, and the diff between
the two. One module per platform: ``ovs`` (Open vSwitch with an OpenFlow
pipeline that behaves like an 802.1Q general-mode switch), ``dell_os6``
(general mode), ``huawei_vrp`` (hybrid ports) and ``linux_bridge`` (a
VLAN-filtering bridge); ``capabilities`` says what each can hold and
``render`` writes every switch's configuration file."""
