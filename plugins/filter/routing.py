# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja filters over the routing layer (documentation of each filter: the
sibling YAML file named after it, e.g. routing_tables.yml)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

try:
    from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
    from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import plain_data
    from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import load_topology_arg
    from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing
except ImportError as exc:  # networkx, numpy, scipy, ... missing on the controller
    IMPORT_ERROR = exc
else:
    IMPORT_ERROR = None


def routing_tables(topology, engine="segment", down_links=None, root=None, seed=None,
                   engine_options=None):
    """Compute a deadlock-free routing of ``topology`` with ``engine`` and
    return its tables as data (``RoutingFunction.to_data()``).

    ``down_links``: links to avoid (indexes, ``"sw:port"`` or link names);
    ``root`` and ``seed`` are passed to engines that take them,
    ``engine_options`` (a mapping) holds any engine option. Argument names
    match the plan filters (vlan_assignment, static_mac_table). Every
    problem is an AnsibleFilterError with the routing layer's message."""
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError("ethercluster.routing.routing_tables needs the Python packages "
                                 "of the collection's requirements.txt (networkx, numpy, scipy, "
                                 "netaddr, PyYAML) on the controller: %s" % IMPORT_ERROR)
    if engine_options is None:
        engine_options = {}
    if not isinstance(engine_options, Mapping):
        raise AnsibleFilterError("routing_tables: engine_options must be a mapping of engine "
                                 "options, got %s" % type(engine_options).__name__)
    options = plain_data(engine_options)
    for key in options:
        if not isinstance(key, str) or key in ("topology", "engine", "down"):
            raise AnsibleFilterError("routing_tables: engine_options.%s is not an engine option "
                                     "(give the topology, engine and down links as the filter's "
                                     "own arguments)" % (key,))
    for name, value in (("root", root), ("seed", seed)):
        if value is not None:
            if name in options and options[name] != plain_data(value):
                raise AnsibleFilterError("routing_tables: %s is given twice, as %r and as "
                                         "engine_options.%s=%r" % (name, value, name, options[name]))
            options[name] = plain_data(value)
    if down_links is None:
        down = ()
    elif isinstance(down_links, (list, tuple)):
        down = plain_data(down_links)
    else:
        down = [plain_data(down_links)]
    try:
        return compute_routing(load_topology_arg(topology, "topology"), plain_data(engine), down=down, **options).to_data()
    except EtherclusterError as exc:
        raise AnsibleFilterError("routing_tables: %s" % exc) from None


class FilterModule:
    """ethercluster.routing filters."""

    def filters(self):
        return {"routing_tables": routing_tables}
