# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-routed designs: the nodes route (Stack-Ring/Stack-Mesh, multi-port planes)."""
