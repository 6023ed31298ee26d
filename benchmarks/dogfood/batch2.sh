#!/usr/bin/env bash
# For each quest id: `next --quest-id ID`, then, when it is workable, `submit --quest-id ID`
# (over tests/unit, the tests quest.json was scanned with); each answer saved.
cd "$(dirname "$0")/../.."
for id in "$@"; do
    n=$(bash benchmarks/dogfood/run.sh next --quest-id "$id" tests/unit)
    case $n in rc=0*) ;; *) echo "$id | next refused: $n"; continue ;; esac
    r=$(bash benchmarks/dogfood/run.sh submit --quest-id "$id" tests/unit)
    f=${r##*out=}
    v=$(python3 -c "import json,sys;d=json.load(open('$f'));q=d.get('quest') or {};print(d.get('verdict') or 'ERROR', q.get('tries'), q.get('id'))" 2>&1)
    echo "$id | $r | $v"
done
