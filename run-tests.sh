#!/usr/bin/env bash
# Sets up a virtualenv (.venv, reused if present) and runs the test suite:
#
#   bash run-tests.sh            (extra arguments go to pytest, e.g. -m "not slow")
#
# 1. the whole suite under coverage.py, subprocesses included; fails under 90%
#    statement coverage of pytest_quest/;
# 2. the project's own ratchet: `pytest --quest check` against the committed quest.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=${QUEST_VENV:-$here/.venv}
cd "$here"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"

rm -f .coverage .coverage.*
# COVERAGE_COVERAGE keeps coverage.py's subprocess measurement saving in processes
# that start a Coverage object of their own (the plugin's scan does).
COVERAGE_COVERAGE=1 "$venv/bin/python" -m coverage run -m pytest -p no:cacheprovider "$@"
"$venv/bin/python" -m coverage combine -q
"$venv/bin/python" -m coverage report --fail-under=90 --skip-covered
rm -f .coverage .coverage.*

# The ratchet covers what runs in-process: the unit tests of the pure core and the
# edges. (End-to-end tests run the plugin in subprocesses, which an in-process
# measurement cannot see.) quest.json was made by `pytest --quest scan` with the same files.
echo "--- the project's own ratchet: pytest --quest check"
"$venv/bin/python" -m pytest --quest check -p no:cacheprovider -q \
    tests/test_gate.py tests/test_states.py tests/test_model.py tests/test_measure.py \
    tests/test_store.py tests/test_ci.py tests/test_verify_parser.py tests/test_store_properties.py
