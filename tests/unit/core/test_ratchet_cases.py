"""Quests whose function a scan no longer finds: removed visibly, unless excluded."""

from __future__ import annotations

from pytest_quest.core.model import Quest, Ratchet, State
from pytest_quest.core.ratchet import ScanReport, _record_removed

NOW = "2026-12-05T09:00:00Z"


def _quest(name: str, state: State, tries: int = 0) -> Quest:
    return Quest(
        id=f"src/m.py::{name}",
        file="src/m.py",
        qualname=name,
        first=3,
        last=9,
        fingerprint=f"sha256:{name}",
        state=state,
        tries=tries,
    )


def test_unseen_quests_are_removed_in_order_excluded_ones_stay() -> None:
    ratchet = Ratchet(
        quests={
            q.id: q
            for q in (
                _quest("seen", State.TODO),
                _quest("gone", State.PASS),
                _quest("kept_out", State.TODO),
                _quest("moved", State.TODO, tries=2),
            )
        }
    )
    report = ScanReport()
    _record_removed(
        ratchet,
        {"src/m.py::seen"},
        {"src/m.py::kept_out"},
        {"src/m.py::moved": "src/n.py::moved"},
        NOW,
        report,
    )
    assert sorted(ratchet.quests) == ["src/m.py::kept_out", "src/m.py::seen"]
    assert ratchet.removed == [
        {"id": "src/m.py::gone", "state": "PASS", "at": NOW, "note": "function not found by scan"},
        {
            "id": "src/m.py::moved",
            "state": "TODO",
            "at": NOW,
            "note": "moved or renamed to src/n.py::moved",
            "fingerprint": "sha256:moved",
            "tries": "2",
        },
    ]
    assert report.removed == ["src/m.py::gone", "src/m.py::moved"]


def test_nothing_unseen_removes_nothing() -> None:
    ratchet = Ratchet(quests={"src/m.py::f": _quest("f", State.TODO)})
    report = ScanReport()
    _record_removed(ratchet, {"src/m.py::f"}, set(), {}, NOW, report)
    assert list(ratchet.quests) == ["src/m.py::f"]
    assert ratchet.removed == []
    assert report.removed == []
