"""Attacks on the children's evidence: forged reports, swaps that miss, runs told apart.

Each submission here gets PASS from a gate without the judge's channel and the reach checks;
each must end FAIL or REVIEW, with no other quest's entry in quest.json changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.attacks import (
    CALC_SOURCE,
    LEVEL,
    SIGN,
    attack,
    attack_fixtures,
    checks,
    scanned_copy,
)
from tests.support.projects import PYPROJECT, Project, rescanned_unsandboxed, scanned_template
from tests.support.runner import parse_json, run_pytest

pytestmark = pytest.mark.slow

# The attacks' calc module, and a function no attack judges.
SOURCE = (
    CALC_SOURCE
    + """

def double(x):
    return x * 2
"""
)


template, scanned = attack_fixtures(SOURCE)


FORGED = """
    import json, os, stat

    def forged():
        facts = {"functions": [], "excluded_functions": [], "files": [], "config": {},
                 "outcomes": {}, "collection_errors": []}
        return json.dumps(facts).encode()

    def write_everywhere(data):
        for name in os.listdir("/proc/self/fd"):
            try:
                fd = int(name)
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, data)
            except OSError:
                pass
"""


def test_an_atexit_rewrite_of_the_old_report_path_changes_nothing(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        import atexit, json, sys

        def forge():
            argv = sys.argv
            if "--quest-measure-out" in argv:
                path = argv[argv.index("--quest-measure-out") + 1]
                with open(path, "w") as f:
                    json.dump({"forged": True}, f)

        atexit.register(forge)

        def test_nothing():
            pass
        """,
    )
    assert data["verdict"] == "FAIL"
    assert "coverage.line" in checks(data)


def test_forged_bytes_on_every_pipe_during_the_test_are_tampering(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        FORGED
        + """
    def test_forge():
        write_everywhere(forged())
    """,
    )
    assert (data["verdict"], checks(data)) == ("REVIEW", ["evidence.tampered"])


@pytest.mark.children_measured
def test_a_forged_frame_with_a_guessed_nonce_is_tampering(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        FORGED
        + """
    def test_forge():
        body = forged()
        write_everywhere(b"PQC1" + bytes(16) + len(body).to_bytes(8, "big") + body)
    """,
    )
    assert (data["verdict"], checks(data)) == ("REVIEW", ["evidence.tampered"])


def test_atexit_writes_on_every_descriptor_find_the_channel_closed(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        FORGED
        + """
    import atexit
    from pkg.calc import level

    atexit.register(lambda: write_everywhere(forged()))

    def test_weak():
        level(20)
    """,
    )
    # The forgery never reaches the judge: the weak test is judged as it is.
    assert data["verdict"] == "FAIL"
    assert "evidence.tampered" not in checks(data)


@pytest.mark.children_measured
def test_a_renamed_code_object_makes_every_swap_miss_which_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        import pkg.calc
        from pkg.calc import level

        pkg.calc.level.__code__ = pkg.calc.level.__code__.replace(co_name="renamed")

        def test_weak():
            level(20)
            level(1)
        """,
    )
    assert data["verdict"] == "REVIEW"
    assert "mutation.not_applied" in checks(data)


@pytest.mark.children_measured
def test_identity_mutation_builtins_leave_mutants_unreached_which_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        import builtins
        import pytest
        from pkg.calc import level

        @pytest.fixture(autouse=True)
        def blind():
            for name in dir(builtins):
                if name.startswith("pytest_quest_"):
                    setattr(builtins, name, lambda value: value)
            yield

        def test_half():
            assert level(20) == "high"
            level(1)
        """,
    )
    assert data["verdict"] == "REVIEW"
    assert "mutation.unreached" in checks(data)


@pytest.mark.children_measured
def test_a_branch_run_only_on_the_first_run_of_a_process_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        SIGN,
        """
        from pkg.calc import sign

        RUNS = [0]

        def test_sign():
            RUNS[0] += 1
            assert sign(5) == "positive"
            assert sign(0) == "zero"
            if RUNS[0] == 1:
                sign(-5)  # executed for coverage, never checked
        """,
    )
    assert data["verdict"] == "REVIEW"
    assert "mutation.unreached" in checks(data)


def test_a_test_honest_only_under_mutants_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        from pkg.calc import level

        RUNS = [0]

        def test_level():
            RUNS[0] += 1
            level(20)
            level(1)
            # Passes on the runs the gate measures and baselines; fails after,
            # which is when the mutants are in.
            assert RUNS[0] <= 2
        """,
    )
    assert data["verdict"] == "REVIEW"
    assert "mutation.detects_run" in checks(data)


@pytest.mark.children_measured
def test_a_test_that_checks_the_code_identity_does_not_pass(scanned: Path) -> None:
    # Its kills are discounted (it read the function's code in each mutant's run):
    # the mutants survive, and their witnesses fail the quest.
    data = attack(
        scanned,
        LEVEL,
        """
        from pkg.calc import level

        ORIGINAL = level.__code__

        def test_level():
            level(20)
            level(1)
            assert level.__code__ is ORIGINAL
        """,
    )
    assert data["verdict"] == "FAIL"
    assert any(check.startswith("mutation.") for check in checks(data))


@pytest.mark.unsandboxed  # what each child saw, written in the project and read from outside
def test_the_children_carry_no_report_path_and_look_alike(scanned: Path) -> None:
    rescanned_unsandboxed(scanned)
    # An honest submission (PASS): both children run and record what they see.
    (scanned / "argv").mkdir()
    data = attack(
        scanned,
        LEVEL,
        """
        import json, os, sys, uuid
        from pathlib import Path
        from pkg.calc import level

        def opened(fd):
            try:
                os.fstat(fd)
            except OSError:
                return False
            return True

        out = Path(__file__).parent.parent / "argv"
        (out / uuid.uuid4().hex).write_text(json.dumps(
            {"argv": sys.argv, "env": sorted(k for k in os.environ if "QUEST" in k),
             "fds": [fd for fd in range(1024) if opened(fd)],
             "cwd": os.getcwd()}
        ))

        def test_level():
            assert level(20) == "high"
            assert level(1) == "low"
        """,
        allowed=("PASS",),
    )
    assert data["verdict"] == "PASS"
    seen = [json.loads(p.read_text()) for p in (scanned / "argv").iterdir()]
    children = [child for child in seen if "--quest-channel" in child["argv"]]
    # The measuring child, the mutation child, and the mutation child's
    # fresh run confirming the kills (plugin/fresh_kill.py).
    assert len(children) == 3, seen
    for child in children:
        assert not [a for a in child["argv"] if a.endswith(".json")], child
        assert not [k for k in child["env"] if "MUTAT" in k], child
        assert "--quest-channel" in child["argv"]
    # The same command line, environment names and folder in every role: the
    # channel's descriptor numbers are the only difference.
    looks = [
        (
            [a for a in child["argv"] if not a.replace(",", "").isdigit()],
            child["env"],
            child["cwd"],
        )
        for child in children
    ]
    assert looks[0] == looks[1] == looks[2], looks
    assert not [a for a in children[0]["argv"] if "test_attack" in a], children[0]


def test_a_weak_test_that_tells_the_roles_apart_by_what_its_process_sees_does_not_pass(
    scanned: Path,
) -> None:
    # No assertion on what `level` returns: every mutant survives unless the
    # test fails where it guesses mutants are about, from its command line,
    # descriptors, environment and folder as the measuring child had them.
    data = attack(
        scanned,
        LEVEL,
        """
        import os, sys
        from pkg.calc import level

        def opened(fd):
            try:
                os.fstat(fd)
            except OSError:
                return False
            return True

        def looks():
            argv = [a for a in sys.argv[1:] if not a.replace(",", "").isdigit()]
            fds = [fd for fd in range(1024) if opened(fd)]
            env = sorted(os.environ)
            return argv, fds, env, os.getcwd()

        SEEN = looks()

        def test_level():
            level(20)
            level(1)
            argv, fds, env, cwd = SEEN
            measuring = "--quest-measure-only" in argv or "--quest-source" in argv
            assert measuring or (len(fds) <= 12 and not any("MUTA" in k for k in env))
        """,
    )
    assert data["verdict"] in ("FAIL", "REVIEW")


def test_a_test_that_fails_under_the_mutant_watchdog_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        import signal
        from pkg.calc import level

        def test_level():
            level(20)
            level(1)
            assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
        """,
    )
    assert data["verdict"] == "REVIEW"
    assert "mutation.detects_run" in checks(data)


def test_a_run_counter_that_passes_the_first_run_only_is_review(scanned: Path) -> None:
    data = attack(
        scanned,
        LEVEL,
        """
        from pkg.calc import level

        RUNS = [0]

        def test_level():
            RUNS[0] += 1
            level(20)
            level(1)
            assert RUNS[0] == 1
        """,
    )
    assert data["verdict"] == "REVIEW"


def test_an_honest_submit_passes_where_the_project_makes_warnings_errors(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """`filterwarnings = error` (as many projects set it): the fresh run that confirms the
    kills imports pytest_quest before pytest, which warns it cannot rewrite it; that
    warning made the fresh run crash and every honest submit REVIEW (seen on humanize)."""

    def build(project: Project) -> None:
        pyproject = PYPROJECT.replace(
            "\n\n[tool.coverage", '\nfilterwarnings = ["error"]\n\n[tool.coverage'
        )
        assert 'filterwarnings = ["error"]' in pyproject
        (project.path / "pyproject.toml").write_text(pyproject)
        project.source("calc", SOURCE)

    template, _ = scanned_template(tmp_path_factory, build)
    root, _ = scanned_copy(template, tmp_path / "project")
    (root / "tests" / "test_level.py").write_text(
        "from pkg.calc import level\n\n\n"
        "def test_level():\n"
        "    assert level(11) == 'high'\n"
        "    assert level(10) == 'low'\n"
    )
    # Plugin autoload on, as users run it: pytest then marks pytest_quest for rewriting.
    result = run_pytest(
        root, "--quest", "submit", "--quest-id", LEVEL, "--quest-format", "json", autoload=True
    )
    data = parse_json(result)
    assert data["verdict"] == "PASS", data
