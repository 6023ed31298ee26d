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
    ``xfailed``, ``xpassed`` or ``error``; `errors` maps a test that failed
    or erred to the first lines of its error (``RecursionError: ...``).
    """

    completed: bool = True
    problem: str = ""
    collection_errors: list[CollectionError] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)
    duration: float = 0.0
    tampered: str = ""
    errors: dict[str, str] = field(default_factory=dict)
    #: Why the run could not complete, when the reason lies outside the
    #: submission (core/environment.py); "" otherwise.
    environment: str = ""
    #: The last lines of an incomplete run's output (stdout and stderr).
    output_tail: list[str] = field(default_factory=list)

    @property
    def passed(self) -> set[str]:
        return passed_tests(self.outcomes)

    @property
    def failed(self) -> set[str]:
        """Tests that failed or erred (a skip or an xfail is not a failure)."""
        return failed_tests(self.outcomes)


#: The outcomes of a test that did not pass because something went wrong.
FAILED = ("failed", "error")


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
    # Set only when the tests that ran it are every test of the whole suite
    # that reaches its line (audit, a dispute): they all let it through,
    # so it is possibly equivalent.
    whole_suite: tuple[str, ...] = ()
    # The witness search's call on which the mutant and the function differ,
    # as the judge words it ("" when none was found).
    witness: str = ""
    # Why a survivor without a witness is still held against the tests: the
    # search could not call the function, or its calls reach outside what it
    # compares ("" when the search ran clean: the survivor is unwitnessed).
    held_because: str = "no witness search was made"

    @property
    def witnessed(self) -> bool:
        """Whether a call tells the mutant from the function (the tests' own, or the search's)."""
        return bool(self.observed or self.witness)

    @property
    def unwitnessed(self) -> bool:
        """Whether the search saw everything the function does and found no difference."""
        return not self.witnessed and not self.held_because


def passed_tests(outcomes: dict[str, str]) -> set[str]:
    """The node ids whose outcome is ``passed``: the only tests whose coverage counts."""
    return {nodeid for nodeid, outcome in outcomes.items() if outcome == "passed"}


def failed_tests(outcomes: dict[str, str]) -> set[str]:
    """The node ids that failed or erred (a skip or an xfail is not a failure)."""
    return {nodeid for nodeid, outcome in outcomes.items() if outcome in FAILED}
