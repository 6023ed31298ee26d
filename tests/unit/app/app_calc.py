"""A small project for the use cases of app/, run in-process: its source, a scan, contexts."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from pytest_quest.app.context import Context, RunData
from pytest_quest.app.options import QuestOptions
from pytest_quest.app.scan import scan
from pytest_quest.app.submit import Judgement, record
from pytest_quest.core.gate import GateResult, coverage_facts
from pytest_quest.core.model import Fact, FunctionFacts, Verdict
from pytest_quest.core.run import RunReport
from pytest_quest.engine.measure import MeasuredSource
from pytest_quest.engine.source import source_functions
from tests.support.contexts import app_context, quest_options

CALC = """\
def double(x):
    return x * 2


def sign(x):
    if x < 0:
        return -1
    return 1


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
"""

CALC_TESTS = """\
from pkg.calc import double


def test_double():
    assert double(3) == 6
"""

SIGN = "src/pkg/calc.py::sign"
CLAMP = "src/pkg/calc.py::clamp"
DOUBLE = "src/pkg/calc.py::double"
TEST_DOUBLE = "tests/test_calc.py::test_double"
CONFIG: dict[str, Any] = {"run:branch": True}
# The arcs coverage.py reports for each function of CALC.
ARCS = {"double": [], "sign": [(6, 7), (6, 8)], "clamp": [(12, 13), (12, 14), (14, 15), (14, 16)]}


class CalcProject:
    """``src/pkg/calc.py`` (CALC) and its tests in a folder, and contexts to run use cases in it."""

    def __init__(self, root: Path, source: str = CALC) -> None:
        self.root = root
        (root / "src" / "pkg").mkdir(parents=True)
        (root / "src" / "pkg" / "__init__.py").write_text("")
        (root / "tests").mkdir()
        self.write_source(source)

    def write_source(self, source: str) -> None:
        self.source = source
        (self.root / "src" / "pkg" / "calc.py").write_text(source)

    def test(self, name: str, text: str) -> None:
        (self.root / "tests" / f"{name}.py").write_text(textwrap.dedent(text))

    def options(self, command: str, **changes: Any) -> QuestOptions:
        return quest_options(self.root, command, **changes)

    def context(self, command: str, run: RunData | None = None, **changes: Any) -> Context:
        return app_context(self.root, command, run, **changes)

    def measured(self, covered: dict[str, list[str]]) -> MeasuredSource:
        """The source as a run measures it: `covered` maps a function to its passing tests."""
        functions: list[FunctionFacts] = []
        for info in source_functions("src/pkg/calc.py", self.source):
            arcs = ARCS.get(info.qualname, [])
            tests = covered.get(info.qualname, [])
            missing = (
                {}
                if tests
                else {
                    "missing_lines": sorted(info.lines),
                    "missing_branches": list(arcs),
                }
            )
            functions.append(
                info.facts(
                    statements=len(info.lines), branches=len(arcs), covering_tests=tests, **missing
                )
            )
        rel = "src/pkg/calc.py"
        spans = [(range(f.first, f.last + 1), bool(f.covering_tests)) for f in functions]
        every = frozenset(line for span, _ in spans for line in span)
        tested = frozenset(line for span, covered in spans if covered for line in span)
        return MeasuredSource(
            functions=functions,
            files=[rel],
            config=dict(CONFIG),
            statements={rel: every},
            tested_lines={rel: tested},
            ran_lines={rel: every},
        )

    def scan(self, covered: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """Scan as a run of the tests covering `covered` (default: test_double covers double)."""
        source = self.measured({"double": [TEST_DOUBLE]} if covered is None else covered)
        outcomes = {
            test: "passed" for tests in (covered or {"d": [TEST_DOUBLE]}).values() for test in tests
        }
        run = RunData(outcomes=outcomes, analyze=lambda: source)
        return scan(self.context("scan", run=run)).data


def settled(project: CalcProject, expected: str = "a") -> None:
    """One quest of each state: double PASS, sign REVIEW (its fact expects `expected`), clamp
    DONE, spare TODO."""
    project.write_source(CALC + "\n\ndef spare(x):\n    return x\n")
    project.test("test_calc", "from pkg.calc import double\n\ndef test_double():\n    pass\n")
    project.scan()
    ratchet = project.context("submit").store.load()
    clamp = next(f for f in project.measured({}).functions if f.quest_id == CLAMP)
    failed = GateResult(Verdict.FAIL, coverage_facts(clamp), "3-coverage")
    record(
        project.context("submit", max_tries=1),
        quest=ratchet.quests[CLAMP],
        judgement=Judgement(failed, clamp, RunReport()),
        now="2026-01-01T00:00:00Z",
    )
    changed = Fact(
        check="identity.changed", field="src/pkg/calc.py:5", expected=expected, actual="b"
    )
    review = GateResult(Verdict.REVIEW, [changed], "1-identity")
    record(
        project.context("submit"),
        quest=ratchet.quests[SIGN],
        judgement=Judgement(review, None, RunReport()),
        now="2026-01-01T00:00:01Z",
    )
