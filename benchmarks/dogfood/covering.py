"""Times each judged quest's covering tests alone with plain pytest, for the submit log.

    .venv/bin/python benchmarks/dogfood/covering.py benchmarks/dogfood/out/*-submit.json

Prints one line per submit answer: quest id, verdict, covering tests shown/total,
wall seconds of `python -m pytest -q -p no:cacheprovider NODEIDS`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

for name in sys.argv[1:]:
    try:
        data = json.load(open(name))
    except ValueError:
        continue
    quest = data.get("quest") or {}
    tests = quest.get("covering_tests") or []
    if len(tests) < (quest.get("covering_tests_total") or 0):
        # The answer shows the first few; the ratchet file records them all.
        # (node ids stored as indices into its `tests` table).
        ratchet = json.load(open("quest.json"))
        recorded = ratchet["quests"].get(quest.get("id"), {}).get("covering_tests") or []
        if len(recorded) == quest["covering_tests_total"]:
            tests = [ratchet["tests"][i] if isinstance(i, int) else i for i in recorded]
    if not data.get("verdict") or not tests:
        continue
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - start
    last = (done.stdout.strip().splitlines() or [""])[-1]
    print(
        f"{name}\t{quest['id']}\t{data['verdict']}\t{len(tests)}/{quest.get('covering_tests_total')}"
        f"\t{seconds:.2f}\t{last}"
    )
