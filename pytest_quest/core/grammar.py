"""What a name read from the ratchet file may look like: the forms the scanner itself writes.

The ratchet file is data from a stranger.  A `file` is a relative POSIX path
(no ``..``, empty or ``.`` part, no control character), a `qualname` dotted
identifiers, an id ``file::qualname`` with ``@N`` (N >= 2) for a twin;
integers are bounded (`MAX_DIGITS`).  Each check returns the problem, or ``""``.
"""

from __future__ import annotations

import unicodedata

#: The most digits an integer of the ratchet file may have (line numbers,
#: counts, tries; well inside a JSON reader's exact range of 2**53).
MAX_DIGITS = 15

# Unicode categories never part of a name: controls, format characters
# (bidirectional overrides, zero-width joiners), line and paragraph separators.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def control_character(text: str) -> str:
    """The first character of `text` no name may hold, shown escaped, or ``""``."""
    if text.isascii() and text.isprintable():
        return ""  # the common case, at C speed
    for char in text:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            return ascii(char)
    return ""


def file_problem(file: str) -> str:
    """Why `file` is not a path the scanner writes (relative, POSIX, inside), or ``""``."""
    if not file:
        return "empty path"
    bad = control_character(file)
    if bad:
        return f"holds the character {bad} (a path the scanner writes never does)"
    if "\\" in file:
        return "holds a backslash (the scanner writes '/' between folders)"
    if file.startswith("/") or (file[1:3] == ":/" and file[0].isalpha()):
        return "an absolute path (the scanner writes paths relative to the rootdir)"
    parts = file.split("/")
    if ".." in parts:
        return "climbs out with '..' (the scanner writes paths inside the rootdir)"
    if any(part in ("", ".") for part in parts):
        return "an empty or '.' part (the scanner writes plain relative paths)"
    return ""


def qualname_problem(qualname: str) -> str:
    """Why `qualname` is not dotted Python identifiers, or ``""``."""
    if not qualname:
        return "empty name"
    bad = control_character(qualname)
    if bad:
        return f"holds the character {bad}"
    for part in qualname.split("."):
        if not part.isidentifier():
            return (
                f"{part!r} is not a Python identifier (a qualname is dotted identifiers, "
                "such as Outer.method)"
            )
    return ""


def id_problem(qid: str) -> str:
    """Why `qid` is not ``file::qualname`` (``@N`` for a twin), or ``""``."""
    file, sep, rest = qid.rpartition("::")
    if not sep:
        return "expected FILE::QUALNAME"
    qualname, at, ordinal = rest.partition("@")
    if at and not (
        ordinal.isascii() and ordinal.isdigit() and ordinal[0] != "0" and ordinal != "1"
    ):
        return f"the twin suffix @{ordinal} is not @2, @3..."
    return file_problem(file) or qualname_problem(qualname)


def too_many_digits(text: str) -> bool:
    """Whether the integer literal `text` is longer than `MAX_DIGITS` digits."""
    return len(text.lstrip("-")) > MAX_DIGITS
