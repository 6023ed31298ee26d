"""What reading and writing the ratchet file costs: parsers alone, the one reader's paths, writes.

    python benchmarks/codec_choice.py                      # 1k, 10k, 50k quests, 5 rounds
    python benchmarks/codec_choice.py --sizes 10000 --rounds 3

Builds the synthetic ratchets of ``ratchet_scale.py`` (same builder, written
by this checkout) and, in this one process, times side by side in rounds
(every variant once per round, CPU seconds, medians), on the same bytes:

* parsing alone (the collector paused, as the reader pauses it): ``json.loads``,
  ``orjson.loads``, msgspec untyped, msgspec typed (the Structs of ``engine/codec.py``);
* a whole validated read by ``engine/codec.py``: the strict parser's path (what
  any other form and every defect go through: ``strict_parse``, then
  ``msgspec.convert`` into the Structs), the path of a command that writes
  (decoded straight into the Structs, the canonical form proved), and the path
  of `status` and `next` (decoded, the lines counted);
* writing: the full writer, the writer reusing untouched quests (nothing
  changed; one quest changed);
* `RatchetStore.update` changing nothing after a load in the same process
  (the usual case: a command reads, then records), and cold (no earlier
  read of those bytes), with the time the lock is held.

orjson is optional (``pip install orjson``); without it its rows say so.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ratchet_scale import BUILD  # noqa: E402

from pytest_quest.core.model import Ratchet  # noqa: E402
from pytest_quest.engine import codec  # noqa: E402
from pytest_quest.engine.store import RatchetStore  # noqa: E402
from pytest_quest.engine.store_help import paused_gc  # noqa: E402

try:
    import orjson  # type: ignore[import-not-found, unused-ignore]  # optional, not in any extra
except ImportError:  # pragma: no cover - optional
    orjson = None

import json  # noqa: E402

import msgspec  # noqa: E402


def cold() -> None:
    """Forget the last file read (the reader's same-bytes shortcut)."""
    codec._LAST.clear()


def variants(path: Path) -> dict[str, Callable[[], Any]]:
    data = path.read_bytes()
    typed = msgspec.json.Decoder(codec.HeadS)
    store = RatchetStore(path, lock_timeout=120)

    def full_reader() -> Any:
        return codec._checked(data, codec._Fail(str(path)))

    def fast() -> Any:
        cold()
        return codec.loads(data)

    def shown() -> Any:
        return codec.loads(data, lazy=True)

    def dumps_full() -> float:
        ratchet = full_reader()
        started = time.process_time()
        codec.dump_bytes(ratchet)
        return time.process_time() - started

    def dumps_reuse(change: bool) -> Callable[[], float]:
        def run() -> float:
            ratchet = codec.loads(data)
            if change:
                quest = next(iter(ratchet.quests.values()))
                quest.tries += 1
            started = time.process_time()
            codec.dump_bytes(ratchet)
            return time.process_time() - started

        return run

    def noop_after_load() -> float:
        cold()
        loaded = store.load()
        started = time.process_time()
        store.update(lambda ratchet: None)
        del loaded
        return time.process_time() - started

    def noop_cold() -> float:
        cold()
        started = time.process_time()
        store.update(lambda ratchet: None)
        return time.process_time() - started

    out: dict[str, Callable[[], Any] | None] = {
        "parse: json.loads": lambda: json.loads(data),
        "parse: orjson.loads": (lambda: orjson.loads(data)) if orjson else None,
        "parse: msgspec, untyped": lambda: msgspec.json.decode(data),
        "parse: msgspec, typed Structs": lambda: typed.decode(data),
        "read: strict parser, then the Structs": full_reader,
        "read: for writing (canonical form proved)": fast,
        "read: for showing (lines counted)": shown,
        "write: full writer": dumps_full,
        "write: reuse, nothing changed": dumps_reuse(False),
        "write: reuse, one quest changed": dumps_reuse(True),
        "no-op locked update after a load": noop_after_load,
        "no-op locked update, cold": noop_cold,
    }
    return {name: run for name, run in out.items() if run is not None}


def measure(path: Path, rounds: int) -> dict[str, list[float]]:
    runs = variants(path)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            gc.collect()
            started = time.process_time()
            if name.startswith(("parse", "read")):
                with paused_gc():  # as `codec.loads` reads: no collector passes
                    result = run()
            else:
                result = run()
            spent = time.process_time() - started
            # The write and update rows time only their own step (they read first).
            times[name].append(result if isinstance(result, float) else spent)
            del result
    return times


def lock_holds(path: Path, rounds: int) -> dict[str, float]:
    """Median wall seconds the lock is held: a no-op update, and one quest changed."""
    store = RatchetStore(path, lock_timeout=120)
    held: dict[str, list[float]] = {"no-op": [], "one quest": []}
    acquire = store._acquire_lock

    def timed_lock() -> Any:
        lock = acquire()
        started = time.perf_counter()
        release = lock.release

        def released(*args: Any, **kwargs: Any) -> Any:
            held[current].append(time.perf_counter() - started)
            return release(*args, **kwargs)

        lock.release = released  # type: ignore[method-assign]
        return lock

    store._acquire_lock = timed_lock  # type: ignore[method-assign]
    for _ in range(rounds):
        loaded = store.load()
        qid = next(iter(loaded.quests))
        current = "no-op"
        store.update(lambda ratchet: None)
        current = "one quest"
        tries = loaded.quests[qid].tries + 1  # a change every round: one line written

        def one_more_try(ratchet: Ratchet, qid: str = qid, tries: int = tries) -> None:
            ratchet.quests[qid].tries = tries

        store.update(one_more_try)
        del loaded
    return {name: statistics.median(values) for name, values in held.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"commit {commit}; Python {platform.python_version()}, msgspec {msgspec.__version__}, "
        f"orjson {orjson.__version__ if orjson else 'not installed'}; "
        f"load average {os.getloadavg()[0]:.1f}; CPU seconds, median of {args.rounds} rounds\n"
    )
    folder = Path(tempfile.mkdtemp(prefix="codec-choice-"))
    try:
        results: dict[int, dict[str, float]] = {}
        holds: dict[int, dict[str, float]] = {}
        for size in sizes:
            path = folder / f"quest-{size}.json"
            subprocess.run(
                [sys.executable, "-c", BUILD, str(path), str(size)], check=True, capture_output=True
            )
            times = measure(path, args.rounds)
            results[size] = {name: statistics.median(values) for name, values in times.items()}
            holds[size] = lock_holds(path, args.rounds)
        header = "| step | " + " | ".join(f"{size:,} quests" for size in sizes) + " |"
        print(header)
        print("|---|" + "---:|" * len(sizes))
        base = "read: strict parser, then the Structs"
        for name in results[sizes[0]]:
            cells = []
            for size in sizes:
                value = results[size][name]
                ratio = f" ({value / results[size][base]:.2f}x)" if name.startswith("read") else ""
                cells.append(f"{value:.3f}{ratio}")
            print(f"| {name} | " + " | ".join(cells) + " |")
        for name in ("no-op", "one quest"):
            cells = [f"{holds[size][name]:.3f}" for size in sizes]
            print(f"| lock held (wall), update: {name} | " + " | ".join(cells) + " |")
        print(
            "\nfile sizes: "
            + ", ".join(
                f"{size:,}: {(folder / f'quest-{size}.json').stat().st_size / 1e6:.1f} MB"
                for size in sizes
            )
        )
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
