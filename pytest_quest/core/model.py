"""The data model: quests, their states, the facts the gate returns.

Pure values with no I/O; ``engine/codec.py`` turns them into the ratchet file's JSON.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from pytest_quest.core.policy import GatePolicy

JSON_SCHEMA = "pytest-quest/1"

# A fact's field that names an arc: `path:41->44` or `path:41->exit`.
_ARC_FIELD = re.compile(r"^(.*:\d+)->(?:-?\d+|exit)$")


class State(str, enum.Enum):
    """The state of a quest.  Every state but TODO is terminal.

    EXCLUDED is a person's decision to take a function out of the work (dead
    or untestable code), with a reason; only a person's reopen undoes it.
    """

    TODO = "TODO"
    PASS = "PASS"
    REVIEW = "REVIEW"
    DONE = "DONE"
    EXCLUDED = "EXCLUDED"

    @property
    def terminal(self) -> bool:
        return self is not State.TODO


class Verdict(str, enum.Enum):
    """What the gate says about one submission."""

    PASS = "PASS"
    FAIL = "FAIL"
    REVIEW = "REVIEW"


def arc_text(arc: tuple[int, int]) -> str:
    """Render a coverage arc; a negative destination is an exit from the code object."""
    start, end = arc
    return f"{start}->{'exit' if end < 0 else end}"


@dataclass(frozen=True)
class Fact:
    """One checkable statement of the gate: where, what was expected, what was found.

    `check` names the check that produced it (``coverage.line``,
    ``coverage.branch``, ``identity.changed``...), `field` says where
    (``path:line`` or ``path:line->line``), `message` is the one-line text
    rendering.
    """

    check: str
    field: str
    expected: str
    actual: str
    message: str = ""

    def text(self) -> str:
        if self.message:
            if not self.field:
                return self.message
            # `path:41->44` is shown at its line, as compilers do: `path:41: ...`;
            # any other field (a file alone, a node id) is shown whole.
            if self.check.startswith("test."):
                return f"{self.field} {self.message}"  # `tests/t.py::test_x failed: ...`
            arc = _ARC_FIELD.match(self.field)
            return f"{arc.group(1) if arc else self.field}: {self.message}"
        return f"{self.field}: expected {self.expected}, got {self.actual}"

    def to_dict(self) -> dict[str, str]:
        result = {
            "check": self.check,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.message:
            result["message"] = self.message
        return result

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fact:
        return cls(
            check=str(data["check"]),
            field=str(data["field"]),
            expected=str(data["expected"]),
            actual=str(data["actual"]),
            message=str(data.get("message", "")),
        )


def line_fact(file: str, line: int, *, by_failing: bool = False) -> Fact:
    """A missing line; `by_failing`: only tests that did not pass executed it."""
    return Fact(
        check="coverage.line",
        field=f"{file}:{line}",
        expected="executed by a passing test",
        actual="executed only by tests that did not pass" if by_failing else "never executed",
        message=f"line {line} not covered"
        + (" (reached only by failing tests)" if by_failing else ""),
    )


def branch_fact(file: str, arc: tuple[int, int], *, by_failing: bool = False) -> Fact:
    """A missing branch; `by_failing`: only tests that did not pass took it."""
    return Fact(
        check="coverage.branch",
        field=f"{file}:{arc_text(arc)}",
        expected="branch taken by a passing test",
        actual="taken only by tests that did not pass" if by_failing else "never taken",
        message=f"branch {arc_text(arc)} not taken"
        + (" (taken only by failing tests)" if by_failing else ""),
    )


@dataclass
class FunctionFacts:
    """What measuring says about one function of the current code.

    Produced by ``engine/measure.py`` (or a fake in unit tests); the gate compares it
    with the quest's record.  `missing_lines` and `missing_branches` only count
    execution by tests that passed.
    """

    file: str
    qualname: str
    ordinal: int
    start: int
    first: int
    last: int
    fingerprint: str
    statements: int
    branches: int
    missing_lines: list[int] = field(default_factory=list)
    missing_branches: list[tuple[int, int]] = field(default_factory=list)
    excluded_lines: list[int] = field(default_factory=list)
    covering_tests: list[str] = field(default_factory=list)
    #: Of the missing lines and branches, those that only tests that failed executed.
    failing_lines: list[int] = field(default_factory=list)
    failing_branches: list[tuple[int, int]] = field(default_factory=list)

    @property
    def quest_id(self) -> str:
        return make_quest_id(self.file, self.qualname, self.ordinal)

    @property
    def fully_covered(self) -> bool:
        return not self.missing_lines and not self.missing_branches


def make_quest_id(file: str, qualname: str, ordinal: int) -> str:
    """The stable id of a function: ``path::Qual.name``, twins get ``@2``, ``@3``...

    The ordinal counts same-named definitions in one file in source order, so
    it survives unrelated code moving (unlike coverage's ``name@line``).
    """
    base = f"{file}::{qualname}"
    return base if ordinal == 1 else f"{base}@{ordinal}"


#: The actions only a person may take (a typed confirmation at a terminal, a reason).
PERSON_ACTIONS = ("reopen", "accept", "exclude", "policy")


@dataclass
class Event:
    """One entry of a quest's history: what happened, when, by whom.

    A person action also records the `reason` given and the `fingerprint` of
    the function's code as the person saw it.
    """

    at: str
    action: str
    verdict: str = ""
    by: str = ""
    note: str = ""
    reason: str = ""
    fingerprint: str = ""

    def to_dict(self) -> dict[str, str]:
        result = {"at": self.at, "action": self.action}
        for key in ("verdict", "by", "note", "reason", "fingerprint"):
            value = getattr(self, key)
            if value:
                result[key] = value
        return result


@dataclass
class Quest:
    """One function of the code under test and everything the gate knows of it.

    The baseline fields (`fingerprint`, `statements`, `branches`,
    `excluded_lines`) are taken when the quest is issued (at scan) and are what
    the gate compares a submission against.  A PASS quest also keeps what the
    gate saw when it passed (`covering_tests`, `passed_at`).
    """

    id: str
    file: str
    qualname: str
    first: int
    last: int
    fingerprint: str
    state: State = State.TODO
    tries: int = 0
    statements: int = 0
    branches: int = 0
    missing_lines: list[int] = field(default_factory=list)
    missing_branches: list[tuple[int, int]] = field(default_factory=list)
    excluded_lines: list[int] = field(default_factory=list)
    covering_tests: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    issued_at: str = ""
    passed_at: str = ""
    baseline: bool = False
    history: list[Event] = field(default_factory=list)
    # What the gate records beside the verdict; stored in the quest's ``extra``
    # object under the same names (`EXTRA_FIELDS`).  None: not recorded.
    #: Digest of the baseline as issued (a hand edit of it is REVIEW).
    issued_seal: str | None = None
    #: Wall time of the last gate run of the selected tests, in seconds.
    last_run_seconds: float | None = None
    #: Wall time of the last gate step 4 (the mutation child), in seconds.
    mutation_seconds: float | None = None
    #: What the last L2 verification found (``Verification.record()``).
    verification: dict[str, Any] | None = None
    #: The gate policy a PASS was obtained under (``GatePolicy.compact()``).
    passed_policy: str | None = None
    #: Digest of the coverage configuration and gate policy at issue (sealed).
    config_digest: str | None = None
    #: The lines coverage's partial-branch patterns matched at issue, stripped (sealed).
    partial_lines: list[str] | None = None
    #: The surviving mutants of the last judgement that no call told apart, every
    #: effect of the function compared (``core/gate.py`` `unwitnessed_record`): not
    #: held against the tests, listed by status, export and audit.
    unwitnessed: list[dict[str, Any]] | None = None
    #: Which kernel sandbox the last judgement ran in (engine/sandbox.py:
    #: ``bwrap``, ``landlock``, or ``none`` for unsandboxed).
    sandbox: str | None = None
    #: Anything else recorded in ``extra``, kept as found.
    extra: dict[str, Any] = field(default_factory=dict)

    if not TYPE_CHECKING:  # seen by mypy, any misspelt field would pass as Any

        def __getattr__(self, name: str) -> Any:
            # A quest read lazily (engine/codec.py) decodes its lists on first use:
            # `_pending` puts `name` (and what is decoded with it) into the instance.
            pending = self.__dict__.get("_pending") if name in DECODED_ON_USE else None
            if pending is None:
                raise AttributeError(f"'Quest' object has no attribute {name!r}")
            pending(self, name)
            return self.__dict__[name]

    def extra_record(self) -> dict[str, Any]:
        """The quest's ``extra`` object as stored and shown: `extra` with the typed fields set."""
        record = dict(self.extra)
        for name in EXTRA_FIELDS:
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        return record


#: A quest's sort key (file, first line, id) as a C getter (sorting 50,000 quests calls it 50,000 times); `_STATE` too.
SORT_KEY = attrgetter("file", "first", "id")
_STATE = attrgetter("state")

#: The fields of `Quest` a lazy read leaves out until first used (engine/codec.py).
DECODED_ON_USE = frozenset(
    {"missing_lines", "missing_branches", "excluded_lines", "covering_tests", "facts", "history"}
)

#: The typed fields of `Quest` that live in its ``extra`` object, by key.
EXTRA_FIELDS = (
    "issued_seal",
    "last_run_seconds",
    "mutation_seconds",
    "verification",
    "passed_policy",
    "config_digest",
    "partial_lines",
    "unwitnessed",
    "sandbox",
)


@dataclass
class Ratchet:
    """The whole persisted state: every quest, the active one, the scan's setup."""

    quests: dict[str, Quest] = field(default_factory=dict)
    active: str | None = None
    coverage_config: dict[str, Any] = field(default_factory=dict)
    test_files: dict[str, str] = field(default_factory=dict)
    removed: list[dict[str, str]] = field(default_factory=list)
    excluded_functions: list[str] = field(default_factory=list)
    scanned_at: str = ""
    #: The folders or files the scan searched for tests, relative to the rootdir
    #: (posix): where a command given no path searches ([]: as pytest's own default).
    test_paths: list[str] = field(default_factory=list)
    #: The gate policy (None: a file written before policies were recorded).
    policy: GatePolicy | None = None
    #: Person changes of the policy: at, by, key, old, new.
    policy_history: list[dict[str, str]] = field(default_factory=list)
    #: The file's table of covering tests as read (``engine/layout.py``): its
    #: order is kept from write to write.  Not part of the ratchet's value.
    test_table: list[str] = field(default_factory=list, compare=False, repr=False)

    if not TYPE_CHECKING:  # seen by mypy, any misspelt field would pass as Any

        def __getattr__(self, name: str) -> Any:
            # A ratchet read for showing (engine/codec.py) decodes its table on first use.
            pending = self.__dict__.get("_pending_table") if name == "test_table" else None
            if pending is None:
                raise AttributeError(f"'Ratchet' object has no attribute {name!r}")
            self.__dict__["test_table"] = list(pending())
            return self.__dict__["test_table"]

    def ordered(self) -> list[Quest]:
        return sorted(self.quests.values(), key=SORT_KEY)

    def counts(self) -> dict[str, int]:
        # Counted in C: a loop in Python costs 20 ms on 50,000 quests, each call.
        found = Counter(map(_STATE, self.quests.values()))
        return {state.value: found[state] for state in State}

    @property
    def remaining(self) -> int:
        return Counter(map(_STATE, self.quests.values()))[State.TODO]

    def todo(self) -> list[Quest]:
        """The TODO quests in the documented order: file path, then line."""
        return sorted((q for q in self.quests.values() if q.state is State.TODO), key=SORT_KEY)

    def next_todo(self) -> Quest | None:
        """The next quest to work on, in the documented order: file path, then line."""
        return min(
            (q for q in self.quests.values() if q.state is State.TODO), key=SORT_KEY, default=None
        )
