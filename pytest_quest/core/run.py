"""What a run of the selected tests produced: outcomes, collection errors, surviving mutants."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CollectionError:
    file: str
    line: int
    message: str


@dataclass
class RunReport:
    """What running the selected tests produced, besides coverage data.

    `completed` is False when the run could not finish for reasons of the
    environment (`problem` says which: a timeout, a crashed runner);
    `tampered` says what was wrong when its report was not the child's own.
    `outcomes` maps node ids to ``passed``, ``failed``, ``skipped``,
    ``xfailed``, ``xpassed`` or ``error``.
    """

    completed: bool = True
    problem: str = ""
    collection_errors: list[CollectionError] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)
    duration: float = 0.0
    tampered: str = ""

    @property
    def passed(self) -> set[str]:
        return {nodeid for nodeid, outcome in self.outcomes.items() if outcome == "passed"}


@dataclass(frozen=True)
class SurvivingMutant:
    """A mutant of the function that every covering test let through."""

    file: str
    line: int
    original: str
    mutated: str
    operator: str
    # Stable for the same function text (core/mutants.mutant_id): what a dispute names.
    mutant_id: str = ""
    # What the mutant made the function return or raise where the original
    # did otherwise, on a covering test's inputs ("" when not observed).
    observed: str = ""


__all__ = ["CollectionError", "RunReport", "SurvivingMutant"]
