"""How the ratchet file's size costs the commands that only read it: run by hand.

    python benchmarks/ratchet_scale.py                          # 1k, 10k, 50k quests, 3 rounds
    python benchmarks/ratchet_scale.py --sizes 1000,10000 --repeats 5
    python benchmarks/ratchet_scale.py --record                 # also append to results.md
    python benchmarks/ratchet_scale.py --against OLD/bin/python  # two checkouts side by side

For each size it builds, in a temporary folder, an otherwise empty project
whose ``quest.json`` holds a synthetic ratchet of that many quests (written by
the checkout under test, so in its own format), then runs in rounds, each
configuration once per round and side by side: ``pytest --version`` (the
floor: an interpreter and pytest with the plugin), ``pytest --quest-status``
(text and JSON), ``pytest --quest next`` (the active quest unchanged: nothing
to write) and ``pytest --quest next --quest-id X`` (alternating between two
quests, so every run changes the active pointer and writes); then status and
that `next` once more with the view of the file removed first (engine/view_cache.py:
the first command after an outside change of the file reads it whole).  In a child
process it times `RatchetStore.load`, `codec.dumps` and a no-op
`RatchetStore.update` (lock, re-read, nothing changed).  Medians of wall
time, CPU time (user + system of the child, from ``os.wait4``) and peak RSS,
each with its ratio to ``pytest --version`` of the same rounds.

``--python`` picks the interpreter under test (default: the one running
this script); it must have this checkout installed (editable).  A
development venv also loads hypothesis', xdist's, pytest-cov's and anyio's
plugins into every command; a user's venv has pytest-quest and its
dependencies only (``python3 -m venv V && V/bin/pip install -e .``): the
report names the plugins pytest loaded, and both floors (``--version``,
which pytest 9 answers before loading any plugin, and ``-VV``, which loads
them all) stand beside every command.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.md"

FLOOR = "pytest --collect-only -q (no tests: a session)"
COLD_STATUS = "pytest --quest-status (first after an outside change: no view kept)"
COLD_NEXT = "pytest --quest next --quest-id X (writes; no view kept)"

#: Where the checkout under test keeps the view of a ratchet file (argv: its path).
VIEW_PATH = (
    "import sys; from pathlib import Path; from pytest_quest.engine import view_cache; "
    "from pytest_quest.engine.store import RatchetStore; "
    "print(view_cache.path_for(RatchetStore(Path(sys.argv[1])).journal_path))"
)
PLUGINS_FLOOR = "pytest -VV (every plugin loaded, no session)"

#: Builds the synthetic ratchet with the checkout under test (argv: path, count).
BUILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pytest_quest.core.gate import coverage_facts
    from pytest_quest.core.model import Event, FunctionFacts, Quest, Ratchet, State
    from pytest_quest.engine import codec

    path, count = Path(sys.argv[1]), int(sys.argv[2])
    states = [State.PASS] * 4 + [State.TODO] * 4 + [State.REVIEW, State.DONE]
    quests = {}
    for n in range(count):
        module = n // 40
        file = "src/pkg/sub%02d/mod%04d.py" % (module % 17, module)
        qualname = "Class%d.method_%d" % (n // 8, n)
        first = 10 + (n % 40) * 25
        state = states[n % len(states)]
        passed = state is State.PASS
        missing = [] if passed else [first + 2, first + 3, first + 7]
        arcs = [] if passed else [(first + 1, first + 2), (first + 6, -first)]
        # ~8 covering tests per quest, from its module's test file (a pool of 60).
        tests = [
            "tests/sub%02d/test_mod%04d.py::TestClass%d::test_case_%d[param-%d]"
            % (module % 17, module, (n + k) % 6, (n * 7 + k) % 60, k)
            for k in range(8)
        ]
        facts = FunctionFacts(
            file=file, qualname=qualname, ordinal=1, start=first, first=first,
            last=first + 20, fingerprint="sha256:%064x" % n, statements=14, branches=6,
            missing_lines=missing, missing_branches=arcs, covering_tests=tests,
        )
        history = [] if state is State.TODO else [
            Event(at="2026-01-02T00:00:00Z", action="submit", verdict=state.value, by="bench")
        ]
        quest = Quest(
            id=facts.quest_id, file=file, qualname=qualname, first=first, last=first + 20,
            fingerprint=facts.fingerprint, state=state, tries=0 if passed else n % 3,
            statements=14, branches=6, missing_lines=missing, missing_branches=arcs,
            excluded_lines=[first + 19] if n % 9 == 0 else [], covering_tests=tests,
            facts=[] if passed else coverage_facts(facts),
            issued_at="2026-01-01T00:00:00Z",
            passed_at="2026-01-02T00:00:00Z" if passed else "",
            baseline=passed and n % 3 == 0, history=history,
            issued_seal="sha256:%064x" % (n + 1), last_run_seconds=None if passed else 0.25,
        )
        quests[quest.id] = quest
    ratchet = Ratchet(quests=quests, scanned_at="2026-01-01T00:00:00Z")
    todo = sorted(q.id for q in quests.values() if q.state is State.TODO)
    ratchet.active = todo[0]
    path.write_text(codec.dumps(ratchet), encoding="utf-8")
    print(todo[0]); print(todo[1])
    """
)

#: Times the store in process (argv: path, rounds); prints one JSON object.
IN_PROCESS = textwrap.dedent(
    """
    import json, statistics, sys, time
    from pathlib import Path
    from pytest_quest.engine import codec
    from pytest_quest.engine.store import RatchetStore

    path, rounds = Path(sys.argv[1]), int(sys.argv[2])
    store = RatchetStore(path, lock_timeout=60)
    times = {k: [] for k in ("load", "dumps", "noop_update")}
    cpu = {k: [] for k in times}

    def timed(name, action):
        t, c = time.perf_counter(), time.process_time()
        result = action()
        times[name].append(time.perf_counter() - t)
        cpu[name].append(time.process_time() - c)
        return result

    for _ in range(rounds):
        ratchet = timed("load", store.load)
        timed("dumps", lambda: codec.dumps(ratchet))
        timed("noop_update", lambda: store.update(lambda r: None))
    out = {k: statistics.median(v) for k, v in times.items()}
    out.update({k + " cpu": statistics.median(v) for k, v in cpu.items()})
    print(json.dumps(out))
    """
)


#: The pytest11 entry points of the interpreter under test: the plugins every command loads.
PLUGINS = (
    "from importlib.metadata import entry_points\n"
    "print(', '.join(sorted(e.name for e in entry_points(group='pytest11'))) or 'none')"
)


def run(command: list[str], cwd: Path) -> tuple[float, float, int, int, str]:
    """Wall s, CPU s, peak RSS (KB), exit code and output of `command`."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTEST_ADDOPTS", None)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code, text


def measure(
    python: str, size: int, repeats: int, folder: Path
) -> tuple[list[str], dict[str, float]]:
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    path = folder / "quest.json"
    built = subprocess.run(
        [python, "-c", BUILD, str(path), str(size)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    first, second = built.stdout.split()
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider"]
    configs = [
        ("pytest --version", [*pytest, "--version"]),
        # pytest 9 answers a lone --version before loading any plugin; -VV loads them all
        # (this one included) and lists them: the floor under any plugin's command.
        (PLUGINS_FLOOR, [*pytest, "-VV"]),
        # A whole pytest session that collects nothing (exit 5): the floor under any command,
        # every installed plugin's session hooks included (Hypothesis imports itself at the end).
        (FLOOR, [*pytest, "--collect-only", "-q"]),
        ("pytest --quest-status", [*pytest, "--quest-status"]),
        # The first status after an outside change of the file (a `git pull`, a hand edit):
        # no view kept for its bytes, so the whole file is read (and the view kept).
        (COLD_STATUS, [*pytest, "--quest-status"]),
        (
            "pytest --quest-status --quest-format json",
            [*pytest, "--quest-status", "--quest-format", "json"],
        ),
        ("pytest --quest next (nothing to write)", [*pytest, "--quest", "next"]),
        ("pytest --quest next --quest-id X (writes)", None),
        (COLD_NEXT, None),
    ]
    view = subprocess.run(
        [python, "-c", VIEW_PATH, str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()
    # The file as pytest-quest leaves it after any write of its own: with its view kept (the
    # synthetic file was written directly, so one status reads it whole first).
    run([*pytest, "--quest-status"], folder)
    samples: dict[str, list[tuple[float, float, int, int]]] = {label: [] for label, _ in configs}
    switch = 0
    for _ in range(repeats):
        for label, command in configs:
            if label in (COLD_STATUS, COLD_NEXT):
                Path(view).unlink(missing_ok=True)
            if command is None:
                switch += 1
                target = second if switch % 2 else first
                command = [*pytest, "--quest", "next", "--quest-id", target]
            wall, cpu, rss, code, text = run(command, folder)
            if code != 0 and not (label == FLOOR and code == 5):
                print(f"{label} exited {code}:\n{text[-1500:]}", file=sys.stderr)
            samples[label].append((wall, cpu, rss, code))
        if switch % 2:  # leave the first quest active for the next round's plain `next`
            run([*pytest, "--quest", "next", "--quest-id", first], folder)
            switch += 1
    stats = subprocess.run(
        [python, "-c", IN_PROCESS, str(path), str(max(repeats, 3))],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    in_process = json.loads(stats.stdout.strip().splitlines()[-1])
    base_wall = statistics.median(s[0] for s in samples["pytest --version"])
    base_cpu = statistics.median(s[1] for s in samples["pytest --version"])
    size_mb = path.stat().st_size / 1e6
    line_count = path.read_bytes().count(b"\n")
    lines = [
        f"#### {size:,} quests (quest.json {size_mb:.1f} MB, {line_count:,} lines)",
        "",
        "| command | wall s | x --version | CPU s | x --version | peak RSS MB | exit |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    figures: dict[str, float] = {"size_mb": size_mb}
    for label, runs in samples.items():
        wall = statistics.median(s[0] for s in runs)
        cpu = statistics.median(s[1] for s in runs)
        peak_rss = statistics.median(s[2] for s in runs)
        codes = ",".join(sorted({str(s[3]) for s in runs}))
        figures[label] = wall
        figures[label + " cpu"] = cpu
        lines.append(
            f"| `{label}` | {wall:.2f} | {wall / base_wall:.2f} | {cpu:.2f} | "
            f"{cpu / base_cpu:.2f} | {peak_rss / 1024:.0f} | {codes} |"
        )
    lines += [
        "",
        f"In process (median of {max(repeats, 3)}, wall / CPU s): "
        f"load {in_process['load']:.3f} / {in_process['load cpu']:.3f}, "
        f"dumps {in_process['dumps']:.3f} / {in_process['dumps cpu']:.3f}, "
        f"no-op locked update {in_process['noop_update']:.3f} / "
        f"{in_process['noop_update cpu']:.3f}",
        "",
    ]
    figures.update(in_process)
    return lines, figures


def verdicts(results: dict[int, dict[str, float]]) -> list[str]:
    """The targets of issue 15 that this benchmark measures, MET or MISSED."""
    out = []

    def line(what: str, value: float, limit: float, unit: str = "x") -> None:
        met = "MET" if value <= limit else "MISSED"
        out.append(f"- {what}: {value:.2f}{unit} (target <= {limit:g}{unit}) {met}")

    for size, limit in ((10000, 2), (50000, 4)):
        if size in results:
            r = results[size]
            for kind in ("", " cpu"):
                line(
                    f"status on {size:,} / pytest --version{kind or ' wall'}",
                    r["pytest --quest-status" + kind] / r["pytest --version" + kind],
                    limit,
                )
            out.append(
                f"  (against `pytest -VV`, pytest with its plugins loaded: "
                f"{r['pytest --quest-status cpu'] / r[PLUGINS_FLOOR + ' cpu']:.2f}x CPU)"
            )
    if 50000 in results:
        r = results[50000]
        for kind in ("", " cpu"):
            line(
                f"next on 50,000 (writes){kind or ' wall'}",
                r["pytest --quest next --quest-id X (writes)" + kind],
                1,
                " s",
            )
        line("no-op locked update on 50,000 wall", r["noop_update"], 0.3, " s")
        line("no-op locked update on 50,000 cpu", r["noop_update cpu"], 0.3, " s")
    return out


def side_by_side(old: str, new: str, sizes: str, repeats: int) -> int:
    """`measure` for `old` and `new` in turns (old, new, new, old: drift in the load evens
    out), each size; the medians of both runs of each, and new / old."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"### {now}: {old} (old) against {new} (new), --repeats {repeats}, "
        f"load average at start {os.getloadavg()[0]:.1f}\n"
    )
    with tempfile.TemporaryDirectory(prefix="quest-scale-") as tmp:
        for size in (int(s) for s in sizes.split(",")):
            runs: dict[str, list[dict[str, float]]] = {old: [], new: []}
            for turn, python in enumerate((old, new, new, old)):
                print(f"measuring {size} quests with {python}...", file=sys.stderr, flush=True)
                runs[python].append(
                    measure(python, size, repeats, Path(tmp) / f"q{size}-{turn}")[1]
                )
            print(f"#### {size:,} quests\n")
            print("| figure | old | new | new / old |")
            print("|---|---:|---:|---:|")
            for label in runs[old][0]:
                if label == "size_mb":
                    continue
                before = statistics.median(r[label] for r in runs[old])
                after = statistics.median(r[label] for r in runs[new])
                unit = "CPU s" if label.endswith("cpu") else "wall s"
                print(
                    f"| `{label}` ({unit}) | {before:.3f} | {after:.3f} | "
                    f"{after / before if before else float('nan'):.2f} |"
                )
            print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--record", action="store_true", help=f"append the report to {RESULTS.name}"
    )
    parser.add_argument(
        "--against",
        help="another interpreter (another checkout installed): measured in the same run, "
        "alternating with --python size by size, and compared",
    )
    args = parser.parse_args()
    if os.sep in args.python:
        args.python = os.path.abspath(args.python)
    if args.against:
        return side_by_side(args.against, args.python, args.sizes, args.repeats)
    sizes = [int(s) for s in args.sizes.split(",")]
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    version = subprocess.run(
        [
            args.python,
            "-c",
            "import sys, pytest; print(sys.version.split()[0], pytest.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    plugins = subprocess.run(
        [args.python, "-c", PLUGINS],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = [
        f"### {now}, commit {commit}",
        "",
        f"`python benchmarks/ratchet_scale.py --sizes {args.sizes} --repeats {args.repeats}`; "
        f"Python {version[0]}, pytest {version[1]}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average at start {os.getloadavg()[0]:.1f}; plugins pytest loads: {plugins}",
        "",
    ]
    results = {}
    with tempfile.TemporaryDirectory(prefix="quest-scale-") as tmp:
        for size in sizes:
            print(f"measuring {size} quests...", file=sys.stderr, flush=True)
            lines, figures = measure(args.python, size, args.repeats, Path(tmp) / f"q{size}")
            report += lines
            results[size] = figures
    report += ["Targets (issue 15):", "", *verdicts(results), ""]
    text = "\n".join(report)
    print(text)
    if args.record:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
