#!/usr/bin/env bash
# Incremental check before and after a change of pytest-quest, side by side on one tree.
#
#   bash benchmarks/incremental_ab.sh OLD_PYTHON OLD_RECORDS NEW_PYTHON NEW_RECORDS TREE
#
# TREE is the python-dateutil git tree benchmarks/incremental.py made under --work
# (its `dateutil` folder); OLD_RECORDS and NEW_RECORDS are the `records` folders of a
# run of that script with each Python (base.gz and quest.json: the recorded full scan of
# the unchanged tree).  For each of the script's three one-function changes: the tree
# reset and the change made, then the old code's check and the new code's, each on a
# copy of its own record; pytest --cov --cov-branch once at the end.  CPU seconds
# (user + system) of each run, with the load average.
set -u
old_py=$1 old_records=$2 new_py=$3 new_records=$4 tree=$5
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(tests -p no:cacheprovider -q
  "--deselect=tests/test_tz.py::test_gettz_link[tzpath-Europe/Monaco-Europe/Paris]"
  "--deselect=tests/test_tzfile.py::test_gettz_local_abbreviation_without_time_zone_data"
  "--deselect=tests/test_tzpath_data.py::test_dst_matches_tzdata_zi[tzpath]")
cd "$tree"
cpu() { awk '{print $1 + $2}' "$work/time"; }
check() {  # python, records, label, change number
  git checkout -q -- src && rm -f .coverage
  "$new_py" -c "import sys; sys.path.insert(0, '$here'); import incremental as b; from pathlib import Path; f, q = b.CHANGES[$4 - 1]; b.touch_function(Path(f), q)"
  cp "$2/base.gz" "$work/run.gz" && cp "$2/quest.json" "$work/quest-$3.json"
  PYTHONPATH=src /usr/bin/time -f "%U %S" -o "$work/time" "$1" -m pytest "${args[@]}" \
    --quest-source=src/dateutil --quest check --quest-format json \
    "--quest-file=$work/quest-$3.json" "--quest-run-data=$work/run.gz" > "$work/out" 2>&1
  local code=$?
  echo "change $4 $3: CPU $(cpu) s, exit $code, $(grep -o '"ran": [0-9]*' "$work/out"), load $(cut -d' ' -f1 /proc/loadavg)"
}
for n in 1 2 3; do
  check "$old_py" "$old_records" before "$n"
  check "$new_py" "$new_records" after "$n"
done
git checkout -q -- src && rm -f .coverage
PYTHONPATH=src /usr/bin/time -f "%U %S" -o "$work/time" "$new_py" -m pytest "${args[@]}" \
  --cov=src/dateutil --cov-branch > "$work/out" 2>&1
echo "pytest --cov --cov-branch: CPU $(cpu) s, load $(cut -d' ' -f1 /proc/loadavg)"
