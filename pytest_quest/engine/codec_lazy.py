"""Reading the ratchet file for a command that shows little of it: lists decoded on first use.

`status` (text) and `next` read every quest's state, place and counts, and
the lists (covering tests, missing lines and branches, facts, history) of a
few.  `loads_lazy` validates, for every quest, all that `codec.loads` does
except the elements of those lists; they are validated (by `codec.loads`'s
own rules, the same messages) and decoded when first used, each quest's
covering tests on their own (they are resolved through the ``tests`` table),
the rest together.  A list of the wrong kind, and a PASS quest whose lists
break its rules, is judged at once, as `codec.loads` does.

Every command that writes the file reads it with `codec.loads` (everything
validated before anything is changed); this reader is for reading only.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.core import grammar
from pytest_quest.core.model import Event, Fact, Quest, Ratchet, State, branch_fact, line_fact
from pytest_quest.engine import codec, codec_fast, codec_help, codec_view, layout

# What each list field must be for its elements to wait (absent: its default).
_LISTS = ("missing_lines", "missing_branches", "excluded_lines", "covering_tests", "facts", "history")
_MISSING = object()


def plain(stored: dict[str, Any]) -> bool:
    """Whether the light read can judge `stored` now and leave its lists' elements for later."""
    for key in _LISTS:
        value = stored.get(key, _MISSING)
        if value is not _MISSING and type(value) is not list:
            return False
    extra = stored.get("extra", _MISSING)
    if extra is not _MISSING and type(extra) is not dict:
        return False
    # A PASS quest's rules on its lists: judged at once, by the full reader.
    return stored.get("state") != "PASS" or bool(
        stored.get("covering_tests")
        and not stored.get("missing_lines")
        and not stored.get("missing_branches")
    )


_STATES = {state.value: state for state in State}
_COUNTS = ("tries", "statements", "branches")
_TEXTS = (("fingerprint", None), ("issued_at", ""), ("passed_at", ""))  # None: no default


class _LazyValidator(codec._Validator):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.good_files: set[str] = set()

    def quest_v2(self, qid: str, stored: Any, table: list[str]) -> Quest:
        if not isinstance(stored, dict) or not plain(stored):
            return super().quest_v2(qid, stored, table)
        fields = self.usual(qid, stored)
        if fields is None:  # something unusual: judged field by field
            fields = self.light(qid, stored, table)
            if fields is None:
                return super().quest_v2(qid, stored, table)
        quest: Quest = Quest.__new__(Quest)
        quest.__dict__.update(fields)
        quest.__dict__["_pending"] = self._decoder(qid, stored, table)
        return quest

    def usual(self, qid: str, stored: dict[str, Any]) -> dict[str, Any] | None:
        """The light fields of a quest as pytest-quest writes it, checked in few steps; else None."""
        get = stored.get
        state = _STATES.get(get("state", "TODO"))
        lines = get("lines")
        file, qualname = get("file"), get("qualname")
        if (
            state is None
            or type(lines) is not list
            or len(lines) != 2
            or type(lines[0]) is not int
            or type(lines[1]) is not int
            or not 1 <= lines[0] <= lines[1]
            or type(file) is not str
            or type(qualname) is not str
            or qid != f"{file}::{qualname}"
            or not codec._QUEST_KEYS.issuperset(stored)
        ):
            return None
        fields: dict[str, Any] = {"id": qid, "file": file, "qualname": qualname, "state": state}
        fields["first"], fields["last"] = lines
        for name in _COUNTS:
            value = get(name, 0)
            if type(value) is not int or value < 0:
                return None
            fields[name] = value
        for name, default in _TEXTS:
            value = get(name, default)
            if type(value) is not str:
                return None
            fields[name] = value
        baseline = get("baseline", False)
        if type(baseline) is not bool:
            return None
        fields["baseline"] = baseline
        if state is State.PASS and not (fields["passed_at"] and fields["fingerprint"]):
            return None
        if file not in self.good_files:
            if grammar.file_problem(file):
                return None
            self.good_files.add(file)
        if grammar.qualname_problem(qualname):
            return None
        typed, fields["extra"] = codec._split_extra(get("extra", {}))
        fields.update(typed)
        return fields

    def light(self, qid: str, stored: dict[str, Any], table: list[str]) -> dict[str, Any] | None:
        """The light fields judged one by one (the full reader's messages); None: leave it to it."""
        where = f"quests[{qid!r}]"
        self.known_keys(stored, codec._QUEST_KEYS, where)
        data = {**layout.QUEST_DEFAULTS, **stored}
        state, lines = self.state_and_lines(data, where)
        fields: dict[str, Any] = {
            "id": qid,
            "state": state,
            "first": lines[0],
            "last": lines[1],
            "tries": self.count(data, "tries", where),
        }
        typed, fields["extra"] = codec._split_extra(data["extra"])
        for name in ("file", "qualname", "fingerprint"):
            fields[name] = self.get(data, name, str, where)
        for name in ("statements", "branches"):
            fields[name] = self.count(data, name, where)
        for name in ("issued_at", "passed_at"):
            fields[name] = self.get(data, name, str, where)
        fields["baseline"] = self.get(data, "baseline", bool, where)
        for name in ("file", "qualname"):
            problem = getattr(grammar, f"{name}_problem")(fields[name])
            if problem:
                raise self.fail(f"{where}.{name}", problem)
        if not codec._id_matches(qid, fields["file"], fields["qualname"]):
            return None  # the full reader's message, word for word
        if state is State.PASS and not (fields["passed_at"] and fields["fingerprint"]):
            return None
        fields.update(typed)
        return fields

    def _decoder(self, qid: str, stored: dict[str, Any], table: list[str]) -> Any:
        def decode(quest: Quest, name: str) -> None:
            # A value set before the first use stays: it is the newer one.
            if name == "covering_tests":
                where = f"quests[{qid!r}]"
                record, fault = layout.expand_quest(
                    {"covering_tests": stored.get("covering_tests", [])}, table
                )
                if fault:
                    raise self.fail(f"{where}.{fault[0]}", fault[1])
                names = self.str_list(record, "covering_tests", where)
                quest.__dict__.setdefault("covering_tests", names)
                return
            for key, value in self.lists(qid, stored, quest.file).items():
                quest.__dict__.setdefault(key, value)

        return decode


    def lists(self, qid: str, stored: dict[str, Any], file: str) -> dict[str, Any]:
        """A quest's lists but its covering tests, by the full reader's rules and messages."""
        where = f"quests[{qid!r}]"
        data = {**layout.QUEST_DEFAULTS, **stored}
        arcs: list[tuple[int, int]] = []
        for index, arc in enumerate(data["missing_branches"]):
            if type(arc) is not list or len(arc) != 2 or not all(type(n) is int for n in arc):
                raise self.fail(f"{where}.missing_branches[{index}]", "expected a [from, to] pair")
            arcs.append((arc[0], arc[1]))
        out: dict[str, Any] = {"missing_branches": arcs}
        out["facts"] = [self.fact(fact, f"{where}.facts[{i}]") for i, fact in enumerate(data.get("facts", []))]
        out["history"] = [self.event(event, f"{where}.history[{i}]") for i, event in enumerate(data["history"])]
        out["missing_lines"] = self.int_list(data, "missing_lines", where)
        out["excluded_lines"] = self.int_list(data, "excluded_lines", where)
        if "facts" not in stored:  # a scan's facts: what the missing lines and branches give
            out["facts"] = [line_fact(file, line) for line in out["missing_lines"]]
            out["facts"] += [branch_fact(file, arc) for arc in arcs]
        return out

    def fact(self, fact: Any, where: str) -> Fact:
        if not isinstance(fact, dict):
            raise self.fail(where, "expected an object")
        self.known_keys(fact, codec._FACT_KEYS, where)
        for key in ("check", "field", "expected", "actual"):
            self.get(fact, key, str, where)
        self.optional_str(fact, "message", where)
        return Fact.from_dict(fact)

    def event(self, event: Any, where: str) -> Event:
        if not isinstance(event, dict):
            raise self.fail(where, "expected an object")
        self.known_keys(event, codec._EVENT_KEYS, where)
        return Event(
            at=self.get(event, "at", str, where),
            action=self.get(event, "action", str, where),
            verdict=self.optional_str(event, "verdict", where),
            by=self.optional_str(event, "by", where),
            note=self.optional_str(event, "note", where),
            reason=self.optional_str(event, "reason", where),
            fingerprint=self.optional_str(event, "fingerprint", where),
        )


def loads_lazy(text: str | bytes, path: str = "quest.json") -> Ratchet:
    """`codec.loads`, the elements of each quest's lists validated and decoded on first use."""
    with codec_help.paused_gc():
        # Tried in turn: the file as the writer lays it out, its form proved, anything else.
        found = codec_view.read(text, path) or codec_fast.read(text)
        return found if found is not None else _LazyValidator(path).ratchet(codec.parsed(text, path))


__all__ = ["loads_lazy", "plain"]
