"""The ratchet file as data from a stranger: grammar, numbers, special files, paths.

Attacks first: each test forges what a hostile or careless hand could put in
or in place of ``quest.json``, and expects a `RatchetFileError` naming the field
with the file's bytes untouched.
"""

from __future__ import annotations

import math
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core import grammar
from pytest_quest.core.errors import RatchetFileError
from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.core.policy import GatePolicy
from pytest_quest.engine.codec import BadNumber, dumps, loads
from pytest_quest.engine.codec import strict_parse as parse
from pytest_quest.engine.source import source_functions
from pytest_quest.engine.store import RatchetStore
from pytest_quest.engine.store_help import files_outside, read_regular

REPO = Path(__file__).resolve().parents[3]


def quest(file: str = "src/pkg/calc.py", qualname: str = "sign") -> Quest:
    return Quest(
        id=f"{file}::{qualname}", file=file, qualname=qualname, first=1, last=2, fingerprint="f"
    )


# -- the grammar accepts every form the scanner writes ----------------------------------

NESTED = """
def outer():
    def inner():
        class K:
            def m(self): pass
        return K
    f = lambda: 1
    return inner
class A:
    class B:
        def c(self): pass
    @property
    def p(self): return 1
    @p.setter
    def p(self, v): pass
async def café(): pass
"""


def test_every_scanned_form_passes_the_grammar() -> None:
    ids = [f.quest_id for f in source_functions("src/a-b c/é.py", NESTED)]
    assert "src/a-b c/é.py::outer.inner.K.m" in ids and "src/a-b c/é.py::A.p@2" in ids
    for qid in ids:
        assert grammar.id_problem(qid) == "", qid


@pytest.mark.parametrize("ratchet_file", [REPO / "quest.json"], ids=["this-repo"])
def test_this_repos_own_ratchet_file_reads(ratchet_file: Path) -> None:
    # Written by the scanner on this very code base: never refused.
    ratchet = loads(ratchet_file.read_bytes(), str(ratchet_file))
    assert ratchet.quests
    assert files_outside(ratchet, REPO) == ""


@pytest.mark.parametrize(
    ("file", "problem"),
    [
        ("", "empty path"),
        ("/etc/passwd", "absolute path"),
        ("c:/x.py", "absolute path"),
        ("../../etc/passwd", "climbs out"),
        ("src/../../x.py", "climbs out"),
        ("src//x.py", "empty or '.' part"),
        ("./x.py", "empty or '.' part"),
        ("src\\x.py", "backslash"),
        ("x\n::error file=X::Y.py", "'\\n'"),
        ("x\r.py", "'\\r'"),
        ("x\x1b[31m.py", "'\\x1b'"),
        ("x\u202e.py", "'\\u202e'"),  # right-to-left override
        ("x\u2028.py", "'\\u2028'"),
    ],
)
def test_file_grammar_refuses(file: str, problem: str) -> None:
    assert problem in grammar.file_problem(file)


@pytest.mark.parametrize(
    ("qualname", "problem"),
    [
        ("", "empty name"),
        ("a..b", "'' is not a Python identifier"),
        ("f.<locals>.g", "'<locals>' is not"),
        ("<lambda>", "'<lambda>' is not"),
        ("f`x`", "is not a Python identifier"),
        ("f\x1b[0m", "'\\x1b'"),
        ("f\r", "'\\r'"),
    ],
)
def test_qualname_grammar_refuses(qualname: str, problem: str) -> None:
    assert problem in grammar.qualname_problem(qualname)


@pytest.mark.parametrize(
    ("qid", "problem"),
    [
        ("nothing", "expected FILE::QUALNAME"),
        ("::", "empty path"),
        ("a.py::f@1", "@1 is not @2"),
        ("a.py::f@02", "@02 is not @2"),
        ("a.py::f@x", "@x is not @2"),
        ("a.py::f@٣", "is not @2"),  # an Arabic-Indic digit is a digit, not ASCII
        ("/a.py::f", "absolute path"),
        ("a.py::f g", "is not a Python identifier"),
    ],
)
def test_id_grammar_refuses(qid: str, problem: str) -> None:
    assert problem in grammar.id_problem(qid)


def test_id_grammar_accepts_twins() -> None:
    assert grammar.id_problem("a.py::f@2") == ""
    assert grammar.id_problem("a b/c.py::K.f@17") == ""


# -- numbers --------------------------------------------------------------------------


def test_numbers_within_bounds_and_finite_pass() -> None:
    assert parse('{"a": [999999999999999, -1, 1.5e300]}') == {"a": [10**15 - 1, -1, 1.5e300]}


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ('{"a": 1234567890123456}', "a", "an integer of 16 digits"),
        ('{"a": [1, -' + "9" * 400 + "]}", "a[1]", "an integer of 400 digits"),
        ('{"a": {"b": NaN}}', "a.b", "NaN is not a JSON number"),
        ('{"a": -Infinity}', "a", "-Infinity is not a JSON number"),
        ('{"quests": {"x::y": {"t": 1e400}}}', "quests['x::y'].t", "beyond a finite"),
        ("Infinity", "top level", "Infinity"),
    ],
)
def test_bad_numbers_are_named_by_field(text: str, where: str, problem: str) -> None:
    with pytest.raises(BadNumber) as info:
        parse(text)
    assert info.value.where == where
    assert problem in info.value.problem


def test_nan_is_never_written(tmp_path: Path) -> None:
    ratchet = Ratchet(quests={"src/a.py::f": quest("src/a.py", "f")})
    ratchet.quests["src/a.py::f"].last_run_seconds = math.nan
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(ratchet)
    path = tmp_path / "quest.json"
    store = RatchetStore(path)

    def poison(r: Ratchet) -> None:
        r.quests.update(ratchet.quests)

    store.update(lambda r: r.quests.update({"src/a.py::g": quest("src/a.py", "g")}))
    before = path.read_bytes()
    with pytest.raises(RatchetFileError, match="refused to write a value that is not JSON"):
        store.update(poison)
    assert path.read_bytes() == before


# -- special files ----------------------------------------------------------------------


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "quest.json"
    os.mkfifo(path)
    done = threading.Event()
    caught: list[BaseException] = []

    def load() -> None:
        try:
            RatchetStore(path).load()
        except BaseException as exc:
            caught.append(exc)
        done.set()

    threading.Thread(target=load, daemon=True).start()
    assert done.wait(10), "reading a FIFO hung"
    assert isinstance(caught[0], RatchetFileError)
    assert "is a FIFO (named pipe), not a regular file" in str(caught[0])


def test_a_socket_and_a_device_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(RatchetFileError, match="is a socket"):
            read_regular(path)
    finally:
        server.close()
    with pytest.raises(RatchetFileError, match="is a device"):
        read_regular(Path("/dev/null"))


def test_a_folder_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path)


# -- paths resolved against the rootdir -----------------------------------------------


def store_with(tmp_path: Path, *quests: Quest, policy: GatePolicy | None = None) -> RatchetStore:
    path = tmp_path / "quest.json"
    path.write_text(dumps(Ratchet(quests={q.id: q for q in quests}, policy=policy)))
    return RatchetStore(path, root=tmp_path)


def test_a_symlink_out_of_the_project_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "evil.py").symlink_to("/etc/passwd")
    store = store_with(tmp_path, quest("src/evil.py", "f"))
    before = store.path.read_bytes()
    with pytest.raises(RatchetFileError) as info:
        store.load()
    assert "quests['src/evil.py::f'].file: 'src/evil.py' resolves to /etc/passwd, outside" in str(
        info.value
    )
    with pytest.raises(RatchetFileError):
        store.update(lambda r: None)
    assert store.path.read_bytes() == before


def test_a_linked_folder_out_of_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside).mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "src").symlink_to(outside)
    store = store_with(project, quest("src/x.py", "f"))
    with pytest.raises(RatchetFileError, match="outside the rootdir"):
        store.load()


def test_a_file_beside_the_recorded_source_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / ".git").mkdir()
    store = store_with(tmp_path, quest(".git/config", "f"), policy=GatePolicy(sources=("src",)))
    with pytest.raises(RatchetFileError, match=r"is not under the recorded source \(src\)"):
        store.load()


def test_a_file_under_the_source_and_links_inside_pass(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "real.py").write_text("")
    (tmp_path / "src" / "alias.py").symlink_to(tmp_path / "src" / "real.py")
    store = store_with(
        tmp_path,
        quest("src/real.py", "f"),
        quest("src/alias.py", "f"),
        quest("src/gone.py", "f"),
        policy=GatePolicy(sources=("src",)),
    )
    assert len(store.load().quests) == 3


def test_coverage_source_is_used_when_no_policy_and_package_names_only_check_the_root(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    ratchet = Ratchet(quests={"lib/x.py::f": quest("lib/x.py", "f")})
    ratchet.coverage_config = {"run:source": ["src"]}
    assert "not under the recorded source" in files_outside(ratchet, tmp_path)
    ratchet.coverage_config = {"run:source": ["some_package"]}
    assert files_outside(ratchet, tmp_path) == ""


# -- through the reader: each refusal names its field -----------------------------------


def forged(**fields: object) -> str:
    entry = {
        "file": "src/a.py", "qualname": "f", "lines": [1, 2], "fingerprint": "", "state": "TODO",
        "tries": 0, "statements": 0, "branches": 0, "missing_lines": [], "missing_branches": [],
        "excluded_lines": [], "covering_tests": [], "facts": [], "issued_at": "", "passed_at": "",
        "baseline": False, "history": [],
    }  # fmt: skip
    entry.update(fields)
    qid = f"{entry['file']}::{entry['qualname']}"
    import json

    data = json.loads(dumps(Ratchet()))
    data["quests"] = {qid: entry}
    return json.dumps(data)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"file": "/etc/passwd"}, "quests['/etc/passwd::f'].file: an absolute path"),
        ({"qualname": "f\n::error::x"}, ".qualname: holds the character '\\n'"),
        ({"tries": 10**20}, "quests['src/a.py::f'].tries: an integer of 21 digits"),
    ],
)
def test_loads_names_the_forged_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(RatchetFileError) as info:
        loads(forged(**fields), "quest.json")
    assert message in str(info.value)


def test_loads_refuses_forged_lists_of_names() -> None:
    import json

    data = json.loads(dumps(Ratchet()))
    data["excluded_functions"] = ["a.py::f", "a.py::<lambda>"]
    with pytest.raises(RatchetFileError, match=r"excluded_functions\[1\]: '<lambda>' is not"):
        loads(json.dumps(data))
    data["excluded_functions"] = []
    data["test_files"] = {"tests/../../x.py": "d"}
    with pytest.raises(RatchetFileError, match=r"test_files\['tests/../../x.py'\]: climbs out"):
        loads(json.dumps(data))
    data["test_files"] = {"tests/t.py": 1}
    with pytest.raises(RatchetFileError, match=r"test_files\['tests/t.py'\]: expected a string"):
        loads(json.dumps(data))
