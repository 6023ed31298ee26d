"""What the clean witness search adds to a submit: its process's start and import, and one search.

Run by hand: ``.venv/bin/python benchmarks/clean_search_cost.py``.  On a copy of the
`cells` project of tests/e2e/test_witnessed_mutants.py, three rounds each of

* a clean process asked about a mutant id not in the judge's plan: it starts,
  imports pytest-quest's search and Hypothesis, imports and checks the code under
  test, and answers at once (the fixed cost of one clean search per submit);
* the search of `cell`'s equivalent mutant (`if False:`): the whole budget spent.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_quest.core.mutants import plan_mutants
from pytest_quest.engine.clean_search import judged, search_cleanly
from pytest_quest.engine.seeds import encode
from tests.e2e.test_witnessed_mutants import CELLS


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="clean-search-cost-"))
    (root / "src").mkdir()
    (root / "src" / "cells.py").write_text(CELLS)
    function = judged(root / "src" / "cells.py", 1, None)
    (mutant,) = [m for m in plan_mutants(CELLS, 1) if m.mutated == "if False:"]

    def entry(mutant_id: str) -> dict[str, object]:
        return {
            "status": "survived",
            "id": mutant_id,
            "line": mutant.line,
            "original": mutant.original,
            "mutated": mutant.mutated,
            "search": {"calls": 5, "escapes": "", "problem": ""},
            "seeds": encode([{"value": "ab"}, {"value": 42}]),
            "module": "cells",
        }

    for label, mutant_id in (
        ("start and import", "m-not-planned"),
        ("one whole search", mutant.id),
    ):
        for _ in range(3):
            found = entry(mutant_id)
            began = time.monotonic()
            search_cleanly(
                [(function, [found])],
                path=[str(root / "src"), str(root)],
                roots=[str(root / "src")],
                cwd=root,
                timeout=60,
            )
            record = found["search"]
            assert isinstance(record, dict)
            print(f"{label}: {time.monotonic() - began:.3f} s ({record['calls']} calls)")


if __name__ == "__main__":
    main()
