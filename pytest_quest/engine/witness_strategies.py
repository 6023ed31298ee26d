"""The witness search's calls (engine/witness_search.py): Hypothesis strategies around the
arguments a test gave, each varied by its kind and shape, `self` taken as recorded.

`st` is Hypothesis's ``strategies`` module, handed in: importing Hypothesis is
left to the search, which runs only for a survivor.
"""

from __future__ import annotations

from typing import Any


def calls_strategy(kept: list[dict[str, Any]], st: Any) -> Any:
    """Calls like the recorded ones: one of them, one of them with one argument varied
    (arguments that go together, a step and a length, stay as the test gave them),
    or every argument varied by its kind."""
    names = list(kept[0])
    if any(list(call) != names for call in kept):
        return st.sampled_from(kept)
    per_name = {}
    for name in names:
        values = [call[name] for call in kept]
        options = [st.sampled_from(values)]
        if name not in ("self", "cls"):
            kinds: dict[type, Any] = {}
            for value in values:
                kinds.setdefault(type(value), value)
            options += [s for s in (_like(v, st, 3) for v in kinds.values()) if s is not None]
        per_name[name] = st.one_of(options)
    varied = [name for name in names if name not in ("self", "cls")]
    one_varied = [
        st.fixed_dictionaries(
            {key: per_name[key] if key == name else st.just(call[key]) for key in names}
        )
        for call in kept[:8]
        for name in varied
    ]
    return st.one_of(st.sampled_from(kept), *one_varied, st.fixed_dictionaries(per_name))


def _like(value: Any, st: Any, depth: int) -> Any:
    """A strategy for values of `value`'s kind and shape (None: only the value itself)."""
    # By isinstance: a test's own subclass of int or str is varied as an int or a str.
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        # Near the recorded value and near zero first (a boundary, a step of 2), then any.
        near = max(8, 2 * abs(value)) if abs(value) < 10**6 else 8
        return st.integers(-near, near) | st.integers()
    if isinstance(value, float):
        return st.floats(allow_nan=False)
    if isinstance(value, str):
        return st.text(max_size=max(8, 2 * len(value)))
    if isinstance(value, bytes):
        return st.binary(max_size=max(8, 2 * len(value)))
    if value is None:
        return st.none()
    if isinstance(value, slice):
        bound = st.none() | st.integers(-12, 12)
        return st.builds(slice, bound, bound, st.none() | st.integers(-3, 3).filter(bool))
    kind = type(value)
    if depth == 0:
        return None
    if kind in (list, tuple, set, frozenset):
        items = list(value)
        element = _elements(items, st, depth)
        if kind is tuple:
            parts = [_or_itself(_like(item, st, depth - 1), item, st) for item in items]
            return st.tuples(*parts) if parts else st.just(())
        if element is None:
            return None
        size = max(4, len(items) + 2)
        if kind is list:
            return st.lists(element, max_size=size)
        maker = st.sets if kind is set else st.frozensets
        return maker(element, max_size=size)
    if kind is dict:
        keys = _elements(list(value), st, depth)
        values = _elements(list(value.values()), st, depth)
        if keys is None or values is None:
            return None
        return st.dictionaries(keys, values, max_size=max(4, len(value) + 2))
    return None


def _or_itself(strategy: Any, value: Any, st: Any) -> Any:
    """`strategy`, else `value` alone (tested against None: Hypothesis warns at a strategy's truth)."""
    return strategy if strategy is not None else st.just(value)


def _elements(items: list[Any], st: Any, depth: int) -> Any:
    if not items:
        return None
    kinds: dict[type, Any] = {}
    for item in items:
        kinds.setdefault(type(item), item)
    options = [s for s in (_like(v, st, depth - 1) for v in kinds.values()) if s is not None]
    try:
        options.append(st.sampled_from(items))
    except Exception:
        pass
    return st.one_of(options)
