"""engine/changes.py: which functions changed since a git ref, in a real git repository."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.engine.changes import changed_since, compare
from pytest_quest.engine.source import source_functions
from tests.support.gitrepo import commit_all, git, init_repo

SHAPES = """\
def area(w, h):
    return w * h


def perimeter(w, h):
    if w < 0 or h < 0:
        raise ValueError("negative")
    return 2 * (w + h)


class Box:
    def volume(self, d):
        return self.w * self.h * d
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path / "src" / "geo" / "shapes.py", SHAPES)
    write(tmp_path / "src" / "geo" / "__init__.py", "")
    write(tmp_path / "README.md", "docs\n")
    init_repo(tmp_path)
    return tmp_path


def changed(repo: Path, ref: str = "main") -> tuple[list[str], list[str]]:
    found = changed_since(ref, repo, [repo / "src"])
    return sorted(found.changed), sorted(found.new)


def test_nothing_changed_nothing_listed(repo: Path) -> None:
    write(repo / "README.md", "other docs\n")
    assert changed(repo) == ([], [])


def test_comments_blank_lines_and_moves_inside_the_file_do_not_count(repo: Path) -> None:
    moved = SHAPES.replace("def area(w, h):\n    return w * h\n", "")
    moved = moved.replace(
        "    return 2 * (w + h)", "    # the sum of the sides\n\n    return 2 * (w + h)  # twice"
    )
    write(repo / "src" / "geo" / "shapes.py", moved + "\n\ndef area(w, h):\n    return w * h\n")
    assert changed(repo) == ([], [])


def test_a_changed_body_and_a_new_function_count(repo: Path) -> None:
    text = (
        SHAPES.replace("return w * h\n", "return h * w\n")
        + "\n\ndef diagonal(w, h):\n    return (w * w + h * h) ** 0.5\n"
    )
    write(repo / "src" / "geo" / "shapes.py", text)
    assert changed(repo) == (
        ["src/geo/shapes.py::area", "src/geo/shapes.py::diagonal"],
        ["src/geo/shapes.py::diagonal"],
    )


def test_committed_changes_count_against_the_merge_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo / "src" / "geo" / "shapes.py", SHAPES.replace("d\n", "d * 1\n"))
    commit_all(repo, "feature: volume")
    # The base branch moves on after the branch point: its changes are not this branch's.
    git(repo, "checkout", "-q", "main")
    write(repo / "src" / "geo" / "shapes.py", SHAPES.replace("w * h\n", "h * w\n"))
    commit_all(repo, "main: area")
    git(repo, "checkout", "-q", "feature")
    assert changed(repo) == (["src/geo/shapes.py::Box.volume"], [])


def test_a_renamed_file_and_a_function_cut_to_another_file_are_moves(repo: Path) -> None:
    git(repo, "mv", "src/geo/shapes.py", "src/geo/figures.py")
    figures = repo / "src" / "geo" / "figures.py"
    body = figures.read_text()
    cut = "def area(w, h):\n    return w * h\n"
    figures.write_text(body.replace(cut, ""))
    write(repo / "src" / "geo" / "area.py", cut)  # untracked, holding a moved function
    assert changed(repo) == ([], [])


def test_an_untracked_file_outside_the_sources_or_not_python_is_left_out(repo: Path) -> None:
    write(repo / "scripts" / "tool.py", "def main():\n    return 0\n")
    write(repo / "src" / "geo" / "notes.txt", "def x(): pass\n")
    write(repo / "src" / "geo" / "extra.py", "def extra():\n    return 1\n")
    assert changed(repo) == (["src/geo/extra.py::extra"], ["src/geo/extra.py::extra"])


def test_a_file_that_did_not_parse_at_the_ref_makes_every_function_new(repo: Path) -> None:
    write(repo / "src" / "geo" / "broken.py", "def oops(:\n")
    commit_all(repo, "broken")
    write(repo / "src" / "geo" / "broken.py", "def fixed():\n    return 1\n")
    assert changed(repo, "HEAD") == (["src/geo/broken.py::fixed"], ["src/geo/broken.py::fixed"])


def test_a_deleted_file_adds_nothing(repo: Path) -> None:
    (repo / "src" / "geo" / "shapes.py").unlink()
    assert changed(repo) == ([], [])


def test_an_unknown_ref_and_a_folder_outside_git_are_usage_errors(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with pytest.raises(
        QuestUsageError, match=r"--quest-since nope: no such commit.*fetch-depth: 0"
    ):
        changed(repo, "nope")
    with pytest.raises(QuestUsageError, match="a git ref does not start with '-'"):
        changed(repo, "--output=/tmp/x")
    outside = tmp_path_factory.mktemp("nogit")
    with pytest.raises(QuestUsageError, match="is not inside a git repository"):
        changed_since("main", outside, [outside])


def test_compare_is_by_fingerprint_and_qualname() -> None:
    before = source_functions("m.py", "def f(x):\n    return x\n\n\ndef g():\n    return 1\n")
    now = source_functions("m.py", "def g():\n    return 2\n\n\ndef f(x):\n    return x\n")
    found, new = compare(now, before, set())
    assert [info.quest_id for info in found] == ["m.py::g"] and new == set()
    # A function another touched file had: moved, not new.
    elsewhere = source_functions("n.py", "def h():\n    return 3\n")
    found, new = compare(elsewhere, [], {("h", elsewhere[0].fingerprint)})
    assert (found, new) == ([], set())
    found, new = compare(elsewhere, [], {("other", elsewhere[0].fingerprint)})
    assert [info.quest_id for info in found] == ["n.py::h"] and new == {"n.py::h"}


def test_sources_outside_the_repository_have_no_changes(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write(repo / "src" / "geo" / "extra.py", "def extra():\n    return 1\n")
    outside = tmp_path_factory.mktemp("elsewhere")
    found = changed_since("main", repo, [outside])
    assert found.changed == {} and found.commit == git(repo, "rev-parse", "main").strip()
    # A single file as the source works as a folder does.
    found = changed_since("main", repo, [repo / "src" / "geo" / "extra.py"])
    assert sorted(found.changed) == ["src/geo/extra.py::extra"]


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=SHAPES.count("\n")),
            st.sampled_from(["", "# a comment", "    # indented comment", "   "]),
        ),
        max_size=8,
    ),
    st.sets(st.integers(min_value=0, max_value=SHAPES.count("\n") - 1), max_size=6),
)
def test_comments_and_blank_lines_anywhere_are_no_change(
    inserted: list[tuple[int, str]], commented: set[int]
) -> None:
    lines = SHAPES.splitlines()
    # A trailing comment on a line of code, then whole comment or blank lines between lines.
    lines = [
        line + "  # note" if index in commented and line.strip() else line
        for index, line in enumerate(lines)
    ]
    for where, text in sorted(inserted, reverse=True):
        lines.insert(where, text)
    edited = "\n".join(lines) + "\n"
    before = source_functions("s.py", SHAPES)
    assert compare(source_functions("s.py", edited), before, set()) == ([], set())


@pytest.mark.parametrize("ref", ["--output=written", "-ooutput"])
def test_a_ref_git_would_read_as_an_option_is_refused_and_writes_nothing(
    repo: Path, ref: str
) -> None:
    """`git show --output=FILE` writes FILE: every option taking a ref refuses one starting with '-'."""
    from pytest_quest.app.policy import since_time
    from pytest_quest.engine.base import base_from_ref

    for call in (
        lambda: changed(repo, ref),
        lambda: base_from_ref(ref, repo / "quest.json"),
        lambda: since_time(ref, repo),
    ):
        with pytest.raises(QuestUsageError, match="a git ref does not start with '-'"):
            call()
    assert not any(path.name.startswith(("written", "output")) for path in repo.rglob("*"))
