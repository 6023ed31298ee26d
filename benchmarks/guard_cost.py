r"""What the ratchet guard adds to one submit, measured in-process.

    python benchmarks/guard_cost.py                 # 1,000 quests
    python benchmarks/guard_cost.py --quests 5000

Prints the median wall time of: the guard's snapshot (lock, read, sha256,
stat, journal tail), its check under the record's lock (read, sha256, stat,
journal), and one journal line appended by a write (a store write with and
without it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_quest.core.model import Quest, Ratchet
from pytest_quest.engine.guard import VerdictGuard
from pytest_quest.engine.store import RatchetStore


def median_ms(run: Callable[[], object], repeats: int) -> float:
    """Median CPU time of this process (the machine is shared: wall time is noise)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def ratchet(n: int) -> Ratchet:
    quests = {}
    for i in range(n):
        qid = f"src/m{i // 50}.py::f{i}"
        quests[qid] = Quest(
            id=qid,
            file=f"src/m{i // 50}.py",
            qualname=f"f{i}",
            first=1 + i % 50 * 10,
            last=9 + i % 50 * 10,
            fingerprint="sha256:" + "0" * 32,
            issued_at="2026-01-01T00:00:00Z",
            missing_lines=[2, 3, 4],
        )
    return Ratchet(quests=quests, active=next(iter(quests)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quests", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="guard-cost-"))
    store = RatchetStore(folder / "quest.json")
    big = ratchet(args.quests)
    store.update(lambda r: r.__dict__.update(big.__dict__))
    size = store.path.stat().st_size
    qid = next(iter(big.quests))
    toggle = iter(range(10**9))

    def write() -> None:
        store.update(lambda r: setattr(r, "scanned_at", str(next(toggle))))

    data = store.path.read_bytes()
    inode = store.path.stat().st_ino
    journal_line = median_ms(lambda: store._journal(data, data, inode), args.repeats)
    store_write = median_ms(write, args.repeats)
    guard = VerdictGuard(store.path, qid, store)
    write()  # one journaled write in the window: the chain has an entry

    def check() -> None:
        store.locked(lambda: guard.vet(store.path.read_bytes()))

    print(f"ratchet file: {args.quests} quests, {size / 1e6:.2f} MB")
    print(
        f"guard snapshot (before the run):      {median_ms(lambda: VerdictGuard(store.path, qid, store), args.repeats):7.2f} ms"
    )
    print(f"guard check (under the record's lock): {median_ms(check, args.repeats):7.2f} ms")
    print(
        f"journal line appended by a write: {journal_line:7.2f} ms (a whole store write: {store_write:.2f} ms)"
    )


if __name__ == "__main__":
    main()
