"""What a surviving mutant made the function do, as the judge words it in the fact.

Pure (stdlib only).  The child's fields are the tested code's own reprs, so
the judge writes the sentence: each field must be a string, is cut short and
put in a code span it cannot leave, so a `__repr__` cannot forge a fact.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pytest_quest.core.words import counted

#: Characters kept of each shown field (the child caps them too).
LIMIT = {"test": 160, "args": 160, "mutant": 100, "original": 100}
#: Characters kept of the witness search's call and reasons.
CALL_LIMIT = 200

_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def quoted(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, every control character and backtick escaped, in backticks."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    out = []
    for char in text:
        if char == "`":
            out.append("\\x60")
        elif char == "\\":
            out.append("\\\\")
        elif unicodedata.category(char) in _HIDDEN:
            out.append(ascii(char)[1:-1])
        else:
            out.append(char)
    return "`" + "".join(out) + "`"


def _ending(text: str) -> tuple[str, str] | None:
    verb, _, value = text.partition(" ")
    if verb not in ("returns", "raises", "leaves", "yields"):
        return None
    return verb, value


def observed_text(data: Any) -> str:
    """The sentence for a fact from the child's `observed` fields, or "" when they do not fit."""
    if not isinstance(data, dict):
        return ""
    raw = {key: data.get(key) for key in LIMIT}
    if not all(isinstance(value, str) for value in raw.values()):
        return ""
    fields: dict[str, str] = {key: str(value) for key, value in raw.items()}
    mutant, original = _ending(fields["mutant"]), _ending(fields["original"])
    if mutant is None or original is None or not fields["test"]:
        return ""
    args = quoted(fields["args"], LIMIT["args"]) if fields["args"] else "no arguments"
    return (
        f"in {quoted(fields['test'], LIMIT['test'])}, with {args} the mutant "
        f"{mutant[0]} {quoted(mutant[1], LIMIT['mutant'])} where the function "
        f"{original[0]} {quoted(original[1], LIMIT['original'])}; no test noticed"
    )


def witness_text(search: Any) -> str:
    """The sentence for the witness the search found (the child's `search` fields), or ""."""
    data = search.get("witness") if isinstance(search, dict) else None
    if not isinstance(data, dict):
        return ""
    call, mutant, original = (data.get(key) for key in ("call", "mutant", "original"))
    if not all(isinstance(value, str) for value in (call, mutant, original)):
        return ""
    ended_mutant, ended_original = _ending(str(mutant)), _ending(str(original))
    if not call or ended_mutant is None or ended_original is None:
        return ""
    return (
        f"with {quoted(str(call), CALL_LIMIT)} the mutant {ended_mutant[0]} "
        f"{quoted(ended_mutant[1], LIMIT['mutant'])} where the function {ended_original[0]} "
        f"{quoted(ended_original[1], LIMIT['original'])}; no test noticed"
    )


def held_because(search: Any) -> str:
    """Why a survivor with no witness still counts against the tests; "" when it does not.

    It does not when the search called the function (`calls`) and saw
    nothing it cannot compare (`escapes`) and no `problem`: every effect of
    the function was compared and none told the mutant apart.
    """
    if not isinstance(search, dict):
        return "no witness search was made"
    problem, escapes, calls = search.get("problem"), search.get("escapes"), search.get("calls")
    if not isinstance(problem, str) or not isinstance(escapes, str):
        return "no witness search was made"
    if problem:
        return f"no witness could be looked for: {quoted(problem, CALL_LIMIT)}"
    if escapes:
        return (
            "its calls reach outside what the witness search compares "
            f"({quoted(escapes, CALL_LIMIT)}): assert on that effect"
        )
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        return "no witness could be looked for: no call could be tried"
    return ""


def tests_shown(tests: list[str], most: int = 3) -> str:
    """Up to `most` test ids, each in its code span, and how many more."""
    shown = ", ".join(quoted(t, LIMIT["test"]) for t in tests[:most])
    return shown + (f" and {len(tests) - most} more" if len(tests) > most else "")


def possibly_equivalent(line: int, tests: list[str]) -> str:
    """The label of a mutant every test of the whole suite reaching `line` lets through."""
    count = f"all {counted(len(tests), 'test')}" if len(tests) != 1 else "the one test"
    verb = "reach" if len(tests) != 1 else "reaches"
    return (
        f"possibly equivalent: it also survives {count} of the suite that {verb} line "
        f"{line} ({tests_shown(tests)})"
    )
