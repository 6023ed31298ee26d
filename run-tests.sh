#!/usr/bin/env bash
# Sets up a virtualenv (.venv, reused if present) and runs the test suite:
#
#   bash run-tests.sh            (extra arguments go to pytest, e.g. -m "not slow")
#
# 1. the project's own ratchet: `pytest --quest check` on tests/unit (the tests quest.json
#    was scanned with), against the committed quest.json; pytest-cov measures pytest_quest/
#    for it (the check borrows that tracer, as in any project run with --cov);
# 2. beside it, tests/e2e and tests/acceptance under coverage.py on every core
#    (pytest-xdist, a worker more than cores), the xdist workers and every pytest the tests start measured too;
# 3. both measurements combined: fails under 90% statement coverage of pytest_quest/.
# The unit tests run once, for the check and for the bar.  The caller's PYTEST_ADDOPTS
# and extra arguments reach step 2 only.
#
# QUEST_INSTALLED=1 skips the install (.ci/run installs everything once before it).
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
if [ "${QUEST_INSTALLED:-}" != 1 ]; then
    # docs too: the site build (mkdocs build --strict) is part of CI (.ci/run).
    bash .ci/install "$venv" test,docs
fi

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
export COVERAGE_COVERAGE=1 PYTEST_QUEST_SELFCOV=1
# Step 1.  It ignores the caller's PYTEST_ADDOPTS (`env -u`): a `-k` or `--deselect`
# given for step 2 would deselect tests here and fail PASS functions those tests cover.
# Its data goes to a folder of its own (COVERAGE_FILE, followed by the processes the unit
# tests start): pytest-cov combines what is in its data file's folder when it ends, and
# must not take step 2's files while they are written.
# Serial on purpose: it runs beside step 2, which has every core.
unit_data=$(mktemp -d)
ratchet_log=$(mktemp)
env -u PYTEST_ADDOPTS COVERAGE_FILE="$unit_data/.coverage" \
    "$venv/bin/python" -m pytest --quest check -p no:cacheprovider -q \
    --cov=pytest_quest --cov-report= tests/unit >"$ratchet_log" 2>&1 </dev/null &
ratchet=$!
trap 'kill "$ratchet" 2>/dev/null || true; rm -rf "$ratchet_log" "$unit_data"' EXIT

# Step 2, with one xdist worker more than cores: most tests wait on the pytest they
# start (and some on its timeout), which leaves a core idle with one worker per core
# (.ci/run from a fresh clone, 2 cores: 527 s with 2 workers, 488 s with 3, 490 s with 4).
workers=$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 ))
suite=0
"$venv/bin/python" -m coverage run -m pytest -p no:cacheprovider -n "$workers" --dist worksteal \
    --ignore=tests/unit "$@" || suite=$?

echo "--- the project's own ratchet: pytest --quest check"
check=0
wait "$ratchet" || check=$?
cat "$ratchet_log"

# Step 3.
bar=0
{
"$venv/bin/python" -m coverage combine -q . "$unit_data/.coverage" &&
"$venv/bin/python" -m coverage report --skip-covered &&
# The bar is statement coverage (the report's total above also counts branches).
"$venv/bin/python" -m coverage json -q -o .coverage-summary.json &&
"$venv/bin/python" - <<'PY'
import json, sys
totals = json.load(open(".coverage-summary.json"))["totals"]
statements = totals["percent_statements_covered"]
print(f"statement coverage of pytest_quest/: {statements:.1f}% "
      f"(branches {totals['percent_branches_covered']:.1f}%, combined {totals['percent_covered']:.1f}%)")
BAR = 90
sys.exit(0 if statements >= BAR else f"statement coverage {statements:.1f}% is under {BAR}%")
PY
} || bar=$?
rm -f .coverage .coverage.* .coverage-summary.json
[ "$suite" = 0 ] && [ "$check" = 0 ] && [ "$bar" = 0 ]
