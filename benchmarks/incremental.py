"""Incremental check and the small-suite scan against pytest-cov: run by hand, never in the test suite.

    python benchmarks/incremental.py --python /tmp/incr/venv/bin/python \\
        --dateutil /tmp/incr/python_dateutil-4.0.0

`--python` has pytest-quest (this checkout), pytest-cov and the suite's test
needs (hypothesis, freezegun, tzdata, attrs).  `--dateutil` is the unpacked sdist
(``pip download --no-deps --no-binary :all: python-dateutil``); it is copied
under ``--work`` and made a git repository.

1. python-dateutil: one full ``pytest --quest scan`` records the run; then
   for each of three one-function changes (a statement added at the top of
   the function's body, so nothing regresses), side by side: a full
   ``pytest --cov --cov-branch`` of the same suite, and an incremental
   ``pytest --quest check``.  Facts: after each change an incremental scan
   and a ``--quest-full`` scan, each into a fresh ratchet file, must record
   the same quests, or the figures are refused.  Target: the median ratio at
   most 0.07.
2. A ~100-test synthetic suite (synth.py): a full ``pytest --quest scan``
   against ``pytest --cov --cov-branch``, rounds alternating.  Target: the
   median ratio at most 1.1.

A run that did not complete (exit status other than 0) or facts that differ
make the target say FAILED RUN, and the script exit 1.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAILED = "FAILED RUN"
CHANGES = [
    ("src/dateutil/easter.py", "easter"),
    ("src/dateutil/relativedelta.py", "relativedelta.normalized"),
    ("src/dateutil/rrule.py", "rrulebase.count"),
]
# Tests of python-dateutil 4.0.0 that fail against this machine's time zone data (not ours to judge).
ENVIRONMENT_FAILURES = [
    "tests/test_tz.py::test_gettz_link[tzpath-Europe/Monaco-Europe/Paris]",
    "tests/test_tzfile.py::test_gettz_local_abbreviation_without_time_zone_data",
    "tests/test_tzpath_data.py::test_dst_matches_tzdata_zi[tzpath]",
]
COMPARE = """
import json, sys
from pytest_quest.engine.codec import dumps_v1, loads
def quests(path):
    data = json.loads(dumps_v1(loads(open(path, 'rb').read())))
    return {q: {k: v for k, v in e.items() if k not in ('issued_at', 'passed_at', 'extra')}
            for q, e in data['quests'].items()}
a, b = quests(sys.argv[1]), quests(sys.argv[2])
print(json.dumps({'quests': len(a), 'same': a == b,
                  'differ': sorted(q for q in a.keys() | b.keys() if a.get(q) != b.get(q))[:5]}))
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


CPU: list[float] = []  # CPU seconds (user + system) of each run, in order


def run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, exit status and output (stdout, then stderr) of `command`.

    Its CPU seconds go to `CPU`: on a shared machine they say what wall time cannot.
    """
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace") + err.read().decode(errors="replace")
    CPU.append(usage.ru_utime + usage.ru_stime)
    return wall, os.waitstatus_to_exitcode(status), text


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name in ("COVERAGE_CORE", "COVERAGE_PROCESS_START", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    env.update(extra)
    return env


def touch_function(path: Path, qualname: str) -> None:
    """Add one statement at the top of `qualname`'s body (after its docstring): always run."""
    source = path.read_text()
    tree = ast.parse(source)
    target = None
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                for item in child.body:
                    item._qual = f"{child.name}.{getattr(item, 'name', '')}"  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if getattr(node, "_qual", node.name) == qualname:
                target = node
                break
    if target is None:
        raise SystemExit(f"{path}: no function {qualname}")
    body = target.body
    first = body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(
        getattr(first, "value", None), ast.Constant
    )
    anchor = body[1] if docstring and len(body) > 1 else first
    lines = source.splitlines(keepends=True)
    indent = " " * anchor.col_offset
    at = anchor.lineno - 1
    lines.insert(at, f"{indent}_benchmark_change = {len(lines)}\n")
    path.write_text("".join(lines))


def dateutil_rows(
    py: str, sdist: Path, work: Path, *, reuse: bool, cov_runs: int, chained: bool
) -> tuple[list[str], bool]:
    project = work / "dateutil"
    records = work / "records"
    env = child_env({"PYTHONPATH": "src"})
    base = [
        py,
        "-m",
        "pytest",
        "tests",
        "-p",
        "no:cacheprovider",
        "-q",
        # The suite's Hypothesis tests draw the same examples in every run: a random
        # test's reach differs between any two full runs, and the facts compared would too.
        "--hypothesis-seed=0",
        *(f"--deselect={test}" for test in ENVIRONMENT_FAILURES),
    ]
    quest = [*base, "--quest-source=src/dateutil"]
    ok = True
    if reuse and (records / "base.gz").exists() and (records / "recording.txt").exists():
        # The recorded full scan of an earlier run of this script, on the unchanged tree.
        subprocess.run(["git", "checkout", "-q", "--", "src"], cwd=project, check=True)
        lines = [(records / "recording.txt").read_text().strip() + " (an earlier run's)"]
    else:
        if project.exists():
            shutil.rmtree(project)
        shutil.copytree(sdist, project)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        subprocess.run(["git", "add", "-A"], cwd=project, check=True)
        subprocess.run(
            ["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "sdist"],
            cwd=project,
            check=True,
        )
        if records.exists():
            shutil.rmtree(records)
        records.mkdir()
        log("dateutil: the recorded full scan")
        wall, code, text = run(
            [
                *quest,
                "--quest",
                "scan",
                f"--quest-file={records / 'quest.json'}",
                f"--quest-run-data={records / 'base.gz'}",
            ],
            project,
            env,
        )
        lines = [
            f"python-dateutil {sdist.name}: full scan (recording) {wall:.1f} s "
            f"(CPU {CPU[-1]:.1f} s), exit {code}"
        ]
        if code != 0:
            return [*lines, text[-3000:], f"incremental check <= 0.07x pytest-cov: {FAILED}"], False
        (records / "recording.txt").write_text(lines[0])
    if chained:
        return chained_rows(py, project, records, base, quest, env, lines)
    ratios: list[float] = []
    rows = []
    for number, (file, qualname) in enumerate(CHANGES, 1):
        touch_function(project / file, qualname)
        for name in ("check.gz", "scan.gz"):
            shutil.copy(records / "base.gz", records / name)
        log(f"dateutil: change {number}, {file}::{qualname}")
        if number <= cov_runs:
            cov_wall, cov_code, _ = run([*base, "--cov=src/dateutil", "--cov-branch"], project, env)
            cov_cpu = CPU[-1]
        inc_wall, inc_code, inc_text = run(
            [
                *quest,
                "--quest",
                "check",
                "--quest-format",
                "json",
                f"--quest-file={records / 'quest.json'}",
                f"--quest-run-data={records / 'check.gz'}",
            ],
            project,
            env,
        )
        inc_cpu = CPU[-1]
        ran = _run_data(inc_text)
        _, scan_code, _ = run(
            [
                *quest,
                "--quest",
                "scan",
                f"--quest-file={records / f'incr-{number}.json'}",
                f"--quest-run-data={records / 'scan.gz'}",
            ],
            project,
            env,
        )
        _, full_code, _ = run(
            [
                *quest,
                "--quest",
                "scan",
                "--quest-full",
                f"--quest-file={records / f'full-{number}.json'}",
                f"--quest-run-data={records / 'base.gz'}",
            ],
            project,
            env,
        )
        compared = subprocess.run(
            [
                py,
                "-c",
                COMPARE,
                str(records / f"incr-{number}.json"),
                str(records / f"full-{number}.json"),
            ],
            capture_output=True,
            text=True,
        )
        same = (
            json.loads(compared.stdout)
            if compared.returncode == 0
            else {"same": False, "quests": 0}
        )
        codes = (cov_code, inc_code, scan_code, full_code)
        good = all(c == 0 for c in codes) and bool(same["same"]) and ran.get("full") is None
        ok = ok and good
        ratio = inc_wall / cov_wall
        ratios.append(ratio)
        rows.append(
            f"| {file}::{qualname} | {cov_wall:.1f} ({cov_cpu:.1f}) | {inc_wall:.2f} ({inc_cpu:.2f}) "
            f"| {ratio:.3f} | "
            f"{ran.get('ran')} of {int(str(ran.get('ran') or 0)) + int(str(ran.get('kept') or 0))} | "
            f"{'same' if same['same'] else 'DIFFER ' + str(same.get('differ'))} ({same['quests']} quests) |"
            + ("" if good else f" exits {codes} {ran.get('full') or ''}")
        )
        if not good:
            log(inc_text[-2000:])
    median = statistics.median(ratios)
    verdict = FAILED if not ok else ("MET" if median <= 0.07 else "MISSED")
    lines += [
        "",
        "| change | pytest --cov --cov-branch s (CPU) | incremental check s (CPU) | ratio | tests run "
        "| facts vs --quest-full scan |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"incremental check <= 0.07x pytest-cov (median of {len(ratios)}): {median:.3f}x {verdict}",
    ]
    return lines, ok


def chained_rows(
    py: str,
    project: Path,
    records: Path,
    base: list[str],
    quest: list[str],
    env: dict[str, str],
    lines: list[str],
) -> tuple[list[str], bool]:
    """The changes one after the other, each check on the record the last one wrote.

    Two full runs in all (the facts' ``--quest-full`` scan after the last
    change, and pytest-cov), where the per-change order needs two per change:
    for a machine too loaded for more.  Rows are printed as they come.
    """
    shutil.copy(records / "base.gz", records / "check.gz")
    ok = True
    checks: list[tuple[str, float, float, dict[str, object]]] = []
    for number, (file, qualname) in enumerate(CHANGES, 1):
        touch_function(project / file, qualname)
        shutil.copy(records / "check.gz", records / "scan.gz")  # the record before this change
        log(f"dateutil: change {number}, {file}::{qualname}")
        wall, code, text = run(
            [
                *quest,
                "--quest",
                "check",
                "--quest-format",
                "json",
                f"--quest-file={records / 'quest.json'}",
                f"--quest-run-data={records / 'check.gz'}",
            ],
            project,
            env,
        )
        ran = _run_data(text)
        ok = ok and code == 0 and ran.get("full") is None
        if code != 0 or ran.get("full") is not None:
            log(text[-2000:])
        checks.append((f"{file}::{qualname}", wall, CPU[-1], ran))
        print(
            f"change {number} {file}::{qualname}: incremental check {wall:.2f} s (CPU {CPU[-1]:.2f} s), "
            f"exit {code}, ran {ran.get('ran')}, kept {ran.get('kept')}",
            flush=True,
        )
    log("dateutil: facts, an incremental scan and a --quest-full scan of the last tree")
    _, scan_code, _ = run(
        [
            *quest,
            "--quest",
            "scan",
            f"--quest-file={records / 'incr.json'}",
            f"--quest-run-data={records / 'scan.gz'}",
        ],
        project,
        env,
    )
    full_wall, full_code, _ = run(
        [
            *quest,
            "--quest",
            "scan",
            "--quest-full",
            f"--quest-file={records / 'full.json'}",
            f"--quest-run-data={records / 'full.gz'}",
        ],
        project,
        env,
    )
    full_cpu = CPU[-1]
    compared = subprocess.run(
        [py, "-c", COMPARE, str(records / "incr.json"), str(records / "full.json")],
        capture_output=True,
        text=True,
    )
    same = json.loads(compared.stdout) if compared.returncode == 0 else {"same": False, "quests": 0}
    print(
        f"facts: incremental scan (exit {scan_code}) and --quest-full scan (exit {full_code}, "
        f"{full_wall:.1f} s, CPU {full_cpu:.1f} s): {'same' if same['same'] else 'DIFFER'} "
        f"({same['quests']} quests)",
        flush=True,
    )
    ok = ok and scan_code == 0 and full_code == 0 and bool(same["same"])
    log("dateutil: pytest --cov --cov-branch")
    cov_wall, cov_code, _ = run([*base, "--cov=src/dateutil", "--cov-branch"], project, env)
    cov_cpu = CPU[-1]
    ok = ok and cov_code == 0
    rows = [
        f"| {name} | {wall:.2f} ({cpu:.2f}) | {wall / cov_wall:.3f} | {cpu / cov_cpu:.3f} | "
        f"{ran.get('ran')} of {int(str(ran.get('ran') or 0)) + int(str(ran.get('kept') or 0))} |"
        for name, wall, cpu, ran in checks
    ]
    median = statistics.median(wall / cov_wall for _, wall, _, _ in checks)
    median_cpu = statistics.median(cpu / cov_cpu for _, _, cpu, _ in checks)
    verdict = FAILED if not ok else ("MET" if median <= 0.07 else "MISSED")
    return [
        *lines,
        f"pytest --cov --cov-branch: {cov_wall:.1f} s (CPU {cov_cpu:.1f} s), exit {cov_code}",
        f"facts after the last change, incremental scan vs --quest-full scan: "
        f"{'same' if same['same'] else 'DIFFER ' + str(same.get('differ'))} ({same['quests']} quests)",
        "",
        "| change | incremental check s (CPU) | ratio to pytest-cov wall | ratio CPU | tests run |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"incremental check <= 0.07x pytest-cov (median of {len(checks)}, wall): {median:.3f}x "
        f"{verdict} (CPU: {median_cpu:.3f}x)",
    ], ok


def _run_data(text: str) -> dict[str, object]:
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return {}
    run = data.get("run") if isinstance(data, dict) else None
    return run if isinstance(run, dict) else {}


def small_rows(py: str, work: Path, rounds: int) -> tuple[list[str], bool]:
    sys.path.insert(0, str(HERE))
    from synth import generate

    project = work / "synth-small"
    if project.exists():
        shutil.rmtree(project)
    counts = generate(project, functions=40, tests=100)
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests\nquest_source = synthpkg\n")
    env = child_env({})
    base = [py, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    cov: list[float] = []
    scan: list[float] = []
    cov_cpu: list[float] = []
    scan_cpu: list[float] = []
    codes = []
    run([*base], project, env)  # bytecode written once, for both
    for _ in range(rounds):
        wall, code, _ = run([*base, "--cov=synthpkg", "--cov-branch"], project, env)
        cov.append(wall)
        cov_cpu.append(CPU[-1])
        codes.append(code)
        wall, code, text = run([*base, "--quest", "scan", "--quest-full"], project, env)
        scan.append(wall)
        scan_cpu.append(CPU[-1])
        codes.append(code)
        if code != 0:
            log(text[-2000:])
    ratio = statistics.median(scan) / statistics.median(cov)
    ok = all(code == 0 for code in codes)
    verdict = FAILED if not ok else ("MET" if ratio <= 1.1 else "MISSED")
    return [
        f"small suite (synth.py: {counts.get('tests', 100)} tests), median of {rounds}: "
        f"pytest --cov --cov-branch {statistics.median(cov):.2f} s, "
        f"pytest --quest scan --quest-full {statistics.median(scan):.2f} s "
        f"(CPU {statistics.median(cov_cpu):.2f} s and {statistics.median(scan_cpu):.2f} s: "
        f"{statistics.median(scan_cpu) / statistics.median(cov_cpu):.2f}x)",
        f"small scan <= 1.1x pytest-cov (wall): {ratio:.2f}x {verdict}",
    ], ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--dateutil", type=Path, help="the unpacked python-dateutil sdist")
    parser.add_argument("--work", type=Path, default=Path("/tmp/incr/work"))
    parser.add_argument("--rounds", type=int, default=3, help="small-suite rounds")
    parser.add_argument("--skip-small", action="store_true")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="start from the recorded full scan an earlier run left under --work",
    )
    parser.add_argument(
        "--chained",
        action="store_true",
        help="changes one after another, two full runs in all (a loaded machine)",
    )
    parser.add_argument(
        "--cov-runs",
        type=int,
        default=3,
        help="changes timed with their own pytest-cov run (the others reuse the last)",
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lines = [f"Python {version}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"]
    ok = True
    if args.dateutil is not None:
        found, good = dateutil_rows(
            args.python,
            args.dateutil,
            args.work,
            reuse=args.reuse,
            cov_runs=args.cov_runs,
            chained=args.chained,
        )
        lines += ["", *found]
        ok = ok and good
    if not args.skip_small:
        found, good = small_rows(args.python, args.work, args.rounds)
        lines += ["", *found]
        ok = ok and good
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
