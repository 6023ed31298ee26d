"""engine/view_cache.py: the hash without the active line, the active line read, one file's quests."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pytest_quest.engine import codec, view_cache
from pytest_quest.engine.view_cache import active_line, digest, one_file, quests_start, table_of
from tests.unit.engine.test_codec import quest, sample


@pytest.fixture(scope="module")
def text() -> bytes:
    return codec.dump_bytes(sample())


def test_digest_leaves_the_active_line_out() -> None:
    one = b'{\n"active": "a::f",\n"schema": 2\n}\n'
    two = b'{\n"active": "b::g",\n"schema": 2\n}\n'
    assert digest(one) == digest(two)
    assert digest(one) == hashlib.sha256(b'{\n"schema": 2\n}\n').hexdigest()


def test_digest_of_a_file_without_an_active_line_is_its_sha256() -> None:
    data = b'{\n"schema": 2\n}\n'
    assert digest(data) == hashlib.sha256(data).hexdigest()


def test_digest_of_an_active_line_without_its_end_is_the_whole_sha256() -> None:
    data = b'{\n"active": "a::f"'
    assert digest(data) == hashlib.sha256(data).hexdigest()


def test_quests_start(text: bytes) -> None:
    assert quests_start(text) == text.index(b'\n"quests": {\n')
    assert quests_start(b"{}") == -1


def test_active_line_of_the_writers_file(text: bytes) -> None:
    assert active_line(text, quests_start(text)) == (True, "src/pkg/m.py::C.f1")


def test_active_line_without_one() -> None:
    assert active_line(b'{\n"schema": 2\n}\n') == (True, None)


@pytest.mark.parametrize(
    "head",
    [
        b'{\n"active": "x"',  # no end of line
        b'{\n"active": "x"\n',  # no comma
        b'{\n"active": nope,\n',  # not JSON
        b'{\n"active": 5,\n',  # not a string
        b'{\n"active": "\\u0078",\n',  # not as the writer encodes it
        b'{\n"active": "y",\n',  # names no quest of the file
    ],
)
def test_active_line_not_as_the_writer_writes_it(head: bytes) -> None:
    data = head + b'"quests": {\n"x": {}\n}\n}\n'
    assert active_line(data) == (False, None)


def test_active_line_names_a_quest_after_start() -> None:
    data = b'{\n"active": "x",\n"quests": {\n"x": {}\n}\n}\n'
    assert active_line(data, 0) == (True, "x")
    assert active_line(data, len(data)) == (False, None)


def test_table_of(text: bytes) -> None:
    assert table_of(text) == [f"tests/test_m.py::test_{n}" for n in range(4)]


def test_table_of_a_file_laid_out_otherwise(text: bytes) -> None:
    assert table_of(b"{}") is None
    assert table_of(text.replace(b'"tests": [', b'"tests":[')) is None
    assert table_of(text.replace(b'\n],\n"quests"', b'\n] ,\n"quests"')) is None


def test_table_of_a_table_that_cannot_be_decoded(text: bytes) -> None:
    assert table_of(text.replace(b'"tests/test_m.py::test_0"', b"7")) is None
    assert table_of(text.replace(b'"tests/test_m.py::test_0",', b"{")) is None


def test_one_file_keeps_only_that_files_quests(text: bytes) -> None:
    found = one_file(text, "src/pkg/m.py::C.f2", quests_start(text))
    assert found is not None
    data, table = found
    assert bytes(table) == text[text.index(b'"tests": [') + 9 : quests_start(text) - 1]
    assert not data.startswith(b'{\n"active"')
    read = codec.view(data, "quest.json", table)
    assert read is not None
    assert read.active is None
    assert read == sample().__class__(
        quests=sample().quests,
        coverage_config=sample().coverage_config,
        test_files=sample().test_files,
        test_paths=sample().test_paths,
        removed=sample().removed,
        excluded_functions=sample().excluded_functions,
        policy=sample().policy,
        policy_history=sample().policy_history,
        scanned_at=sample().scanned_at,
    )


def test_one_file_of_a_file_not_laid_out_so(text: bytes) -> None:
    start = quests_start(text)
    assert one_file(text[:-1], "src/pkg/m.py::C.f2", start) is None
    assert one_file(text, "src/pkg/m.py::C.f2", 5) is None
    assert one_file(text, "src/pkg/m.py::nope", start) is None


def test_one_file_of_a_record_that_is_not_json_or_names_no_file(text: bytes) -> None:
    start = quests_start(text)
    broken = text.replace(b'"src/pkg/m.py::C.f2": {"baseline"', b'"src/pkg/m.py::C.f2": {"x"": ')
    assert one_file(broken, "src/pkg/m.py::C.f2", start) is None
    no_file = text.replace(
        b'"file": "src/pkg/m.py", "fingerprint": "sha256:' + b"0" * 63 + b"2",
        b'"file": 3, "fingerprint": "sha256:' + b"0" * 63 + b"2",
    )
    assert no_file != text
    assert one_file(no_file, "src/pkg/m.py::C.f2", start) is None


def test_one_file_whose_record_names_another_file(text: bytes) -> None:
    start = quests_start(text)
    other = text.replace(
        b'"file": "src/pkg/m.py", "fingerprint": "sha256:' + b"0" * 63 + b"2",
        b'"file": "src/zz.py", "fingerprint": "sha256:' + b"0" * 63 + b"2",
    )
    assert other != text
    assert one_file(other, "src/pkg/m.py::C.f2", start) is None


def test_code_stamp_of_folders_that_cannot_be_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(view_cache._code_stamp()) == 64
    monkeypatch.setattr(view_cache, "_RENDERERS", ("core", "no-such-folder"))
    assert view_cache._code_stamp() == ""


def test_save_without_a_code_stamp_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(view_cache, "_code_stamp", lambda: "")
    journal = tmp_path / "journals" / "q.journal"
    view_cache.save(journal, b"{}", "/r", None, None)  # type: ignore[arg-type]
    assert not (tmp_path / "views").exists()


def test_one_file_leaves_the_other_files_quests_out() -> None:
    ratchet = sample()
    for name, n in (("src/a.py", 11), ("src/zz.py", 12)):
        other = quest(n, file=name, id=f"{name}::C.f{n}")
        ratchet.quests[other.id] = other
    data = codec.dump_bytes(ratchet)
    start = quests_start(data)
    found = one_file(data, "src/pkg/m.py::C.f2", start)
    assert found is not None
    read = codec.view(found[0], "quest.json", found[1])
    assert read is not None
    assert sorted(read.quests) == sorted(sample().quests)
    alone = one_file(data, "src/zz.py::C.f12", start)
    assert alone is not None
    read = codec.view(alone[0], "quest.json", alone[1])
    assert read is not None
    assert list(read.quests) == ["src/zz.py::C.f12"]
