"""The fresh run that confirms kills, where pytest rewrites the asserts of the judged package.

pytest puts its assertion rewriter at the head of the import hooks after
the interpreter started, and loads from its file every module of a package
marked for rewriting: each pytest plugin's package (pytest-quest itself, a
plugin judged on its own tests) and the names a conftest gives to
``pytest.register_assert_rewrite``.  The mutant must be in place there too.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_quest.engine.mutation import MutationReport, run_mutation_check

SOURCE = """\
def double(x):
    return x * 2
"""

# The test is slower than the fresh run may be held (plugin/fresh_kill.py,
# MAX_HOLD): the fresh run is started afresh once every mutant is killed.
HONEST = """
import time
from calc.mod import double

def test_double():
    time.sleep(1.6)
    assert double(3) == 6
"""

SAVED = """
import time
from calc.mod import double

EXPECTED = double(3)

def test_double():
    time.sleep(1.6)
    assert double(3) == EXPECTED
"""


def check(tmp_path: Path, tests: str) -> MutationReport:
    tmp_path.mkdir()
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "__init__.py").write_text("")
    (tmp_path / "calc" / "mod.py").write_text(SOURCE)
    (tmp_path / "conftest.py").write_text(
        'import pytest\n\npytest.register_assert_rewrite("calc")\n'
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    report = run_mutation_check(
        ["tests/test_mod.py::test_double"], file=tmp_path / "calc" / "mod.py", start=1,
        rootdir=tmp_path, inifile=tmp_path / "pyproject.toml", timeout=120, cwd=tmp_path,
        seed="calc/mod.py::double",
    )  # fmt: skip
    assert report.completed, report.problem
    assert report.survivors() == []
    return report


@pytest.mark.slow  # each test run sleeps past the fresh run's hold
def test_a_kill_of_a_module_pytest_rewrites_is_confirmed_and_a_saved_oracle_is_not(
    tmp_path: Path,
) -> None:
    assert check(tmp_path / "honest", HONEST).kill_unconfirmed == {}
    found = check(tmp_path / "saved", SAVED).kill_unconfirmed
    assert list(found) == ["tests/test_mod.py::test_double"], found


def test_a_kill_another_covering_test_confirms_holds_for_a_doubtful_killer(tmp_path: Path) -> None:
    # test_saved (faster: the mutants are tried with it first) kills every mutant with a
    # value computed by the function; test_literal kills them with a written-out one and
    # fails in the fresh run with each mutant in place: the kills hold.
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "mod.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(
        textwrap.dedent(
            """
            import time
            from mod import double

            EXPECTED = double(3)

            def test_saved():
                assert double(3) == EXPECTED

            def test_literal():
                time.sleep(0.05)
                assert double(3) == 6
            """
        )
    )
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    names = ["tests/test_mod.py::test_saved", "tests/test_mod.py::test_literal"]
    report = run_mutation_check(
        names, file=tmp_path / "mod.py", start=1, rootdir=tmp_path,
        inifile=tmp_path / "pyproject.toml", timeout=120, cwd=tmp_path, seed="mod.py::double",
    )  # fmt: skip
    assert report.completed, report.problem
    assert {m["killed_by"] for m in report.mutants} == {"tests/test_mod.py::test_saved"}
    assert report.kill_unconfirmed == {}


def plugin_project(tmp_path: Path, plugin: str, test: str) -> MutationReport:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "__init__.py").write_text("")
    (tmp_path / "calc" / "mod.py").write_text(SOURCE)
    (tmp_path / "plug.py").write_text(plugin)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(textwrap.dedent(test))
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    report = run_mutation_check(
        ["tests/test_mod.py::test_double"], file=tmp_path / "calc" / "mod.py", start=1,
        rootdir=tmp_path, inifile=tmp_path / "pyproject.toml", timeout=120, cwd=tmp_path,
        plugin_args=["-p", "plug"], seed="calc/mod.py::double",
    )  # fmt: skip
    assert report.completed, report.problem
    assert report.survivors() == []
    return report


REWRITTEN_PLUGIN = (
    'import pytest\n\npytest.register_assert_rewrite("calc")\nimport calc.mod  # noqa: E402\n'
)


def test_a_module_a_plugin_imports_while_pytest_starts_has_the_mutant_in_place(
    tmp_path: Path,
) -> None:
    # The plugin (named with -p) imports the judged module through the assertion
    # rewriter, before any conftest: the mutant is in place there too.
    honest = "from calc.mod import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    assert plugin_project(tmp_path / "honest", REWRITTEN_PLUGIN, honest).kill_unconfirmed == {}


def test_a_saved_oracle_a_plugin_computes_while_pytest_starts_is_not_confirmed(
    tmp_path: Path,
) -> None:
    plugin = REWRITTEN_PLUGIN + "EXPECTED = calc.mod.double(3)\n"
    saved = """
    import pytest
    from calc.mod import double


    @pytest.fixture
    def expected(pytestconfig):
        return pytestconfig.pluginmanager.get_plugin("plug").EXPECTED


    def test_double(expected):
        assert double(3) == expected
    """
    found = plugin_project(tmp_path / "saved", plugin, saved).kill_unconfirmed
    assert list(found) == ["tests/test_mod.py::test_double"], found
