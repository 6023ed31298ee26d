"""Tamper signs: static checks of the test code and pytest configuration a submission adds or changes.

A sign is a construct that honest tests have no need for and that can reach
the judge, its evidence or its verdict (a trace hook, code-object surgery, an
`atexit` hook, a detached process, a write to the ratchet file...). Each is a
`Finding` naming file, line and construct; the gate turns them into REVIEW
facts (`tamper.<kind>`). Only lines the submission added or changed are judged:
what the project already had is not the submission's doing. The limits of
each kind are in docs/judge.md ("Tamper signs").
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from pytest_quest.core.model import Fact
from pytest_quest.core.tamper_python import Settings, Sign, python_signs

KINDS: dict[str, str] = {
    "internals": "reaches into pytest-quest or coverage.py (imports, sys.modules, their files and variables)",
    "tracing": "installs or reads a trace/profile/monitoring/audit hook",
    "code": "builds, swaps or inspects code objects and function internals",
    "builtins": "changes builtins for the whole process",
    "atexit": "runs code at interpreter exit or at fork",
    "process": "starts a process that can outlive the run, or names the parent",
    "ratchet": "writes, links, moves or locks the ratchet file or its lock",
    "heap": "walks the garbage collector's object graph",
    "ctypes": "uses ctypes",
    "frames": "walks up the call stack",
    "config": "changes how pytest runs: addopts, plugins, outcome hooks",
    "unjudged": "a Python file nested too deeply for the check to walk",
}

_INI_FILES = frozenset({"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg"})
_TOML_FILES = frozenset({"pyproject.toml", "pytest.toml", ".pytest.toml"})
_SECTIONS = frozenset({"pytest", "tool:pytest", "tool.pytest", "tool.pytest.ini_options"})
# Options that select, stop, reorder-by-failure, reconfigure, or touch coverage
# and pytest-quest; matched as `--name` or `--name=value`.
_LONG_OPTIONS = frozenset(
    {
        "--override-ini",
        "--exitfirst",
        "--maxfail",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--lf",
        "--last-failed",
        "--lfnf",
        "--last-failed-no-failures",
        "--ff",
        "--failed-first",
        "--sw",
        "--stepwise",
        "--sw-skip",
        "--stepwise-skip",
        "--runxfail",
        "--config-file",
        "--rootdir",
        "--confcutdir",
        "--noconftest",
        "--continue-on-collection-errors",
    }
)
_LONG_PREFIXES = ("--quest", "--cov", "--no-cov")
# -m is left out: `-m "not slow"` is everyday configuration, and narrowing the
# selection can only leave tests out, which never earns coverage or kills mutants.
_SHORT_OPTIONS = frozenset("pokcx")
_SHORT_WITH_VALUE = frozenset("pokmcWnr")
# `-p NAME` loads NAME's code into the run; `-p no:NAME` is a sign only for the
# plugins that measure or judge.
_HARMLESS_PLUGINS = frozenset({"pytester"})
_JUDGING_PLUGIN = re.compile(r"quest|cov", re.IGNORECASE)
_TOML_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


@dataclass(frozen=True)
class SubmittedFile:
    """A file the submission adds or changes: its path relative to the rootdir, its
    text, and its `previous` text (None when the file is new)."""

    path: str
    text: str
    previous: str | None = None


@dataclass(frozen=True)
class Finding:
    """One tamper sign: its `kind` (a key of `KINDS`), where, the code, and why it matters."""

    kind: str
    path: str
    line: int
    construct: str
    why: str

    @property
    def check(self) -> str:
        return f"tamper.{self.kind}"

    def fact(self) -> Fact:
        return Fact(
            check=self.check,
            field=f"{self.path}:{self.line}",
            expected="no tamper sign in test code or configuration the submission adds or changes",
            actual=self.construct,
            message=f"tamper sign ({self.kind}): `{self.construct}` {self.why}",
        )


def find_tamper_signs(
    files: Iterable[SubmittedFile],
    *,
    own_packages: Iterable[str] = (),
    ratchet_name: str = "quest.json",
    coverage_data_name: str = ".coverage",
) -> list[Finding]:
    """The tamper signs on the added or changed lines of `files`, sorted by path and line.

    Python files (test modules, conftest files, helpers) and pytest configuration
    files (`pytest.ini`, `pyproject.toml`, `tox.ini`, `setup.cfg`, `pytest.toml`)
    are judged; others are ignored, and so is a Python file that does not parse.
    `own_packages` are the top-level packages of the code under test (a project
    that is pytest-quest or coverage.py imports itself in its tests);
    `ratchet_name` and `coverage_data_name` are the file names of the ratchet
    file and of coverage.py's data file.
    """
    submitted = list(files)
    settings = Settings(
        ratchet_name=ratchet_name,
        coverage_data_name=coverage_data_name,
        own_packages=frozenset(own_packages),
        local_modules=frozenset(name for file in submitted for name in _module_names(file.path)),
    )
    findings: list[Finding] = []
    for file in submitted:
        name = PurePosixPath(file.path).name
        if name.endswith(".py"):
            signs = python_signs(file.text, settings)
        elif name in _INI_FILES or name in _TOML_FILES:
            signs = list(config_signs(file.text, toml=name in _TOML_FILES))
        else:
            continue
        changes = _Changes(file.text, file.previous)
        kept = [sign for sign in signs if changes.touched(sign.line, sign.end_line)]
        findings.extend(_one_per_line(file.path, kept))
    return sorted(findings, key=lambda found: (found.path, found.line, found.kind))


def _one_per_line(path: str, signs: list[Sign]) -> Iterator[Finding]:
    seen: set[tuple[str, int]] = set()
    ratchet_lines = {sign.line for sign in signs if sign.kind == "ratchet"}
    for sign in signs:
        if (sign.kind, sign.line) in seen:
            continue
        if sign.kind == "internals" and sign.line in ratchet_lines:
            continue  # the literal naming the file is part of the write already reported
        seen.add((sign.kind, sign.line))
        yield Finding(sign.kind, path, sign.line, sign.construct, sign.why)


def _module_names(path: str) -> Iterator[str]:
    """Dotted names a file may be imported as (the rootdir and sys.path are unknown)."""
    parts = PurePosixPath(path).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    for start in range(len(parts)):
        yield ".".join(parts[start:])


class _Changes:
    """Which lines of a file's new text the submission added or changed."""

    def __init__(self, text: str, previous: str | None) -> None:
        self.everything = previous is None
        self.lines: set[int] = set()
        self.gaps: set[int] = set()  # a gap g: lines were deleted between g and g + 1
        if previous is None:
            return
        old, new = previous.splitlines(), text.splitlines()
        # The common head and tail first: an edit is usually local, and the
        # matcher is slow on a long file (quadratic at worst).
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        matcher = difflib.SequenceMatcher(
            None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False
        )
        for tag, _, _, start, end in matcher.get_opcodes():
            if tag in ("replace", "insert"):
                self.lines.update(range(head + start + 1, head + end + 1))
            elif tag == "delete":
                self.gaps.add(head + start)

    def touched(self, first: int, last: int) -> bool:
        """True when a line in `first..last` is new or changed, or lines were deleted inside."""
        if self.everything:
            return True
        if any(line in self.lines for line in range(first, last + 1)):
            return True
        return any(first <= gap < last for gap in self.gaps)


def config_signs(text: str, *, toml: bool) -> Iterator[Sign]:
    """Signs in a pytest configuration file: `addopts` options and `quest_*` settings."""
    entries = _toml_entries(text) if toml else _ini_entries(text)
    for line, key, value in entries:
        if key.startswith("quest"):
            yield Sign(
                "config",
                line,
                line,
                f"{key} = {value.strip()}"[:80],
                "sets a pytest-quest option in the project's configuration",
            )
        elif key == "addopts":
            for option in _risky_options(_arguments(value, toml=toml)):
                yield Sign(
                    "config",
                    line,
                    line,
                    f"addopts: {option}",
                    "adds a pytest option that selects, stops or reconfigures the run",
                )


def _arguments(value: str, *, toml: bool) -> list[str]:
    texts = (
        [double or single for double, single in _TOML_STRING.findall(value)] if toml else [value]
    )
    arguments: list[str] = []
    for text in texts:
        try:
            arguments.extend(shlex.split(text))
        except ValueError:  # an unbalanced quote continued on the next line
            arguments.extend(text.split())
    return arguments


def _risky_options(arguments: list[str]) -> Iterator[str]:
    for index, argument in enumerate(arguments):
        if argument.startswith("--"):
            name = argument.split("=", 1)[0]
            if name in _LONG_OPTIONS or name.startswith(_LONG_PREFIXES):
                yield argument
        elif argument.startswith("-p"):
            following = arguments[index + 1] if index + 1 < len(arguments) else ""
            plugin = argument[2:] or following
            if not _harmless_plugin(plugin):
                yield f"-p {plugin}".strip()
        elif argument.startswith("-") and len(argument) > 1:
            for letter in argument[1:]:
                if letter in _SHORT_OPTIONS:
                    yield argument
                    break
                if letter in _SHORT_WITH_VALUE or not letter.isalpha():
                    break


def _harmless_plugin(plugin: str) -> bool:
    if plugin.startswith("no:"):
        return not _JUDGING_PLUGIN.search(plugin)
    return plugin in _HARMLESS_PLUGINS


def _ini_entries(text: str) -> Iterator[tuple[int, str, str]]:
    section, key = "", ""
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped[0] in "#;":
            continue
        header = re.match(r"^\[([^\]]+)\]", raw)
        if header:
            section, key = header.group(1).strip(), ""
            continue
        if section not in _SECTIONS:
            continue
        if raw[0].isspace() and key:
            yield number, key, stripped
            continue
        entry = re.match(r"^([\w.-]+)\s*[=:]\s*(.*)$", stripped)
        if entry:
            key = entry.group(1).lower()
            yield number, key, entry.group(2)


def _toml_entries(text: str) -> Iterator[tuple[int, str, str]]:
    section, key, depth = "", "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        code = _TOML_STRING.sub('""', raw).split("#", 1)[0]
        if depth > 0:
            depth += code.count("[") - code.count("]")
            if section in _SECTIONS:
                yield number, key, raw
            continue
        header = re.match(r"^\s*\[([^\[\]]+)\]\s*$", code)
        if header:
            section, key = header.group(1).replace(" ", "").replace('"', ""), ""
            continue
        if code.lstrip().startswith("[["):
            section = ""
            continue
        entry = re.match(r"^\s*([\w.-]+)\s*=\s*(.*)$", raw)
        if entry:
            key = entry.group(1)
            depth = max(0, code.count("[") - code.count("]"))
            if section in _SECTIONS:
                yield number, key, entry.group(2)
