"""The mutation operators and the plan, in-process: what each operator changes, ids, equivalence."""

from __future__ import annotations

import textwrap
import types
from typing import Any

import pytest

from pytest_quest.core.mutants import (
    DEFAULT_OPERATORS,
    MAX_MUTANTS,
    mutant_id,
    mutated_tree,
    plan_mutants,
)
from pytest_quest.core.operators import ALL_OPERATORS, EXTREME


def plan(
    source: str, operators: tuple[str, ...] | list[str] = ALL_OPERATORS, start: int = 1
) -> list[tuple[str, str, str]]:
    source = textwrap.dedent(source).lstrip("\n")
    return [(m.operator, m.original, m.mutated) for m in plan_mutants(source, start, operators)]


def run(source: str, index: int, name: str, *args: object) -> Any:
    """Call function `name` of `source` with mutant `index` applied (the marks are identities)."""
    source = textwrap.dedent(source).lstrip("\n")
    namespace: dict[str, Any] = {
        "pytest_quest_reached": lambda value: value,
        "pytest_quest_changed": lambda value: value,
    }
    exec(compile(mutated_tree(source, 1, index), "<m>", "exec"), namespace)
    return namespace[name](*args)


def only(operator: str, source: str) -> list[tuple[str, str]]:
    return [(o, m) for o, _, m in plan(source) if o == operator]


def test_arithmetic_operators_are_replaced() -> None:
    source = """
    def price(amount, qty):
        total = amount * qty
        total -= 2
        return -total % 7
    """
    assert only("arith.replace", source) == [
        ("arith.replace", "total = amount + qty"),
        ("arith.replace", "total += 2"),
        ("arith.replace", "return -total // 7"),
        ("arith.replace", "return total % 7"),
    ]


def test_identity_arithmetic_and_string_formatting_are_left_alone() -> None:
    source = """
    def f(x):
        y = x + 0
        z = 0 + x
        return "%s!" % y + z
    """
    assert only("arith.replace", source) == [("arith.replace", "return '%s!' % y - z")]


def test_a_factor_of_one_or_minus_one_is_not_an_equivalent_mutant() -> None:
    # `x * s` -> `x / s` keeps the value for a sign s (1 or -1): dateutil's
    # relativedelta._fix had honest tests FAIL on it.  `*` -> `+` and
    # `/` -> `-` change the value for every unit factor.
    source = """
    def fix(x, s):
        return divmod(x * s, 60), x / s
    """
    mutants = plan_mutants(textwrap.dedent(source).lstrip("\n"), 1, ALL_OPERATORS)
    by = {m.mutated: m.index for m in mutants if m.operator == "arith.replace"}
    assert set(by) == {
        "return divmod(x + s, 60), x / s",
        "return divmod(x * s, 60), x - s",
    }
    for index in by.values():  # every unit factor: the mutant gives another value
        for s in (1, -1):
            assert run(source, index, "fix", 130, s) != (divmod(130 * s, 60), 130 / s)


def test_numbers_move_by_one_and_strings_are_framed() -> None:
    source = """
    def f(x):
        limit = x + 10
        label = "big:" + x
        return (limit, label, x)
    """
    assert only("constant.number", source) == [("constant.number", "limit = x + 11")]
    assert only("constant.string", source) == [("constant.string", "label = 'XXbig:XX' + x")]


def test_docstrings_returns_and_logging_are_not_constants_to_change() -> None:
    source = """
    def f(x):
        \"\"\"Doc.\"\"\"
        log.debug("seen %s", x)
        warnings.warn("careful")
        if x:
            return 3
        return "three"
    """
    found = plan(source)
    assert not [o for o, _, _ in found if o.startswith("constant.")]
    assert not [o for o, _, _ in found if o == "call.remove"]


def test_comparisons_boundary_and_negation() -> None:
    source = """
    def f(a, b):
        ok = a < b
        return ok and a is not None
    """
    found = plan(source)
    assert ("compare.boundary", "ok = a < b", "ok = a <= b") in found
    assert ("compare.negate", "ok = a < b", "ok = a >= b") in found
    assert ("compare.negate", "return ok and a is not None", "return ok and a is None") in found
    assert ("boolop.swap", "return ok and a is not None", "return ok or a is not None") in found


def test_a_whole_if_test_is_forced_not_negated() -> None:
    source = """
    def f(a):
        if a == 1:
            x = 1
        else:
            x = 2
        return x
    """
    operators = {o for o, _, _ in plan(source)}
    assert "condition.true" in operators and "condition.false" in operators
    assert "compare.negate" not in operators


def test_slices_calls_and_raises() -> None:
    source = """
    def f(items, n):
        out = []
        out.append(items[1:n])
        if n < 0:
            raise ValueError("negative")
        return out
    """
    found = plan(source)
    assert ("slice.bounds", "out.append(items[1:n])", "out.append(items[None:n])") in found
    assert ("call.remove", "out.append(items[1:n])", "pass  # call removed") in found
    assert (
        "raise.type",
        'raise ValueError("negative")',
        'raise Exception("negative")',
    ) in found
    assert (
        "raise.message",
        'raise ValueError("negative")',
        "raise ValueError('XXnegativeXX')",
    ) in found


def test_a_message_put_in_a_name_first_is_the_text_of_the_raise() -> None:
    # dateutil's `parser._to_decimal` and `_takes_ascii`: `msg = "..." % val; raise E(msg)`.
    source = """
    def f(val, table):
        try:
            return table[val]
        except KeyError as e:
            msg = "no entry for %s" % val
            raise ValueError(msg) from e
    """
    found = plan(source)
    assert (
        "raise.message",
        'msg = "no entry for %s" % val',
        "msg = 'XXno entry for %sXX' % val",
    ) in found
    assert not [m for m in found if m[0] == "constant.string"]


def test_a_string_read_outside_a_raise_stays_a_constant() -> None:
    source = """
    def f(val, log):
        msg = "no entry for %s" % val
        log.append(msg)
        raise ValueError(msg)

    def g(val):
        global label
        label = "last"
        raise ValueError(label)

    def h(val):
        text = "seen"
        def inner():
            return text
        raise ValueError(inner())
    """
    import ast as ast_module

    tree = ast_module.parse(textwrap.dedent(source))
    for function in tree.body:
        assert isinstance(function, ast_module.FunctionDef)
        operators = {
            m.operator
            for m in plan_mutants(textwrap.dedent(source), function.lineno, ALL_OPERATORS)
        }
        assert "constant.string" in operators, function.name


def test_mutated_code_behaves_as_shown() -> None:
    source = """
    def f(items, n):
        out = []
        out.append(items[1:n])
        if n < 0:
            raise ValueError("negative")
        return len(out) + n * 2
    """
    mutants = plan_mutants(textwrap.dedent(source).lstrip("\n"), 1, ALL_OPERATORS)
    by = {(m.operator, m.mutated): m.index for m in mutants}
    assert run(source, by[("call.remove", "pass  # call removed")], "f", [1, 2, 3], 2) == 4
    assert run(source, by[("arith.replace", "return len(out) + n + 2")], "f", [1], 3) == 6
    with pytest.raises(Exception) as raised:
        run(source, by[("raise.type", 'raise Exception("negative")')], "f", [1], -1)
    assert type(raised.value) is Exception


def test_equivalent_mutants_are_not_planned() -> None:
    source = """
    def f(c, x):
        if c:
            y = x
        else:
            y = x
        return y if c else y
    """
    operators = {o for o, _, _ in plan(source)}
    assert "condition.true" not in operators and "condition.false" not in operators


def test_a_block_of_nested_guards_is_not_forced_true() -> None:
    source = """
    def f(val):
        if type(val) is not int:
            if isinstance(val, float):
                val = round(val)
            if isinstance(val, str):
                val = int(val)
        return val
    """
    found = [(o, orig) for o, orig, _ in plan(source)]
    assert ("condition.true", "if type(val) is not int:") not in found
    assert ("condition.false", "if type(val) is not int:") in found


def test_bytecode_equal_mutants_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_quest.core import mutants

    source = "def f(x):\n    return x + 2\n"
    calls = []
    real = mutants._same_code

    def same(a: types.CodeType, b: types.CodeType) -> bool:
        calls.append((a, b))
        return True  # as if every mutant compiled to the function's own code

    monkeypatch.setattr(mutants, "_same_code", same)
    assert [m.operator for m in plan_mutants(source, 1, ALL_OPERATORS)] == [
        "body.return_none",
        "return.changed",
    ]
    assert calls
    monkeypatch.setattr(mutants, "_same_code", real)
    assert len(plan_mutants(source, 1, ALL_OPERATORS)) == 4


def test_same_code_compares_nested_code_and_constants() -> None:
    from pytest_quest.core.mutants import _same_code

    def code(text: str) -> types.CodeType:
        return compile(text, "<x>", "exec")

    assert _same_code(code("def f():\n    return 1\n"), code("def f():\n    return 1\n"))
    assert not _same_code(code("def f():\n    return 1\n"), code("def f():\n    return 1.0\n"))
    assert not _same_code(code("def f():\n    return 1\n"), code("def f():\n    return 2\n"))
    assert not _same_code(code("x = 1\ny = 2\n"), code("x = 1\n"))


def test_the_plan_is_deterministic_capped_and_shares_the_cap() -> None:
    source = "def f(x):\n" + "".join(
        f"    if x == {i}:\n        y = x * {i} + 'a{i}'\n        return y\n" for i in range(30)
    )
    first = plan_mutants(source, 1)
    assert first == plan_mutants(source, 1)
    assert len(first) == MAX_MUTANTS
    assert [m.index for m in first] == sorted(m.index for m in first)
    # Every operator that has candidates is represented.
    assert {m.operator for m in first} >= {"return.changed", "arith.replace", "constant.string"}


def test_ids_are_stable_when_the_function_moves_and_unique() -> None:
    source = "def f(x):\n    return x + 1 + 1\n"
    moved = "\n\n# a comment\n" + source
    ids = [m.id for m in plan_mutants(source, 1, ALL_OPERATORS)]
    assert ids == [m.id for m in plan_mutants(moved, 4, ALL_OPERATORS)]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("m") and len(i) == 9 for i in ids)
    assert mutant_id("a", 1, "x", "y", 0) != mutant_id("a", 1, "x", "y", 1)


def test_operators_select_what_is_planned() -> None:
    source = "def f(x):\n    return x + 1\n"
    assert {m.operator for m in plan_mutants(source, 1, EXTREME)} <= set(EXTREME)
    assert plan_mutants(source, 1, ()) == []
    assert set(DEFAULT_OPERATORS) < set(ALL_OPERATORS)


def test_non_ascii_lines_are_spliced_by_character() -> None:
    source = 'def f(t):\n    return t[:3] + "…" + "é"\n'
    found = plan(source)
    assert ("slice.bounds", 'return t[:3] + "…" + "é"', 'return t[:None] + "…" + "é"') in found


def test_f_strings_and_match_patterns_are_left_alone() -> None:
    source = """
    def f(x):
        match x:
            case 1:
                return f"one {x:>3}"
        return "x"
    """
    found = plan(source)
    assert not [o for o, _, _ in found if o.startswith("constant.")]
    for mutant in plan_mutants(textwrap.dedent(source).lstrip("\n"), 1, ALL_OPERATORS):
        compile(mutated_tree(textwrap.dedent(source).lstrip("\n"), 1, mutant.index), "<m>", "exec")


def test_numbers_compared_by_order_are_boundaries_not_constants() -> None:
    source = """
    def f(x):
        if x < 0:
            return -x
        if x == 0:
            return 1
        return x
    """
    found = plan(source, DEFAULT_OPERATORS)
    assert ("constant.number", "if x == 0:", "if x == 1:") in found
    assert not [m for o, _, m in found if m == "if x < 1:"]


def test_the_reach_mark_comes_before_a_mutated_expression_that_raises() -> None:
    source = 'def f(t):\n    return t.upper() + "!"\n'
    (mutant,) = [m for m in plan_mutants(source, 1) if m.operator == "arith.replace"]
    marks: list[int] = []

    def reached(value: object) -> object:
        marks.append(1)
        return value

    namespace: dict[str, Any] = {"pytest_quest_reached": reached}
    exec(compile(mutated_tree(source, 1, mutant.index), "<m>", "exec"), namespace)
    with pytest.raises(TypeError):
        namespace["f"]("a")
    assert marks == [1]


def test_initial_values_and_a_zero_lower_bound_are_not_mutated() -> None:
    source = """
    def f(items, n):
        count, label = 0, ""
        total: int = 5
        head = items[0:n]
        if n:
            label = ""
        count += len(head) * 3
        return count, label, total
    """
    found = plan(source)
    assert [m for o, _, m in found if o.startswith("constant.")] == [
        "total: int = 6",
        "head = items[1:n]",
        "label = 'XXXX'",
        "count += len(head) * 4",
    ]
    assert not [o for o, _, _ in found if o == "slice.bounds"]


def test_numbers_handed_to_methods_are_library_arguments_not_constants_to_change() -> None:
    source = """
    def f(c, s, price):
        top = c.most_common(1)[0]
        micro = s.ljust(6, "0")[:6]
        return apply_percent(price, 10), top, micro
    """
    numbers = [m for o, _, m in plan(source) if o == "constant.number"]
    assert numbers == [
        "top = c.most_common(1)[1]",
        'micro = s.ljust(6, "0")[:7]',
        "return apply_percent(price, 11), top, micro",
    ]


def test_a_parents_init_and_precision_arguments_are_left_alone() -> None:
    source = """
    def f(self, x):
        super().__init__()
        self.items.append(x)
        return round(x, 11) + getattr(x, "fold", 0) + max(0, x)
    """
    found = plan(source)
    assert [m for o, _, m in found if o == "call.remove"] == ["pass  # call removed"]
    assert [o for o, orig, _ in found if o == "call.remove"] == ["call.remove"]
    numbers = [m for o, _, m in found if o == "constant.number"]
    assert numbers == ['return round(x, 11) + getattr(x, "fold", 0) + max(1, x)']


def _returns_none_planned(source: str, line: int) -> bool:
    mutants = plan_mutants(textwrap.dedent(source).lstrip("\n"), line, ALL_OPERATORS)
    return any(m.operator == "body.return_none" for m in mutants)


def test_return_none_before_a_lone_falsy_return_is_not_planned() -> None:
    # boltons' split_iter `def sep_func(x): return False` then `if sep_func(s):`, dateutil's
    # tzutc.is_ambiguous: None for False differs in identity only, and
    # return.changed makes the value truthy already.
    source = """
    def split(src, sep, stop):
        def sep_func(x): return x == sep
        for s in src:
            if stop:
                def sep_func(x): return False
            if sep_func(s):
                return s
    """
    assert not _returns_none_planned(source, 5)
    assert _returns_none_planned(source, 2)  # the truthy twin is still mutated
    for falsy in ("False", "0", "''", "0.0", "b''"):
        source = f'def f(x):\n    """Doc."""\n    return {falsy}\n'
        mutants = plan_mutants(source, 1, ALL_OPERATORS)
        assert [m.operator for m in mutants] == ["return.changed"], falsy


@pytest.mark.parametrize(
    "body",
    [
        "return True",  # truthy: None is falsy, a truthiness test tells them apart
        "return 5",
        "return 'x'",
        "x.append(1)\n    return False",  # more than the return: skipping it is seen
        "return x or False",  # not a constant
    ],
)
def test_return_none_is_kept_for_any_other_body(body: str) -> None:
    assert _returns_none_planned(f"def f(x):\n    {body}\n", 1)


def test_a_lazy_initialisation_is_not_forced_false_but_other_none_tests_are() -> None:
    # dateutil's _TzSingleton.__call__: the instance is made at import, so forcing
    # `if cls.__instance is None:` False is only observable on the very first call.
    source = """
    def get(cls, key, cache):
        if cls.instance is None:
            cls.instance = cls()
        if key is None:
            key = 0
        if cache is None:
            cls.other = 1
        if cls.instance is None:
            cls.instance = 1
        else:
            key = 2
        return cls.instance, key
    """
    mutants = plan_mutants(textwrap.dedent(source).lstrip("\n"), 1, ALL_OPERATORS)
    forced = [m.line for m in mutants if m.operator == "condition.false"]
    # kept: a local defaulted per call (4), another attribute assigned (6), an `else` (8)
    assert forced == [4, 6, 8]


def test_a_hash_keeps_only_the_mutants_that_break_it() -> None:
    # boltons' FrozenDict/_HashedKey/_ComplementSet.__hash__: another number, operator or
    # branch is still a hash consistent with __eq__ (sets and dicts behave the same).
    body = """
        if self.cached is not None:
            return self.cached
        self.note()
        if not self.parts:
            raise ValueError("empty")
        return hash(self.parts[1:]) ^ hash(self.name + "x") * 3
    """
    source = f"class K:\n    def __hash__(self):{body}"
    planned = {m.operator for m in plan_mutants(textwrap.dedent(source), 2, ALL_OPERATORS)}
    assert planned == {"body.return_none", "call.remove", "raise.type", "raise.message"}
    # the same body under another name keeps every operator
    other = {m.operator for m in plan_mutants(source.replace("__hash__", "digest"), 2)}
    assert {"return.changed", "arith.replace", "constant.string", "condition.true"} <= other


def test_a_changed_int_reverses_the_order_so_a_sort_key_cannot_hide_it() -> None:
    # boltons' FilePerms sort_key: `2 * v` kept the order of 0, 1, 2; `-v - 1` reverses it.
    from pytest_quest.core.mutants import changed_value

    source = """
    def order(text):
        values = {"r": 0, "w": 1, "x": 2}
        def sort_key(c):
            return values[c]
        return "".join(sorted(text, key=sort_key))
    """
    assert [changed_value(v) for v in (-2, 0, 1, 2)] == [1, -1, -2, -3]
    dedented = textwrap.dedent(source).lstrip("\n")
    (changed,) = [m for m in plan_mutants(dedented, 3) if m.operator == "return.changed"]
    namespace: dict[str, Any] = {
        "pytest_quest_reached": lambda v: v,
        "pytest_quest_changed": changed_value,
    }
    exec(compile(mutated_tree(dedented, 3, changed.index), "<m>", "exec"), namespace)
    assert namespace["order"]("xrw") == "xwr"  # the original gives "rwx"


def test_statement_lines_are_a_simple_statement_or_a_compound_header() -> None:
    import ast

    from pytest_quest.core.mutant_ast import statement_lines

    source = textwrap.dedent(
        """
        def f(x):
            total = (x +
                     1)
            if (x and
                    total):
                return 1
            elif x: return 2
            for i in range(x):
                def inner():
                    return 3
            return [
                i for i in range(total)
            ]
        """
    ).lstrip("\n")
    function = ast.parse(source).body[0]
    assert statement_lines(function, 3) == range(2, 4)  # inside a two-line assignment
    assert statement_lines(function, 4) == range(4, 6)  # the header of a two-line `if`
    assert statement_lines(function, 6) == range(6, 7)
    assert statement_lines(function, 7) == range(7, 8)  # `elif x: return 2`: the return
    assert statement_lines(function, 8) == range(8, 9)
    assert statement_lines(function, 10) == range(8, 9)  # in a nested def: our `for`
    assert statement_lines(function, 12) == range(11, 14)
    assert statement_lines(function, 99) == range(0)


@pytest.mark.parametrize("mark", [True, False])
@pytest.mark.parametrize("kind", ["def", "async def"])
def test_every_mutant_of_a_generator_compiles(kind: str, mark: bool) -> None:
    """`return None` is a SyntaxError in an async generator: its body skip is a bare return."""
    source = textwrap.dedent(
        f"""
        {kind} numbers(n):
            total = 0
            for i in range(n):
                if i % 2:
                    total += i
                yield total
        """
    ).lstrip("\n")
    mutants = plan_mutants(source, 1, ALL_OPERATORS)
    assert any(m.operator == "body.skip" for m in mutants)
    for mutant in mutants:
        compile(mutated_tree(source, 1, mutant.index, mark=mark), "<m>", "exec")


def test_a_slice_probe_keeps_its_bounds_and_an_index_probe_its_key() -> None:
    # more-itertools' divide: `iterable[:0]` only asks whether the
    # object can be sliced; `[:None]` or `[:1]` asks the same.
    source = """
    def f(iterable, d):
        try:
            iterable[:0]
        except TypeError:
            iterable = tuple(iterable)
        d["key"]
        return iterable[1:2]
    """
    found = plan(source)
    assert [m for o, _, m in found if o == "slice.bounds"] == ["return iterable[None:2]"]
    assert [m for o, _, m in found if o == "constant.number"] == [
        "return iterable[2:2]",
        "return iterable[1:3]",
    ]
    assert [m for o, _, m in found if o == "constant.string"] == ["d['XXkeyXX']"]


def test_a_join_is_not_removed_for_its_removal_only_makes_a_race() -> None:
    # more-itertools' callback_iter._reader: `q.join()` of a queue
    # whose every item was marked done returns at once.
    source = """
    def f(q, worker, items):
        worker.start()
        q.join()
        worker.join(1.0)
        items.append(q)
    """
    removed = [orig for o, orig, _ in plan(source) if o == "call.remove"]
    assert removed == ["worker.start()", "items.append(q)"]


def test_a_formatted_logging_or_warning_message_is_not_a_constant_to_change() -> None:
    # dateutil's `warnings.warn("... %s" % name)`: the message's
    # text, formatted or joined, is as quiet as a plain one; its numbers and
    # the code around it are still changed.
    source = """
    def f(name, n):
        warnings.warn("%s is gone" % name, DeprecationWarning)
        log.info("seen " + name + "!")
        print("count:", n + 2)
        return "%s!" % name
    """
    found = plan(source)
    assert [m for o, _, m in found if o == "constant.string"] == ["return 'XX%s!XX' % name"]
    assert [m for o, _, m in found if o == "constant.number"] == ['print("count:", n + 3)']


def test_the_maxlen_of_a_deque_thrown_away_or_read_at_its_end_is_kept() -> None:
    # more-itertools' consume and last: `deque(it, maxlen=0)`
    # consumes `it` whatever the maxlen; `deque(it, maxlen=1)[-1]` is the
    # last item for any maxlen.  A deque read otherwise, or at an index
    # beyond its maxlen, still has its maxlen changed.
    source = """
    def f(it, n):
        deque(it, maxlen=0)
        collections.deque(it, 0)
        a = deque(it, maxlen=1)[-1]
        b = deque(it, 2)[-2]
        c = deque(it, maxlen=1)[0]
        d = deque(it, maxlen=1)[-2]
        e = deque(it, maxlen=3)
        return a, b, c, d, e
    """
    numbers = [m for o, _, m in plan(source) if o == "constant.number"]
    assert numbers == [
        "a = deque(it, maxlen=1)[-2]",  # the index: another item
        "b = deque(it, 2)[-3]",
        "c = deque(it, maxlen=2)[0]",
        "c = deque(it, maxlen=1)[1]",
        "d = deque(it, maxlen=2)[-2]",
        "d = deque(it, maxlen=1)[-3]",
        "e = deque(it, maxlen=4)",
    ]


# -- the statements a function is looked for in, and compiled code compared --------


def _kinds(nodes: Any) -> list[str]:
    return [type(node).__name__ for node in nodes]


def test_statements_are_those_whose_lines_hold_the_line_decorators_included() -> None:
    import ast

    from pytest_quest.core.mutants import _statements

    tree = ast.parse(
        "x = 1\n@dec\n\ndef f():\n    pass\nmatch x:\n    case 1:\n        pass\n    case 2:\n        pass\n"
    )
    assert _kinds(_statements(tree, 1)) == ["Assign"]
    assert _kinds(_statements(tree, 2)) == ["FunctionDef"]
    assert _kinds(_statements(tree, 3)) == ["FunctionDef"]
    assert _kinds(_statements(tree, 5)) == ["FunctionDef"]
    assert _kinds(_statements(tree, 6)) == ["Match"]
    assert _kinds(_statements(tree, 11)) == []
    # Match cases carry no line: each is looked into.
    assert _kinds(_statements(tree.body[2], 99)) == ["match_case", "match_case"]


def test_an_expression_with_a_body_holds_no_statement() -> None:
    import ast

    from pytest_quest.core.mutants import _statements

    assert list(_statements(ast.parse("lambda: 1", mode="eval").body, 1)) == []
    assert list(_statements(ast.parse("a if b else c", mode="eval").body, 1)) == []


def test_what_is_not_a_node_in_a_body_is_skipped() -> None:
    import ast

    from pytest_quest.core.mutants import _statements

    stmt = ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=4)
    module = ast.Module(body=["not a node", stmt], type_ignores=[])  # type: ignore[list-item]
    assert list(_statements(module, 1)) == [stmt]


def test_a_statement_that_defines_no_function_compiles_to_no_code() -> None:
    import ast

    from pytest_quest.core.mutants import _standalone

    assert _standalone(ast.parse("x = 1").body[0]) is None
    code = _standalone(ast.parse("@dec\ndef f():\n    return 1").body[0])
    assert code is not None and code.co_name == "f" and code.co_consts == (None, 1)


def test_code_with_more_constants_is_not_the_same_code() -> None:
    import ast

    from pytest_quest.core.mutants import _same_code, _standalone

    code = _standalone(ast.parse("def f():\n    return 1").body[0])
    assert code is not None
    assert _same_code(code, code.replace()) is True
    assert _same_code(code, code.replace(co_consts=(*code.co_consts, 5))) is False
    assert _same_code(code.replace(co_consts=(*code.co_consts, 5)), code) is False
