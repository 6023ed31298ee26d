r"""The tamper check over honest test suites: how often does it fire, and on what?

Two modes, run by hand:

* whole files (`--suite`, and this repository's own suites by default): every
  file is judged as if the submission had added it, the worst case;
* history (`--history`): each of the last N commits of a git repository is
  judged as a submission, on the lines it added or changed in test files,
  conftest files and pytest configuration: what a real submission sees.

    python benchmarks/tamper_false_alarms.py
    python benchmarks/tamper_false_alarms.py --suite boltons=/tmp/boltons-25.0.0
    python benchmarks/tamper_false_alarms.py --no-defaults --history attrs=/path/to/attrs/.git --commits 300

A suite folder is any checkout or unpacked sdist. The figures in docs/gate.md
("Tamper signs") come from nine repositories, each cloned bare and unpacked:

    for repo in mahmoud/boltons dateutil/dateutil more-itertools/more-itertools \
                pallets/click pallets/werkzeug psf/requests pytest-dev/pytest-randomly \
                pytest-dev/pytest-xdist python-attrs/attrs; do
        name=${repo/\//+}
        git clone -q --bare https://github.com/$repo /tmp/git/$name
        mkdir -p /tmp/suites/$name && git --git-dir=/tmp/git/$name archive HEAD | tar -x -C /tmp/suites/$name
        suites="$suites --suite $name=/tmp/suites/$name --history $name=/tmp/git/$name"
    done
    python benchmarks/tamper_false_alarms.py $suites --commits 300
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pytest_quest.core.tamper import Finding, SubmittedFile, find_tamper_signs

REPO = Path(__file__).resolve().parents[1]
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "pytest.toml")
SKIPPED_FOLDERS = {".git", ".venv", "venv", ".tox", "build", "dist", "node_modules", "_work"}


def judged(relative: Path) -> bool:
    """A test module, conftest file or root pytest configuration file."""
    if SKIPPED_FOLDERS & set(relative.parts):
        return False
    if len(relative.parts) == 1 and relative.name in CONFIG_FILES:
        return True
    return relative.suffix == ".py" and (
        relative.name == "conftest.py" or any(part.startswith("test") for part in relative.parts)
    )


def suite_files(root: Path) -> Iterator[SubmittedFile]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and judged(relative):
            yield SubmittedFile(
                relative.as_posix(), path.read_text(encoding="utf-8", errors="replace")
            )


class Blobs:
    """File contents at any commit, through one `git cat-file --batch`."""

    def __init__(self, git_dir: str) -> None:
        self.process = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def text(self, commit: str, path: str) -> str | None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{commit}:{path}\n".encode())
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.process.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def history(name: str, git_dir: str, commits: int) -> tuple[int, list[Finding]]:
    """Judge each of the last `commits` non-merge commits as a submission."""
    log = subprocess.run(
        ["git", "--git-dir", git_dir, "log", "--no-merges", "-n", str(commits), "--format=@%H", "--name-status", "--find-renames"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # (commit, [(path, path before the commit or None when added)])
    changes: list[tuple[str, list[tuple[str, str | None]]]] = []
    for line in log.splitlines():
        if line.startswith("@"):
            changes.append((line[1:], []))
            continue
        fields = line.split("\t")
        if not line or not judged(Path(fields[-1])):
            continue
        if line[0] == "M":
            changes[-1][1].append((fields[1], fields[1]))
        elif line[0] == "A":
            changes[-1][1].append((fields[1], None))
        elif line[0] in "RC":  # moved or copied: judged against the text it had before
            changes[-1][1].append((fields[2], fields[1]))
    blobs = Blobs(git_dir)
    findings: list[Finding] = []
    flagged = touching = 0
    for commit, paths in changes:
        if not paths:
            continue
        touching += 1
        files = []
        for path, before in paths:
            text = blobs.text(commit, path)
            previous = blobs.text(commit + "^", before) if before else None
            if text is not None:
                files.append(SubmittedFile(path, text, previous))
        found = find_tamper_signs(files)
        flagged += bool(found)
        for finding in found:
            print(f"   {commit[:10]} {finding.fact().text()}")
        findings.extend(found)
    blobs.close()
    kinds = Counter(finding.kind for finding in findings)
    by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) or "none"
    print(
        f"== {name} (history): {len(changes)} commits, {touching} change tests or pytest "
        f"configuration, {flagged} with findings; {len(findings)} findings ({by_kind})"
    )
    return touching, findings


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
        "--history",
        action="append",
        default=[],
        metavar="NAME=GIT_DIR",
        help="judge each recent commit of a git repository as a submission; repeatable",
    )
    parser.add_argument("--commits", type=int, default=300, help="commits per --history")
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
    if suites:
        print(f"== whole files, total: {total_files} files, {total_findings} findings")
    submissions = history_findings = 0
    for spec in args.history:
        name, _, git_dir = spec.partition("=")
        touching, found = history(name, git_dir, args.commits)
        submissions += touching
        history_findings += len(found)
    if args.history:
        print(f"== history, total: {submissions} submissions, {history_findings} findings")


if __name__ == "__main__":
    main()
