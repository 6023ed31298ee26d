"""Gate steps 4 and 5: choosing mutants, swapping code, the mutation child, the guards."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.app.deep_checks import survivors
from pytest_quest.core.gate import Evidence, judge
from pytest_quest.core.model import Quest, State, Verdict
from pytest_quest.core.mutants import MAX_MUTANTS, changed_value, mutated_tree, plan_mutants
from pytest_quest.core.operators import EXTREME
from pytest_quest.core.run import RunReport
from pytest_quest.core.seal import issued_seal, seal_facts
from pytest_quest.engine.guard import PROTECT_ENV, VerdictGuard
from pytest_quest.engine.mutation import MutationReport, run_mutation_check
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.swap import CodeSwap
from tests.e2e.test_person_powers import run_in_tty
from tests.support.projects import Project, qid
from tests.support.quests import ratchet_view
from tests.support.runner import child_environ, run_quest

SAMPLE = textwrap.dedent(
    """\
    def total(items):
        \"\"\"Sum, with a fast path.\"\"\"
        if not items:
            return 0
        return sum(items)


    def grade(score):
        if score >= 90:
            return "A"
        elif score >= 50:
            x = [s for s in (score,) if s > 1]
            return "B" if x else "?"
        while score < 0:
            score += 1
        return "C"


    def outer(n):
        def inner(m):
            return m * n
        return inner(2)


    def gen(limit):
        for i in range(limit):
            yield i


    def procedure(log):
        log.append(1)
        return
    """
)


def plan(start: int) -> list[tuple[str, int, str, str]]:
    # The extreme mutants only: the other operators have their own tests (tests/unit/core).
    return [
        (m.operator, m.line, m.original, m.mutated) for m in plan_mutants(SAMPLE, start, EXTREME)
    ]


def test_mutants_of_a_function_with_a_fast_path() -> None:
    assert plan(1) == [
        ("body.return_none", 3, "if not items:", "return None"),
        # No "if False:": skipping a fast path is often equivalent.
        ("condition.true", 3, "if not items:", "if True:"),
        ("return.changed", 4, "return 0", "return pytest_quest_changed(0)"),
        ("return.changed", 5, "return sum(items)", "return pytest_quest_changed(sum(items))"),
    ]


def test_mutants_force_if_and_elif_never_while_nor_comprehension_filters() -> None:
    operators = plan(8)
    assert ("condition.false", 9, "if score >= 90:", "if False:") in operators
    assert ("condition.true", 11, "elif score >= 50:", "elif True:") in operators
    assert ("condition.false", 11, "elif score >= 50:", "elif False:") in operators
    assert ("condition.true", 13, "'B' if x else '?'", "'B' if True else '?'") in operators
    lines = {line for _, line, _, _ in operators}
    assert 14 not in lines  # while
    assert not any("s > 1" in original for _, _, original, _ in operators)


def test_mutants_stay_in_their_own_function() -> None:
    assert plan(19) == [
        ("body.return_none", 20, "def inner(m):", "return None"),
        ("return.changed", 22, "return inner(2)", "return pytest_quest_changed(inner(2))"),
    ]
    assert plan(20) == [
        ("body.return_none", 21, "return m * n", "return None"),
        ("return.changed", 21, "return m * n", "return pytest_quest_changed(m * n)"),
    ]


def test_generators_and_procedures_are_skipped_not_changed() -> None:
    assert plan(25) == [("body.skip", 26, "for i in range(limit):", "return None")]
    assert plan(30) == [("body.skip", 31, "log.append(1)", "return None")]


def test_the_plan_is_deterministic_and_capped() -> None:
    many = "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(20))
    first = plan_mutants(many, 1, EXTREME)
    assert first == plan_mutants(many, 1, EXTREME)
    assert len(first) == MAX_MUTANTS
    assert [m.index for m in first] == sorted(m.index for m in first)


def test_no_function_on_that_line_no_mutants() -> None:
    assert plan_mutants(SAMPLE, 2) == []


@given(
    st.one_of(
        st.integers(),
        st.booleans(),
        st.text(),
        st.binary(),
        st.floats(allow_nan=False),
        st.lists(st.integers()),
        st.tuples(st.integers()),
        st.dictionaries(st.integers(), st.integers()),
        st.frozensets(st.integers()),
        st.none(),
    )
)
def test_a_changed_value_is_never_equal(value: object) -> None:
    changed = changed_value(value)
    assert changed != value
    if value is not None and not isinstance(value, float):
        assert type(changed) is type(value)
    if type(value) is int:  # moved by at least its own size (pytest.approx cannot take it)
        assert abs(changed - value) >= max(1, abs(value))


def load(tmp_path: Path, name: str, source: str) -> tuple[Path, ModuleType]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_code_swap_mutates_live_functions_and_restores_them(tmp_path: Path) -> None:
    import builtins

    path, module = load(
        tmp_path,
        "swapme",
        """
        import functools

        def deco(f):
            @functools.wraps(f)
            def wrapper(*args):
                return f(*args)
            return wrapper

        class Box:
            @deco
            def scaled(self, k):
                def inner(x):
                    return x * k
                return inner(3)
        """,
    )
    source = path.read_text()
    kept = module.Box().scaled
    swap = CodeSwap(str(path), source, 13)  # the nested `inner`
    builtins.pytest_quest_reached = lambda value: value  # type: ignore[attr-defined]  # what a mutant calls
    try:
        assert swap.apply(mutated_tree(source, 13, 0)) >= 1
        assert module.Box().scaled(2) is None
        assert kept(2) is None  # a bound method made before the swap
        swap.restore()
        assert module.Box().scaled(2) == 6
        method = CodeSwap(str(path), source, 12)
        method.apply(mutated_tree(source, 12, 0))
        assert module.Box().scaled(2) is None
        method.restore()
        assert module.Box().scaled(2) == 6
    finally:
        del builtins.pytest_quest_reached  # type: ignore[attr-defined]


def test_unimported_module_cannot_be_swapped(tmp_path: Path) -> None:
    from pytest_quest.engine.swap import SwapError

    path = tmp_path / "never_imported.py"
    path.write_text("def f():\n    return 1\n")
    swap = CodeSwap(str(path), path.read_text(), 1)
    with pytest.raises(SwapError, match="not imported"):
        swap.apply(mutated_tree(path.read_text(), 1, 0))


# -- the mutation child, end to end ----------------------------------------------------

FUNCTION = """\
def countdown(n):
    steps = 0
    while True:
        if n <= 0:
            break
        n -= 1
        steps += 1
    return steps


def parity(x):
    if x % 2 == 0:
        return "even"
    return "odd"


def remember(seen, word):
    seen.append(word.lower())
"""


def child_project(tmp_path: Path, tests: str) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text(FUNCTION)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    return tmp_path


def check(
    root: Path, start: int, nodeids: list[str], timeout: float = 60.0, mutants: bool = True
) -> MutationReport:
    return run_mutation_check(
        nodeids,
        file=root / "src" / "mod.py",
        start=start,
        rootdir=root,
        inifile=root / "pyproject.toml",
        timeout=timeout,
        cwd=root,
        mutants=mutants,
    )


@pytest.mark.slow  # waits out a timeout
@pytest.mark.children_measured
def test_honest_tests_kill_every_mutant_even_an_endless_one(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        from mod import countdown

        def test_countdown():
            assert countdown(3) == 3
            assert countdown(0) == 0
        """,
    )
    report = check(root, 1, ["tests/test_mod.py::test_countdown"])
    assert report.completed, report.problem
    assert report.runs == [{"tests/test_mod.py::test_countdown": "passed"}] * 2
    statuses = {(m["operator"], m["status"], m.get("how")) for m in report.mutants}
    # `if False:` makes the loop endless: the watchdog stops it, the mutant is killed.
    assert ("condition.false", "killed", "timeout") in statuses
    assert report.survivors() == []


@pytest.mark.slow  # waits out a slow test's baseline runs
def test_a_fast_test_that_loops_with_a_mutant_is_stopped_at_its_own_budget(
    tmp_path: Path,
) -> None:
    # `test_countdown` takes milliseconds, its sibling seconds: a mutant that makes
    # the loop endless is stopped at the fast test's own budget (ten times its own
    # time and two seconds, core/budget.py), not at ten times both tests' time.
    slow = 3.0
    root = child_project(
        tmp_path,
        f"""
        import time
        from mod import countdown

        def test_countdown():
            assert countdown(3) == 3
            assert countdown(0) == 0

        def test_countdown_slowly():
            time.sleep({slow})
            assert countdown(2) == 2
        """,
    )
    fast = "tests/test_mod.py::test_countdown"
    report = check(root, 1, [fast, "tests/test_mod.py::test_countdown_slowly"], timeout=600.0)
    assert report.completed, report.problem
    runaways = [m for m in report.mutants if m.get("how") == "timeout"]
    assert runaways, report.mutants
    for mutant in runaways:
        assert mutant["killed_by"] == fast, mutant
        # Stopped, and its budget recorded, far below ten times the slow sibling's
        # sleep whatever the load (the fast test's own run takes milliseconds).
        assert mutant["seconds"] < 10 * slow, mutant
        assert 2.0 <= mutant["budget"] < 10 * slow, mutant
    assert report.survivors() == []
    # The fresh run stops the fast test at the same budget: each runaway kill holds.
    assert report.kill_unconfirmed == {}


def test_assertion_free_tests_let_mutants_survive(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        from mod import parity

        def test_parity_runs():
            parity(1)
            parity(2)
        """,
    )
    report = check(root, 11, ["tests/test_mod.py::test_parity_runs"])
    assert report.completed, report.problem
    found = survivors(report, "src/mod.py")
    assert [(m.line, m.operator) for m in found] == [
        (12, "body.return_none"),
        (12, "condition.true"),
        (12, "arith.replace"),
        (12, "constant.number"),
        (12, "constant.number"),
        (13, "return.changed"),
        (14, "return.changed"),
    ]
    assert [m.mutated for m in found[2:5]] == [
        "if x // 2 == 0:",
        "if x % 3 == 0:",
        "if x % 2 == 1:",
    ]
    assert all(m.mutant_id.startswith("m") for m in found)
    assert found[0].original == "if x % 2 == 0:" and found[0].mutated == "return None"
    # What each made the function do, on the test's own inputs (the first that differs);
    # nothing when coverage.py measures the child (its tracer is left alone).
    measured = "COVERAGE_PROCESS_CONFIG" in child_environ()  # run-tests.sh measures children
    assert found[0].observed == (
        ""
        if measured
        else "in `tests/test_mod.py::test_parity_runs`, with `x=1` the mutant returns `None` "
        "where the function returns `'odd'`; no test noticed"
    )
    assert measured or found[5].observed.endswith(
        "with `x=2` the mutant returns `''` where the function returns `'even'`; no test noticed"
    )


def test_tests_that_set_and_remove_the_public_mark_names_leave_the_child_alone(
    tmp_path: Path,
) -> None:
    # pytest-quest's own tests put functions in builtins under the marks' public
    # names and remove them: the child judging them keeps marks of its own.
    root = child_project(
        tmp_path,
        """
        import builtins
        from mod import parity

        def test_parity():
            builtins.pytest_quest_changed = lambda value: None
            builtins.pytest_quest_reached = lambda value: value
            del builtins.pytest_quest_changed
            del builtins.pytest_quest_reached
            assert parity(2) == "even"
            assert parity(3) == "odd"
        """,
    )
    report = check(root, 11, ["tests/test_mod.py::test_parity"])
    assert report.completed, report.problem
    assert report.mutants and {m["status"] for m in report.mutants} == {"killed"}
    assert all(m["reached_by"] == ["tests/test_mod.py::test_parity"] for m in report.mutants)


def test_a_mutant_that_leaves_a_signal_blocked_leaves_the_runs_after_it_alone(
    tmp_path: Path,
) -> None:
    # The thread's signal mask is the process's, not a module's: a mutant that
    # leaves SIGTERM blocked must not decide the runs after it (the probes among them).
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text(
        "import signal\n\n\n"
        "def release(work):\n"
        "    result = work()\n"
        "    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})\n"
        "    return result\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(
        textwrap.dedent(
            """\
            import signal
            from mod import release

            def blocked():
                return signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])

            def test_release():
                assert not blocked()
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                assert release(lambda: 5) == 5
                assert not blocked()
            """
        )
    )
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    report = check(tmp_path, 4, ["tests/test_mod.py::test_release"])
    assert report.completed, report.problem
    assert report.detects_run == []
    assert report.original_reached == ["tests/test_mod.py::test_release"]
    assert report.mutants and {m["status"] for m in report.mutants} == {"killed"}


def test_a_survivor_seen_leaving_an_argument_otherwise_says_so(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        from mod import remember

        def test_remember_runs():
            assert remember([], "Pen") is None
        """,
    )
    report = check(root, 17, ["tests/test_mod.py::test_remember_runs"])
    assert report.completed, report.problem
    found = survivors(report, "src/mod.py")
    assert [m.operator for m in found] == ["body.skip", "call.remove"]
    measured = "COVERAGE_PROCESS_CONFIG" in child_environ()
    for mutant in found:
        assert measured or mutant.observed == (
            "in `tests/test_mod.py::test_remember_runs`, with `seen=[], word='Pen'` the mutant "
            "leaves `seen=[]` where the function leaves `seen=['pen']`; no test noticed"
        )


@pytest.mark.children_measured
def test_a_flaky_test_is_unstable_and_mutants_are_not_blamed(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        import pathlib
        from mod import parity

        COUNT = pathlib.Path(__file__).with_name("count.txt")

        def test_flaky():
            runs = int(COUNT.read_text()) if COUNT.exists() else 0
            COUNT.write_text(str(runs + 1))
            parity(2)
            assert runs % 2 == 0
        """,
    )
    report = check(root, 11, ["tests/test_mod.py::test_flaky"])
    assert report.completed
    assert report.unstable() == ["tests/test_mod.py::test_flaky"]
    evidence = evidence_for(report)
    assert evidence.unstable_tests == ["tests/test_mod.py::test_flaky"]
    result = judge(evidence)
    assert result.verdict is Verdict.REVIEW and result.step == "5-stable"


def evidence_for(report: MutationReport) -> Evidence:
    from pytest_quest.core.model import FunctionFacts

    quest = Quest(
        id="src/mod.py::parity",
        file="src/mod.py",
        qualname="parity",
        first=11,
        last=14,
        fingerprint="f",
    )
    current = FunctionFacts(
        file="src/mod.py",
        qualname="parity",
        ordinal=1,
        start=11,
        first=11,
        last=14,
        fingerprint="f",
        statements=3,
        branches=2,
    )
    evidence = Evidence(quest=quest, current=current, run=RunReport())
    evidence.unstable_tests = report.unstable()
    evidence.surviving_mutants = [] if evidence.unstable_tests else survivors(report, "src/mod.py")
    return evidence


@pytest.mark.slow  # waits out a timeout
def test_a_hanging_run_is_an_environment_problem_not_a_verdict(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        import time
        from mod import parity

        def test_hangs():
            assert parity(2) == "even"
            time.sleep(60)
        """,
    )
    # The test sleeps a minute: whatever the load, the run cannot complete in 2 s.
    report = check(root, 11, ["tests/test_mod.py::test_hangs"], timeout=2.0)
    assert not report.completed
    assert "exceeded --quest-timeout (2s)" in report.problem
    evidence = evidence_for(MutationReport())
    evidence.mutation_problem = report.problem
    result = judge(evidence)
    assert (result.verdict, result.step) == (Verdict.REVIEW, "4-mutants")
    assert result.facts[0].check == "mutation.environment"


@pytest.mark.children_measured
def test_mutants_off_runs_the_stability_check_only(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        from mod import parity

        def test_parity_runs():
            parity(1)
        """,
    )
    report = check(root, 11, ["tests/test_mod.py::test_parity_runs"], mutants=False)
    assert report.completed and report.mutants == [] and len(report.runs) == 2


def test_the_users_files_are_never_written(tmp_path: Path) -> None:
    root = child_project(
        tmp_path,
        """
        from mod import parity

        def test_parity():
            assert parity(2) == "even"
        """,
    )
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    check(root, 11, ["tests/test_mod.py::test_parity"])
    after = {
        p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }
    assert after == {p: b for p, b in before.items()}


# -- the guards ------------------------------------------------------------------------


def test_the_judged_process_cannot_write_the_ratchet_file(tmp_path: Path) -> None:
    ratchet = tmp_path / "quest.json"
    ratchet.write_text("{}")
    script = textwrap.dedent(
        f"""
        import os, pathlib
        from pytest_quest.engine.guard import protect_from_env
        protect_from_env()
        path = pathlib.Path({str(ratchet)!r})
        refused = []
        for attempt in (
            lambda: path.write_text("x"),
            lambda: open(path, "a"),
            lambda: os.open(path, os.O_WRONLY),
            lambda: os.replace(path.with_name("other"), path),
            lambda: os.remove(path),
        ):
            try:
                attempt()
            except PermissionError:
                refused.append(True)
        print(len(refused), path.read_text())
        """
    )
    (tmp_path / "other").write_text("forged")
    env = dict(os.environ, **{PROTECT_ENV: str(ratchet)})
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["5", "{}"]


def test_protection_covers_the_view_status_and_next_keep(tmp_path: Path) -> None:
    """A judged test cannot write the view `status` shows of the ratchet file (view_cache)."""
    from pytest_quest.engine import view_cache

    ratchet = tmp_path / "quest.json"
    ratchet.write_text("{}")
    view = view_cache.path_for(RatchetStore(ratchet).journal_path)
    view.parent.mkdir(parents=True, exist_ok=True)
    view.write_bytes(b"kept")
    script = textwrap.dedent(
        f"""
        import os, pathlib
        from pytest_quest.engine.guard import protect_from_env
        protect_from_env()
        view = pathlib.Path({str(view)!r})
        refused = 0
        for attempt in (
            lambda: view.write_bytes(b"forged"),
            lambda: os.replace({str(tmp_path / "other")!r}, view),
            lambda: os.remove(view),
        ):
            try:
                attempt()
            except PermissionError:
                refused += 1
        print(refused, view.read_bytes().decode())
        """
    )
    (tmp_path / "other").write_text("forged")
    env = dict(os.environ, **{PROTECT_ENV: str(ratchet)})
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    view.unlink()
    assert out.split() == ["3", "kept"]


def test_protection_judges_a_name_relative_to_a_folder_descriptor_in_that_folder(
    tmp_path: Path,
) -> None:
    """``os.unlink(name, dir_fd=fd)`` (shutil.rmtree, pytest's clean-up of old tmp_path
    folders) names the file in fd's folder: a ``quest.json`` of an old test's folder may go
    (it made honest submits REVIEW, seen on humanize), the protected one may not, from any cwd."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    old = tmp_path / "pytest-of-me" / "garbage-1" / "test_x0"
    for folder in (project, elsewhere, old):
        folder.mkdir(parents=True)
    ratchet = project / "quest.json"
    ratchet.write_text("{}")
    (old / "quest.json").write_text("an old test's file")
    (project / "other").write_text("forged")
    script = textwrap.dedent(
        f"""
        import os, shutil
        from pytest_quest.engine.guard import protect_from_env
        protect_from_env()
        os.chdir({str(project)!r})  # a bare name here would be the protected file
        old = os.open({str(old)!r}, os.O_RDONLY)
        os.rename("quest.json", "moved.json", src_dir_fd=old, dst_dir_fd=old)
        os.unlink("moved.json", dir_fd=old)
        shutil.rmtree({str(tmp_path / "pytest-of-me")!r})
        os.chdir({str(elsewhere)!r})  # a bare name here names nothing
        own = os.open({str(project)!r}, os.O_RDONLY)
        refused = 0
        for attempt in (
            lambda: os.unlink("quest.json", dir_fd=own),
            lambda: os.replace("other", "quest.json", src_dir_fd=own, dst_dir_fd=own),
            lambda: os.rename("quest.json", "gone", src_dir_fd=own, dst_dir_fd=own),
            lambda: os.link("quest.json", "second", src_dir_fd=own, dst_dir_fd=own),
        ):
            try:
                attempt()
            except PermissionError:
                refused += 1
        print(refused, os.path.exists({str(tmp_path / "pytest-of-me")!r}))
        """
    )
    env = dict(os.environ, **{PROTECT_ENV: str(ratchet)})
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["4", "False"]
    assert ratchet.read_text() == "{}"


def ratchet_with(tmp_path: Path, state: str = "TODO") -> tuple[RatchetStore, Quest]:
    from pytest_quest.core.seal import seal_issued

    quest = Quest(
        id="src/m.py::f",
        file="src/m.py",
        qualname="f",
        first=1,
        last=3,
        fingerprint="sha256:x",
        issued_at="2026-01-01T00:00:00Z",
        state=State(state),
    )
    seal_issued(quest)
    store = RatchetStore(tmp_path / "quest.json")
    store.update(lambda r: r.quests.update({quest.id: quest}))
    return store, quest


def test_verdict_guard_restores_the_judged_entry(tmp_path: Path) -> None:
    store, quest = ratchet_with(tmp_path)
    guard = VerdictGuard(store.path, quest.id)
    data = ratchet_view(store.path.read_bytes())
    data["quests"][quest.id].update(state="REVIEW")
    store.path.write_text(json.dumps(data))
    facts = guard.inspect()
    assert [f.check for f in facts] == ["guard.ratchet_written"]
    store.update(guard.repair)
    assert store.load().quests[quest.id].state is State.TODO


def test_verdict_guard_repairs_a_broken_file_and_ignores_untouched_ones(tmp_path: Path) -> None:
    store, quest = ratchet_with(tmp_path)
    before = store.path.read_bytes()
    assert VerdictGuard(store.path, quest.id).inspect() == []
    guard = VerdictGuard(store.path, quest.id)
    store.path.write_text("{ not json")
    assert [f.check for f in guard.inspect()] == ["guard.ratchet_written"]
    assert store.path.read_bytes() == before


def test_the_issued_baseline_is_sealed(tmp_path: Path) -> None:
    _, quest = ratchet_with(tmp_path)
    assert seal_facts(quest) == []
    quest.first, quest.last = 11, 13
    quest.excluded_lines = [x + 10 for x in quest.excluded_lines]
    assert seal_facts(quest) == []  # moving is no edit
    quest.excluded_lines = [12]
    assert [(v, f.check) for v, f in seal_facts(quest)] == [(Verdict.REVIEW, "guard.seal")]
    quest.excluded_lines = []
    quest.fingerprint = "sha256:y"
    assert seal_facts(quest)
    quest.issued_seal = None
    quest.fingerprint = "sha256:x"
    assert seal_facts(quest)[0][1].actual == "no seal"
    assert issued_seal(quest) == issued_seal(quest)


def test_cli_mutants_off_is_respected_by_submit(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    project.source("m", "def twice(x):\n    return 2 * x\n")
    # The policy is recorded at scan: mutants off there, a submit may use it.
    assert run_quest(project.path, "--quest", "scan", "--quest-mutants", "off")[0] == 0
    project.test("test_m", "from pkg.m import twice\n\ndef test_twice():\n    twice(2)\n")
    _, data, _ = run_quest(
        project.path, "--quest", "submit", "--quest-id", qid("m", "twice"), "--quest-mutants", "off"
    )
    assert data["verdict"] == "PASS"
    assert Path(project.path / "quest.json").exists()


def _env_project(path: Path, test: str) -> Project:
    """`inc` and `dec` scanned with a timeout floor of 8 s, then `test` as their tests."""
    project = Project(path / "p")
    project.source(
        "env",
        """
        def inc(x):
            return x + 1


        def dec(x):
            return x - 1
        """,
    )
    # The timeout floor is the gate policy recorded at scan.
    assert run_quest(project.path, "--quest", "scan", "--quest-timeout", "8")[0] == 0
    project.test("test_env", test)
    return project


# Only in the mutation check (not in the judge or the measuring child) the tests misbehave:
# the gate children look alike, but the measuring child runs each test once, the
# mutation child twice or more in one process (its baseline).
IN_MUTATION_CHECK = """
import os
import time
from pkg.env import dec, inc

RUNS = []


def in_mutation_check():
    RUNS.append(1)
    return len(RUNS) > 1
"""

SUBMIT_WITH_FLOOR = ("--quest", "submit", "--quest-timeout", "8", "--quest-id")


@pytest.mark.slow  # waits out the 8 s timeout floor
def test_a_hanging_mutation_run_is_review_through_submit(tmp_path: Path) -> None:
    test = IN_MUTATION_CHECK + textwrap.dedent(
        """
        def test_inc():
            assert inc(1) == 2
            if in_mutation_check():
                time.sleep(60)
        """
    )
    project = _env_project(tmp_path, test)
    code, data, _ = run_quest(project.path, *SUBMIT_WITH_FLOOR, qid("env", "inc"))
    assert (code, data["verdict"], data["step"]) == (0, "REVIEW", "4-mutants")
    fact = data["quest"]["facts"][0]
    assert fact["check"] == "mutation.environment"
    assert fact["actual"] == "the mutation check exceeded --quest-timeout (8s) and was stopped"


def test_a_crashing_mutation_run_is_review_through_submit(tmp_path: Path) -> None:
    test = IN_MUTATION_CHECK + textwrap.dedent(
        """
        def test_dec():
            assert dec(1) == 0
            if in_mutation_check():
                os._exit(3)
        """
    )
    project = _env_project(tmp_path, test)
    code, data, _ = run_quest(project.path, *SUBMIT_WITH_FLOOR, qid("env", "dec"))
    assert (code, data["verdict"], data["step"]) == (0, "REVIEW", "4-mutants")
    assert data["quest"]["facts"][0]["actual"].startswith(
        "the mutation runner crashed (exit status 3)"
    )


def test_a_guarded_adjustment_is_not_forced_true() -> None:
    source = textwrap.dedent(
        """\
        def initials(name):
            parts = name.split()
            if len(parts) > 3:
                parts = parts[:3]
            return "".join(p[0] for p in parts)
        """
    )
    operators = {(m.operator, m.line) for m in plan_mutants(source, 1, EXTREME)}
    # `parts[:3]` of a short list is the list: forcing the guard True is equivalent.
    assert ("condition.true", 3) not in operators
    assert ("condition.false", 3) in operators


def test_a_hand_edited_baseline_is_review_until_a_person_reopens_it(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    project.source(
        "seal", "def level(x):\n    if x > 10:\n        return 'high'\n    return 'low'\n"
    )
    assert run_quest(project.path, "--quest", "scan")[0] == 0
    quest_id = qid("seal", "level")
    # The cheat: exclude the line nobody tests, and make the ratchet agree.
    project.source(
        "seal",
        "def level(x):\n    if x > 10:\n        return 'high'  # pragma: no cover\n"
        "    return 'low'\n",
    )
    ratchet = project.ratchet()
    ratchet["quests"][quest_id]["excluded_lines"] = [3]
    (project.path / "quest.json").write_text(json.dumps(ratchet, indent=2, sort_keys=True))
    project.test(
        "test_seal",
        "from pkg.seal import level\n\ndef test_low():\n    assert level(1) == 'low'\n"
        "    assert level(11) == 'high'\n",
    )
    _, data, _ = run_quest(project.path, "--quest", "submit", "--quest-id", quest_id)
    assert (data["verdict"], data["step"]) == ("REVIEW", "l1-extra")
    assert [f["check"] for f in data["quest"]["facts"]] == ["guard.seal"]
    # A person looks, agrees with the exclusion and re-issues the quest.
    run = run_in_tty(
        project.path, "--quest-reopen", quest_id, "--quest-reason", "agreed", typed=quest_id
    )
    assert run.ret == 0, run.stdout + run.stderr
    _, data, _ = run_quest(project.path, "--quest", "submit", "--quest-id", quest_id)
    assert data["verdict"] == "PASS", data["quest"]["facts"]


@pytest.mark.children_measured
def test_a_cached_function_runs_again_for_every_mutant(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text(
        "import functools\n\n\n@functools.lru_cache\ndef fib(n):\n"
        "    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(
        "from mod import fib\n\ndef test_fib():\n    assert fib(0) == 0\n"
        "    assert fib(1) == 1\n    assert fib(10) == 55\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    report = run_mutation_check(
        ["tests/test_mod.py::test_fib"],
        file=tmp_path / "src" / "mod.py",
        start=5,
        rootdir=tmp_path,
        inifile=tmp_path / "pyproject.toml",
        timeout=60.0,
        cwd=tmp_path,
    )
    assert report.completed, report.problem
    assert [m["status"] for m in report.mutants] == ["killed"] * len(report.mutants)
    assert len(report.mutants) >= 4


def test_a_mutant_runs_only_against_the_tests_that_ran_its_statement(tmp_path: Path) -> None:
    # test_a (loose) alone runs line 13; test_b runs 12 and 14 and counts its runs.
    root = child_project(
        tmp_path,
        """
        from pathlib import Path
        from mod import parity

        def test_a():
            parity(2)

        def test_b():
            with open(Path(__file__).with_name("runs"), "a") as f:
                f.write("x")
            assert parity(1) == "odd"
        """,
    )
    nodeids = ["tests/test_mod.py::test_a", "tests/test_mod.py::test_b"]
    runs = root / "tests" / "runs"

    def count(line_tests: dict[int, set[str]] | None) -> tuple[MutationReport, int]:
        runs.write_text("")
        report = run_mutation_check(
            nodeids,
            file=root / "src" / "mod.py",
            start=11,
            rootdir=root,
            inifile=root / "pyproject.toml",
            timeout=60.0,
            cwd=root,
            line_tests=line_tests,
        )
        assert report.completed, report.problem
        return report, len(runs.read_text())

    lines = {12: set(nodeids), 13: {nodeids[0]}, 14: {nodeids[1]}}
    everything, all_runs = count(None)
    chosen, fewer_runs = count(lines)
    # The same verdicts, test_b no longer tried against the mutants of line 13.
    assert [(m["id"], m["status"]) for m in chosen.mutants] == [
        (m["id"], m["status"]) for m in everything.mutants
    ]
    on_13 = [m for m in chosen.mutants if m["line"] == 13]
    assert on_13 and all(m["reached_by"] == [nodeids[0]] for m in on_13)
    assert fewer_runs < all_runs
