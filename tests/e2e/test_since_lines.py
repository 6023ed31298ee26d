"""The PR gate judges changed lines, not only changed ``def``s.

``check --quest-since main --quest-require-pass`` on a branch: a changed line
outside any def must have run (a lambda bound at module or class level: called
by a passing test), code built at run time is named, and each fact names the
line.  The base is test_since.py's: double and sign PASS, untested TODO.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_since import CALC, calc_project
from tests.support.gitrepo import commit_all, git, init_repo
from tests.support.projects import Project, scanned_template

pytestmark = pytest.mark.slow

CALC_LINES = CALC.count("\n")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Project:
    template, _ = scanned_template(tmp_path_factory, calc_project)
    init_repo(template.path)
    return template


@pytest.fixture
def branch(project: Project, template: Project) -> Project:
    project.fill_from(template)
    git(project.path, "checkout", "-q", "-b", "feature")
    return project


def gate(branch: Project, added: str, test: str = "") -> tuple[int, dict[str, Any]]:
    """`added` appended to calc.py (and a test, if given), committed, then the PR gate."""
    branch.source("calc", CALC + added)
    if test:
        branch.test("test_added", test)
    commit_all(branch.path, "feature")
    result, data = branch.run_json(
        "--quest", "check", "--quest-since", "main", "--quest-require-pass"
    )
    return int(result.ret), data


def line_facts(data: dict[str, Any]) -> dict[str, str]:
    """field -> actual of every changed-line fact."""
    return {
        fact["field"]: fact["actual"]
        for item in data["since"]["not_pass"]
        for fact in item["facts"]
        if fact["check"] == "since.changed_line"
    }


def at(offset: int) -> str:
    return f"src/pkg/calc.py:{CALC_LINES + offset}"


def test_an_untested_module_level_lambda_fails_naming_its_line(branch: Project) -> None:
    code, data = gate(branch, "\n\ntriple = lambda x: x * 3\n")
    assert code == 1, data
    assert line_facts(data) == {
        at(3): "a lambda bound outside any def, not called by any passing test"
    }


def test_a_function_built_with_exec_fails(branch: Project) -> None:
    code, data = gate(branch, '\n\nexec("def quadruple(x):\\n    return x * 4\\n")\n')
    assert code == 1, data
    assert line_facts(data) == {
        at(3): "code built at run time (exec): coverage.py never measures it; write it as a def"
    }


def test_a_method_rebound_to_a_lambda_fails(branch: Project) -> None:
    added = "\n\nclass Box:\n    def size(self):\n        return 1\n\n\nBox.size = lambda self: 2\n"
    test = "from pkg.calc import Box\n\n\ndef test_box():\n    assert Box\n"
    code, data = gate(branch, added, test)
    assert code == 1, data
    assert at(8) in line_facts(data)


def test_methods_made_in_a_loop_of_a_class_body_fail(branch: Project) -> None:
    added = (
        "\n\nclass Ops:\n"
        "    for _name, _factor in (('twice', 2), ('thrice', 3)):\n"
        "        locals()[_name] = lambda self, x, f=_factor: x * f\n"
        "    for _name in ('zero',):\n"
        "        exec(f'def {_name}(self):\\n    return 0\\n')\n"
    )
    code, data = gate(branch, added)
    assert code == 1, data
    facts = line_facts(data)
    assert facts[at(5)].startswith("a lambda bound outside any def")
    assert facts[at(7)].startswith("code built at run time (exec)")


def test_a_decorator_that_replaces_a_function_fails_on_the_function(branch: Project) -> None:
    added = (
        "\n\ndef constant(function):\n    return lambda *args: 0\n\n\n"
        "@constant\ndef halve(x):\n    return x / 2\n"
    )
    test = "from pkg.calc import halve\n\n\ndef test_halve():\n    halve(4)\n"
    code, data = gate(branch, added, test)
    assert code == 1, data
    states = {item["id"]: item["state"] for item in data["since"]["not_pass"]}
    # halve's body never runs (the decorator replaced it): its quest is not PASS.
    assert states.get("src/pkg/calc.py::halve") in ("TODO", "untracked"), states


def test_a_partial_bound_at_module_level_is_a_note_not_a_failure(branch: Project) -> None:
    added = "\n\nimport functools\n\nquadruple = functools.partial(pow, 4)\n"
    code, data = gate(branch, added)
    assert code == 0, data
    assert data["since"]["notes"] == [
        f"{at(5)}: a callable bound at run time (partial): the function it calls is judged "
        "by its own quest"
    ]


def test_honest_module_level_changes_pass(branch: Project) -> None:
    """A constant runs at import; a lambda a passing test calls is covered."""
    added = "\n\nLIMIT = 10\n\ntriple = lambda x: x * 3\n"
    test = "from pkg.calc import LIMIT, triple\n\n\ndef test_triple():\n    assert triple(LIMIT) == 30\n"
    code, data = gate(branch, added, test)
    assert code == 0, data
    assert line_facts(data) == {}
