"""SIGKILL at any instant leaves the ratchet file exactly as before or exactly as after.

A writer process rewrites a large ratchet file over and over, each write a
whole new generation (every quest carries the generation number, so a file
mixing two generations, or a half-written one, cannot pass for either).  The
test kills it with SIGKILL after a random delay, 100 times, and after each
kill checks the file byte for byte against the last generation the writer
reported as written and the one after it.  Writers are forked from this
process (no interpreter start-up per kill), and each new writer must get
the lock the killed one held: the kernel releases it.

Run with ``pytest -m stress tests/test_crash.py``.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.model import Fact, Quest, Ratchet, State
from pytest_quest.core.seal import mark_seals
from pytest_quest.engine.codec import dumps, loads
from pytest_quest.engine.store import RatchetStore

pytestmark = [
    pytest.mark.stress,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
]

KILLS = 100
QUESTS = 40
PAYLOAD = 10_000  # characters a quest: a 400 KB file, cheap to encode, slow-ish to write


def generation(number: int) -> Ratchet:
    quests = {}
    for index in range(QUESTS):
        qid = f"src/pkg/mod{index % 20}.py::func{index}"
        quests[qid] = Quest(
            id=qid,
            file=f"src/pkg/mod{index % 20}.py",
            qualname=f"func{index}",
            first=index + 1,
            last=index + 10,
            fingerprint=f"fp-{index}",
            state=State.TODO,
            tries=number,
            statements=10,
            branches=4,
            missing_lines=list(range(index + 2, index + 9)),
            facts=[
                Fact(
                    "coverage.line",
                    f"src/pkg/x.py:{index}",
                    "run",
                    f"generation {number} " + "x" * PAYLOAD,
                )
            ],
            issued_at=f"generation {number}",
        )
    return Ratchet(quests=quests, scanned_at=f"generation {number}")


def number_of(ratchet: Ratchet) -> int:
    return int(ratchet.scanned_at.split()[-1])


def write_generations(path: Path, start: int, report_fd: int) -> None:
    """The forked writer: write generation start+1, start+2... reporting each, until killed.

    It also says ``w`` when a write begins (its temporary file is created), so
    that half of the kills can aim at the write itself.
    """
    real_mkstemp = tempfile.mkstemp

    def announcing_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        os.write(report_fd, b"w\n")
        return real_mkstemp(*args, **kwargs)

    tempfile.mkstemp = announcing_mkstemp  # type: ignore[assignment]  # this forked process only
    ratchet_store = RatchetStore(path, lock_timeout=30)
    number = start
    while True:
        number += 1
        target = generation(number)

        def change(ratchet: Ratchet, target: Ratchet = target) -> None:
            for name, value in vars(target).items():
                setattr(ratchet, name, value)

        ratchet_store.update(change)
        os.write(report_fd, f"{number}\n".encode())


def fork_writer(path: Path, start: int) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer; it never returns into pytest
        try:
            os.close(read_fd)
            write_generations(path, start, write_fd)
        finally:
            os._exit(1)
    os.close(write_fd)
    return pid, read_fd


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


@pytest.mark.skipif(threading.active_count() > 1, reason="fork with threads is unsafe")
def test_sigkill_at_random_instants_leaves_old_or_new_file(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("CRASH_SEED", "7")))
    path = tmp_path / "quest.json"
    path.write_text(dumps(generation(0)))
    texts = {0: dumps(generation(0)).encode()}
    current = 0
    mid_write_kills = 0
    seen_leftovers: set[Path] = set()
    for kill in range(KILLS):
        pid, report_fd = fork_writer(path, current)
        early = b""
        if kill % 2:
            # Aimed: a few milliseconds after a write began (file written,
            # fsynced, renamed, folder fsynced: any of them may be cut).
            while b"w" not in early:
                chunk = os.read(report_fd, 65536)
                assert chunk, "the writer died on its own"
                early += chunk
            time.sleep(rng.uniform(0, 0.008))
        else:
            # Anywhere in up to ~3 writes' time: before, during, between writes.
            time.sleep(rng.uniform(0, 0.12))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        reported = [int(n) for n in (early + read_all(report_fd)).split() if n != b"w"]
        acknowledged = reported[-1] if reported else current
        raw = path.read_bytes()
        on_disk = number_of(loads(raw, str(path)))  # parses and validates: never half-written
        # The last write the writer finished, or the one it was doing when killed
        # (renamed, not yet reported).  Nothing older, nothing mixed.
        assert on_disk in (acknowledged, acknowledged + 1)
        if on_disk not in texts:
            written = generation(on_disk)
            mark_seals(written, legacy=False)  # as the store writes it (core/seal.py)
            texts[on_disk] = dumps(written).encode()
        assert raw == texts[on_disk]
        # A kill between creating the temporary file and renaming it leaves
        # that file behind (at most one: each writer cleans before writing).
        leftovers = RatchetStore(path).stale_temp_files()
        assert len(leftovers) <= 1
        if set(leftovers) - seen_leftovers:
            mid_write_kills += 1
        seen_leftovers.update(leftovers)
        current = on_disk
    # The kills hit writes in progress, not only the gaps between them.
    assert mid_write_kills >= 5, mid_write_kills
    # A normal write afterwards takes the lock at once and removes the debris.
    started = time.monotonic()
    RatchetStore(path, lock_timeout=5).update(lambda r: setattr(r, "scanned_at", "generation 0"))
    assert time.monotonic() - started < 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [".quest", "quest.json"]
    assert current > 0
    print(f"crash test: {KILLS} kills, {mid_write_kills} mid-write, {current} generations")
