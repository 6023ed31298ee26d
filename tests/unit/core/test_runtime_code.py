"""runtime_lines: the code at module or class level that no def's quest covers."""

from __future__ import annotations

from pytest_quest.core.runtime_code import BUILT, LAMBDA, PARTIAL, runtime_lines

SOURCE = """\
import functools, types
f = lambda x: x + 1
class C:
    g = lambda self: 2
    for n in ("a", "b"):
        exec(f"def {n}(self): return 1")
C.h = lambda self: 3
def k():
    return lambda y: y
p = functools.partial(k)
made = types.FunctionType(k.__code__, {})
source = compile("x = 1", "s", "exec")
twice = lambda x: (
    x * 2
)
"""


def test_lambdas_outside_defs_and_code_built_at_run_time_are_found_by_line() -> None:
    found = {line: kind for line, (kind, _) in runtime_lines(SOURCE).items()}
    assert found == {
        2: LAMBDA,
        4: LAMBDA,
        6: BUILT,
        7: LAMBDA,
        10: PARTIAL,
        11: BUILT,
        12: BUILT,
        13: LAMBDA,
        14: LAMBDA,
        15: LAMBDA,
    }


def test_a_lambda_inside_a_def_is_the_defs_and_a_source_that_does_not_parse_has_none() -> None:
    assert runtime_lines("def k():\n    return lambda y: y\n") == {}
    assert runtime_lines("def (:\n") == {}
