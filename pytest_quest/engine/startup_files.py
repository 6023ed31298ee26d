"""The interpreter's start-up files, watched over a judged run: nothing the tests plant runs in a judge.

Python runs the ``.pth`` files and ``sitecustomize``/``usercustomize`` of its path in
every process, the next judge's too.  The judge compares them before and after the
gate's children run: a change is undone (a new file renamed with `QUARANTINE`) and the
submission is REVIEW (``guard.startup_files``).  Limits: docs/judge.md.
"""

from __future__ import annotations

import os
import site
import sys

from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import Fact, Verdict
from pytest_quest.engine import sandbox

QUARANTINE = ".quarantined-by-pytest-quest"
_CUSTOMIZE = ("sitecustomize", "usercustomize")
_MAX_BYTES = 1 << 20


def startup_folders() -> tuple[list[str], list[str]]:
    """(the site folders whose ``.pth`` files run, the path folders ``*customize`` is imported from)."""
    sites = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        sites.append(site.getusersitepackages())
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    return _real([f for f in sites if os.path.isdir(f)]), _real([*sites, *paths])


def _real(folders: list[str]) -> list[str]:
    return list(dict.fromkeys(os.path.realpath(folder) for folder in folders))


def _is_startup(name: str, site_folder: bool) -> bool:
    if site_folder and name.endswith(".pth"):
        return True
    stem = name[:-3] if name.endswith(".py") else name
    return stem in _CUSTOMIZE or (name.endswith(".pyc") and name.split(".", 1)[0] in _CUSTOMIZE)


def _read(path: str) -> bytes:
    if os.path.isdir(path):
        init = os.path.join(path, "__init__.py")
        return b"<package>" + (_read(init) if os.path.isfile(init) else b"")
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_BYTES)
    except OSError:
        return b"<unreadable>"


class StartupFiles:
    """The start-up files of this interpreter's folders: a snapshot, then `restore` after a run."""

    def __init__(self, folders: tuple[list[str], list[str]] | None = None) -> None:
        self.sites, self.paths = folders if folders is not None else startup_folders()
        self.before = self.scan()

    def scan(self) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for folder in dict.fromkeys([*self.sites, *self.paths]):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                if _is_startup(name, folder in self.sites):
                    path = os.path.join(folder, name)
                    found[path] = _read(path)
        return found

    def restore(self) -> list[str]:
        """Undo every change since the snapshot (new text kept aside); one line per file changed."""
        now = self.scan()
        changes = []
        for path in sorted(set(now) | set(self.before)):
            old, new = self.before.get(path), now.get(path)
            if old == new:
                continue
            aside = f"{path}{QUARANTINE}-{os.getpid()}"
            try:
                if new is not None:
                    os.replace(path, aside)
                if old is not None and not old.startswith(b"<"):
                    with open(path, "wb") as handle:
                        handle.write(old)
                done = "put back" if new is None else f"its new text moved to {aside}"
            except OSError as exc:
                done = f"could not be undone: {exc.strerror or exc}"
            what = "added" if old is None else "removed" if new is None else "changed"
            changes.append(f"{path} {what} during the run ({done})")
        return changes


def startup_facts(changes: list[str]) -> list[Fact]:
    return [
        Fact(
            check="guard.startup_files",
            field=change.split(" ", 1)[0],
            expected="the interpreter's start-up files are not written while tests are judged",
            actual=change,
            message=(
                f"could not confirm: {change}; Python runs such files in every process it "
                "starts, the next judge's included, so a person must review the tests"
            ),
        )
        for change in changes
    ]


def startup_watch() -> StartupFiles | None:
    """The watch over one judgement's runs; None where the engine keeps the start-up files out of reach.

    In an engine that leaves the environment read-only and throws away what a
    run writes (bwrap), nothing a judged test writes can start in a later
    process; a change seen there was made by something else (a ``pip
    install`` at the same moment), which is none of the verdict's business.
    """
    engine = sandbox.active()
    if engine is not None and engine.throwaway:
        return None
    return StartupFiles()


def with_startup_changes(result: GateResult, changes: list[str]) -> GateResult:
    """A FAIL stays FAIL with the facts added; anything else is REVIEW (step ``guard``)."""
    facts = startup_facts(changes)
    if not facts:
        return result
    if result.verdict is Verdict.FAIL:
        return GateResult(Verdict.FAIL, [*result.facts, *facts], result.step)
    return GateResult(Verdict.REVIEW, [*facts, *result.facts], "guard")
