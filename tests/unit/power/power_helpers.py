"""What the power tests share with tests/unit/module_utils: its test
modules hold the fakes and the independent checks of the link transitions
(pytest puts this directory on sys.path, as it has no __init__.py); and
the failover tests' view of a failed link in the 802.1Q simulator and the
channel dependencies of the frames it traces."""

import importlib.util
import itertools
from pathlib import Path
from types import ModuleType

MODULE_UTILS_TESTS = Path(__file__).resolve().parents[1] / "module_utils"


def module_utils_test(name: str) -> ModuleType:
    """The test module ``name`` of tests/unit/module_utils, loaded as a
    module of its own (not in sys.modules; its tests are not collected
    again from here)."""
    spec = importlib.util.spec_from_file_location("shared_" + name, MODULE_UTILS_TESTS / ("%s.py" % name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dead_link(intent, link_name):
    """The intent with the link ``link_name`` down (the simulator drops what enters it)."""
    links = [dict(item, state="down") if "%s--%s" % (item["a"], item["b"]) == link_name else item
             for item in intent["links"]]
    return dict(intent, links=links)


def cut_pairs(intent):
    """The host pairs of ``intent`` not delivered exactly once without a flood (802.1Q simulator)."""
    from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric

    fabric = Dot1qFabric(intent)
    cut = []
    for src, dst in itertools.permutations(sorted(intent["hosts"]), 2):
        trace = fabric.send(src, dst)
        if not (trace["received"] and trace["delivered"][dst]["copies"] == 1 and not trace["flooded"]):
            cut.append((src, dst))
    return cut


def traced_dependencies(topology, intents):
    """The channel dependency graph of the frames the 802.1Q simulator
    traces between every host pair of every intent of ``intents`` (each
    with its failed links already down): an edge for each pair of
    consecutive switch-to-switch channels a frame crosses. The states of a
    transition together are deadlock-free when it is acyclic."""
    import networkx as nx

    from ansible_collections.ethercluster.routing.plugins.module_utils.verify.dot1q import Dot1qFabric

    ports = {(ch.src, ch.src_port): ch.id for ch in topology.channels}
    graph = nx.DiGraph()
    for intent in intents:
        fabric = Dot1qFabric(intent)
        for src, dst in itertools.permutations(sorted(intent["hosts"]), 2):
            hops = [ports[(hop["switch"], hop["out_port"])] for hop in fabric.send(src, dst)["path"]
                    if (hop["switch"], hop["out_port"]) in ports]
            graph.add_edges_from(zip(hops, hops[1:]))
    return graph


def assert_deadlock_free(topology, intents):
    """The frames of ``intents`` together (:func:`traced_dependencies`)
    cross channels one after another, and no dependency cycle forms."""
    import networkx as nx

    graph = traced_dependencies(topology, intents)
    assert graph.number_of_edges() > 0, "no frame crossed two channels: nothing was checked"
    assert nx.is_directed_acyclic_graph(graph), nx.find_cycle(graph)
