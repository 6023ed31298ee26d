#!/usr/bin/env bash
# Runs one `pytest --quest ARGS --quest-format json` from the repository root,
# saves its stdout/stderr under $DOGFOOD_OUT (default benchmarks/dogfood/out/),
# and prints the wall time.
#   bash benchmarks/dogfood/run.sh next
#   bash benchmarks/dogfood/run.sh submit
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=${DOGFOOD_OUT:-benchmarks/dogfood/out}
mkdir -p "$dir"
stamp=$(date +%H%M%S)
out=$dir/$stamp-$1
start=$(date +%s.%N)
env -u PYTEST_ADDOPTS .venv/bin/python -m pytest --quest "$@" --quest-format json -p no:cacheprovider >"$out.json" 2>"$out.err"
rc=$?
end=$(date +%s.%N)
echo "rc=$rc seconds=$(echo "$end - $start" | bc) out=$out.json"
