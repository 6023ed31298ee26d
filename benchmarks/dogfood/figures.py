"""The figures of one run of submit-log.csv: submits per settled quest, false verdicts, medians.

python3 benchmarks/dogfood/figures.py RUN_LABEL
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

label = sys.argv[1]
with open(Path(__file__).parent / "submit-log.csv", newline="") as log:
    rows = [row for row in csv.DictReader(log) if row["run"] == label]
judged = [row for row in rows if row["verdict"] in ("PASS", "FAIL", "REVIEW")]
final: dict[str, str] = {}
for row in rows:
    if row["verdict"] in ("PASS", "REVIEW", "FAIL"):
        final[row["quest"]] = row["verdict"]
settled = [quest for quest, verdict in final.items() if verdict in ("PASS", "REVIEW")]
submits_settled = [row for row in rows if row["quest"] in settled]
print(f"submits: {len(rows)} ({len(judged)} judged), quests: {len({row['quest'] for row in rows})}")
for verdict in ("PASS", "FAIL", "REVIEW"):
    print(f"  {verdict}: {sum(row['verdict'] == verdict for row in rows)}")
print(f"  other: {sum(row['verdict'] not in ('PASS', 'FAIL', 'REVIEW') for row in rows)}")
print(
    f"settled quests: {len(settled)} (PASS {sum(final[q] == 'PASS' for q in settled)}, "
    f"REVIEW {sum(final[q] == 'REVIEW' for q in settled)}); "
    f"submits per settled quest: {len(submits_settled)}/{len(settled)} = "
    f"{len(submits_settled) / max(1, len(settled)):.2f}"
)
false = [row for row in judged if row["verdict"] != "PASS" and row["weak"] == "no"]
print(f"false verdicts (non-PASS, tests not weak): {len(false)}")
for row in false:
    print(f"  {row['quest']} try {row['try']} {row['verdict']}: {row['why']}")
seconds = [float(row["seconds"]) for row in judged]
pairs = [
    (float(row["seconds"]), float(row["covering_tests_seconds"]))
    for row in judged
    if row["covering_tests_seconds"]
]
if seconds:
    print(
        f"median submit: {statistics.median(seconds):.1f} s over {len(seconds)} judged submits "
        f"(range {min(seconds):.1f} to {max(seconds):.1f})"
    )
if pairs:
    print(
        f"median covering tests alone: {statistics.median(c for _, c in pairs):.2f} s; "
        f"median submit over the same {len(pairs)}: {statistics.median(s for s, _ in pairs):.1f} s; "
        f"median ratio {statistics.median(s / c for s, c in pairs if c):.1f}x"
    )
