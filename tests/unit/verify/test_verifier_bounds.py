"""Verifiers are bounded: output capped and read in chunks, a missing program refused.

Attacks first: a verifier that prints 100 MB (read whole, it raises the
judge's RSS by ~400 MB), one that never closes its output, and a verifier
command naming a program that does not exist (refused, not REVIEW with exit 0).
"""

from __future__ import annotations

import resource
import shlex
import sys
import time
from pathlib import Path

import pytest

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.model import Quest
from pytest_quest.verify.adapters import CommandVerifier, checked_verifiers
from pytest_quest.verify.capped import OUTPUT_LIMIT
from pytest_quest.verify.prompt import Request, build_prompt
from tests.support.paths import VERIFIERS


def command(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


@pytest.fixture
def request_() -> Request:
    quest = Quest(id="a.py::f", file="a.py", qualname="f", first=1, last=2, fingerprint="")
    return Request(
        quest=quest, function_file="a.py", function_first=1, function_source="def f(): pass",
        tests=[], questions=["q1"],
    )  # fmt: skip


FLOOD = "import sys\nblock = b'x' * 1_000_000\nfor _ in range({n}):\n    sys.stdout.buffer.write(block)\n"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_flood_of_output_is_cut_at_the_cap_and_never_held(
    request_: Request, tmp_path: Path
) -> None:
    assert OUTPUT_LIMIT == 1024 * 1024
    before = peak_rss_mb()
    started = time.monotonic()
    answer = CommandVerifier(command(FLOOD.format(n=100)), 60, tmp_path)(request_, "prompt")
    assert answer.error == (
        "its output exceeded the cap of 1048576 bytes (1 MB) and it was stopped; "
        "a verifier replies in a few kilobytes"
    )
    assert time.monotonic() - started < 30
    assert peak_rss_mb() - before < 50, "the output was held in memory"


def test_the_cap_is_a_parameter_and_stderr_is_capped_too(request_: Request, tmp_path: Path) -> None:
    small = CommandVerifier(command(FLOOD.format(n=1)), 60, tmp_path, max_output=1000)
    assert "exceeded the cap of 1000 bytes" in small(request_, "p").error
    noisy = command(
        "import sys\nsys.stderr.buffer.write(b'e' * 5_000_000)\nsys.stderr.write('\\nlast words')\n"
        "sys.exit(3)"
    )
    answer = CommandVerifier(noisy, 60, tmp_path)(request_, "p")
    assert answer.error.startswith("exited with status 3")


def test_output_under_the_cap_is_read_whole(request_: Request, tmp_path: Path) -> None:
    clean = shlex.join([sys.executable, str(VERIFIERS / "clean.py")])
    request_.function_source = "def f():\n" + "    x = 1\n" * 300_000  # a 3 MB prompt in
    answer = CommandVerifier(clean, 60, VERIFIERS)(request_, build_prompt(request_))
    assert (answer.error, answer.status) == ("", "verified-clean")


def test_a_verifier_that_holds_its_output_open_is_stopped_at_the_timeout(
    request_: Request, tmp_path: Path
) -> None:
    hang = command(
        "import sys, time\nsys.stdout.write('partial')\nsys.stdout.flush()\ntime.sleep(60)"
    )
    started = time.monotonic()
    answer = CommandVerifier(hang, 0.5, tmp_path)(request_, "p")
    assert answer.error == "timed out after 0.5s (--quest-verify-timeout)"
    assert time.monotonic() - started < 15


@pytest.mark.parametrize(
    ("cmd", "named"),
    [
        ("no-such-verifier-program --flag", "no-such-verifier-program"),
        ("./missing.sh", "./missing.sh"),
    ],
)
def test_a_program_that_cannot_start_is_a_usage_error(tmp_path: Path, cmd: str, named: str) -> None:
    with pytest.raises(QuestUsageError) as info:
        checked_verifiers(commands=[cmd], hooks=[], timeout=5, threshold=None, rootdir=tmp_path)
    assert str(info.value) == (
        f"verifier command {cmd!r} cannot be started: no program {named!r} "
        "(on PATH or from the rootdir); fix --quest-verifier-cmd or quest_verifier_cmd"
    )


def test_a_program_that_exists_passes_the_check(tmp_path: Path) -> None:
    found = checked_verifiers(
        commands=[command("pass")], hooks=[], timeout=5, threshold=None, rootdir=tmp_path
    )
    assert len(found) == 1
