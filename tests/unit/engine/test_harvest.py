"""The per-test fold of coverage.py's tracer data (engine/harvest.py), with a stand-in collector.

In-process and without a tracer of its own; that the fold gives the facts of
per-test contexts on a real run is tests/e2e/test_perf_equivalence.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coverage import CoverageData

from pytest_quest.engine.harvest import Harvest, passing_arcs


def test_packed_arcs_unpack_as_coverage_does() -> None:
    class Core:
        packed_arcs = True

    class Collector:
        core = Core()

    harvest = Harvest(Collector())

    def pack(first: int, second: int) -> int:
        # tracer.c: CTracer_record_pair
        packed = (abs(first) & 0xFFFFFFF) | ((abs(second) & 0xFFFFFFF) << 28)
        if first < 0:
            packed |= 1 << 56
        if second < 0:
            packed |= 1 << 57
        return packed

    for arc in [(1, 2), (-7, 8), (12, -7), (-3, -3), (268435455, 1)]:
        assert harvest.unpack(pack(*arc)) == arc


def test_the_fold_keeps_passing_tests_and_who_ran_what(tmp_path: Path) -> None:
    # In-process, with a stand-in for coverage.py's collector: what a test
    # that passed, failed, or whose outcome is unknown leaves in the data file.
    source = tmp_path / "mod.py"
    source.write_text(
        "def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    return 3\n"
    )
    name = str(source)

    class Core:
        packed_arcs = False
        systrace = True

    class Collector:
        core = Core()
        branch = True

        def __init__(self) -> None:
            self.data: dict[str, Any] = {}

        def cached_mapped_file(self, filename: str) -> str:
            return filename

    collector = Collector()
    assert Harvest.attach(type("Cov", (), {"_collector": collector})()) is not None
    harvest = Harvest(collector)
    collector.data[name] = {(-1, 1), (1, 7)}  # import time
    harvest.switch("t1", None)
    collector.data[name] |= {(-1, 2), (2, 3), (3, -1)}
    harvest.switch("", True)
    harvest.switch("t2", None)
    collector.data[name] |= {(-7, 8), (8, -7)}
    harvest.switch("", False)
    harvest.switch("t3", None)
    collector.data[name] |= {(-1, 2), (2, 4), (4, -1)}
    harvest.switch("", None)  # outcome unknown: kept whole, as coverage would
    assert collector.data[name] == set()

    data = CoverageData(basename=str(tmp_path / ".coverage"))
    harvest.write(data)
    harvest.write_who(data.data_filename())
    arcs, tests = passing_arcs(data.data_filename(), {"t1", "t3"})
    assert arcs[name] == {(-1, 2), (2, 3), (3, -1), (2, 4), (4, -1)}
    # t1's fold is one row for `f` (which of its lines it ran is not kept): it counts for
    # each line of `f`; t3's whole data says its lines.
    assert {line: sorted(names) for line, names in tests[name].items()} == {
        2: ["t1", "t3"],
        3: ["t1"],
        4: ["t1", "t3"],
    }
    # t2 failed: its arcs count for nobody, but its file stays measured.
    arcs, tests = passing_arcs(data.data_filename(), {"t1", "t2"})
    assert (8, -7) not in arcs[name]
    assert 8 not in tests[name]
    saved = CoverageData(basename=str(tmp_path / ".coverage"))
    saved.read()
    assert saved.measured_files() == {name}
