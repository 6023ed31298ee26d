"""The reaping shim: nothing a judged run starts outlives it, detached processes included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_quest.engine import reaper

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs /proc and prctl"
)

# A "test run" that leaves processes behind: a detached sleeper in its own
# session (double fork), and a plain child of its own; it writes their pids.
LEAVER = r"""
import os, subprocess, sys, time
out = sys.argv[1]
detached = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)
pid = os.fork()
if pid == 0:
    os.setsid()
    grandchild = os.fork()
    if grandchild == 0:
        time.sleep(60)
        os._exit(0)
    with open(out + ".dbl.tmp", "w") as f:
        f.write(str(grandchild))
    os.replace(out + ".dbl.tmp", out + ".dbl")  # whole or absent: the test polls for it
    os._exit(0)
os.waitpid(pid, 0)
plain = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(out + ".tmp", "w") as f:
    f.write(f"{detached.pid} {plain.pid}")
os.replace(out + ".tmp", out)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _pids(out: Path, timeout: float = 60.0) -> list[int]:
    """The pids the LEAVER wrote; it may start slowly on a loaded (or measured) machine."""
    deadline = time.monotonic() + timeout
    while not (out.exists() and Path(str(out) + ".dbl").exists()):
        assert time.monotonic() < deadline, f"the LEAVER wrote no pids in {timeout}s"
        time.sleep(0.02)
    return [int(p) for p in out.read_text().split()] + [int(Path(str(out) + ".dbl").read_text())]


def test_the_shim_kills_what_the_run_left_behind(tmp_path: Path) -> None:
    out = tmp_path / "pids"
    command = reaper.shim_command([sys.executable, "-c", LEAVER, str(out)])
    result = subprocess.run(command, timeout=60)
    assert result.returncode == 0
    pids = _pids(out)
    assert len(pids) == 3
    time.sleep(0.1)
    assert [pid for pid in pids if _alive(pid)] == []


def test_the_shim_passes_on_the_exit_status(tmp_path: Path) -> None:
    command = reaper.shim_command([sys.executable, "-c", "raise SystemExit(3)"])
    assert subprocess.run(command, timeout=60).returncode == 3
    killed = reaper.shim_command(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    )
    assert subprocess.run(killed, timeout=60).returncode == 128 + signal.SIGKILL


def test_when_the_judge_dies_the_shim_cleans_up(tmp_path: Path) -> None:
    """A judge killed with SIGKILL: the shim is told (PDEATHSIG) and kills the run's processes."""
    out = tmp_path / "pids"
    judge_code = (
        "import subprocess, sys, time\n"
        "from pytest_quest.engine import reaper\n"
        f"subprocess.Popen(reaper.shim_command([sys.executable, '-c', {LEAVER!r} + '\\nimport time; time.sleep(60)', {str(out)!r}]))\n"
        "time.sleep(60)\n"
    )
    judge = subprocess.Popen([sys.executable, "-c", judge_code])
    try:
        pids = _pids(out)
    finally:
        judge.kill()
        judge.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    assert [pid for pid in pids if _alive(pid)] == []


def test_kill_descendants_sweeps_orphans_of_a_subreaper(tmp_path: Path) -> None:
    out = tmp_path / "pids"
    code = (
        "import subprocess, sys, time\n"
        "from pytest_quest.engine import reaper\n"
        "assert reaper.become_subreaper()\n"
        f"subprocess.run([sys.executable, '-c', {LEAVER!r}, {str(out)!r}])\n"
        "time.sleep(0.2)\n"
        "left = reaper.descendants(__import__('os').getpid())\n"
        "n = reaper.kill_descendants()\n"
        "print(len(left), n, len(reaper.descendants(__import__('os').getpid())))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    left, killed, after = map(int, result.stdout.split())
    assert left == 3 and killed == 3 and after == 0
    assert [pid for pid in _pids(out) if _alive(pid)] == []


def test_no_site_hook_runs_in_the_shim_and_the_command_keeps_its_own(tmp_path: Path) -> None:
    """The shim runs without `site` (no `.pth` start-up hook of the environment runs in
    it); the command it starts has the interpreter's usual start-up."""
    probe = (
        "import os, sys\n"
        "parent = open(f'/proc/{os.getppid()}/cmdline', 'rb').read().split(b'\\0')\n"
        "print(b'-S' in parent[:4], 'site' in sys.modules)\n"
    )
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("no /proc here")
    command = reaper.shim_command([sys.executable, "-c", probe])
    out = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "True"]


# What a gate child sees of its descriptors: each open one and what it is.
DESCRIPTORS = (
    "import os\n"
    "found = {}\n"
    "for fd in os.listdir('/proc/self/fd'):\n"
    "    try:\n"
    "        found[int(fd)] = os.readlink(f'/proc/self/fd/{fd}')\n"
    "    except OSError:\n"
    "        pass\n"
    "print(sorted(fd for fd, what in found.items() if fd > 2 and 'pipe:' in what))\n"
    "print(sorted(fd for fd, what in found.items() if fd > 2 and 'pipe:' not in what))\n"
)


def test_the_shim_gives_the_command_its_channel_at_the_same_numbers_and_nothing_else(
    tmp_path: Path,
) -> None:
    # The judge's own descriptor numbers vary with what it holds open; a test that
    # saw them (or a descriptor the judge leaked) could tell one role from another.
    from pytest_quest.engine.channel import CHILD_FDS

    ends = [os.pipe(), os.pipe()]
    extra = os.open(tmp_path, os.O_RDONLY)
    padding = [os.open("/dev/null", os.O_RDONLY) for _ in range(7)]
    channel = (ends[0][1], ends[1][0])
    try:
        command = reaper.shim_command([sys.executable, "-c", DESCRIPTORS], channel)
        out = subprocess.run(
            command, capture_output=True, text=True, timeout=60, check=True,
            pass_fds=(*channel, extra),
        )  # fmt: skip
    finally:
        for fd in (*ends[0], *ends[1], extra, *padding):
            os.close(fd)
    pipes, others = out.stdout.splitlines()
    assert pipes == str(list(CHILD_FDS))
    assert others == "[]"  # the judge's other descriptors are closed
