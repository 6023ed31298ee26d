"""What the use cases need from one pytest invocation: where its tests are, how to start a
child like it, its terminal, and the Context built from them (plugin/session.py, sessionless.py).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.config import create_terminal_writer

from pytest_quest.app.context import ChildSetup, Context, RunData, Terminal
from pytest_quest.core.errors import QuestError
from pytest_quest.engine.testfiles import FileSearch
from pytest_quest.engine.tty import controlling_terminal
from pytest_quest.plugin.judge import handover
from pytest_quest.plugin.loaded import pytest_cov_loaded, xdist_loaded
from pytest_quest.report.escape import encodable, github_line, in_github_actions, terminal_line
from pytest_quest.report.json import Output, envelope, error_output
from pytest_quest.report.progress import Steps, no_steps, terminal_steps

if TYPE_CHECKING:
    from pytest_quest.app.options import QuestOptions
    from pytest_quest.engine.store import RatchetStore
    from pytest_quest.verify.adapters import Verifier


def build_context(
    config: pytest.Config,
    options: QuestOptions,
    *,
    store: RatchetStore,
    run: RunData,
    view: Terminal,
) -> Context:
    """The use case's Context: plain values and callables, nothing of pytest's."""
    rootdir = Path(str(config.rootpath))

    def verifiers() -> list[Verifier]:
        from pytest_quest.plugin.verifiers import configured_verifiers  # only when verifying

        return configured_verifiers(config, options, rootdir)

    return Context(
        options=options,
        rootdir=rootdir,
        store=store,
        invocation_dir=Path(str(config.invocation_params.dir)),
        tests=search_for_tests(config, use_args=options.command != "combine"),
        child=child_setup(config),
        run=run,
        terminal=view,
        environ=os.environ,
        l1_check=config.hook.pytest_quest_l1_check,
        verifiers=verifiers,
        person_terminal=controlling_terminal,
        measure=run_in_child,
        progress=progress_steps(config, json_mode=options.json),
    )


def run_in_child(ctx: Context, selection: list[str], quest: Any) -> tuple[Any, Any]:
    """`next`'s measurement in the gate's child (app/remeasure.py), imported when a test changed."""
    from pytest_quest.app.remeasure import run_in_child as run

    return run(ctx, selection, quest)


def progress_steps(config: pytest.Config, *, json_mode: bool) -> Steps:
    """A progress bar on the terminal the text goes to; none in JSON mode or off a terminal."""
    if json_mode or config.pluginmanager.is_blocked("terminal") or not sys.stdout.isatty():
        return no_steps
    return terminal_steps(sys.stdout, markup=config.get_terminal_writer().hasmarkup)


def answered(command: str | None, store: RatchetStore, run: Callable[[], Output]) -> Output:
    """What `run` says in the JSON envelope; its usage error, or what Ctrl-C during it left."""
    try:
        output = run()
    except QuestError as exc:
        output = error_output(str(exc), int(pytest.ExitCode.USAGE_ERROR))
    except KeyboardInterrupt:
        from pytest_quest.app.environment import interrupted_done  # start-up time: only here

        # A write of the ratchet file is all or nothing; say which happened.
        done = interrupted_done(store.writes, store.marks)
        data: dict[str, Any] = {"error": f"interrupted: {done}"}
        if command == "submit" and store.writes <= store.marks:
            from pytest_quest.app.submit_output import NO_VERDICT

            data["verdict"] = NO_VERDICT  # nothing judged: as a run stopped from outside
        output = Output(
            data, [f"INTERRUPTED: {done}; run the command again"], int(pytest.ExitCode.INTERRUPTED)
        )
    output.data = envelope(command, output.data)
    return output


def writer_terminal(config: pytest.Config) -> Terminal:
    """The terminal pytest's reporter would draw on, before it exists (``--color``, ``COLUMNS``)."""
    if config.pluginmanager.is_blocked("terminal"):
        return Terminal(ascii=True)  # -p no:terminal: plain lines
    writer = create_terminal_writer(config, sys.stdout)
    plain = (
        not sys.stdout.isatty()
        or bool(os.environ.get("NO_COLOR"))
        or os.environ.get("TERM") == "dumb"
    )
    return Terminal(markup=writer.hasmarkup, width=writer.fullwidth, ascii=plain)


def safe_lines(lines: list[str], *, markup: bool) -> list[str]:
    """Each line escaped for the terminal and, in GitHub Actions, for the runner's log."""
    whole = "".join(lines)
    if whole.isascii() and whole.isprintable():
        safe = list(lines)  # nothing to escape (status's 60,000 lines: 0.05 s less)
    else:
        safe = [terminal_line(line, markup=markup) for line in lines]
    if in_github_actions(os.environ):
        safe = [github_line(line) for line in safe]
    encoding = getattr(sys.stdout, "encoding", None)
    return [encodable(line, encoding) for line in safe]


def search_for_tests(config: pytest.Config, *, use_args: bool = True) -> FileSearch:
    """Where this invocation's tests are: its positional arguments (unless not `use_args`:
    combine's are shard folders), else testpaths, else rootdir."""
    rootdir = Path(str(config.rootpath))
    invocation = Path(str(config.invocation_params.dir))
    # The positional arguments only: an option's value (``--quest-id
    # src/pkg/mod.py::f``) names a source file, not tests to search.
    args = [str(a) for a in (config.getoption("file_or_dir", default=None) or []) if use_args]
    roots = []
    for arg in args:
        candidate = (invocation / str(arg).split("::")[0]).resolve()
        if candidate.exists():
            roots.append(candidate)
    given = bool(roots)
    if not roots:
        testpaths = config.getini("testpaths")
        if testpaths:
            roots = [(rootdir / str(p)).resolve() for p in testpaths if (rootdir / str(p)).exists()]
        else:
            roots = [rootdir]
    return FileSearch(
        roots=roots,
        patterns=[str(p) for p in config.getini("python_files")],
        norecurse=[str(p) for p in config.getini("norecursedirs")],
        given=given,
    )


def child_setup(config: pytest.Config) -> ChildSetup:
    """How to start a child pytest like this one."""
    inipath = config.inipath
    # A clean judge loads no plugin: the user's process told it what it had.
    given = handover()
    return ChildSetup(
        inifile=Path(str(inipath)) if inipath else None,
        plugin_args=plugin_args(config, given.args if given else None),
        has_xdist=given.has_xdist if given else xdist_loaded(config.pluginmanager),
        has_cov=given.has_cov if given else pytest_cov_loaded(config.pluginmanager),
        workers=given.workers if given else _workers(config),
        pythonpath=_pythonpath(config),
    )


def _pythonpath(config: pytest.Config) -> tuple[str, ...]:
    """The ini file's ``pythonpath`` entries, absolute (none when the option is unknown)."""
    try:
        given = config.getini("pythonpath")
    except ValueError:  # pytest's python_path plugin not loaded: read as the ini has it
        raw = config.inicfg.get("pythonpath") if config.inipath else None
        if raw is None or config.inipath is None:
            return ()
        parts = shlex.split(raw) if isinstance(raw, str) else [str(p) for p in raw]
        given = [Path(str(config.inipath)).parent / part for part in parts]
    return tuple(str(Path(str(p)).resolve()) for p in given or ())


def _workers(config: pytest.Config) -> int:
    """xdist's ``-n`` (``auto`` resolved by xdist already); 1 without it."""
    count = getattr(config.option, "numprocesses", None)
    return count if isinstance(count, int) and count > 1 else 1


def reporter_terminal(config: pytest.Config) -> Terminal:
    """The terminal pytest's reporter draws on."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return Terminal(ascii=True)  # -p no:terminal: plain lines
    writer = config.get_terminal_writer()
    plain = (
        not bool(reporter.isatty)  # a bool before pytest 8.1, callable since
        or bool(os.environ.get("NO_COLOR"))
        or os.environ.get("TERM") == "dumb"
    )
    return Terminal(markup=writer.hasmarkup, width=writer.fullwidth, ascii=plain)


def plugin_args(config: pytest.Config, original: list[str] | None = None) -> list[str]:
    """The ``-p`` and ``-o`` options of this invocation (or `original`), for the gate's child run."""
    args = original if original is not None else [str(a) for a in config.invocation_params.args]
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-p", "-o", "--override-ini") and index + 1 < len(args):
            value = args[index + 1]
            if not (arg == "-p" and value.startswith("no:quest")):
                kept += [arg, value]
            index += 2
            continue
        if (arg.startswith("-p") and len(arg) > 2) or arg.startswith("--override-ini="):
            kept.append(arg)
        index += 1
    return kept
