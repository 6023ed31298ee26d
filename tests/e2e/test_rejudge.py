"""`check --quest-base`: CI re-judges every PASS new since the base, in a real git repository.

The base is example_project and its scanned quest.json, committed; each test
works on its own copy of that repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.model import Event, Ratchet, State
from pytest_quest.core.seal import issued_seal
from pytest_quest.engine.codec import dumps, loads
from pytest_quest.engine.source import facts_from_source
from tests.support.runner import child_environ

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"
GIT = {
    "GIT_AUTHOR_NAME": "Base Author",
    "GIT_AUTHOR_EMAIL": "base@example.com",
    "GIT_COMMITTER_NAME": "Base Author",
    "GIT_COMMITTER_EMAIL": "base@example.com",
}
ADD = "src/shop/cart.py::Cart.add"
PERCENT = "src/shop/pricing.py::apply_percent"
TRUNCATE = "src/shop/text.py::truncate"
TRACKING = "src/shop/shipping.py::Carrier.tracking_url"


def environ(**extra: str) -> dict[str, str]:
    """tests/support's rule for a child pytest with every plugin, and no CI's variables."""
    env = {
        key: value
        for key, value in child_environ(autoload=True).items()
        if not key.startswith("GITHUB_")
    }
    return {**env, **GIT, **extra}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=environ(), capture_output=True, text=True, check=True
    )
    return done.stdout


def quest(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=repo,
        env=env or environ(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout, done.stderr


def quest_json(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    code, out, err = quest(repo, *args, "--quest-format", "json", env=env)
    try:
        return code, json.loads(out)
    except ValueError:
        raise AssertionError(f"not one JSON object (exit {code}):\n{out}\n{err}") from None


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """example_project scanned, committed with its quest.json: the base."""
    repo = tmp_path_factory.mktemp("base") / "shop"
    shutil.copytree(
        EXAMPLE, repo, ignore=shutil.ignore_patterns("quest.json*", "__pycache__", ".pytest_cache")
    )
    git(repo, "init", "-q", "-b", "main")
    _code, out, err = quest(repo, "--quest", "scan")
    assert (repo / "quest.json").exists(), out + err
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base: example_project scanned")
    return repo


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "shop"
    shutil.copytree(base_repo, copy)
    shutil.copy(copy / "quest.json", tmp_path / "base.json")
    return copy


def write_test(repo: Path, name: str, text: str) -> None:
    (repo / "tests" / f"{name}.py").write_text(textwrap.dedent(text))


def edit_ratchet(repo: Path, change: Any) -> None:
    """A hand edit of quest.json (as an agent with a shell would make it)."""
    path = repo / "quest.json"
    ratchet: Ratchet = loads(path.read_text())
    change(ratchet)
    path.write_text(dumps(ratchet))


def forge_pass(ratchet: Ratchet, quest_id: str, tests: list[str], fingerprint: str = "") -> None:
    forged = ratchet.quests[quest_id]
    forged.state = State.PASS
    if fingerprint:
        forged.fingerprint = fingerprint
    forged.missing_lines, forged.missing_branches, forged.facts = [], [], []
    forged.covering_tests = tests
    forged.passed_at = "2026-12-01T00:00:00Z"
    forged.issued_seal = issued_seal(forged)  # the seal has no secret: recomputed
    if ratchet.active == quest_id:
        ratchet.active = None


def base_file(repo: Path) -> str:
    # In the `=` form: pytest takes a separate argument naming an existing path
    # outside the project into its rootdir search (docs/ci.md).
    return f"--quest-base-file={repo.parent / 'base.json'}"


def rejudged(data: dict[str, Any]) -> dict[str, Any]:
    return {quest["id"]: quest for quest in data["rejudged"]["quests"]}


def checks(entry: dict[str, Any]) -> set[str]:
    return {fact["check"] for fact in entry["facts"]}


HONEST = """\
    import pytest

    from shop.pricing import apply_percent


    def test_apply_percent():
        assert apply_percent(1_000, 15) == 850
        assert apply_percent(999, 10) == 899
        assert apply_percent(500, 0) == 500
        assert apply_percent(500, 100) == 0
        with pytest.raises(ValueError):
            apply_percent(500, 101)
        with pytest.raises(ValueError):
            apply_percent(500, -1)
"""


@pytest.mark.children_measured
def test_an_honest_pass_by_submit_holds_against_the_git_base(repo: Path) -> None:
    write_test(repo, "test_percent", HONEST)
    code, out, err = quest(repo, "--quest", "submit", "--quest-id", PERCENT)
    assert code == 0 and f"PASS: {PERCENT} is now PASS" in out, out + err
    code, data = quest_json(repo, "--quest", "check", "--quest-base", "HEAD")
    assert code == 0, data
    assert data["ok"] is True
    assert data["rejudged"]["base"] == "HEAD:quest.json"
    assert data["rejudged"]["count"] == 1 and data["rejudged"]["failed"] == 0
    entry = rejudged(data)[PERCENT]
    assert entry["reason"] == "new" and entry["holds"] is True and entry["facts"] == []
    assert data["person_actions"] == []


def test_a_forged_pass_is_believed_locally_and_fails_the_rejudge(repo: Path) -> None:
    edit_ratchet(repo, lambda r: forge_pass(r, ADD, ["tests/test_cart.py::test_total_with_coupon"]))
    code, data = quest_json(repo, "--quest", "next")
    assert code == 0, data
    code, data = quest_json(repo, "--quest-status")
    assert code == 0
    assert {q["id"]: q["state"] for q in data["quests"]}[ADD] == "PASS"
    code, data = quest_json(repo, "--quest", "check", base_file(repo))
    assert code == 1 and data["ok"] is False
    assert data["rejudged"]["failed"] == 1
    entry = rejudged(data)[ADD]
    assert entry["holds"] is False and entry["step"] == "3-coverage"
    assert checks(entry) == {"rejudge.coverage"}
    assert all(ADD in fact["message"] for fact in entry["facts"])


def test_a_pass_got_with_mutants_off_fails_the_rejudge_on_mutants(repo: Path) -> None:
    # On a laptop: a ratchet of its own, scanned with mutants off (so its
    # recorded policy allows it), an assertion-free test submitted to PASS...
    laptop = repo.parent / "laptop"
    shutil.copytree(repo, laptop)
    (laptop / "quest.json").unlink()
    test = """\
        from shop.shipping import Carrier


        def test_runs_tracking_url():
            Carrier.tracking_url("ab 12")
        """
    quest(laptop, "--quest", "scan", "--quest-mutants", "off")
    write_test(laptop, "test_tracking", test)
    code, out, err = quest(laptop, "--quest", "submit", "--quest-id", TRACKING)
    assert code == 0 and f"PASS: {TRACKING} is now PASS" in out, out + err
    # ...and its PASS entry carried into the branch's ratchet with the test.
    write_test(repo, "test_tracking", test)
    weak = loads((laptop / "quest.json").read_text()).quests[TRACKING]

    def carry(ratchet: Ratchet) -> None:
        ratchet.quests[TRACKING] = weak
        if ratchet.active == TRACKING:
            ratchet.active = None

    edit_ratchet(repo, carry)
    code, data = quest_json(repo, "--quest", "check", base_file(repo))
    assert code == 1, data
    assert data["regressions"] == []  # fully covered: only the re-judge sees it
    entry = rejudged(data)[TRACKING]
    assert entry["step"] == "4-mutants" and entry["verdict"] == "FAIL", entry
    assert checks(entry) == {"rejudge.mutation"}
    assert all(fact["field"].startswith("src/shop/shipping.py:") for fact in entry["facts"])


@pytest.mark.children_measured
def test_a_rewritten_function_resealed_by_hand_fails_on_identity(repo: Path) -> None:
    path = repo / "src" / "shop" / "text.py"
    source = path.read_text()
    start = source.index("def truncate(")
    end = source.index("def debug_label(")
    rewritten = (
        'def truncate(text: str, width: int, ellipsis: str = "…") -> str:\n'
        '    """Shorten text to at most `width` characters, ending in `ellipsis` if cut."""\n'
        "    return text\n\n\n"
    )
    path.write_text(source[:start] + rewritten + source[end:])
    write_test(
        repo,
        "test_truncate",
        """\
        from shop.text import truncate


        def test_truncate_keeps_short_text():
            assert truncate("abc", 5) == "abc"
        """,
    )
    now = facts_from_source(TRUNCATE, "src/shop/text.py", repo, all_missing=False)
    assert now is not None
    edit_ratchet(
        repo,
        lambda r: forge_pass(
            r, TRUNCATE, ["tests/test_truncate.py::test_truncate_keeps_short_text"], now.fingerprint
        ),
    )
    code, data = quest_json(repo, "--quest", "check", base_file(repo))
    assert code == 1, data
    assert data["regressions"] == []  # the entry matches the code: only the base does not
    entry = rejudged(data)[TRUNCATE]
    assert entry["verdict"] == "REVIEW" and entry["step"] == "1-identity"
    assert checks(entry) == {"rejudge.identity"}


def test_person_actions_since_the_base_are_listed(repo: Path, tmp_path: Path) -> None:
    def act(ratchet: Ratchet) -> None:
        ratchet.quests[TRUNCATE].history.append(
            Event(
                at="2026-12-01T01:02:03Z",
                action="reopen",
                by="Ada Lovelace",
                note="from DONE",
                reason="dead code, checked by hand",
            )
        )

    edit_ratchet(repo, act)
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    summary = tmp_path / "summary.md"
    actions_env = environ(
        GITHUB_ACTIONS="true", GITHUB_BASE_REF="main", GITHUB_STEP_SUMMARY=str(summary)
    )
    # Under GitHub Actions on a pull request the base defaults to origin/<base branch>.
    code, out, err = quest(repo, "--quest", "check", env=actions_env)
    assert code == 0, out + err
    assert "re-judged against origin/main:quest.json: 0 PASS new or changed" in out
    assert "person actions since the base (1): review them" in out
    line = f"reopen {TRUNCATE} by Ada Lovelace at 2026-12-01T01:02:03Z: dead code, checked by hand"
    assert f"  {line}" in out
    assert "::notice file=src/shop/text.py,title=pytest-quest%3A person action" in out
    text = summary.read_text()
    assert "### Person actions since the base (1)" in text and "Ada Lovelace" in text
    code, data = quest_json(repo, "--quest", "check", base_file(repo))
    assert code == 0
    assert data["person_actions"] == [
        {
            "id": TRUNCATE,
            "action": "reopen",
            "by": "Ada Lovelace",
            "at": "2026-12-01T01:02:03Z",
            "reason": "dead code, checked by hand",
            "fingerprint": "",
        }
    ]


@pytest.mark.children_measured
def test_no_base_without_a_ref_and_a_missing_ref_is_a_usage_error(repo: Path) -> None:
    env = environ(GITHUB_ACTIONS="true", GITHUB_BASE_REF="no-such-branch")
    code, data = quest_json(repo, "--quest", "check", env=env)
    assert code == 0 and data["rejudged"] is None and data["person_actions"] == []
    code, data = quest_json(repo, "--quest", "check", "--quest-base", "no-such-ref")
    assert code == 4
    assert "--quest-base no-such-ref: no such commit" in data["error"]
