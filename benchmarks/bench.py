"""pytest-quest performance benchmark: run by hand, never in the test suite.

    python benchmarks/bench.py                       # both suites, 3 rounds, this Python
    python benchmarks/bench.py --python /root/.pyenv/versions/3.12.1/bin/python
    python benchmarks/bench.py --suites synth --repeats 1 --quick   # a quick look

For the Python given (default: the one running this script) it makes a venv
under ``benchmarks/_work/venv-<version>`` with this checkout (editable),
pytest-cov and the real suite's needs; it generates the synthetic project
(``synth.py``: 2,000 functions, 5,000 tests) and fetches a real suite from
the package registry as an sdist (Python-Markdown: 1,010 tests).  Each
configuration runs once per round, rounds alternate the configurations, and
the table gives medians, with ratios to pytest-cov (``--cov --cov-branch``,
its default terminal report) measured side by side in the same rounds.
Wall time is the target's measure; CPU time (user + system of the child and
its children) is printed beside it because the machine is shared.  A target
resting on a run that did not complete (an exit status other than 0, or 1
for a submit judged FAIL) says FAILED RUN instead of MET or MISSED, and the
script then exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work"
SUITES = WORK
PINS = ["pytest==9.2.0", "coverage==7.17.5", "pytest-cov==7.1.0", "pytest-xdist==3.8.0"]
REAL: dict[str, dict[str, Any]] = {
    "markdown": {
        "requirement": "markdown==3.8",
        "folder": "markdown-3.8",
        "source": "markdown",
        "needs": ["pyyaml"],
        # test_legacy.py sets warnings.simplefilter("error") at import, which
        # turns a collection warning of another module into an error.
        "ini": "[pytest]\ntestpaths = tests\nquest_source = markdown\n"
        "addopts = --ignore=tests/test_legacy.py\n",
    },
}


#: What a target says when a run it rests on did not complete: its figures say nothing.
FAILED = "FAILED RUN"


@dataclass
class Sample:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    #: The exit statuses of a run that did what it was timed for: 0, and for a
    #: submit judged FAIL, 1 (README: a verdict, not an error).
    ok: frozenset[int] = frozenset({0})


def failed_runs(*samples: Sample) -> str:
    """The exit statuses of the runs among `samples` that did not complete (empty: none)."""
    bad = sorted({code for s in samples for code in s.codes if code not in s.ok})
    return ",".join(str(code) for code in bad)


def verdict(value: float, limit: float, *samples: Sample) -> str:
    """MET or MISSED for `value` against `limit`; FAILED RUN when a run it rests on failed."""
    bad = failed_runs(*samples)
    if bad:
        return f"{FAILED} (exit {bad}): not judged"
    return "MET" if value <= limit else "MISSED"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(
    command: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, int, int, str]:
    """Run `command`; wall seconds, CPU seconds and max RSS (KB) of the child, exit code, output."""
    started = time.perf_counter()
    out_path = SUITES / "last-output.txt"
    with open(out_path, "wb") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    text = out_path.read_text(errors="replace")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, process.returncode, text


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Users' Pythons write bytecode; a benchmark without it times the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name in ("COVERAGE_CORE", "COVERAGE_PROCESS_START", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    return env


# -- setup -----------------------------------------------------------------------------


def make_venv(python: str) -> Path:
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    global SUITES
    # Suites are per Python: two runs (3.11 and 3.12) may go on side by side.
    SUITES = WORK / f"suites-{version}"
    SUITES.mkdir(parents=True, exist_ok=True)
    venv = WORK / f"venv-{version}"
    py = venv / "bin" / "python"
    if not py.exists():
        log(f"creating {venv}")
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "-e", str(ROOT), *PINS, "pyyaml"], check=True
        )
    return py


def prepare_synth(functions: int, tests: int) -> Path:
    sys.path.insert(0, str(HERE))
    from synth import generate

    folder = SUITES / f"synth-{functions}-{tests}"
    if not (folder / "tests").exists():
        log(f"generating {folder}")
        generate(folder, functions=functions, tests=tests)
    return folder


def prepare_real(name: str, py: Path) -> Path:
    spec = REAL[name]
    downloads = WORK / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    folder: Path = SUITES / spec["folder"]
    if not folder.exists():
        log(f"fetching the sdist of {spec['requirement']}")
        subprocess.run(
            [
                str(py),
                "-m",
                "pip",
                "download",
                "-q",
                "--no-binary",
                ":all:",
                "--no-deps",
                spec["requirement"],
                "-d",
                str(downloads),
            ],
            check=True,
        )
        archive = next(
            p for p in downloads.iterdir() if p.name.lower().startswith(spec["folder"].lower())
        )
        with tarfile.open(archive) as tar:
            tar.extractall(SUITES, filter="data")
        (folder / "pytest.ini").write_text(spec["ini"])
    probe = subprocess.run(
        [str(py), "-c", f"import {spec['source']} as m, yaml; print(m.__file__)"],
        check=False,
        capture_output=True,
        text=True,
        cwd="/",
    )
    if probe.returncode != 0 or str(folder) not in probe.stdout:
        # Installed (editable) so its entry points (the extensions) are registered.
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", str(folder)], check=True
        )
        subprocess.run([str(py), "-m", "pip", "install", "-q", *spec["needs"]], check=True)
    return folder


def big_ratchet(py: Path, folder: Path, count: int) -> Path:
    """A ratchet file of `count` quests (a mix of states) in an otherwise empty project."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    path = folder / "quest.json"
    if path.exists():
        return path
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from pytest_quest.core.model import Quest, Ratchet, State, Fact
        from pytest_quest.engine.store import RatchetStore
        quests = {{}}
        for n in range({count}):
            file = "src/pkg/mod%03d.py" % (n // 50)
            qid = "%s::Class%d.method%d" % (file, n // 10, n)
            state = [State.TODO, State.PASS, State.PASS, State.DONE, State.REVIEW][n % 5]
            passed = state is State.PASS
            quests[qid] = Quest(
                id=qid, file=file, qualname="Class%d.method%d" % (n // 10, n),
                first=10 + n % 50 * 20, last=25 + n % 50 * 20,
                fingerprint="sha256:%032x" % n, state=state, tries=0 if passed else n % 3,
                statements=12, branches=4,
                missing_lines=[] if passed else [12 + n % 50 * 20, 14 + n % 50 * 20],
                missing_branches=[] if passed else [(11 + n % 50 * 20, 13 + n % 50 * 20)],
                covering_tests=["tests/test_mod%03d.py::test_case_%d" % (n // 50, k) for k in range(3)],
                facts=[] if passed else [Fact(check="coverage.line", field="%s:%d" % (file, 12 + n % 50 * 20),
                       expected="executed by a passing test", actual="never executed")],
                issued_at="2026-01-01T00:00:00Z", passed_at="2026-01-02T00:00:00Z" if passed else "",
                baseline=False,
            )
        ratchet = Ratchet(quests=quests, scanned_at="2026-01-01T00:00:00Z")
        RatchetStore(Path({str(path)!r})).update(lambda r: r.quests.update(ratchet.quests))
        """
    )
    subprocess.run([str(py), "-c", script], check=True, cwd=folder)
    return path


def store_timing(py: Path, path: Path, rounds: int) -> dict[str, float]:
    script = textwrap.dedent(
        f"""
        import json, statistics, time
        from pathlib import Path
        from pytest_quest.engine.store import RatchetStore
        store = RatchetStore(Path({str(path)!r}))
        ids = sorted(store.load().quests)[:2]
        loads, updates = [], []
        for n in range({rounds}):
            t = time.perf_counter(); store.load(); loads.append(time.perf_counter() - t)
            def change(r, n=n):
                r.active = ids[n % 2]
            t = time.perf_counter(); store.update(change); updates.append(time.perf_counter() - t)
        print(json.dumps({{"load_ms": statistics.median(loads) * 1000,
                           "update_ms": statistics.median(updates) * 1000}}))
        """
    )
    out = subprocess.run(
        [str(py), "-c", script], check=True, capture_output=True, text=True, env=child_env()
    )
    timings: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return timings


def describe(py: Path) -> str:
    script = textwrap.dedent(
        """
        import sys, tempfile, os, platform
        import coverage, pytest
        from pathlib import Path
        from pytest_quest.engine.measure import Measurer
        d = tempfile.mkdtemp()
        m = Measurer(Path(d), [d], os.path.join(d, ".coverage"))
        m.start(); m.stop()
        quest_core = m.cov._collector.tracer_name()
        c = coverage.Coverage(branch=True, data_file=None)
        c.start(); c.stop()
        print(f"Python {platform.python_version()}, pytest {pytest.__version__}, coverage {coverage.__version__}; "
              f"core: pytest-cov --cov-branch {c._collector.tracer_name()}, pytest-quest {quest_core}"
              f" (harvest: {'on' if getattr(m, '_harvest', None) is not None else 'off'})")
        """
    )
    out = subprocess.run(
        [str(py), "-c", script], check=False, capture_output=True, text=True, cwd="/tmp"
    )
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


# -- the suites ------------------------------------------------------------------------


def has_option(py: Path, folder: Path, option: str) -> bool:
    out = subprocess.run(
        [str(py), "-m", "pytest", "--help"], check=False, capture_output=True, text=True, cwd=folder
    )
    return option in out.stdout


def suite_configs(py: Path, folder: Path, source: str) -> list[tuple[str, list[str]]]:
    pytest = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    configs = [
        ("pytest (no coverage)", pytest),
        ("pytest --cov --cov-branch", [*pytest, f"--cov={source}", "--cov-branch"]),
        (
            "pytest-cov --cov-context=test",
            [*pytest, f"--cov={source}", "--cov-branch", "--cov-context=test"],
        ),
        ("--quest scan", [*pytest, "--quest", "scan", "--quest-file", "bench-scan.json"]),
        ("--quest check", [*pytest, "--quest", "check", "--quest-file", "bench-base.json"]),
    ]
    return configs


def prepare_submit(py: Path, folder: Path, source: str) -> tuple[str, list[str]] | None:
    """A TODO quest, a new test file that calls it, and a saved ratchet to restore per run."""
    base = folder / "bench-base.json"
    out = subprocess.run(
        [
            str(py),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--quest-status",
            "--quest-format",
            "json",
            "--quest-file",
            str(base),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=folder,
        env=child_env(),
    )
    data = json.loads(out.stdout)
    todo = [q for q in data["quests"] if q["state"] == "TODO" and q["covering_tests"]]
    if not todo:
        return None
    quest = todo[len(todo) // 2]
    module = quest["file"][:-3].replace("/", ".")
    module = module.removesuffix(".__init__")
    text = (
        f"import {module} as target\n\n\ndef test_added_by_benchmark():\n"
        f"    assert target is not None\n"
    )
    return quest["id"], [text]


def measure_suite(
    name: str, py: Path, folder: Path, source: str, repeats: int, mutants: bool
) -> list[tuple[str, Sample]]:
    env = child_env()
    pytest = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    base = folder / "bench-base.json"
    new_test = folder / "tests" / "test_bench_submit_new.py"
    if new_test.exists():
        new_test.unlink()
    if not base.exists():
        log(f"[{name}] baseline scan")
        _, _, _, code, text = run(
            [*pytest, "--quest", "scan", "--quest-file", str(base)], folder, env
        )
        if code != 0:
            raise SystemExit(f"baseline scan of {name} failed:\n{text[-3000:]}")
    configs = suite_configs(py, folder, source)
    submit = prepare_submit(py, folder, source)
    saved = base.read_bytes()
    submit_file = folder / "bench-submit.json"
    if submit is not None:
        qid = submit[0]
        mutant_flags = [["--quest-mutants", "off"]]
        if mutants:
            mutant_flags.append(["--quest-mutants", "on"])
        for flags in mutant_flags:
            configs.append(
                (
                    f"--quest submit (1 quest + new test file) mutants {flags[1]}",
                    [
                        *pytest,
                        "--quest",
                        "submit",
                        "--quest-id",
                        qid,
                        "--quest-file",
                        str(submit_file),
                        *flags,
                    ],
                )
            )
    # A submit judged FAIL (the benchmark's new test covers little) exits 1: a verdict.
    samples = {
        label: Sample(ok=frozenset({0, 1}) if "submit" in label else frozenset({0}))
        for label, _ in configs
    }
    for round_number in range(repeats):
        for label, command in configs:
            if "scan" in label:
                (folder / "bench-scan.json").unlink(missing_ok=True)
            if "submit" in label:
                # Every submit starts from the same ratchet, with a test file new since the scan.
                submit_file.write_bytes(saved)
                assert submit is not None  # a submit label is added only with one
                new_test.write_text(submit[1][0])
            wall, cpu, rss, code, text = run(command, folder, env)
            if new_test.exists():
                new_test.unlink()
            sample = samples[label]
            sample.wall.append(wall)
            sample.cpu.append(cpu)
            sample.rss_kb.append(rss)
            sample.codes.append(code)
            log(
                f"[{name} round {round_number + 1}/{repeats}] {label}: {wall:.2f}s wall, {cpu:.2f}s cpu, "
                f"{rss / 1024:.0f} MB, exit {code}"
            )
            if code not in sample.ok:
                log(text[-2000:])
    if new_test.exists():
        new_test.unlink()
    return [(label, samples[label]) for label, _ in configs]


GRID_TEST = """\
import synthpkg.{module} as m

CASES = {cases!r}


def test_grid_added_by_benchmark():
    for a, b, expected in CASES:
        assert m.{name}(a, b) == expected
"""


def mutant_rows(py: Path, folder: Path, repeats: int) -> tuple[list[tuple[str, Sample]], list[str]]:
    """Gate step 4: a submission that passes steps 1-3, judged with mutants off and on.

    The submission is a new test file asserting a grid of exact results of a
    TODO function of the synthetic project; the first candidate whose submit
    PASSes with mutants off is used.  The ratchet is restored before each run.
    """
    env = child_env()
    pytest = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    base = folder / "bench-base.json"
    saved = base.read_bytes()
    submit_file = folder / "bench-mutants.json"
    new_test = folder / "tests" / "test_bench_mutants_new.py"
    status = subprocess.run(
        [*pytest, "--quest-status", "--quest-format", "json", "--quest-file", str(base)],
        check=True,
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
    )
    todo = [
        q
        for q in json.loads(status.stdout)["quests"]
        if q["state"] == "TODO"
        and q["qualname"].startswith("f")
        and "." not in q["qualname"]
        and q["covering_tests"]
    ]
    chosen = None
    for quest in todo[:10]:
        module = Path(quest["file"]).stem
        grid = [(a, b) for a in range(-40, 41, 3) for b in range(-12, 13, 2)]
        script = (
            f"import json, synthpkg.{module} as m\n"
            f"print(json.dumps([(a, b, m.{quest['qualname']}(a, b)) for a, b in {grid!r}]))"
        )
        values = subprocess.run(
            [str(py), "-c", script], check=True, capture_output=True, text=True, cwd=folder
        ).stdout
        cases = [tuple(case) for case in json.loads(values)]
        new_test.write_text(GRID_TEST.format(module=module, name=quest["qualname"], cases=cases))
        submit_file.write_bytes(saved)
        out = subprocess.run(
            [
                *pytest,
                "--quest",
                "submit",
                "--quest-id",
                quest["id"],
                "--quest-file",
                str(submit_file),
                "--quest-mutants",
                "off",
                "--quest-format",
                "json",
            ],
            check=False,
            capture_output=True,
            text=True,
            cwd=folder,
            env=env,
        )
        if json.loads(out.stdout).get("verdict") == "PASS":
            chosen = quest
            break
    if chosen is None:
        new_test.unlink(missing_ok=True)
        return [], ["- mutants: no candidate submission passed steps 1-3; step 4 not measured"]
    configs = [
        (
            f"submit {chosen['id']} PASS, mutants {flag}",
            [
                *pytest,
                "--quest",
                "submit",
                "--quest-id",
                chosen["id"],
                "--quest-file",
                str(submit_file),
                "--quest-mutants",
                flag,
            ],
        )
        for flag in ("off", "on")
    ]
    samples = {label: Sample() for label, _ in configs}
    seconds: dict[str, list[float]] = {"last_run_seconds": [], "mutation_seconds": []}
    for round_number in range(max(repeats, 3)):
        for label, command in configs:
            submit_file.write_bytes(saved)
            wall, cpu, rss, code, _ = run(command, folder, env)
            s = samples[label]
            s.wall.append(wall)
            s.cpu.append(cpu)
            s.rss_kb.append(rss)
            s.codes.append(code)
            log(
                f"[mutants round {round_number + 1}] {label}: {wall:.2f}s wall, {cpu:.2f}s cpu, exit {code}"
            )
            extra = json.loads(submit_file.read_text())["quests"][chosen["id"]].get("extra", {})
            if label.endswith(" on"):
                for key, times in seconds.items():
                    if key in extra:
                        times.append(float(extra[key]))
    new_test.unlink(missing_ok=True)
    med = statistics.median
    notes = []
    if seconds["mutation_seconds"] and seconds["last_run_seconds"]:
        notes.append(
            f"- mutants: step 4 child {med(seconds['mutation_seconds']):.2f} s wall vs the "
            f"selection's own measured run {med(seconds['last_run_seconds']):.2f} s (medians, "
            "from the ratchet's extra fields)"
        )
    on, off = samples[configs[1][0]], samples[configs[0][0]]
    bad = failed_runs(on, off)
    notes.append(
        f"- mutants: submit with mutants on - off: {FAILED} (exit {bad}): not measured"
        if bad
        else f"- mutants: submit with mutants on - off: {med(on.wall) - med(off.wall):.2f} s wall, "
        f"{med(on.cpu) - med(off.cpu):.2f} s CPU"
    )
    return [(label, samples[label]) for label, _ in configs], notes


def status_rows(py: Path, repeats: int, count: int) -> list[tuple[str, Sample]]:
    folder = SUITES / f"status-{count}"
    big_ratchet(py, folder, count)
    env = child_env()
    pytest = [str(py), "-m", "pytest", "-p", "no:cacheprovider"]
    configs = [
        ("pytest --version", [*pytest, "--version"]),
        (f"--quest-status ({count} quests)", [*pytest, "--quest-status"]),
        (
            f"--quest-status --quest-format json ({count} quests)",
            [*pytest, "--quest-status", "--quest-format", "json"],
        ),
    ]
    samples = {label: Sample() for label, _ in configs}
    for _ in range(max(repeats, 5)):
        for label, command in configs:
            wall, cpu, rss, code, text = run(command, folder, env)
            if code != 0:
                log(text[-2000:])
            s = samples[label]
            s.wall.append(wall)
            s.cpu.append(cpu)
            s.rss_kb.append(rss)
            s.codes.append(code)
    return [(label, samples[label]) for label, _ in configs]


# -- the table -------------------------------------------------------------------------


def table(title: str, rows: list[tuple[str, Sample]], baseline: str) -> list[str]:
    base = dict(rows)[baseline]
    base_wall = statistics.median(base.wall)
    base_cpu = statistics.median(base.cpu)
    base_rss = statistics.median(base.rss_kb)
    lines = [
        f"### {title}",
        "",
        f"| command | wall s (median) | x {baseline} | CPU s (median) | x | max RSS MB | x | runs | exit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, s in rows:
        wall = statistics.median(s.wall)
        cpu = statistics.median(s.cpu)
        rss = statistics.median(s.rss_kb)
        codes = ",".join(sorted({str(c) for c in s.codes}))
        lines.append(
            f"| {label} | {wall:.2f} | {wall / base_wall:.2f} | {cpu:.2f} | {cpu / base_cpu:.2f} | "
            f"{rss / 1024:.0f} | {rss / base_rss:.2f} | {len(s.wall)} | {codes} |"
        )
    return [*lines, ""]


def verdicts(suite: str, rows: list[tuple[str, Sample]]) -> list[str]:
    data = {label: s for label, s in rows}
    cov = data["pytest --cov --cov-branch"]
    med = statistics.median
    out = []

    def line(target: str, value: float, limit: float, what: str, *samples: Sample) -> None:
        out.append(
            f"- {suite}: {target}: {value:.2f} (target <= {limit}) "
            f"{verdict(value, limit, cov, *samples)} [{what}]"
        )

    for label in ("--quest scan", "--quest check"):
        s = data[label]
        line(f"{label} wall / pytest-cov", med(s.wall) / med(cov.wall), 1.10, "wall", s)
        line(f"{label} CPU / pytest-cov", med(s.cpu) / med(cov.cpu), 1.10, "cpu", s)
    scan = data["--quest scan"]
    line("scan peak RSS / pytest-cov", med(scan.rss_kb) / med(cov.rss_kb), 1.2, "memory", scan)
    for label, s in rows:
        if label.startswith("--quest submit") and label.endswith("off"):
            line("submit wall / full pytest-cov run", med(s.wall) / med(cov.wall), 0.10, "wall", s)
    on = [s for label, s in rows if label.startswith("--quest submit") and label.endswith(" on")]
    off = [s for label, s in rows if label.startswith("--quest submit") and label.endswith("off")]
    if on and off:
        bad = failed_runs(on[0], off[0])
        out.append(
            f"- {suite}: submit mutants on - off: {FAILED} (exit {bad}): not measured"
            if bad
            else f"- {suite}: submit mutants on - off: {med(on[0].wall) - med(off[0].wall):.2f} s wall"
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--python", default=sys.executable, help="the Python to benchmark (a venv is made for it)"
    )
    parser.add_argument(
        "--suites",
        default="synth,markdown",
        help="comma list: synth, markdown, mutants (after synth), shards, status",
    )
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds per suite")
    parser.add_argument("--functions", type=int, default=2000)
    parser.add_argument("--tests", type=int, default=5000)
    parser.add_argument("--status-quests", type=int, default=10000)
    parser.add_argument(
        "--no-mutants", action="store_true", help="skip submit with --quest-mutants on"
    )
    parser.add_argument("--out", help="also write the report (markdown) to this file")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    py = make_venv(args.python)
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    if "status" not in suites:
        suites.append("status")
    report = [
        f"command: python {' '.join(sys.argv)}",
        (
            f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"load average at start {os.getloadavg()[0]:.1f}"
        ),
        describe(py),
        "",
    ]
    targets: list[str] = []
    for suite in suites:
        if suite == "status":
            continue
        if suite == "mutants":
            folder = prepare_synth(args.functions, args.tests)
            if not (folder / "bench-base.json").exists():
                log("mutants: run the synth suite first (it makes the baseline ratchet)")
                continue
            rows, notes = mutant_rows(py, folder, args.repeats)
            if rows:
                report += table("gate step 4 on the synthetic project", rows, rows[0][0])
            targets += notes
            continue
        if suite == "shards":  # one scan against 3 jobs and their combine (shards.py)
            from shards import sharded_rows

            report += sharded_rows(py, SUITES, args.functions, args.tests, 3, args.repeats)
            continue
        if suite == "synth":
            folder, source = prepare_synth(args.functions, args.tests), "synthpkg"
            title = f"synthetic project ({args.functions} functions, {args.tests} tests)"
        else:
            folder, source = prepare_real(suite, py), REAL[suite]["source"]
            title = f"real suite: {REAL[suite]['requirement']} sdist"
        mutants = not args.no_mutants and has_option(py, folder, "--quest-mutants")
        rows = measure_suite(suite, py, folder, source, args.repeats, mutants)
        report += table(title, rows, "pytest --cov --cov-branch")
        targets += verdicts(suite, rows)
    rows = status_rows(py, args.repeats, args.status_quests)
    report += table(f"status on {args.status_quests} quests", rows, "pytest --version")
    med = statistics.median
    data = dict(rows)
    status = data[f"--quest-status ({args.status_quests} quests)"]
    version = data["pytest --version"]
    ratio = med(status.wall) / med(version.wall)
    targets.append(
        f"- status wall / pytest --version: {ratio:.2f} (target <= 1.3) "
        f"{verdict(ratio, 1.3, status, version)}"
    )
    timing = store_timing(py, SUITES / f"status-{args.status_quests}" / "quest.json", 7)
    report.append(
        f"RatchetStore on {args.status_quests} quests: load {timing['load_ms']:.0f} ms, "
        f"update (lock + load + change + write) {timing['update_ms']:.0f} ms (medians of 7)"
    )
    targets.append(
        f"- ratchet load+save ({args.status_quests} quests): {timing['update_ms']:.0f} ms (target <= 100) "
        f"{'MET' if timing['update_ms'] <= 100 else 'MISSED'}"
    )
    report += ["", "targets:", *targets]
    failed = [target for target in targets if FAILED in target]
    if failed:
        report += ["", f"{FAILED}: {len(failed)} target(s) rest on runs that did not complete"]
    text = "\n".join(report)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
