#!/usr/bin/env bash
# For each quest id: `next --quest-id ID` then `submit` (over tests/unit), each answer saved.
cd "$(dirname "$0")/../.."
for id in "$@"; do
    bash benchmarks/dogfood/run.sh next --quest-id "$id" tests/unit >/dev/null
    r=$(bash benchmarks/dogfood/run.sh submit tests/unit)
    f=${r##*out=}
    v=$(python3 -c "import json,sys;d=json.load(open('$f'));q=d.get('quest') or {};print(d.get('verdict') or 'ERROR', q.get('tries'), q.get('id'))" 2>&1)
    echo "$id | $r | $v"
done
