"""The tamper check over honest test suites: how often does it fire, and on what?

Every file is judged whole (as if the submission had added it), the worst case:
a real submission is judged on its added and changed lines only. Run by hand:

    python benchmarks/tamper_false_alarms.py                       # this repository's tests/ and the cheese suite's honest submissions
    python benchmarks/tamper_false_alarms.py --suite boltons=/tmp/boltons-25.0.0 --suite dateutil=/tmp/dateutil

A suite folder is any checkout or unpacked sdist; its test modules, conftest
files and pytest configuration files are scanned.
"""

from __future__ import annotations

import argparse
import ast
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pytest_quest.core.tamper import Finding, SubmittedFile, find_tamper_signs

REPO = Path(__file__).resolve().parents[1]
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "pytest.toml")
SKIPPED_FOLDERS = {".git", ".venv", "venv", ".tox", "build", "dist", "node_modules", "_work"}


def suite_files(root: Path) -> Iterator[SubmittedFile]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if SKIPPED_FOLDERS & set(relative.parts) or not path.is_file():
            continue
        is_config = len(relative.parts) == 1 and path.name in CONFIG_FILES
        is_test = path.suffix == ".py" and (
            path.name == "conftest.py" or any(part.startswith("test") for part in relative.parts)
        )
        if is_config or is_test:
            yield SubmittedFile(
                relative.as_posix(), path.read_text(encoding="utf-8", errors="replace")
            )


def cheese_honest_tests(cheese: Path) -> Iterator[SubmittedFile]:
    """The test files of the honest submissions in tests/test_cheese.py (its HONEST dict)."""
    tree = ast.parse(cheese.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "HONEST":
            assert node.value is not None
            honest = ast.literal_eval(node.value)
            for module, (_, test) in honest.items():
                yield SubmittedFile(f"tests/test_{module}.py", textwrap.dedent(test))


def report(name: str, files: list[SubmittedFile], own: tuple[str, ...]) -> list[Finding]:
    findings = find_tamper_signs(files, own_packages=own)
    kinds = Counter(finding.kind for finding in findings)
    by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) or "none"
    print(f"== {name}: {len(files)} files scanned, {len(findings)} findings ({by_kind})")
    for finding in findings:
        print(f"   {finding.fact().text()}")
    return findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an honest suite to scan (a checkout or unpacked sdist); repeatable",
    )
    parser.add_argument(
        "--no-defaults", action="store_true", help="skip this repository's own suites"
    )
    args = parser.parse_args()
    total_files = total_findings = 0
    suites: list[tuple[str, list[SubmittedFile], tuple[str, ...]]] = []
    if not args.no_defaults:
        # This repository tests pytest-quest itself: importing it is honest here.
        suites.append(("pytest-quest tests/", list(suite_files(REPO / "tests")), ("pytest_quest",)))
        suites.append(
            (
                "cheese suite honest submissions",
                list(cheese_honest_tests(REPO / "tests" / "test_cheese.py")),
                (),
            )
        )
    for spec in args.suite:
        name, _, path = spec.partition("=")
        suites.append((name, list(suite_files(Path(path))), ()))
    for name, files, own in suites:
        total_findings += len(report(name, files, own))
        total_files += len(files)
    print(f"== total: {total_files} files, {total_findings} findings")


if __name__ == "__main__":
    main()
