"""Builds submit-log.csv from the saved answers (out/*-submit.json) and the batch transcripts.

    python3 benchmarks/dogfood/build_log.py TRANSCRIPT... > benchmarks/dogfood/submit-log.csv

A transcript line (batch*.sh): ``ID | rc=N seconds=S out=PATH | VERDICT TRIES ID``.
`covering.tsv` (covering.py's output) gives the covering tests' plain-pytest time;
`judgements.tsv` gives, per answer file, whether the tests were weak and why.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

here = Path(__file__).parent
covering = {}
if (here / "covering.tsv").exists():
    for line in (here / "covering.tsv").read_text().splitlines():
        parts = line.split("\t")
        covering[Path(parts[0]).name] = parts[4]
judged = {}
for line in (here / "judgements.tsv").read_text().splitlines():
    name, weak, why = line.split("\t")
    judged[name] = (weak, why)
rows = []
attempts: dict[str, int] = {}
for transcript in sys.argv[1:]:
    for line in Path(transcript).read_text().splitlines():
        found = re.search(r"rc=(\d+) seconds=([\d.]+) out=(\S+)", line)
        if not found:
            continue
        rc, seconds, out = found.groups()
        data = json.loads(Path(out).read_text() or "{}")
        quest = data.get("quest") or {}
        verdict = data.get("verdict") or f"usage error (exit {rc})"
        name = Path(out).name
        qid = quest.get("id") or line.split(" | ")[0]
        attempts[qid] = attempts.get(qid, 0) + 1
        weak, why = judged.get(name, ("", ""))
        rows.append(
            [
                qid,
                attempts[qid],
                verdict,
                f"{float(seconds):.1f}",
                covering.get(name, ""),
                weak if verdict != "PASS" else "",
                why if verdict != "PASS" else "",
            ]
        )
writer = csv.writer(sys.stdout)
writer.writerow(["quest", "try", "verdict", "seconds", "covering_tests_seconds", "weak", "why"])
writer.writerows(rows)
