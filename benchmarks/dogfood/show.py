"""Prints the quest of a saved `next`/`submit` JSON answer compactly: verdict, facts, source."""

import json
import sys

d = json.load(open(sys.argv[1]))
if "error" in d:
    print("ERROR:", d["error"])
q = d.get("quest") or {}
print("verdict:", d.get("verdict"), "| summary:", d.get("summary"), "| step:", d.get("step"))
print("id:", q.get("id"), "tries:", q.get("tries"), "state:", q.get("state"))
print("covering:", q.get("covering_tests_total"), (q.get("covering_tests") or [])[:5])
for f in q.get("facts", []):
    print(
        "FACT", f["check"], f["field"], "|", f.get("message") or f"{f['expected']} / {f['actual']}"
    )
if len(sys.argv) > 2:
    print(q.get("source"))
    ex = q.get("example") or {}
    print("EXAMPLE", ex.get("kind"), ex.get("test"))
