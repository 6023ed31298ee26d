"""A scripted agent that reads nothing but the JSON objects of the quest commands.

Given a project folder (with its tests and pytest configuration) and an answer
bank (quest id -> the body of a test file), it does what an agent following
docs/agent-loop.md does: ``pytest --quest scan``, then loop

* ``pytest --quest next --quest-format json`` (with ``--quest-id ID`` to pass
  over a quest it has no answer for, ``ID`` taken from the JSON's ``queue``);
* write the answer for the quest's ``id`` to a new test file;
* submit with the quest's ``submit_args`` and ``--quest-format json`` (again
  when it exits 75: no verdict, the run could not complete for a reason outside it);

until ``next`` says ``done`` or no quest of the queue has an untried answer.

Every command's stdout is read with ``json.loads`` and nothing else: no
regular expression, no splitting, no look at stderr (which goes into an error
message only when stdout is not JSON). ``transcript`` keeps, per command, its
arguments, exit status and the keys it printed, for the test to check.

Usage (from the repository root):
    python -m tests.acceptance.json_agent [--workdir DIR] [--all]
runs it on the vendored semver (tests/acceptance/projects/semver).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_quest.core.environment import ENVIRONMENT_EXIT
from tests.acceptance.agent_loop import ENVIRONMENT_RETRIES, AgentLoopError
from tests.support.runner import run_pytest

PROJECTS = Path(__file__).resolve().parent / "projects"
SEMVER = PROJECTS / "semver"


@dataclass
class AgentRun:
    """What the agent did: every command's JSON summary, and the states it ended with."""

    transcript: list[dict[str, Any]] = field(default_factory=list)
    scan: dict[str, Any] = field(default_factory=dict)
    submits: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def seconds_by_command(self) -> dict[str, dict[str, float]]:
        """Per command (scan, next, submit, --quest-status): how many ran and their wall time."""
        totals: dict[str, dict[str, float]] = {}
        for step in self.transcript:
            total = totals.setdefault(_command_name(step["args"]), {"count": 0, "seconds": 0.0})
            total["count"] += 1
            total["seconds"] = round(total["seconds"] + step["seconds"], 2)
        return totals

    def summary(self) -> dict[str, Any]:
        states = {quest["id"]: quest["state"] for quest in self.status.get("quests", [])}
        todo_at_scan = self.scan.get("added", [])
        return {
            "scan": {"counts": self.scan.get("counts"), "todo": len(todo_at_scan)},
            "submits": self.submits,
            "skipped": self.skipped,
            "passed": sorted(qid for qid in todo_at_scan if states.get(qid) == "PASS"),
            "counts": self.status.get("counts"),
            "remaining": self.status.get("remaining"),
            "commands": len(self.transcript),
            "seconds_by_command": self.seconds_by_command(),
            "seconds": self.seconds,
        }


def _command_name(args: list[str]) -> str:
    return args[1] if args[0] == "--quest" else args[0]


def quest_command(workdir: Path, run: AgentRun, *args: str) -> tuple[int, dict[str, Any]]:
    """``pytest *args --quest-format json`` in `workdir`: its exit status and its JSON object."""
    result = run_pytest(workdir, *args, "--quest-format", "json", timeout=600)
    try:
        data = json.loads(result.stdout.str())
    except ValueError:
        raise AgentLoopError(
            f"`pytest {' '.join(args)}` printed no JSON object (exit {result.ret}):\n"
            f"{result.stdout.str()}\n{result.stderr.str()}"
        ) from None
    if not isinstance(data, dict):
        raise AgentLoopError(f"`pytest {' '.join(args)}` printed JSON that is not an object")
    run.transcript.append(
        {
            "args": list(args),
            "exit": int(result.ret),
            "keys": sorted(data),
            "seconds": round(result.duration, 2),
        }
    )
    return int(result.ret), data


def pick(queue: Iterable[str], answers: Mapping[str, str], tried: set[str]) -> str | None:
    """The first quest of `queue` that has an answer not tried yet."""
    for quest_id in queue:
        if quest_id in answers and quest_id not in tried:
            return quest_id
    return None


def run_agent(
    project: Path, workdir: Path, answers: Mapping[str, str], *, max_commands: int = 400
) -> AgentRun:
    """Copy `project` into `workdir`, scan it and work the quests `answers` has answers for."""
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(project, workdir, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    (workdir / "quest.json").unlink(missing_ok=True)
    shutil.rmtree(workdir / ".quest", ignore_errors=True)
    run = AgentRun()
    started = time.monotonic()
    code, run.scan = quest_command(workdir, run, "--quest", "scan")
    if code != 0:
        raise AgentLoopError(f"scan failed with exit {code}: {run.scan}")
    tried: set[str] = set()
    wanted: str | None = None  # the quest to ask `next` for; None: whatever `next` offers
    while len(run.transcript) < max_commands:
        args = ["--quest", "next"] + (["--quest-id", wanted] if wanted else [])
        code, shown = quest_command(workdir, run, *args)
        if code != 0:
            raise AgentLoopError(f"next failed with exit {code}: {shown}")
        if shown["done"]:
            break
        quest = shown["quest"]
        if quest is None or quest["state"] != "TODO":
            raise AgentLoopError(f"next is not done and offers no TODO quest: {shown}")
        if wanted is not None and quest["id"] != wanted:
            raise AgentLoopError(f"next --quest-id {wanted} showed {quest['id']}")
        if quest["id"] not in answers or quest["id"] in tried:
            # Pass over it: ask for the first quest of the queue with an untried answer.
            if quest["id"] not in run.skipped and quest["id"] not in tried:
                run.skipped.append(quest["id"])
            wanted = pick(shown["queue"], answers, tried)
            if wanted is None:
                break  # the answers ran out
            continue
        tried.add(quest["id"])
        test_file = workdir / "tests" / f"test_quest_agent_{len(tried):03d}.py"
        test_file.write_text(answers[quest["id"]], encoding="utf-8")
        for _attempt in range(ENVIRONMENT_RETRIES):
            code, judged = quest_command(workdir, run, *quest["submit_args"])
            if code != ENVIRONMENT_EXIT:
                break  # 75: no verdict, the run could not complete for a reason outside it
        run.submits.append(
            {
                "id": quest["id"],
                "remaining_before": shown["remaining"],
                "verdict": judged["verdict"],
                "step": judged.get("step"),
                "remaining_after": judged["remaining"],
                "exit": code,
                "facts": [] if judged["verdict"] == "PASS" else judged["quest"]["facts"],
            }
        )
        if judged["done"]:
            break
        wanted = pick(shown["queue"], answers, tried)
        if wanted is None:
            break  # the answers ran out
    else:
        raise AgentLoopError(f"no end after {len(run.transcript)} commands")
    code, run.status = quest_command(workdir, run, "--quest-status")
    if code != 0:
        raise AgentLoopError(f"status failed with exit {code}: {run.status}")
    run.seconds = round(time.monotonic() - started, 1)
    return run


def main(argv: list[str] | None = None) -> int:
    from tests.acceptance.semver_answers import ANSWERS, CI_ANSWERS

    parser = argparse.ArgumentParser(description="the JSON-only scripted agent on semver")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a new temp folder)")
    parser.add_argument("--all", action="store_true", help="every answer, not only CI's")
    options = parser.parse_args(argv)
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="quest-json-agent-")) / "semver"
    answers = ANSWERS if options.all else {qid: ANSWERS[qid] for qid in CI_ANSWERS}
    try:
        run = run_agent(SEMVER, workdir, answers)
    except AgentLoopError as exc:
        print(f"agent failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(run.summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
