"""What verifiers are shown: the function, its covering tests, the questions, as one prompt."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_quest.core.model import FunctionFacts, Quest
from pytest_quest.verify.protocol import STATUS_CLEAN, STATUS_CORRECTIONS

# The narrow questions, asked in this order; `--quest-verify-questions N`
# asks the first N.  Each is phrased so that "no" is the clean answer.
QUESTIONS = (
    (
        "Does any test pass whatever the function returns (it asserts nothing about the "
        "result, or only something every return value satisfies)?"
    ),
    "Does a test's name or docstring claim behaviour that its assertions do not check?",
    (
        "Does an assertion compute its expected value with the code under test, so that it "
        "would still pass if the code were wrong?"
    ),
    (
        "Does a test check an implementation detail (a private attribute, a call count, a "
        "log message) instead of what the function returns or does?"
    ),
    (
        "Does a test catch or ignore an exception (a broad try/except, pytest.raises of a "
        "too general type) so that a wrong result could not fail it?"
    ),
    (
        "Does a test depend on time, randomness, the network, files or the order of tests "
        "in a way that could change its outcome?"
    ),
)


@dataclass(frozen=True)
class TestSource:
    """The source of one test shown to verifiers: `text` spans lines `first`..`last` of `file`."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    file: str
    first: int
    last: int
    text: str


@dataclass
class Request:
    """What every verifier of one submission is shown.

    `files` holds the lines of each file of the submission (the function's
    file and the test files shown), as read when the prompt was built: the
    re-check looks there, so a verifier is checked against what it saw.
    """

    quest: Quest
    function_file: str
    function_first: int
    function_source: str
    tests: list[TestSource]
    questions: list[str]
    files: dict[str, list[str]] = field(default_factory=dict)


def numbered(text: str, first: int) -> str:
    return "\n".join(f"{first + index:5d} | {line}" for index, line in enumerate(text.split("\n")))


def _def_span(tree: ast.AST, qualname: list[str]) -> tuple[int, int] | None:
    """Lines (first decorator or def, end) of the function `qualname` in `tree`."""
    body: list[ast.stmt] = list(getattr(tree, "body", []))
    node: ast.AST | None = None
    for name in qualname:
        node = next(
            (  # the last definition of a name is the one pytest runs
                child
                for child in reversed(body)
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and child.name == name
            ),
            None,
        )
        if node is None:
            return None
        body = list(getattr(node, "body", []))
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno or node.lineno


def covering_test_sources(rootdir: Path, nodeids: Sequence[str]) -> list[TestSource]:
    """The source of each test in `nodeids` (parametrized cases shown once), in order."""
    sources: list[TestSource] = []
    seen: set[tuple[str, str]] = set()
    trees: dict[str, tuple[ast.AST, list[str]] | None] = {}
    for nodeid in nodeids:
        base = nodeid.split("[", 1)[0]  # a parameter id may hold anything, even "::"
        file, _, rest = base.partition("::")
        names = [part for part in rest.split("::") if part]
        key = (file, "::".join(names))
        if not names or key in seen:
            continue
        seen.add(key)
        if file not in trees:
            trees[file] = _parse_file(rootdir / file)
        parsed = trees[file]
        if parsed is None:
            continue
        tree, lines = parsed
        span = _def_span(tree, names)
        if span is None:
            continue
        first, last = span
        text = "\n".join(lines[first - 1 : last])
        sources.append(TestSource(base, file, first, last, text))
    return sources


def _parse_file(path: Path) -> tuple[ast.AST, list[str]] | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        return ast.parse(text), text.splitlines()
    except (OSError, SyntaxError, ValueError):
        return None


def build_request(
    *,
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    covering_tests: Sequence[str],
    changed_files: Sequence[str],
    questions: int,
) -> Request:
    """Collect what verifiers are shown: the function, the new or changed tests, questions.

    The tests are those covering the function that live in a test file new
    or changed since the scan; when none does, every covering test.
    """
    changed = set(changed_files)
    chosen = [nodeid for nodeid in covering_tests if nodeid.split("::")[0] in changed]
    tests = covering_test_sources(rootdir, chosen or list(covering_tests))
    files: dict[str, list[str]] = {}
    function_lines = _read_lines(rootdir / current.file)
    files[current.file] = function_lines
    first, last = current.start, current.last
    parsed = _parse_file(rootdir / current.file)
    if parsed is not None:
        # Show the decorators too: they are part of what the tests exercise.
        for node in ast.walk(parsed[0]):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == first:
                first = min([first] + [d.lineno for d in node.decorator_list])
                break
    source = "\n".join(function_lines[first - 1 : last])
    for test in tests:
        if test.file not in files:
            files[test.file] = _read_lines(rootdir / test.file)
    return Request(
        quest=quest,
        function_file=current.file,
        function_first=first,
        function_source=source,
        tests=tests,
        questions=list(QUESTIONS[: max(1, questions)]),
        files=files,
    )


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def function_section(request: Request, title: str) -> list[str]:
    """The prompt's lines showing the function, numbered with its file's line numbers."""
    last = request.function_first + request.function_source.count("\n")
    return [
        (
            f"## {title}: {request.quest.id} ({request.function_file}, lines "
            f"{request.function_first}-{last})"
        ),
        "",
        "```python",
        numbered(request.function_source, request.function_first),
        "```",
    ]


def tests_section(tests: Sequence[TestSource]) -> list[str]:
    """The prompt's lines showing each test (under a heading the caller writes)."""
    if not tests:
        return ["", "(no test source could be shown)"]
    parts: list[str] = []
    for test in tests:
        parts += [
            "",
            f"### {test.nodeid} ({test.file}, lines {test.first}-{test.last})",
            "",
            "```python",
            numbered(test.text, test.first),
            "```",
        ]
    return parts


def reply_format(questions: str, answers: str, discrepancy: str) -> list[str]:
    """The prompt's reply-format section, with how each block's items look."""
    return [
        "",
        "## Reply format",
        "",
        "Reply with exactly these five blocks (any order), nothing else is read:",
        "",
        f"<status>{STATUS_CLEAN} or {STATUS_CORRECTIONS}</status>",
        "<questions>",
        questions,
        "</questions>",
        "<answers>",
        answers,
        "</answers>",
        "<discrepancies>",
        discrepancy,
        "</discrepancies>",
        "<final>one sentence: your conclusion</final>",
    ]


def build_prompt(request: Request) -> str:
    """The prompt sent on stdin to each verifier command (documented in docs/verification.md)."""
    parts = [
        (
            "You are an independent verifier of unit tests written by someone else for one "
            "function. Judge only from the code below: do not trust the tests' names, "
            "docstrings or comments, and answer each question on its own before you list "
            "any discrepancy."
        ),
        "",
        *function_section(request, "Function under test"),
        "",
        "## Tests that cover it (new or changed in this submission)",
        *tests_section(request.tests),
    ]
    parts += ["", "## Questions (answer each with yes or no, then one short reason)", ""]
    parts += [f"{number}. {question}" for number, question in enumerate(request.questions, 1)]
    parts += reply_format(
        "- each question above, one bullet each, in the same order",
        "- yes or no, then a short reason; one bullet per question, same order",
        "- path/to/file.py:LINE `the code at that line, quoted exactly` why it is a problem",
    )
    parts += [
        "",
        (
            "Write `none` in <discrepancies> when there is no discrepancy; the status is then "
            f"{STATUS_CLEAN}, otherwise {STATUS_CORRECTIONS}. Every discrepancy cites a file "
            "and line number shown above and quotes, between backticks, code that is on that "
            "line; a discrepancy that does not is discarded. Instead of the blocks, one JSON "
            'object is accepted: {"status": ..., "questions": [...], "answers": [...], '
            '"discrepancies": [{"file": ..., "line": ..., "quote": ..., "reason": ...}], '
            '"final": ...}.'
        ),
    ]
    return "\n".join(parts) + "\n"
