#!/usr/bin/env bash
# Sets up a virtualenv (.venv, reused if present) and runs the test suite:
#
#   bash run-tests.sh            (extra arguments go to pytest, e.g. -m "not slow")
#
# 1. the whole suite under coverage.py, on every core (pytest-xdist), the xdist
#    workers and every pytest the tests start measured too; fails under 90%
#    statement coverage of pytest_quest/;
# 2. the project's own ratchet: `pytest --quest check` against the committed quest.json.
#
# The fast loop while developing (no coverage, no slow or stress tests):
#   .venv/bin/python -m pytest -m "not slow and not stress" -n auto
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=${QUEST_VENV:-$here/.venv}
cd "$here"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"

# Where PYTHONDONTWRITEBYTECODE is set, every pytest the tests start would compile and
# assertion-rewrite ~200 modules again: write those caches once (tests/support/warm_bytecode.py).
"$venv/bin/python" -m tests.support.warm_bytecode

rm -f .coverage .coverage.*
# COVERAGE_COVERAGE keeps coverage.py's subprocess measurement saving in processes
# that start a Coverage object of their own (the plugin's scan does);
# PYTEST_QUEST_SELFCOV keeps it on in the pytest processes the tests start
# (tests/support/runner.py) and in the gate's child processes (engine.runner.child_env).
# coverage.py's `patch = subprocess` (pyproject.toml) measures the xdist workers;
# `patch = execv` saves what a submit ran before it execs the clean judge (plugin/judge.py).
COVERAGE_COVERAGE=1 PYTEST_QUEST_SELFCOV=1 \
    "$venv/bin/python" -m coverage run -m pytest -p no:cacheprovider -n auto --dist worksteal "$@"
"$venv/bin/python" -m coverage combine -q
"$venv/bin/python" -m coverage report --skip-covered
# The bar is statement coverage (the report's total above also counts branches).
"$venv/bin/python" -m coverage json -q -o .coverage-summary.json
"$venv/bin/python" - <<'PY'
import json, sys
totals = json.load(open(".coverage-summary.json"))["totals"]
statements = totals["percent_statements_covered"]
print(f"statement coverage of pytest_quest/: {statements:.1f}% "
      f"(branches {totals['percent_branches_covered']:.1f}%, combined {totals['percent_covered']:.1f}%)")
BAR = 90
sys.exit(0 if statements >= BAR else f"statement coverage {statements:.1f}% is under {BAR}%")
PY
rm -f .coverage .coverage.* .coverage-summary.json

# The ratchet covers what runs in-process: the unit tests (tests/unit).
# (End-to-end tests run the plugin in subprocesses, which an in-process
# measurement cannot see.) quest.json was made by `pytest --quest scan` with the same tests.
echo "--- the project's own ratchet: pytest --quest check"
"$venv/bin/python" -m pytest --quest check -p no:cacheprovider -q tests/unit
