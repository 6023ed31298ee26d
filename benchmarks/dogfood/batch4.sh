#!/usr/bin/env bash
# The ready prompt's loop for each quest id, one at a time: `next --quest-id ID`,
# then (when next answers the quest) `submit --quest-id ID`, both over tests/unit
# (the tests quest.json was scanned with). One transcript line per command:
#   ID | next|submit | rc=N seconds=S out=PATH | VERDICT TRIES STATE | fact checks
#   DOGFOOD_OUT=benchmarks/dogfood/out2 bash benchmarks/dogfood/batch4.sh ID... >> transcript.txt
cd "$(dirname "$0")/../.."
summary() {
    python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("NO-JSON"); sys.exit()
q = d.get("quest") or {}
if "error" in d:
    print("ERROR", str(d["error"])[:300].replace("\n", " "))
else:
    checks = sorted({f["check"] for f in q.get("facts") or []})
    print(d.get("verdict") or "-", q.get("tries"), q.get("state"), "|", ",".join(checks),
          "| missing", q.get("missing_lines"), q.get("missing_branches"))
PY
}
for id in "$@"; do
    [ -e /tmp/dogfood/STOP ] && break
    n=$(bash benchmarks/dogfood/run.sh next --quest-id "$id" tests/unit)
    echo "$id | next | $n | $(summary "${n##*out=}")"
    case $n in rc=0*) ;; *) continue ;; esac
    # next measured again: lines or branches still missing mean more tests first, not a submit.
    if python3 -c "import json,sys;q=json.load(open(sys.argv[1])).get('quest') or {};sys.exit(bool(q.get('missing_lines') or q.get('missing_branches')))" "${n##*out=}"; then :; else
        echo "$id | skipped | missing lines or branches: tests to write first"; continue
    fi
    r=$(bash benchmarks/dogfood/run.sh submit --quest-id "$id" tests/unit)
    echo "$id | submit | $r | $(summary "${r##*out=}")"
done
