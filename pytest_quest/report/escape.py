"""Escaping for each medium pytest-quest writes to: terminal, GitHub Actions log, Markdown.

Test ids, exception messages, reasons and source lines may carry anything.

* Terminal: control characters shown escaped; only our own colour codes survive.
* GitHub Actions log: no plain line starts a workflow command (``::`` becomes
  ``: :``, ``##[`` becomes ``## [``); commands escape data as the toolkit does.
* Markdown: punctuation and HTML escaped, code spans fenced by more backticks
  than they hold, no line break or bare ``|`` (a cell cannot break its row).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

# Control characters and their kin: C0/C1 controls, format characters
# (bidirectional overrides, zero-width), line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _shown(char: str) -> str:
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    return ascii(char)[1:-1]


def visible(text: str, *, keep_tabs: bool = True) -> str:
    """`text` with every control character shown escaped (``\\n``, ``\\x1b``, ``\\u202e``)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        _shown(char)
        if unicodedata.category(char) in _HIDDEN and not (keep_tabs and char == "\t")
        else char
        for char in text
    )


def terminal_line(line: str, *, markup: bool = False) -> str:
    """One line for the terminal: control characters escaped; SGR colour codes kept if `markup`."""
    if not markup:
        return visible(line)
    parts = []
    last = 0
    for match in _SGR.finditer(line):
        parts.append(visible(line[last : match.start()]))
        parts.append(match.group())
        last = match.end()
    parts.append(visible(line[last:]))
    return "".join(parts)


_COMMAND = re.compile(r"::[a-z][a-z-]*(?: [^\r\n:]*)?::[^\r\n]*")


def github_plain(line: str) -> str:
    """`line` made plain text the GitHub runner cannot read as a workflow command."""
    line = line.replace("##[", "## [")
    stripped = line.lstrip()
    if stripped.startswith("::"):
        lead = line[: len(line) - len(stripped)]
        line = lead + ": :" + stripped[2:]
    return line


def github_line(line: str) -> str:
    """A line for the GitHub Actions log: a well-formed command as is, anything else plain."""
    if _COMMAND.fullmatch(line):
        return line  # read as this command (the runner tries ``::`` first, ``##[`` only then)
    return github_plain(line)


def escape_data(text: str) -> str:
    """A workflow command's message (toolkit's escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (toolkit's escapeProperty)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_json(text: str) -> str:
    """JSON text for the GitHub Actions log: ``##[`` (only ever inside a string) as ``##\\u005b``."""
    return text.replace("##[", "##\\u005b")


# What Markdown reads inside a line: emphasis, code, links and images, table
# pipes, strikethrough, math; HTML is made inert by entities for the two
# characters that start it: ``<`` (a tag, an autolink) and ``&`` (an entity).
# ``>`` and ``"`` mean something only inside a tag, so an arc reads
# ``2->4``, not ``2-&gt;4``.  (Punctuation that matters only at a line's start,
# such as ``>`` for a quote, never starts one: every call site writes a prefix
# of its own first.)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")
_HTML = {"&": "&amp;", "<": "&lt;"}


def md_text(text: object) -> str:
    """`text` as inline Markdown text: punctuation escaped, HTML inert, on one line."""
    flat = visible(str(text))
    flat = re.sub(r"[&<]", lambda m: _HTML[m.group()], flat)
    return _MD_SPECIAL.sub(r"\\\1", flat)


def md_code(text: object, *, cell: bool = True) -> str:
    """`text` as a Markdown code span: fenced, one line; in a table `cell`, ``|`` escaped."""
    flat = visible(str(text))
    if cell:
        flat = flat.replace("|", "\\|")
    if not flat:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or longest else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def encodable(text: str, encoding: str | None) -> str:
    """`text` with each character `encoding` cannot write as its backslash escape (``\\u2713``).

    A console set to ASCII or cp1252 would otherwise stop the output halfway
    with ``UnicodeEncodeError``; pytest escapes such text the same way.
    """
    if text.isascii() or not encoding:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: ASCII is safe everywhere
        return text.encode("ascii", "backslashreplace").decode("ascii")
    return text


def in_github_actions(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS", "").lower() == "true"
