#!/usr/bin/env bash
# Runs one `pytest --quest ARGS --quest-format json` from the repository root,
# saves its stdout/stderr under benchmarks/dogfood/out/, and prints the wall time.
#   bash benchmarks/dogfood/run.sh next
#   bash benchmarks/dogfood/run.sh submit
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p benchmarks/dogfood/out
stamp=$(date +%H%M%S)
out=benchmarks/dogfood/out/$stamp-$1
start=$(date +%s.%N)
.venv/bin/python -m pytest --quest "$@" --quest-format json >"$out.json" 2>"$out.err"
rc=$?
end=$(date +%s.%N)
echo "rc=$rc seconds=$(echo "$end - $start" | bc) out=$out.json"
