"""Extends submit-log.csv with a run of batch4.sh transcripts, keeping the earlier run's rows.

    python3 benchmarks/dogfood/build_log2.py RUN_LABEL TRANSCRIPT... > new-submit-log.csv

The earlier rows (submit-log.csv without a ``run`` column) are kept, labelled ``1``.
A batch4.sh line: ``ID | submit | rc=N seconds=S out=PATH | ...``; `covering2.tsv`
(covering.py's output over this run's answers) gives the covering tests' plain-pytest
time, `judgements2.tsv` (answer file name, weak, why) whether the tests were weak.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

here = Path(__file__).parent
header = ["run", "quest", "try", "verdict", "seconds", "covering_tests_seconds", "weak", "why"]
rows: list[list[str]] = []
with open(here / "submit-log.csv", newline="") as old:
    reader = csv.reader(old)
    first = next(reader)
    for row in reader:
        rows.append(row if first[0] == "run" else ["1", *row])
label = sys.argv[1]
rows = [row for row in rows if row[0] != label]
covering: dict[str, str] = {}
if (here / "covering2.tsv").exists():
    for line in (here / "covering2.tsv").read_text().splitlines():
        parts = line.split("\t")
        covering[Path(parts[0]).name] = parts[4]
judged: dict[str, tuple[str, str]] = {}
if (here / "judgements2.tsv").exists():
    for line in (here / "judgements2.tsv").read_text().splitlines():
        name, weak, why = line.split("\t")
        judged[name] = (weak, why)
attempts: dict[str, int] = {}
for transcript in sys.argv[2:]:
    for line in Path(transcript).read_text().splitlines():
        parts = line.split(" | ")
        if len(parts) < 3 or parts[1] != "submit":
            continue
        found = re.search(r"rc=(\d+) seconds=([\d.]+) out=(\S+)", parts[2])
        if not found:
            continue
        rc, seconds, out = found.groups()
        try:
            data = json.loads(Path(out).read_text() or "{}")
        except ValueError:
            data = {}
        verdict = data.get("verdict") or f"no verdict (exit {rc})"
        qid = parts[0]
        attempts[qid] = attempts.get(qid, 0) + 1
        name = Path(out).name
        weak, why = judged.get(name, ("", ""))
        rows.append(
            [
                label,
                qid,
                str(attempts[qid]),
                verdict,
                f"{float(seconds):.1f}",
                covering.get(name, ""),
                weak if verdict != "PASS" else "",
                why if verdict != "PASS" else "",
            ]
        )
writer = csv.writer(sys.stdout, lineterminator="\n")
writer.writerow(header)
writer.writerows(rows)
