"""What the power tests share with tests/unit/module_utils: its test
modules hold the fakes and the independent checks of the link transitions
(pytest puts this directory on sys.path, as it has no __init__.py); and
the failover tests' view of a failed link in the 802.1Q simulator."""

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
