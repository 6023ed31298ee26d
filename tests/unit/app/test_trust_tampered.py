"""A mutation report that did not come with the judge's nonce is a fact that could not confirm."""

from __future__ import annotations

from pytest_quest.app.trust import tampered_facts
from pytest_quest.core.model import Fact
from pytest_quest.engine.mutation import MutationReport


def test_an_untampered_report_gives_no_fact() -> None:
    assert tampered_facts(MutationReport(), "a.py::f") == []


def test_a_tampered_report_names_what_was_wrong() -> None:
    report = MutationReport(tampered="two messages where one was expected")
    assert tampered_facts(report, "a.py::f") == [
        Fact(
            check="evidence.tampered",
            field="a.py::f",
            expected="one message with the judge's nonce from the mutation run",
            actual="two messages where one was expected",
            message=(
                "could not confirm: the mutation run's report was tampered with "
                "(two messages where one was expected)"
            ),
        )
    ]
