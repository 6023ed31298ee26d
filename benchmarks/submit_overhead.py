"""What a submit costs beyond its tests: run by hand (issue 15, "submits at the cost of their tests").

    python benchmarks/submit_overhead.py                              # example_project, 3 rounds
    python benchmarks/submit_overhead.py --dateutil /path/to/dateutil  # and python-dateutil
    python benchmarks/submit_overhead.py --python V/bin/python --record

For each project it scans a copy once (the template), then per round copies
the template, writes one test file for one TODO quest and times, side by
side: ``pytest --quest submit`` of that quest (wall and CPU, with the gate's
own timings read back from the ratchet: the measuring run and step 4, the
mutation child), a plain ``pytest`` of the tests the submit selected (the
quest's covering tests, read back from the ratchet) and, for dateutil, a
full ``pytest --cov --cov-branch`` of its suite.  It reports medians and:

* overhead = submit wall - the selected tests' own time, where the tests'
  own time is pytest's "passed in X s" of the plain run (start-up and
  collection excluded), and also against the plain run's wall time;
* for dateutil, submit wall / the full coverage run's wall.

``--python`` needs pytest-quest (this checkout) and pytest-cov installed;
the dateutil checkout needs its test requirements (freezegun, hypothesis)
there too.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.md"


def demo_test() -> str:
    """The test file demo.sh writes for its first quest (its heredoc), as the demo writes it."""
    text = (ROOT / "demo.sh").read_text(encoding="utf-8")
    start = text.index("<<'PY'\n") + len("<<'PY'\n")
    return text[start : text.index("\nPY\n", start) + 1]


PARSER_ERROR_TEST = """from dateutil.parser import ParserError


def test_str_formats_the_message_with_its_arguments():
    assert str(ParserError("Unknown string format: %s", "x")) == "Unknown string format: x"


def test_str_falls_back_when_the_arguments_do_not_fit():
    assert str(ParserError("no placeholder", "extra")) == "('no placeholder', 'extra')"
    assert str(ParserError("%s %s", "only one")) == "('%s %s', 'only one')"
"""


class Case(NamedTuple):
    name: str
    source: Path
    scan_args: list[str]
    quest: str
    test_file: str
    test_text: str
    env: dict[str, str]
    full_run: list[str] | None  # a full coverage run of the suite, to compare with


class Round(NamedTuple):
    verdict: str
    submit_wall: float
    submit_cpu: float
    measuring: float | None
    mutation: float | None
    plain_wall: float
    plain_own: float
    selected: int
    full_wall: float | None


def run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall s, CPU s (the process and its children, from ``os.wait4``), exit code, output."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), text


def environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COVERAGE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run writes its bytecode caches
    env.update(extra)
    return env


def template(python: str, case: Case, folder: Path) -> Path:
    """A scanned copy of the case's project."""
    target = folder / f"{case.name}-template"
    shutil.copytree(
        case.source,
        target,
        ignore=shutil.ignore_patterns(
            "quest.json*", ".pytest_cache", "__pycache__", ".coverage*", "test_quest_*.py", ".git"
        ),
    )
    command = [python, "-m", "pytest", "-p", "no:cacheprovider", "--quest", "scan", *case.scan_args]
    wall, _, code, text = run(command, target, environment(case.env))
    if code not in (0, 1) or not (target / "quest.json").exists():
        raise SystemExit(f"scan of {case.name} failed ({code}):\n{text[-2000:]}")
    print(f"{case.name}: scanned in {wall:.1f} s", file=sys.stderr, flush=True)
    return target


def one_round(python: str, case: Case, scanned: Path, folder: Path, number: int) -> Round:
    work = folder / f"{case.name}-{number}"
    shutil.copytree(scanned, work)
    (work / case.test_file).write_text(case.test_text, encoding="utf-8")
    env = environment(case.env)
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider"]
    submit = [*pytest, "--quest", "submit", f"--quest-id={case.quest}", "--quest-format", "json"]
    wall, cpu, _, text = run(submit, work, env)
    try:
        verdict = str(json.loads(text[text.index("{") :]).get("verdict"))
    except ValueError:
        verdict = "unreadable: " + text[-300:]
    quest = json.loads((work / "quest.json").read_text())["quests"][case.quest]
    table = json.loads((work / "quest.json").read_text())["tests"]
    selected = [table[index] for index in quest.get("covering_tests", [])]
    extra = quest.get("extra", {})
    plain_wall, _, _, plain_text = run([*pytest, "-q", *selected], work, env)
    found = re.search(r"passed in ([0-9.]+)s", plain_text)
    full_wall = None
    if case.full_run is not None:
        full_wall = run([*pytest, *case.full_run], work, env)[0]
    return Round(
        verdict=verdict,
        submit_wall=wall,
        submit_cpu=cpu,
        measuring=extra.get("last_run_seconds"),
        mutation=extra.get("mutation_seconds"),
        plain_wall=plain_wall,
        plain_own=float(found.group(1)) if found else float("nan"),
        selected=len(selected),
        full_wall=full_wall,
    )


def median(values: list[float | None]) -> float:
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else float("nan")


def report(case: Case, rounds: list[Round]) -> list[str]:
    submit = median([r.submit_wall for r in rounds])
    own = median([r.plain_own for r in rounds])
    plain = median([r.plain_wall for r in rounds])
    lines = [
        f"#### {case.name}: `{case.quest}` ({rounds[0].selected} selected tests)",
        "",
        f"verdicts: {', '.join(r.verdict for r in rounds)}",
        "",
        "| what | median s |",
        "|---|---:|",
        f"| submit, wall | {submit:.2f} |",
        f"| submit, CPU (the judge and its children) | {median([r.submit_cpu for r in rounds]):.2f} |",
        f"| the gate's measuring run (recorded) | {median([r.measuring for r in rounds]):.2f} |",
        f"| step 4, the mutation child (recorded) | {median([r.mutation for r in rounds]):.2f} |",
        f"| plain pytest of the selected tests, wall | {plain:.2f} |",
        f"| the selected tests' own time (pytest's 'passed in') | {own:.2f} |",
        "",
        f"- overhead, submit wall - the tests' own time: {submit - own:.2f} s (target < 0.8 s)",
        f"- submit wall - a plain pytest run of them: {submit - plain:.2f} s",
    ]
    if case.full_run is not None:
        full = median([r.full_wall for r in rounds])
        lines.append(
            f"- full `pytest {' '.join(case.full_run)}`: {full:.2f} s; "
            f"submit / full run: {submit / full:.2f}x (target <= 0.10x)"
        )
    return [*lines, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dateutil", type=Path, help="a python-dateutil checkout (src/ layout)")
    parser.add_argument(
        "--record", action="store_true", help=f"append the report to {RESULTS.name}"
    )
    args = parser.parse_args()
    cases = [
        Case(
            "example_project",
            ROOT / "example_project",
            ["-q"],
            "src/shop/cart.py::Cart.add",
            "tests/test_cart_add.py",
            demo_test(),
            {},
            None,
        )
    ]
    if args.dateutil:
        cases.append(
            Case(
                "python-dateutil",
                args.dateutil.resolve(),
                ["--quest-source", "src/dateutil", "-q", "tests"],
                "src/dateutil/parser/_parser.py::ParserError.__str__",
                "tests/test_quest_parsererror.py",
                PARSER_ERROR_TEST,
                {"PYTHONPATH": "src"},
                ["--cov=src/dateutil", "--cov-branch", "-q", "tests"],
            )
        )
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"### {now}, commit {commit}",
        "",
        f"`python benchmarks/submit_overhead.py --rounds {args.rounds}"
        + (" --dateutil PATH" if args.dateutil else "")
        + f"`; Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average at start {os.getloadavg()[0]:.1f}",
        "",
    ]
    with tempfile.TemporaryDirectory(prefix="quest-submit-") as tmp:
        for case in cases:
            scanned = template(args.python, case, Path(tmp))
            rounds = []
            for number in range(args.rounds):
                rounds.append(one_round(args.python, case, scanned, Path(tmp), number))
                print(f"{case.name}: round {number + 1}: {rounds[-1]}", file=sys.stderr, flush=True)
            out += report(case, rounds)
    text = "\n".join(out)
    print(text)
    if args.record:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
