"""Time an honest submit (median of N): python benchmarks/channel_cost.py PYTHON N; PYTHONPATH selects the code."""

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
subprocess.run([*base, "--quest", "scan"], cwd=root, env=env, capture_output=True, check=True)
(root / "tests/test_calc.py").write_text(
    "from pkg.calc import sign\n\ndef test_sign():\n    assert sign(5) == 'positive'\n    assert sign(-5) == 'negative'\n    assert sign(0) == 'zero'\n"
)
q = json.loads((root / "quest.json").read_text())
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
    assert out.stdout.strip(), out.stderr[-2000:]
    d = json.loads(out.stdout)
    assert d["verdict"] == "PASS", d
    mut.append(
        json.loads((root / "quest.json").read_text())["quests"]["src/pkg/calc.py::sign"][
            "extra"
        ].get("mutation_seconds")
    )
    shutil.copy(root / "q.bak", root / "quest.json")
times.sort()
mut = sorted(m for m in mut if m is not None)
print(
    f"{py}: submit median {times[n // 2]:.2f}s (min {times[0]:.2f}), mutation child median {mut[len(mut) // 2] if mut else None}s"
)
