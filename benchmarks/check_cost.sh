#!/usr/bin/env bash
# `pytest --quest check` of two checkouts side by side, alternated in each round: run by hand.
#
#   bash benchmarks/check_cost.sh PYTHON OLD_CHECKOUT DIR ROUNDS [check options...]
#
# PYTHON has pytest-quest installed (the new code); OLD_CHECKOUT is put first on
# PYTHONPATH for the "old" run. DIR is a scanned project. Prints per round and code:
# wall seconds, user and sys CPU seconds (the command and every process it waited
# for), and the last line of its output. A run that exits other than 0 or 1 (no
# verdict) is marked FAILED RUN.
set -euo pipefail
python=$1; old=$2; dir=$3; rounds=$4; shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$dir"
for _ in $(seq "$rounds"); do
    for which in old new; do
        if [ "$which" = old ]; then export PYTHONPATH=$old; else unset PYTHONPATH; fi
        code=0
        /usr/bin/time -f "$which %e s wall %U user %S sys" -o "$out/time" \
            "$python" -m pytest --quest check "$@" >"$out/output" 2>&1 || code=$?
        verdict=$(tail -n 1 "$out/output")
        if [ "$code" -gt 1 ]; then verdict="FAILED RUN (exit $code): $verdict"; fi
        echo "$(cat "$out/time") | $verdict"
    done
done
