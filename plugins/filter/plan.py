# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja filters over the plan layer: the VLAN assignment and the static MAC
tables of a fabric (documentation of each filter: the sibling YAML file
named after it, vlan_assignment.yml and static_mac_table.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import (
        static_mac_table_data,
        vlan_assignment_data,
    )
except ImportError as exc:  # networkx, numpy, scipy, ... missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def _call(name, function, topology, engine, assignment, down_links, engine_options, bank,
          vlan_range):
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError("ethercluster.routing.%s needs the Python packages of the "
                                 "collection's requirements.txt (networkx, numpy, scipy, netaddr, "
                                 "PyYAML) on the controller: %s" % (name, IMPORT_ERROR))
    try:
        return function(topology, routing=engine, assignment=assignment, down_links=down_links,
                        engine_options=engine_options, bank=bank, vlan_range=vlan_range)
    except EtherclusterError as exc:
        raise AnsibleFilterError("%s: %s" % (name, exc)) from None


def vlan_assignment(topology, engine="segment", assignment="renamed", down_links=None,
                    engine_options=None, bank="A", vlan_range=None):
    """Per switch ``{vlans, ports: {port: {pvid, untagged, tagged}}}`` of the
    ``assignment`` (fixed or renamed) of a verified ``engine`` routing of
    ``topology`` (data or file path)."""
    return _call("vlan_assignment", vlan_assignment_data, topology, engine, assignment,
                 down_links, engine_options, bank, vlan_range)


def static_mac_table(topology, engine="segment", assignment="renamed", down_links=None,
                     engine_options=None, bank="A", vlan_range=None):
    """Per switch the static MAC entries ``[{mac, vlan, port}]`` for the same
    routing and VLAN assignment as :func:`vlan_assignment`."""
    return _call("static_mac_table", static_mac_table_data, topology, engine, assignment,
                 down_links, engine_options, bank, vlan_range)


class FilterModule:
    """ethercluster.routing plan filters."""

    def filters(self):
        return {"vlan_assignment": vlan_assignment, "static_mac_table": static_mac_table}
