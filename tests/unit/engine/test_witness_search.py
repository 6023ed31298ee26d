"""engine/witness_search.py: the call on which a mutant and the function differ, found by
calling the function directly around the calls a test made."""

from __future__ import annotations

from pathlib import Path
from types import FunctionType
from typing import Any

from pytest_quest.engine.witness_search import Target, search


def compiled(source: str, name: str) -> FunctionType:
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    function = namespace[name]
    assert isinstance(function, FunctionType)
    return function


def target(original: str, mutant: str, name: str, kept: list[dict[str, Any]]) -> Target:
    function = compiled(original, name)
    return Target(function, function.__code__, compiled(mutant, name).__code__, kept)


TRUNCATE = """
def truncate(text, limit):
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"
"""


def test_a_difference_the_tests_calls_miss_is_found_shrunk_and_the_same_every_time() -> None:
    # The test called it only with short texts: the slice is never reached there.
    mutant = TRUNCATE.replace("limit - 1", "limit")
    found = [
        search(target(TRUNCATE, mutant, "truncate", [{"text": "ab", "limit": 5}])) for _ in "ab"
    ]
    assert found[0].witness == found[1].witness
    witness = found[0].witness
    assert witness is not None
    assert witness["call"].startswith("truncate(") and witness["call"] != "truncate('ab', 5)"
    assert witness["mutant"].startswith("returns '") and witness["original"].startswith("returns '")
    assert witness["mutant"] != witness["original"]
    assert not found[0].escapes and not found[0].problem


def test_the_tests_own_call_is_tried_first_outside_their_patches() -> None:
    kept = [{"text": "abcdefgh", "limit": 5}]
    found = search(target(TRUNCATE, TRUNCATE.replace("limit - 1", "limit"), "truncate", kept))
    assert found.witness == {
        "call": "truncate('abcdefgh', 5)",
        "mutant": "returns 'abcde…'",
        "original": "returns 'abcd…'",
    }
    assert found.calls == 1


def test_an_equivalent_mutant_has_no_witness() -> None:
    # A type dispatch whose two branches give the same text: forcing it False changes nothing.
    original = """
def cell(value):
    if isinstance(value, str):
        text = value
    else:
        text = str(value)
    return text.rjust(6)
"""
    mutant = original.replace("isinstance(value, str)", "False")
    found = search(target(original, mutant, "cell", [{"value": "ab"}, {"value": 42}]))
    assert found.witness is None and found.calls > 2
    assert not found.escapes and not found.problem


def test_what_a_call_leaves_in_its_arguments_and_prints_is_compared() -> None:
    original = "def add(items, x):\n    items.append(x)\n    print(len(items))\n"
    left = search(target(original, original.replace("append(x)", "append(0)"), "add",
                         [{"items": [1], "x": 2}]))  # fmt: skip
    assert left.witness is not None and left.witness["mutant"].startswith("leaves items=")
    printed = search(target(original, original.replace("len(items)", "items"), "add",
                            [{"items": [1], "x": 2}]))  # fmt: skip
    assert printed.witness is not None and printed.witness["mutant"].startswith("leaves output=")


def test_a_call_that_writes_a_file_escapes_and_is_not_made(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    original = "def save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n    return len(text)\n"
    found = search(target(original, original.replace("len(text)", "len(text) + 0"), "save",
                          [{"path": str(out), "text": "hi"}]))  # fmt: skip
    assert found.escapes.startswith("writes a file") and found.witness is None
    assert not out.exists()


def test_a_mutant_that_loops_is_no_witness_and_does_not_hang() -> None:
    original = "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    found = search(target(original, original.replace("i += 1", "i += 0"), "count", [{"n": 0}]),
                   seconds=2.0, examples=3)  # fmt: skip
    # n=0 never enters the loop; a drawn n > 0 loops: dropped, never a witness.
    assert found.witness is None or "count(0)" not in found.witness["call"]


def test_no_recorded_call_is_a_problem_not_a_clean_search() -> None:
    found = search(target(TRUNCATE, TRUNCATE, "truncate", []))
    assert found.problem and found.calls == 0
    assert found.record() == {"calls": 0, "escapes": "", "problem": found.problem}


def test_a_method_is_shown_on_its_object() -> None:
    original = """
class Cart:
    def __init__(self):
        self.items = []

    def total(self, extra):
        return sum(self.items) + extra
"""
    namespace: dict[str, Any] = {}
    exec(compile(original, "<cart>", "exec"), namespace)
    cart = namespace["Cart"]()
    cart.items = [3, 4]
    function = namespace["Cart"].total
    mutated: dict[str, Any] = {}
    exec(compile(original.replace("+ extra", "- extra"), "<cart>", "exec"), mutated)
    mutant = mutated["Cart"].total.__code__
    found = search(Target(function, function.__code__, mutant, [{"self": cart, "extra": 1}]))
    assert found.witness == {
        "call": "Cart.total(1) on {'items': [3, 4]}",
        "mutant": "returns 6",
        "original": "returns 8",
    }


def test_a_function_that_changes_its_module_state_escapes() -> None:
    # What a later call sees of the registry is not compared: no verdict from the search.
    original = "SEEN = []\n\ndef register(name):\n    SEEN.append(name)\n    return len(name)\n"
    found = search(target(original, original.replace("len(name)", "len(name) + 0"), "register",
                          [{"name": "a"}]))  # fmt: skip
    assert found.escapes.startswith("changes module globals (SEEN") and found.witness is None


def test_a_mutant_that_changes_module_state_the_function_leaves_alone_is_witnessed() -> None:
    original = "class Log:\n    lines = 0\n\nLOG = Log()\n\ndef f(x):\n    return x\n"
    mutant = original.replace("    return x\n", "    LOG.lines = 1\n    return x\n")
    found = search(target(original, mutant, "f", [{"x": 1}]))
    assert found.witness is not None and found.witness["mutant"].startswith("leaves globals LOG")


def test_a_generator_is_drained_and_what_it_yields_compared() -> None:
    original = "def evens(n):\n    for i in range(0, n, 2):\n        yield i\n"
    found = search(target(original, original.replace("range(0, n, 2)", "range(0, n + 1, 2)"),
                          "evens", [{"n": 3}]))  # fmt: skip
    assert found.witness is not None
    assert found.witness["mutant"].startswith("yields [") and found.witness["call"].startswith(
        "evens("
    )


def test_a_mutant_that_leaves_only_private_state_otherwise_is_held() -> None:
    # A lazy reader: the mutant takes the whole iterator where the original takes one item;
    # both return the first item, and the reader has no public attribute.
    original = """
class Reader:
    def __init__(self, items):
        self._it = iter(items)
        self._cache = []

    def first(self):
        while len(self._cache) < 1:
            self._cache.append(next(self._it, None))
        return self._cache[0]
"""
    namespace: dict[str, Any] = {}
    exec(compile(original, "<reader>", "exec"), namespace)
    mutated: dict[str, Any] = {}
    exec(compile(original.replace("< 1:", "< 9:"), "<reader>", "exec"), mutated)
    function = namespace["Reader"].first
    reader = namespace["Reader"]([1, 2, 3])
    found = search(Target(function, function.__code__, mutated["Reader"].first.__code__,
                          [{"self": reader}]))  # fmt: skip
    assert found.witness is None and found.hidden == "self"
    assert found.record()["escapes"] == "the mutant leaves the private state of self otherwise"


def test_a_tuple_argument_is_varied_without_hypothesis_warning_of_a_strategys_truth() -> None:
    # Each element's strategy is chosen by whether one exists, never by its truth value:
    # Hypothesis warns at `bool(strategy)`, once per element, into the mutation child's log.
    import warnings

    original = "def pick(pair):\n    return pair[0]\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = search(target(original, original.replace("pair[0]", "pair[0] + ''"), "pick",
                              [{"pair": ("ab", "cd")}]))  # fmt: skip
    assert found.witness is None and found.calls > 1


def test_a_difference_that_does_not_come_again_is_no_witness() -> None:
    # A function whose answer is chance (a sample, a shuffle): its two runs agreed and
    # the mutant's differed by chance. A witness is kept only when the original and
    # the mutant each give the same answer again.
    original = (
        "import itertools\n\n_DRAWN = itertools.cycle(['red', 'red', 'blue'])\n\n"
        "def pick(k):\n    return next(_DRAWN)\n"
    )
    mutant = original.replace("return next(_DRAWN)", "return next(_DRAWN) if True else k")
    found = search(target(original, mutant, "pick", [{"k": 1}]))
    assert found.witness is None


def test_both_raising_type_error_is_no_witness() -> None:
    # An argument of a type neither the function nor the mutant accepts is outside the
    # function's domain: that the two TypeErrors read otherwise asks nothing of a test.
    # The same check moved after a subtraction is equivalent on every number.
    original = """
def position(start, value):
    if start <= value:
        return value - start
    return -1
"""
    mutant = original.replace("if start <= value:", "if True:").replace(
        "return value - start", "return value - start if value >= start else -1"
    )
    kept: list[dict[str, Any]] = [{"start": 0, "value": 3}, {"start": 0, "value": "3"}]
    found = search(target(original, mutant, "position", kept))
    assert found.witness is None and found.calls > 2, found.witness
    # A TypeError on one side only is a difference.
    strict = original.replace("return -1", "raise TypeError('before the start')")
    witnessed = search(target(original, strict, "position", [{"start": 5, "value": 3}]))
    assert witnessed.witness is not None


def test_both_failing_inside_an_operation_is_no_witness() -> None:
    # A text where a mapping belongs: the function fails in `dict.update`, the mutant
    # (the other way of building the result, taken always) in indexing the text. Both
    # fail on a value neither can work with; on mappings the two ways agree.
    original = """
def without(d, *keys):
    if len(keys) < 2:
        out = {}
        out.update(d)
        for key in keys:
            out.pop(key, None)
        return out
    return {k: d[k] for k in d if k not in keys}
"""
    mutant = original.replace("if len(keys) < 2:", "if False:")
    kept: list[dict[str, Any]] = [{"d": "ab", "keys": ()}, {"d": {"a": 1, "b": 2}, "keys": ("a",)}]
    found = search(target(original, mutant, "without", kept), examples=50)
    assert found.witness is None and found.calls > 2, found.witness
    # Where one side refuses the value at a `raise` statement, the difference is a witness.
    checked = original.replace(
        "        out = {}\n",
        "        if isinstance(d, str):\n            raise ValueError('a mapping, not a text')\n        out = {}\n",
    )
    witnessed = search(
        target(
            checked,
            checked.replace("if len(keys) < 2:", "if False:"),
            "without",
            [{"d": "ab", "keys": ()}],
        )
    )
    assert witnessed.witness is not None
    assert "ValueError" in witnessed.witness["original"], witnessed.witness
