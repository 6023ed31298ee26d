"""`ModuleState` puts a module's names and plain containers back as they were taken."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

from pytest_quest.engine.swap import ModuleState
from tests.unit.engine.test_swap_namespace import load

SOURCE = """\
import sys
from collections import OrderedDict, deque

CACHE = {}
ORDERED = OrderedDict(a=1)
SEEN = []
TAGS = {"x"}
RECENT = deque([1])
MODULES = sys.modules
PATH = sys.path
"""


def test_names_and_containers_are_put_back_as_taken(tmp_path: Path) -> None:
    path = tmp_path / "module_state_mod.py"
    path.write_text(SOURCE)
    module = load(path, "module_state_mod")
    sys.modules["module_state_mod"] = module
    try:
        state = ModuleState([str(path)])
        assert not state.changed()
        cache, seen = module.CACHE, module.SEEN
        module.CACHE["k"] = "v"
        assert state.changed()
        module.ORDERED["b"] = 2
        module.SEEN.append(1)
        module.TAGS.add("y")
        module.RECENT.appendleft(0)
        vars(module)["__version__"] = "1.0"  # what a module's __getattr__ caches
        vars(module)["SEEN_LATER"] = []
        state.restore()
        assert not state.changed()
        assert module.CACHE == {} and module.CACHE is cache  # the same object, refilled
        assert collections.OrderedDict(a=1) == module.ORDERED
        assert module.SEEN == [] and module.SEEN is seen
        assert {"x"} == module.TAGS
        assert list(module.RECENT) == [1]
        assert not hasattr(module, "__version__") and not hasattr(module, "SEEN_LATER")
        assert "__builtins__" in vars(module)
        # The interpreter's own tables a module names are never refilled.
        assert module.MODULES is sys.modules and "module_state_mod" in sys.modules
        assert module.PATH is sys.path
    finally:
        sys.modules.pop("module_state_mod", None)


def test_a_rebound_name_and_a_replaced_value_count_as_changed(tmp_path: Path) -> None:
    path = tmp_path / "module_state_two.py"
    path.write_text("LIMIT = 1\nITEMS = [1, 2]\n")
    module = load(path, "module_state_two")
    sys.modules["module_state_two"] = module
    try:
        state = ModuleState([str(path)])
        module.ITEMS[0] = 10  # same length, another element
        assert state.changed()
        state.restore()
        assert module.ITEMS == [1, 2]
        vars(module)["LIMIT"] = 5
        assert state.changed()
        state.restore()
        assert module.LIMIT == 1
        # A module not imported is nothing to take.
        assert ModuleState([str(tmp_path / "absent.py")]).saved == []
    finally:
        sys.modules.pop("module_state_two", None)
