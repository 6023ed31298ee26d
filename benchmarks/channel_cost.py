"""A whole honest submit, timed end to end: what a change to the children's channel costs a submit.

    PYTHONPATH=CHECKOUT python benchmarks/channel_cost.py PYTHON N

It does not time the channel alone: it times N submits of one honest test
(scan once, then each submit judged PASS from the same ratchet file) and
prints their median and minimum wall time and the mutation child's median
(`extra.mutation_seconds`).  The channel's cost is the difference between
two runs of this script, PYTHONPATH pointing at the checkouts with and
without the change, on the same machine at the same load.  A scan or a
submit that does not end as it must (exit 0, verdict PASS) stops the script
with exit 1 and its output: a failed run has no time to report.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

py = sys.argv[1]
n = int(sys.argv[2])
root = Path(tempfile.mkdtemp()) / "p"
(root / "src/pkg").mkdir(parents=True)
(root / "tests").mkdir()
(root / "src/pkg/__init__.py").write_text("")
(root / "src/pkg/calc.py").write_text(
    'def sign(x):\n    if x > 0:\n        return "positive"\n    if x < 0:\n        return "negative"\n    return "zero"\n'
)
(root / "pyproject.toml").write_text(
    '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\nquest_source = ["src/pkg"]\n[tool.coverage.run]\nbranch = true\nsource = ["src/pkg"]\n'
)
env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE", "COVERAGE_"))}
env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
base = [
    py,
    "-m",
    "pytest",
    "-p",
    "pytest_quest.plugin.hooks",
    "-p",
    "no:cacheprovider",
    "--quest-format",
    "json",
]


def failed_run(what: str, done: subprocess.CompletedProcess[str]) -> SystemExit:
    """Stop here: `what` did not end as it must, so there is nothing to time."""
    print(f"FAILED RUN: {what} exited {done.returncode}", file=sys.stderr)
    print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
    return SystemExit(1)


scan = subprocess.run([*base, "--quest", "scan"], cwd=root, env=env, capture_output=True, text=True)
if scan.returncode != 0:
    raise failed_run("the scan", scan)
(root / "tests/test_calc.py").write_text(
    "from pkg.calc import sign\n\ndef test_sign():\n    assert sign(5) == 'positive'\n    assert sign(-5) == 'negative'\n    assert sign(0) == 'zero'\n"
)
times = []
mut = []
for _ in range(n):
    shutil.copy(root / "quest.json", root / "q.bak")
    t = time.monotonic()
    out = subprocess.run(
        [*base, "--quest", "submit", "--quest-id", "src/pkg/calc.py::sign"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    times.append(time.monotonic() - t)
    if out.returncode != 0 or not out.stdout.strip():
        raise failed_run("a submit", out)
    d = json.loads(out.stdout)
    if d.get("verdict") != "PASS":
        raise failed_run(f"a submit judged {d.get('verdict')} (an honest test must PASS)", out)
    mut.append(
        json.loads((root / "quest.json").read_text())["quests"]["src/pkg/calc.py::sign"][
            "extra"
        ].get("mutation_seconds")
    )
    shutil.copy(root / "q.bak", root / "quest.json")
times.sort()
mut = sorted(m for m in mut if m is not None)
print(
    f"{py}: whole submit median {times[n // 2]:.2f}s (min {times[0]:.2f}), "
    f"mutation child median {mut[len(mut) // 2] if mut else None}s"
)
