"""A broken or hand-edited ratchet file: a clear usage error naming the field, file untouched.

Each kind of damage is checked twice: on ``store.loads`` (the message names
the field and the fix) and through a real command in a pytest subprocess
(exit status 4, no traceback, the file's bytes unchanged, no temporary file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Event, Fact, Quest, Ratchet
from pytest_quest.engine.codec import dumps, loads
from pytest_quest.engine.source import source_functions
from tests.support.projects import CALC, DOUBLE, SIGN, Project
from tests.support.projects import TEST_DOUBLE as TEST_CALC
from tests.support.quests import double_pass


def _sign_fingerprint() -> str:
    """``sign``'s fingerprint in `CALC` (a TODO quest issued for other code is passed over)."""
    (found,) = [f for f in source_functions("src/pkg/calc.py", CALC) if f.quest_id == SIGN]
    return found.fingerprint


def valid_ratchet() -> Ratchet:
    """A ratchet file matching `CALC`: ``sign`` is the active TODO, ``double`` a PASS."""
    sign = Quest(
        id=SIGN,
        file="src/pkg/calc.py",
        qualname="sign",
        first=5,
        last=8,
        fingerprint=_sign_fingerprint(),
        statements=4,
        branches=2,
        missing_lines=[6, 7, 8],
        missing_branches=[(6, 7), (6, 8)],
        facts=[Fact("coverage.line", "src/pkg/calc.py:6", "executed", "never executed")],
        issued_at="2026-01-01T00:00:00Z",
        history=[Event(at="2026-01-01T00:00:00Z", action="scan")],
    )
    double = double_pass("fp-double")
    return Ratchet(
        quests={SIGN: sign, DOUBLE: double},
        active=SIGN,
        scanned_at="2026-01-01T00:00:00Z",
    )


VALID = dumps(valid_ratchet())


def edit(change: Callable[[dict[str, Any]], None]) -> bytes:
    """The valid file, parsed, changed by `change`, and written back as a person would."""
    data = json.loads(VALID)
    change(data)
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def set_in(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data  # dicts and lists down the path
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def delete(path: tuple[str | int, ...]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data  # dicts and lists down the path
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


def duplicate_quest() -> bytes:
    # Two entries under one id (say, a bad merge of two branches): JSON
    # parsers keep the last one silently; we refuse.
    # Version 2 writes one quest a line: the line twice.
    lines = VALID.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f'"{SIGN}": {{'))
    block = lines[start].rstrip(",\n") + ",\n"
    return "".join([*lines[:start], block, *lines[start:]]).encode()


def renamed(old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["quests"][new] = data["quests"].pop(old)

    return change


def moved(new_file: str, new_qualname: str = "sign") -> Callable[[dict[str, Any]], None]:
    """``sign``'s entry as a stranger would forge it: another file or name, the id to match."""
    new_id = f"{new_file}::{new_qualname}"

    def change(data: dict[str, Any]) -> None:
        entry = data["quests"].pop(SIGN)
        entry["file"], entry["qualname"] = new_file, new_qualname
        data["quests"][new_id] = entry
        data["active"] = new_id

    return change


def raw_extra(literal: str) -> bytes:
    """The valid file with ``sign``'s extra holding `literal` as written (say ``1e999``)."""
    text = edit(set_in(("quests", SIGN, "extra"), {"x": "@@"})).decode()
    return text.replace('"@@"', literal).encode()


def merge_conflict() -> bytes:
    return ("<<<<<<< HEAD\n" + VALID + "=======\n" + VALID + ">>>>>>> branch\n").encode()


# kind: (damaged bytes, what the message must say: the field and the problem)
CORRUPTIONS: dict[str, tuple[bytes, str]] = {
    "truncated": (VALID.encode()[: len(VALID) // 2], r"not valid JSON at line \d+ column \d+"),
    "empty": (b"", "the file is empty"),
    "blank": (b"\n \n", "the file is empty"),
    "not-json": (b"quests: everything passed\n", "not valid JSON at line 1 column 1"),
    "merge-conflict": (merge_conflict(), "not valid JSON at line 1 column 1"),
    "not-utf8": (
        b'{"schema": 1, "tool": "\xff\xfe"}',
        r"not UTF-8 text \(byte 0xff at offset 23\)",
    ),
    "top-level-list": (b"[]\n", "top level: expected a JSON object"),
    "schema-missing": (edit(delete(("schema",))), "schema: missing field"),
    "schema-wrong-type": (
        edit(set_in(("schema",), "1")),
        "schema: expected an integer, found str",
    ),
    "schema-future": (
        edit(set_in(("schema",), 99)),
        r"schema: version 99 is newer than this pytest-quest understands \(2\) "
        r"\(upgrade pytest-quest\)",
    ),
    "schema-zero": (edit(set_in(("schema",), 0)), "schema: unknown version 0"),
    "unknown-state": (
        edit(set_in(("quests", SIGN, "state"), "MAYBE")),
        rf"quests\['{SIGN}'\]\.state: unknown state 'MAYBE' \(allowed: TODO, PASS, REVIEW, DONE, EXCLUDED\)",
    ),
    "missing-field": (
        edit(delete(("quests", SIGN, "fingerprint"))),
        rf"quests\['{SIGN}'\]\.fingerprint: missing field",
    ),
    "missing-top-field": (edit(delete(("quests",))), "quests: missing field"),
    "duplicate-id": (
        duplicate_quest(),
        rf"duplicate key '{SIGN}' at line \d+: a quest id or a field appears twice.*"
        r"\(keep one of the two entries",
    ),
    "pass-without-tests": (
        edit(set_in(("quests", DOUBLE, "covering_tests"), [])),
        rf"quests\['{DOUBLE}'\]\.covering_tests: a PASS quest must record the tests",
    ),
    "pass-without-date": (
        edit(set_in(("quests", DOUBLE, "passed_at"), "")),
        rf"quests\['{DOUBLE}'\]\.passed_at: a PASS quest must record when it passed",
    ),
    "pass-without-fingerprint": (
        edit(set_in(("quests", DOUBLE, "fingerprint"), "")),
        rf"quests\['{DOUBLE}'\]\.fingerprint: a PASS quest must record its fingerprint",
    ),
    "pass-with-missing-lines": (
        edit(set_in(("quests", DOUBLE, "missing_lines"), [2])),
        rf"quests\['{DOUBLE}'\]: a PASS quest cannot have missing lines",
    ),
    "wrong-type": (
        edit(set_in(("quests", SIGN, "tries"), "2")),
        rf"quests\['{SIGN}'\]\.tries: expected an integer, found str",
    ),
    "bool-for-int": (
        edit(set_in(("quests", SIGN, "statements"), True)),
        rf"quests\['{SIGN}'\]\.statements: expected an integer",
    ),
    "negative-tries": (
        edit(set_in(("quests", SIGN, "tries"), -1)),
        rf"quests\['{SIGN}'\]\.tries: must not be negative",
    ),
    "bad-lines": (
        edit(set_in(("quests", SIGN, "lines"), [8, 5])),
        rf"quests\['{SIGN}'\]\.lines: expected \[first, last\]",
    ),
    "bad-branch": (
        edit(set_in(("quests", SIGN, "missing_branches"), [[6]])),
        rf"quests\['{SIGN}'\]\.missing_branches\[0\]: expected a \[from, to\] pair",
    ),
    "bad-fact": (
        edit(delete(("quests", SIGN, "facts", 0, "field"))),
        rf"quests\['{SIGN}'\]\.facts\[0\]\.field: missing field",
    ),
    "bad-event": (
        edit(set_in(("quests", SIGN, "history", 0, "by"), 7)),
        rf"quests\['{SIGN}'\]\.history\[0\]\.by: expected a string, found int",
    ),
    "unknown-field": (
        edit(set_in(("quests", SIGN, "stat"), "PASS")),
        rf"quests\['{SIGN}'\]\.stat: unknown field \(known: .*state.*\) \(remove or rename it",
    ),
    "unknown-top-field": (edit(set_in(("notes",), "x")), r"notes: unknown field"),
    "extra-not-object": (
        edit(set_in(("quests", SIGN, "extra"), [1])),
        rf"quests\['{SIGN}'\]\.extra: expected an object, found list",
    ),
    "id-mismatch": (
        edit(renamed(SIGN, "src/pkg/calc.py::signature")),
        r"quests\['src/pkg/calc.py::signature'\]: id does not match file 'src/pkg/calc.py' "
        r"and qualname 'sign'",
    ),
    "bad-twin-ordinal": (
        edit(renamed(SIGN, SIGN + "@1")),
        rf"quests\['{SIGN}@1'\]: id does not match",
    ),
    "active-unknown": (
        edit(set_in(("active",), "src/pkg/calc.py::gone")),
        r"active: names 'src/pkg/calc.py::gone', which is not a quest",
    ),
    "quests-not-object": (edit(set_in(("quests",), [])), "quests: expected an object, found list"),
    # What a stranger may write into the file
    "file-absolute": (
        edit(moved("/etc/passwd")),
        r"quests\['/etc/passwd::sign'\]\.file: an absolute path",
    ),
    "file-climbs": (
        edit(moved("../../../../../etc/passwd")),
        r"quests\['\.\./\.\./\.\./\.\./\.\./etc/passwd::sign'\]\.file: climbs out with '\.\.'",
    ),
    "file-control": (
        edit(moved("src/pkg/calc.py\n::error file=X::Y")),
        r"\.file: holds the character '\\n'",
    ),
    "id-colons": (edit(moved("", "")), r"quests\['::'\]\.file: empty path"),
    "qualname-newline": (
        edit(moved("src/pkg/calc.py", "sign\n::error file=X::Y")),
        r"\.qualname: holds the character '\\n'",
    ),
    "qualname-ansi": (
        edit(moved("src/pkg/calc.py", "\x1b[31msign")),
        r"\.qualname: holds the character '\\x1b'",
    ),
    "qualname-html": (
        edit(moved("src/pkg/calc.py", "sign<img src=x onerror=alert(1)>")),
        r"\.qualname: 'sign<img src=x onerror=alert\(1\)>' is not a Python identifier",
    ),
    "qualname-locals": (
        edit(moved("src/pkg/calc.py", "sign.<locals>.inner")),
        r"\.qualname: '<locals>' is not a Python identifier",
    ),
    "tries-400-digits": (
        edit(set_in(("quests", SIGN, "tries"), int("9" * 400))),
        rf"quests\['{SIGN}'\]\.tries: an integer of 400 digits \(at most 15\)",
    ),
    "line-400-digits": (
        edit(set_in(("quests", SIGN, "missing_lines"), [6, -int("9" * 400)])),
        rf"quests\['{SIGN}'\]\.missing_lines\[1\]: an integer of 400 digits",
    ),
    "infinity-in-extra": (
        raw_extra("Infinity"),
        rf"quests\['{SIGN}'\]\.extra\.x: Infinity is not a JSON number",
    ),
    "nan-in-extra": (raw_extra("NaN"), rf"quests\['{SIGN}'\]\.extra\.x: NaN is not a JSON number"),
    "overflowing-float": (
        raw_extra("1e999"),
        rf"quests\['{SIGN}'\]\.extra\.x: 1e999 is beyond a finite number's range",
    ),
    "excluded-not-an-id": (
        edit(set_in(("excluded_functions",), ["src/pkg/calc.py::a\rb"])),
        r"excluded_functions\[0\]: holds the character '\\r'",
    ),
    "test-file-outside": (
        edit(set_in(("test_files",), {"/etc/passwd": "sha256:00"})),
        r"test_files\['/etc/passwd'\]: an absolute path",
    ),
}


def test_the_valid_file_is_valid() -> None:
    assert loads(VALID) == valid_ratchet()


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_loads_names_the_field_and_the_fix(kind: str) -> None:
    damaged, message = CORRUPTIONS[kind]
    with pytest.raises(RatchetFileError) as info:
        loads(damaged, "quest.json")
    text = str(info.value)
    assert text.startswith("quest.json: ")
    assert re.search(message, text), text
    assert info.value.fix, "every message says how to fix it"


# -- through the commands -------------------------------------------------------------

# The kinds the issue names, each through one command (rotating), and one
# through every command; ``args`` is the command line.
COMMANDS = [
    ("--quest", "next"),
    ("--quest-status",),
    ("--quest", "submit"),
    ("--quest", "scan"),
]
E2E_KINDS = [
    "truncated",
    "empty",
    "not-json",
    "schema-wrong-type",
    "schema-future",
    "unknown-state",
    "missing-field",
    "duplicate-id",
    "pass-without-tests",
    "wrong-type",
    "unknown-field",
    "not-utf8",
    "file-absolute",
    "file-climbs",
    "tries-400-digits",
    "infinity-in-extra",
    "id-colons",
    "qualname-newline",
    "qualname-html",
    "line-400-digits",
]
E2E_CASES = [(kind, COMMANDS[index % len(COMMANDS)]) for index, kind in enumerate(E2E_KINDS)]
E2E_CASES += [("merge-conflict", args) for args in COMMANDS]


@pytest.fixture
def calc_project(project: Project) -> Project:
    project.source("calc", CALC)
    project.test("test_calc", TEST_CALC)
    return project


def files_beside(project: Project) -> list[str]:
    return sorted(p.name for p in project.path.iterdir() if p.name.startswith((".quest", "quest")))


def test_the_valid_file_works_through_next(calc_project: Project) -> None:
    (calc_project.path / "quest.json").write_text(VALID)
    result, data = calc_project.run_json("--quest", "next")
    assert result.ret == 0
    assert data["quest"]["id"] == SIGN


@pytest.mark.parametrize(("kind", "args"), E2E_CASES, ids=lambda v: "-".join(v).strip("-"))
@pytest.mark.children_measured
def test_command_refuses_damaged_file_untouched(
    calc_project: Project, kind: str, args: tuple[str, ...]
) -> None:
    damaged, message = CORRUPTIONS[kind]
    path = calc_project.path / "quest.json"
    path.write_bytes(damaged)
    result = calc_project.run(*args)
    assert result.ret == 4, result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    errors = [line for line in result.stdout.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1, output
    assert errors[0].startswith(f"ERROR: {path}: ")
    assert re.search(message, errors[0]), errors[0]
    assert path.read_bytes() == damaged
    assert files_beside(calc_project) in (["quest.json"], [".quest", "quest.json"])


def test_json_mode_reports_the_damage_as_one_object(calc_project: Project) -> None:
    path = calc_project.path / "quest.json"
    damaged = CORRUPTIONS["unknown-state"][0]
    path.write_bytes(damaged)
    result, data = calc_project.run_json("--quest", "next")
    assert result.ret == 4
    assert data["schema"] == "pytest-quest/1"
    assert data["command"] == "next"
    assert data["error"].startswith(f"{path}: quests['{SIGN}'].state: unknown state 'MAYBE'")
    assert path.read_bytes() == damaged
