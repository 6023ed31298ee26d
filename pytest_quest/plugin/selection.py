"""A gate child's test selection: files collected, then the named tests kept among them.

pytest given a node id that no longer collects exits 4 with nothing run, so
the child collects the files and keeps the named tests at collection; a
named test that is gone is reported, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

SEP = "::"


@dataclass
class Selection:
    """What the judge asked for: whole files or folders, and single tests by node id."""

    paths: list[str] = field(default_factory=list)  # what pytest collects, in order
    whole: set[Path] = field(default_factory=set)
    tests: dict[tuple[Path, str], str] = field(default_factory=dict)  # (file, rest) -> node id
    missing: list[str] = field(default_factory=list)


KEY = pytest.StashKey[Selection]()


def parse(selection: list[str], base: Path) -> Selection:
    """`selection` (paths and node ids, relative to `base`) as files to collect and tests to keep."""
    chosen = Selection()
    for entry in selection:
        path, _, rest = entry.partition(SEP)
        if path not in chosen.paths:
            chosen.paths.append(path)
        where = (base / path).resolve()
        if rest:
            chosen.tests[(where, rest)] = entry
        else:
            chosen.whole.add(where)
    return chosen


def keep(
    chosen: Selection, items: list[pytest.Item]
) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """The items the judge named (kept) and the others of their files (deselected);
    the named tests no item matched go to `chosen.missing`."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    found: set[tuple[Path, str]] = set()
    for item in items:
        where = Path(str(item.path)).resolve()
        rest = item.nodeid.partition(SEP)[2]
        if where in chosen.whole or any(folder in where.parents for folder in chosen.whole):
            kept.append(item)
            continue
        # A node id names a test or a class of them (``file::Class``).
        hits = [
            key
            for key in chosen.tests
            if key[0] == where and (rest == key[1] or rest.startswith(key[1] + SEP))
        ]
        found.update(hits)
        (kept if hits else dropped).append(item)
    chosen.missing = [nodeid for key, nodeid in chosen.tests.items() if key not in found]
    return kept, dropped


def missing_tests(config: pytest.Config) -> list[str]:
    """The named tests that did not collect in this child."""
    chosen = config.stash.get(KEY, None)
    return list(chosen.missing) if chosen is not None else []
