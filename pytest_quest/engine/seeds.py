"""The tests' calls of a function, as data from the mutation child to the clean witness search.

What the mutation child sends is untrusted, so the clean search unpickles each
call with an unpickler that builds only types: a small stdlib set of value
types, an iterator over one, and classes defined in the modules under test
(not ones imported into them, such as ``Popen``).  A call that does not read
back so is dropped: seeds are hints, never needed for a verdict.
"""

from __future__ import annotations

import base64
import io
import pickle
import sys
from collections.abc import Callable
from typing import Any

#: Bytes kept of one call's pickle, and calls kept per survivor.
MAX_CALL_BYTES = 64 * 1024
MAX_CALLS = 20

#: Value types of the standard library a seed may hold (module -> names).
ALLOWED_STDLIB: dict[str, frozenset[str]] = {
    "builtins": frozenset(
        {
            "bool",
            "int",
            "float",
            "complex",
            "str",
            "bytes",
            "bytearray",
            "list",
            "tuple",
            "dict",
            "set",
            "frozenset",
            "slice",
            "range",
            # How a list, text or tuple iterator pickles (`iter(value)` at its position):
            # it calls only `__iter__` of a value that read back as allowed.
            "iter",
        }
    ),
    "collections": frozenset({"OrderedDict", "defaultdict", "deque", "Counter"}),
    "datetime": frozenset({"date", "time", "datetime", "timedelta", "timezone"}),
    "decimal": frozenset({"Decimal"}),
    "fractions": frozenset({"Fraction"}),
}


def encode(calls: list[dict[str, Any]] | None) -> list[str]:
    """Each call that pickles, base64 text (in the mutation child; at most `MAX_CALLS`)."""
    found: list[str] = []
    for call in (calls or [])[:MAX_CALLS]:
        try:
            data = pickle.dumps(call, protocol=4)
        except Exception:  # a lock, a generator, a project's __reduce__: not a seed
            continue
        if len(data) <= MAX_CALL_BYTES:
            found.append(base64.b64encode(data).decode("ascii"))
    return found


class SeedRefused(pickle.UnpicklingError):
    """A seed names something other than an allowed type."""


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, project: Callable[[str], bool]) -> None:
        super().__init__(io.BytesIO(data))
        self.project = project

    def find_class(self, module: str, name: str) -> Any:
        if name in ALLOWED_STDLIB.get(module, ()):
            return super().find_class(module, name)
        holder = sys.modules.get(module)
        # Only a module of the code under test already imported by the clean search:
        # looking a seed's class up imports nothing.
        if holder is None or not self.project(module):
            raise SeedRefused(f"{module}.{name} is not a type the seeds may hold")
        found: Any = holder
        for part in name.split("."):
            if part.startswith("__"):
                raise SeedRefused(f"{module}.{name}: a private name")
            found = getattr(found, part, None)
        if not isinstance(found, type) or found.__module__ != module:
            raise SeedRefused(f"{module}.{name} is not a class defined in {module}")
        return found


def decode(encoded: Any, project: Callable[[str], bool]) -> list[dict[str, Any]]:
    """The calls of `encoded` that read back as dicts of allowed types (the rest dropped).

    `project(module name)`: whether a module is one of the code under test's.
    """
    calls: list[dict[str, Any]] = []
    if not isinstance(encoded, list):
        return calls
    for text in encoded[:MAX_CALLS]:
        if not isinstance(text, str) or len(text) > 2 * MAX_CALL_BYTES:
            continue
        try:
            call = _Unpickler(base64.b64decode(text, validate=True), project).load()
        except Exception:  # refused, truncated, a project's __setstate__ raising
            continue
        if isinstance(call, dict) and all(isinstance(k, str) for k in call):
            calls.append(call)
    return calls
