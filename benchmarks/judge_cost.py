"""What the clean judge adds to one submit: the re-exec, and the reaping shim around each child.

Run from the repository root: `python benchmarks/judge_cost.py PROJECT` where PROJECT holds a
quest.json with nothing to judge: no active quest, or a settled one (so `submit` stops right
after the hand-over, exit 4 saying which).  Every run's exit status is checked: a run that ends otherwise (a submit
that judged, crashed or refused for another reason) stops the script with exit 1 and its output,
for its time would be another command's.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from pytest_quest.engine.reaper import shim_command
from pytest_quest.plugin.judge import judge_args

ROUNDS = 7
#: What submit says when the project has nothing to judge (app/submit.py).
NOTHING_TO_JUDGE = ("no active quest", "is settled")


def timed(
    command: list[str],
    exit_status: int,
    says: tuple[str, ...] = ("",),
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> float:
    """The median wall time of `command`; each run must exit `exit_status`, saying one of `says`."""
    best = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, check=False
        )
        best.append(time.perf_counter() - started)
        output = done.stdout + done.stderr
        if done.returncode != exit_status or not any(said in output for said in says):
            print(
                f"FAILED RUN: {' '.join(command)} exited {done.returncode} "
                f"(expected {exit_status}, saying one of {says})",
                file=sys.stderr,
            )
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
            raise SystemExit(1)
    return statistics.median(best)


def main() -> None:
    project = Path(sys.argv[1]).resolve()
    args = ["-p", "no:cacheprovider", "--quest", "submit"]
    import os

    # Nothing to judge: submit refuses at once (a usage error), after the hand-over.
    user = timed([sys.executable, "-m", "pytest", *args], 4, NOTHING_TO_JUDGE, cwd=project)
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    clean_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    clean = timed(judge_args(args), 4, NOTHING_TO_JUDGE, cwd=project, env=clean_env)
    plain = timed(["/bin/true"], 0)
    shimmed = timed(shim_command(["/bin/true"]), 0)
    print(f"submit as typed (hands over to the judge): {user * 1000:.0f} ms")
    print(f"the clean judge started directly:          {clean * 1000:.0f} ms")
    print(f"  => the hand-over costs                   {(user - clean) * 1000:.0f} ms per submit")
    print(f"/bin/true: {plain * 1000:.1f} ms; under the shim: {shimmed * 1000:.1f} ms")
    print(
        f"  => the shim costs {(shimmed - plain) * 1000:.0f} ms per child (2 children per submit)"
    )


if __name__ == "__main__":
    main()
