#!/usr/bin/env bash
# `submit --quest-id ID` over tests/unit for each quest id, one at a time, without the
# `next` before it (each quest's next was read earlier); same transcript lines as batch4.sh.
#   DOGFOOD_OUT=benchmarks/dogfood/out2 bash benchmarks/dogfood/batch5.sh ID... >> transcript.txt
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
    r=$(bash benchmarks/dogfood/run.sh submit --quest-id "$id" tests/unit)
    echo "$id | submit | $r | $(summary "${r##*out=}")"
done
