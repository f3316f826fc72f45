"""What the power tests share with tests/unit/module_utils: its test
modules hold the fakes and the independent checks of the link transitions
(pytest puts this directory on sys.path, as it has no __init__.py)."""

import importlib.util
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
