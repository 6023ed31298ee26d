"""What the clean judge adds to one submit: the re-exec, and the reaping shim around each child.

Run from the repository root: `python benchmarks/judge_cost.py PROJECT` where PROJECT holds a
quest.json whose active quest is settled (so `submit` stops right after starting).
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


def timed(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    best = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
        best.append(time.perf_counter() - started)
    return statistics.median(best)


def main() -> None:
    project = Path(sys.argv[1]).resolve()
    args = ["-p", "no:cacheprovider", "--quest", "submit"]
    import os

    user = timed([sys.executable, "-m", "pytest", *args], cwd=project)
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    clean_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    clean = timed(judge_args(args), cwd=project, env=clean_env)
    plain = timed(["/bin/true"])
    shimmed = timed(shim_command(["/bin/true"]))
    print(f"submit as typed (hands over to the judge): {user * 1000:.0f} ms")
    print(f"the clean judge started directly:          {clean * 1000:.0f} ms")
    print(f"  => the hand-over costs                   {(user - clean) * 1000:.0f} ms per submit")
    print(f"/bin/true: {plain * 1000:.1f} ms; under the shim: {shimmed * 1000:.1f} ms")
    print(f"  => the shim costs {(shimmed - plain) * 1000:.0f} ms per child (2 children per submit)")


if __name__ == "__main__":
    main()
