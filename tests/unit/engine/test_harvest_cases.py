"""engine/harvest.py's Harvest: arcs packed as the C tracer packs them, each passing test's
arcs kept for the run record, and recorded tests replayed as if they had run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_quest.engine.harvest import Harvest, _line_anchors, _RegionLines

SOURCE = "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    return 3\n"


class Core:
    def __init__(self, packed: bool) -> None:
        self.packed_arcs = packed
        self.systrace = True


class Collector:
    branch = True

    def __init__(self, packed: bool = False) -> None:
        self.core = Core(packed)
        self.data: dict[str, Any] = {}

    def cached_mapped_file(self, filename: str) -> str:
        return "mapped/" + filename


@pytest.mark.parametrize(
    ("arc", "packed"),
    [
        ((1, 2), 1 | (2 << 28)),
        ((-1, 2), 1 | (2 << 28) | (1 << 56)),
        ((3, -1), 3 | (1 << 28) | (1 << 57)),
        ((-5, -7), 5 | (7 << 28) | (1 << 56) | (1 << 57)),
        ((0xFFFFFFF, 1), 0xFFFFFFF | (1 << 28)),
    ],
)
def test_pack_and_unpack_as_the_c_tracer(arc: tuple[int, int], packed: int) -> None:
    harvest = Harvest(Collector(packed=True))
    assert harvest.pack(arc) == packed
    assert harvest.unpack(packed) == arc


def test_pack_and_unpack_leave_pairs_as_they_are() -> None:
    harvest = Harvest(Collector(packed=False))
    arc = (-1, 2)
    assert harvest.pack(arc) is arc
    assert harvest.unpack(arc) is arc


def test_tests_arcs_are_kept_only_once_asked(tmp_path: Path) -> None:
    name = str(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text(SOURCE)
    collector = Collector()
    harvest = Harvest(collector)
    assert harvest.tests_arcs() == {}
    harvest.switch("t0", None)
    collector.data[name] = {(-1, 2), (2, 3)}
    harvest.switch("", True)
    assert harvest.kept is None
    assert harvest.tests_arcs() == {}
    harvest.keep_tests()
    assert harvest.kept == []
    harvest.switch("t1", None)
    collector.data[name] = {(-1, 2), (2, 4)}
    harvest.switch("", True)
    harvest.switch("t2", None)
    collector.data[name] = {(7, 8)}
    harvest.switch("", False)
    found = harvest.tests_arcs()
    assert list(found) == ["t1"]
    assert sorted(found["t1"]["mapped/" + name]) == [(-1, 2), (2, 4)]


def test_tests_arcs_of_packed_arcs(tmp_path: Path) -> None:
    name = str(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text(SOURCE)
    collector = Collector(packed=True)
    harvest = Harvest(collector)
    harvest.keep_tests()
    harvest.switch("t1", None)
    collector.data[name] = {harvest.pack((-1, 2)), harvest.pack((2, -1))}
    collector.data["other.py"] = {harvest.pack((3, 4))}
    harvest.switch("", True)
    found = harvest.tests_arcs()
    assert sorted(found["t1"]["mapped/" + name]) == [(-1, 2), (2, -1)]
    assert found["t1"]["mapped/other.py"] == [(3, 4)]


def test_replay_counts_recorded_tests_as_passing(tmp_path: Path) -> None:
    name = str(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text(SOURCE)
    harvest = Harvest(Collector(packed=True))
    shared = [(-1, 2), (2, 3)]
    harvest.replay(
        [
            ("t1", {name: shared}),
            ("t2", {name: shared}),
            ("t3", {name: [(-7, 8)]}),
            ("t4", {}),
        ]
    )
    assert {harvest.unpack(arc) for arc in harvest.passing[name]} == {(-1, 2), (2, 3), (-7, 8)}
    assert {anchor: tests for anchor, tests in harvest.who[name].items()} == {
        2: ["t1", "t2"],
        8: ["t3"],
    }
    assert harvest.kept is None
    assert harvest.tests_arcs() == {}


def test_replay_is_not_kept_for_tests_arcs(tmp_path: Path) -> None:
    name = str(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text(SOURCE)
    harvest = Harvest(Collector())
    harvest.keep_tests()
    harvest.replay([("t1", {name: [(-1, 2)]})])
    assert harvest.tests_arcs() == {}
    assert harvest.passing[name] == {(-1, 2)}
    assert dict(harvest.who[name]) == {2: ["t1"]}


def test_line_anchors(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(SOURCE)
    assert _line_anchors(str(tmp_path / "mod.py")) == {2: 2, 3: 2, 4: 2, 8: 8}


def test_attach_to_a_collector_that_fits() -> None:
    class Cov:
        def __init__(self, collector: object) -> None:
            self._collector = collector

    collector = Collector(packed=True)
    made = Harvest.attach(Cov(collector))
    assert made is not None
    assert made.collector is collector
    assert made.packed is True


@pytest.mark.parametrize("broken", ["branch", "data", "systrace", "mapped", "core"])
def test_attach_to_a_collector_that_does_not_fit(broken: str) -> None:
    class NoMapping:
        def __init__(self) -> None:
            self.branch = True
            self.core = Core(False)
            self.data: dict[str, Any] = {}

    collector: Any = Collector()
    if broken == "branch":
        collector.branch = False
    elif broken == "data":
        collector.data = []
    elif broken == "systrace":
        collector.core.systrace = 1
    elif broken == "mapped":
        collector = NoMapping()
    else:
        collector.core = None

    class Cov:
        _collector = collector

    assert Harvest.attach(Cov()) is None


def test_attach_without_a_collector() -> None:
    assert Harvest.attach(object()) is None


def test_line_anchors_of_a_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def (:\n")
    assert _line_anchors(str(tmp_path / "bad.py")) == {}


def test_region_lines_are_read_once_per_file(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(SOURCE)
    lines = _RegionLines()
    first = lines(str(tmp_path / "mod.py"))
    assert first == {2: (2, 3, 4), 8: (8,)}
    (tmp_path / "mod.py").write_text("")
    assert lines(str(tmp_path / "mod.py")) is first


def test_fold_reuses_the_anchors_of_a_file(tmp_path: Path) -> None:
    name = str(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text(SOURCE)
    harvest = Harvest(Collector())
    assert harvest._fold(name, {(-1, 2), (2, 3)}) == {2}
    anchors = harvest.anchors[name]
    assert harvest._fold(name, {(2, 3), (-7, 8)}) == {2, 8}
    assert harvest.anchors[name] is anchors
    assert harvest.passing[name] == {(-1, 2), (2, 3), (-7, 8)}
    assert harvest._fold(name, {(30, 31)}) == set()


def test_write_who_without_rows_opens_nothing(tmp_path: Path) -> None:
    harvest = Harvest(Collector())
    harvest.write_who(str(tmp_path / "missing" / "data.db"))
    assert not (tmp_path / "missing").exists()
