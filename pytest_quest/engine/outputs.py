"""The files a report is written to: an export (where it may go, written atomically) and the
CI step summary (appended).  What they hold is rendered by report/."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pytest_quest.core.errors import QuestUsageError

FORMATS = {".json": "json", ".csv": "csv", ".md": "md", ".sarif": "sarif", ".html": "html"}
"""The export formats by suffix; ``html`` is rendered by ``report/html.py``."""


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def target(
    given: str,
    invocation_dir: Path,
    force: bool,
    protected: Iterable[Path],
    source_roots: Iterable[Path],
    *,
    rootdir: Path | None = None,
    test_roots: Iterable[Path] = (),
) -> tuple[Path, str]:
    """The export file for `given` and its format; raise `QuestUsageError` on what must not be.

    `protected` are files never written over (the ratchet file and its locks);
    nor is any name beside one of them starting with its name
    (``quest.json.lock.json``) or the ratchet file's temporary files' prefix.  Files under `source_roots` (the code
    under test) and `test_roots` (the tests: an export must not rewrite what
    they read) are never written either, even with `force`.  Outside
    `rootdir` an export needs `force`.
    """
    path = Path(given)
    if not path.is_absolute():
        path = invocation_dir / path
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise QuestUsageError(
            f"--quest-export-to {given}: unknown suffix {path.suffix or '(none)'!r}; "
            f"use one of {', '.join(FORMATS)}"
        )
    if not path.parent.is_dir():
        raise QuestUsageError(
            f"--quest-export-to {given}: the folder {path.parent} does not exist; create it first"
        )
    resolved = path.resolve()
    for guarded in protected:
        if resolved == guarded.resolve():
            raise QuestUsageError(
                f"--quest-export-to {given}: that is the ratchet file {guarded}; "
                "an export never writes over it (choose another path)"
            )
    for guarded in protected:
        beside = guarded.resolve()
        if resolved.parent == beside.parent and (
            resolved.name.startswith(beside.name + ".") or resolved.name.startswith(".quest-tmp-")
        ):
            raise QuestUsageError(
                f"--quest-export-to {given}: that name belongs to the ratchet file {guarded} "
                "(its lock or temporary files); an export never writes there (choose another path)"
            )
    for kind, roots in (("the code under test", source_roots), ("the tests", test_roots)):
        for root in roots:
            root = root.resolve()
            if resolved == root or _inside(resolved, root):
                raise QuestUsageError(
                    f"--quest-export-to {given}: it is inside {kind} ({root}); "
                    "an export never writes there (choose another path)"
                )
    if resolved.is_dir():
        raise QuestUsageError(f"--quest-export-to {given}: it is a folder; name a file in it")
    if resolved.exists() and not resolved.is_file():
        raise QuestUsageError(
            f"--quest-export-to {given}: it is not a regular file (a FIFO, a device?); name a file"
        )
    if rootdir is not None and not _inside(resolved, rootdir.resolve()) and not force:
        raise QuestUsageError(
            f"--quest-export-to {given}: {resolved} is outside the rootdir {rootdir.resolve()}; "
            "pass --quest-export-force to write there"
        )
    if resolved.exists() and not force:
        raise QuestUsageError(
            f"--quest-export-to {given}: the file exists; pass --quest-export-force to overwrite it"
        )
    return path, FORMATS[suffix]


def write(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a temporary file beside it, then a rename."""
    tmp = path.with_name(f".{path.name}.quest-tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def append_step_summary(path: str, text: str) -> str | None:
    """Append `text` to the step summary file; return a problem message instead of raising."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        return f"could not append to GITHUB_STEP_SUMMARY ({path}): {exc}"
    return None
