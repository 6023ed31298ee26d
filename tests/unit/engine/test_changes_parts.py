"""The pieces of --quest-since: git's diff read, names unquoted, functions compared."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine import changes
from pytest_quest.engine.changes import _changed_lines, _diff, _functions, _unquoted, compare
from pytest_quest.engine.source import source_functions


class _Git:
    """Answers each git command by its first argument, and records the commands."""

    def __init__(self, answers: dict[str, tuple[int, bytes, bytes]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, args: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess[bytes]:
        self.calls.append(args)
        code, out, err = self.answers[args[0] if args[0] != "diff" else args[1]]
        return subprocess.CompletedProcess(["git", *args], code, out, err)


def _fake(monkeypatch: pytest.MonkeyPatch, answers: dict[str, tuple[int, bytes, bytes]]) -> _Git:
    fake = _Git(answers)
    monkeypatch.setattr(changes, "git", fake)
    return fake


def test_diff_reads_each_status_and_the_untracked_files(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = b"M\0a.py\0R096\0old.py\0new.py\0D\0gone.py\0A\0added.py\0T\0link.py\0C075\0src.py\0copy.py\0"
    fake = _fake(
        monkeypatch,
        {"--name-status": (0, listed, b""), "ls-files": (0, b"u1.py\0added.py\0\0", b"")},
    )
    now, touched = _diff("abc", Path("/top"), ["src", "lib"])
    assert now == {
        "a.py": "a.py",
        "new.py": "old.py",
        "added.py": None,
        "link.py": "link.py",
        "copy.py": "src.py",
        "u1.py": None,
    }
    assert touched == ["a.py", "old.py", "gone.py", "link.py"]
    assert fake.calls == [
        [
            "diff",
            "--name-status",
            "-z",
            "-M",
            "--no-ext-diff",
            "--no-color",
            "abc",
            "--",
            "src",
            "lib",
        ],
        ["ls-files", "--others", "--exclude-standard", "-z", "--", "src", "lib"],
    ]


def test_diff_of_nothing_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"--name-status": (0, b"", b""), "ls-files": (0, b"", b"")})
    assert _diff("abc", Path("/top"), ["."]) == ({}, [])


def test_diff_that_git_refuses_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"--name-status": (128, b"", b"fatal: bad object\n")})
    with pytest.raises(QuestUsageError) as caught:
        _diff("0123456789abcdef", Path("/top"), ["."])
    assert (
        str(caught.value)
        == "--quest-since: git diff against 0123456789ab failed: fatal: bad object"
    )


DIFF = b"""\
diff --git a.py a.py
--- a.py
+++ a.py
@@ -3 +3 @@ def f():
-    return 1
+    return 2
@@ -10,0 +11,3 @@ def g():
@@ -20,2 +23,0 @@
@@ weird @@
diff --git gone.py gone.py
--- gone.py
+++ /dev/null
@@ -1,4 +0,0 @@
diff --git "g\\303\\251.py" "g\\303\\251.py"
+++ "g\\303\\251.py"
@@ -1 +1,2 @@
"""


def test_changed_lines_per_file_from_the_hunks(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake(monkeypatch, {"-U0": (0, DIFF, b"")})
    assert _changed_lines("abc", Path("/top"), ["."]) == {"a.py": {3, 11, 12, 13}, "gé.py": {1, 2}}
    assert fake.calls == [
        ["diff", "-U0", "-M", "--no-ext-diff", "--no-color", "--no-prefix", "abc", "--", "."]
    ]


def test_changed_lines_skips_hunks_before_any_file(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"-U0": (0, b"@@ -1 +1 @@\n", b"")})
    assert _changed_lines("abc", Path("/top"), ["."]) == {}


def test_changed_lines_that_git_refuses_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"-U0": (1, b"", b"  error: no  \n")})
    with pytest.raises(QuestUsageError) as caught:
        _changed_lines("fedcba9876543210", Path("/top"), ["."])
    assert str(caught.value) == "--quest-since: git diff against fedcba987654 failed: error: no"


def test_unquoted() -> None:
    assert _unquoted("plain.py") == "plain.py"
    assert _unquoted('"a\\tb.py"') == "a\tb.py"
    assert _unquoted('"sp\\303\\244t.py"') == "spät.py"
    assert _unquoted('"bad\\377.py"') == "bad\udcff.py"
    assert _unquoted('"') == '"'
    assert _unquoted('"x.py') == '"x.py'


def test_functions_of_a_file_or_of_none() -> None:
    data = b"def f():\n    return 1\n"
    assert _functions(data, "m.py") == source_functions("m.py", "def f():\n    return 1\n")
    assert [info.qualname for info in _functions(data, "m.py")] == ["f"]
    assert _functions(None, "m.py") == []
    assert _functions(b"def (:\n", "m.py") == []
    assert [info.qualname for info in _functions(b"def h():\n    return '\xff'\n", "m.py")] == ["h"]


BEFORE = """\
def same():
    return 1


def edited():
    return 2


def moved_here():
    return 3
"""

NOW = """\
def same():
    return 1


def edited():
    return 20


def renamed_twin():
    return 3


def brand_new():
    return 4


def from_elsewhere():
    return 5
"""


def test_compare_finds_the_changed_and_the_new_functions() -> None:
    before = source_functions("m.py", BEFORE)
    # A function without a measurable line is never a quest (coverage.py may find none).
    now = [
        *source_functions("m.py", NOW),
        replace(source_functions("m.py", "def empty(): ...\n")[0], lines=set()),
    ]
    moved = source_functions("other.py", "def from_elsewhere():\n    return 5\n")
    moved_from = {(info.qualname, info.fingerprint) for info in moved}
    changed, new = compare(now, before, moved_from)
    assert [info.qualname for info in changed] == ["edited", "renamed_twin", "brand_new"]
    assert new == {"m.py::renamed_twin", "m.py::brand_new"}
    everything, all_new = compare(now, [], set())
    assert [info.qualname for info in everything] == [
        "same",
        "edited",
        "renamed_twin",
        "brand_new",
        "from_elsewhere",
    ]
    assert all_new == {
        f"m.py::{name}"
        for name in ["same", "edited", "renamed_twin", "brand_new", "from_elsewhere"]
    }
