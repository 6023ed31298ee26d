"""plugin/shards.py: what a shard job's child hands over, and the shard its judge makes of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pytest_quest.app.check_run import SuiteRun
from pytest_quest.core.run import RunReport
from pytest_quest.engine.measure import Measurement
from pytest_quest.plugin.shards import hand_over_data, shard_run


class _Data:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def data_filename(self) -> str:
        return self.filename


class _Cov:
    def __init__(self, filename: str) -> None:
        self.data = _Data(filename)

    def get_data(self) -> _Data:
        return self.data


class _Measurer:
    def __init__(self, cov: _Cov, only: list[str] | None = None) -> None:
        self.cov = cov
        self.only = only

    def only_files(self) -> list[str] | None:
        return self.only


def _measurer(cov: _Cov, only: list[str] | None = None) -> Measurement:
    return cast("Measurement", _Measurer(cov, only))


def _settings(monkeypatch: Any) -> None:
    monkeypatch.setattr(
        "pytest_quest.plugin.shards.coverage_settings", lambda cov, rootdir: {"branch": True}
    )


def test_the_child_copies_its_data_and_reports_its_settings(
    tmp_path: Path, monkeypatch: Any
) -> None:
    _settings(monkeypatch)
    measured = tmp_path / ".coverage"
    measured.write_bytes(b"data")
    out = tmp_path / "out" / "data"
    out.parent.mkdir()
    measurer = _measurer(_Cov(str(measured)), only=["a.py"])
    roots = [str(tmp_path / "src")]
    given = hand_over_data(
        measurer, tmp_path, str(out), measured_roots=roots, notes=["n"], only_files=None
    )
    assert out.read_bytes() == b"data"
    assert given == {
        "copied": True,
        "config": {"branch": True},
        "measured_roots": [str(tmp_path / "src")],
        "only_files": ["a.py"],
        "notes": ["n"],
    }
    # --quest-measure-only as given wins over the measurer's own list.
    given = hand_over_data(
        measurer, tmp_path, str(out), measured_roots=roots, notes=[], only_files=["b.py"]
    )
    assert given["only_files"] == ["b.py"]


def test_a_child_that_saved_no_data_copies_none(tmp_path: Path, monkeypatch: Any) -> None:
    _settings(monkeypatch)
    out = tmp_path / "data"
    measurer = _measurer(_Cov(str(tmp_path / "missing")))
    given = hand_over_data(
        measurer, tmp_path, str(out), measured_roots=["src"], notes=[], only_files=None
    )
    assert given["copied"] is False and not out.exists()
    assert given["measured_roots"] == ["src"]


def _suite(shard: dict[str, Any] | None, sandbox: str = "bwrap") -> SuiteRun:
    return SuiteRun(RunReport(), None, "", sandbox, shard=shard)


def test_the_judge_makes_the_shard_of_what_the_child_reported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"data")
    suite = _suite(
        {
            "copied": True,
            "config": {"branch": True},
            "measured_roots": ["src"],
            "only_files": ["a.py"],
            "notes": ["n"],
        }
    )
    run = shard_run(suite, data, errors={"t": "boom"}, test_digests={"tests/t.py": "d"})
    assert run.data_filename == str(data)
    assert (run.config, run.measured_roots, run.only_files, run.notes) == (
        {"branch": True},
        ["src"],
        ["a.py"],
        ["n"],
    )
    assert (run.errors, run.test_digests, run.sandbox) == (
        {"t": "boom"},
        {"tests/t.py": "d"},
        "bwrap",
    )


def test_a_child_report_without_data_or_malformed_makes_an_empty_shard(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"data")
    # Data not said to be copied (a file left there is not the child's): none.
    run = shard_run(_suite({"copied": False}), data, errors={}, test_digests={})
    assert run.data_filename is None
    malformed = {
        "copied": True,
        "config": [],
        "measured_roots": "src",
        "only_files": 3,
        "notes": {},
    }
    run = shard_run(_suite(malformed, "none"), tmp_path / "nothing", errors={}, test_digests={})
    assert (run.data_filename, run.config, run.measured_roots, run.only_files, run.notes) == (
        None,
        {},
        [],
        None,
        [],
    )
    assert run.sandbox == "none"
    assert shard_run(_suite(None), data, errors={}, test_digests={}).data_filename is None
