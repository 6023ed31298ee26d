"""A quest as version 2 of the ratchet file stores it, built straight from the `Quest`.

The same record as ``layout.compact_quest(codec.quest_to_dict(quest), index)``
(tests/unit/engine/test_layout.py holds them equal), without building every
field and every fact as a dict first: writing 50,000 quests is mostly this.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core.model import Quest, State, branch_fact, line_fact


def derived(quest: Quest) -> bool:
    """Whether `quest`'s facts are exactly those its missing lines and branches give."""
    if len(quest.facts) != len(quest.missing_lines) + len(quest.missing_branches):
        return False
    expected = [line_fact(quest.file, line) for line in quest.missing_lines]
    expected += [branch_fact(quest.file, arc) for arc in quest.missing_branches]
    return quest.facts == expected


def quest_record(quest: Quest, index: dict[str, int]) -> dict[str, Any]:
    """`quest`'s version-2 record: no default, no derived facts, tests by `index`."""
    record: dict[str, Any] = {
        "file": quest.file,
        "qualname": quest.qualname,
        "lines": [quest.first, quest.last],
        "fingerprint": quest.fingerprint,
    }
    if quest.state is not State.TODO:
        record["state"] = quest.state.value
    for name in ("tries", "statements", "branches"):
        value = getattr(quest, name)
        if value != 0 or type(value) is not int:
            record[name] = value
    if quest.missing_lines:
        record["missing_lines"] = list(quest.missing_lines)
    if quest.missing_branches:
        record["missing_branches"] = [list(arc) for arc in quest.missing_branches]
    if quest.excluded_lines:
        record["excluded_lines"] = list(quest.excluded_lines)
    if quest.covering_tests:
        record["covering_tests"] = [index[name] for name in quest.covering_tests]
    if not derived(quest):
        record["facts"] = [fact.to_dict() for fact in quest.facts]
    if quest.issued_at:
        record["issued_at"] = quest.issued_at
    if quest.passed_at:
        record["passed_at"] = quest.passed_at
    if quest.baseline is not False:
        record["baseline"] = quest.baseline
    if quest.history:
        record["history"] = [event.to_dict() for event in quest.history]
    extra = quest.extra_record()
    if extra:
        record["extra"] = extra
    return record
