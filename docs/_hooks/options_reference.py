"""MkDocs hook: the configuration reference, generated from the options' own definitions.

``docs/configuration.md`` holds the marker ``<!-- quest-options -->``; at build
time it is replaced by one section per option of
``pytest_quest.plugin.option_table._OPTIONS`` (flags, metavar, ini name and type,
default, whether it repeats, help), so the page cannot drift from the code.
The records are read generically (by field name, with fallbacks), so fields
added to the table later show up without changing this file.

`render()` is plain Python, tested by tests/unit/test_docs.py.
"""

from __future__ import annotations

from typing import Any

from pytest_quest.plugin import option_table

MARKER = "<!-- quest-options -->"

_KNOWN = {"name", "flags", "ini_type", "default", "parse", "action", "help", "metavar"}


def _fields(option: Any) -> dict[str, Any]:
    if hasattr(option, "_asdict"):
        return dict(option._asdict())
    return {key: value for key, value in vars(option).items() if not key.startswith("_")}


def _code(text: object) -> str:
    return "`" + str(text).replace("`", "'") + "`"


def _default(value: Any) -> str:
    if value is None or value in ([], ()):
        return ""
    if value is False:
        return "off"
    if value is True:
        return "on"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return _code(value)


def _flag(fields: dict[str, Any]) -> str:
    flags = fields.get("flags") or (f"--{str(fields['name']).replace('_', '-')}",)
    metavar = fields.get("metavar")
    action = fields.get("action") or "store"
    shown = []
    for flag in flags:
        if action in ("store_true", "store_false", "count") or not metavar:
            shown.append(_code(flag))
        else:
            shown.append(_code(f"{flag} {metavar}"))
    return ", ".join(shown)


def _ini(fields: dict[str, Any]) -> str:
    ini_type = fields.get("ini_type")
    if ini_type is None:
        return "command line only"
    return f"{_code(fields['name'])} ({ini_type})"


def _notes(fields: dict[str, Any]) -> str:
    notes = []
    if (fields.get("action") or "") == "append":
        notes.append("repeatable")
    choices = fields.get("choices")
    if choices:
        notes.append("one of " + ", ".join(_code(choice) for choice in choices))
    for key in sorted(set(fields) - _KNOWN - {"choices"}):
        value = fields[key]
        if value not in (None, "", (), [], {}) and not callable(value):
            notes.append(f"{key}: {_code(value)}")
    return "; ".join(notes)


def render() -> str:
    """The reference as Markdown: one section per option, then typed values and deprecated names."""
    out: list[str] = []
    for option in option_table._OPTIONS:
        fields = _fields(option)
        out += [f"### {_flag(fields)}", "", str(fields.get("help") or ""), ""]
        out.append(f"* ini option: {_ini(fields)}")
        default = _default(fields.get("default"))
        if default:
            out.append(f"* default: {default}")
        notes = _notes(fields)
        if notes:
            out.append(f"* {notes}")
        out.append("")
    allowed = getattr(option_table, "_ALLOWED", {})
    if allowed:
        out += ["### Values of typed options", ""]
        out += [f"* {ini_type}: {text}" for ini_type, text in sorted(allowed.items())]
        out.append("")
    deprecated = getattr(option_table, "DEPRECATED_INI", {})
    if deprecated:
        out += ["### Deprecated ini names, still read", ""]
        out += [f"* {_code(old)}: use {_code(new)}" for old, new in sorted(deprecated.items())]
    return "\n".join(out).rstrip("\n") + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker on the configuration page with the generated reference."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())
