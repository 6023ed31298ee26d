"""engine/memory_cap.py: a mutant's run may not grow its process without bound."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

from pytest_quest.engine.memory_cap import MIN_HEADROOM, headroom, limit_for

INF = resource.RLIM_INFINITY


def test_the_cap_is_the_size_now_plus_the_headroom_within_the_hard_limit() -> None:
    assert limit_for(1000, 500, INF, INF, INF) == 1500
    assert limit_for(1000, 500, INF, 1200, INF) == 1200  # never above the hard limit
    assert limit_for(1000, 500, 1400, INF, INF) is None  # a tighter soft limit is kept
    assert limit_for(1000, 500, 9000, INF, INF) == 1500
    assert headroom() >= MIN_HEADROOM


def test_an_endless_list_in_c_ends_at_the_cap_and_the_limit_is_put_back() -> None:
    # `list()` over an endless C iterator never lets a SIGALRM handler run; under the cap
    # it ends with MemoryError (here a small headroom, for the test's speed).
    script = textwrap.dedent(
        """
        import itertools, resource
        from pytest_quest.engine import memory_cap

        memory_cap.headroom = lambda: 256 << 20
        before = resource.getrlimit(resource.RLIMIT_DATA)
        try:
            with memory_cap.capped():
                list(itertools.chain([1], itertools.repeat(None)))
        except MemoryError:
            print("MemoryError")
        print(resource.getrlimit(resource.RLIMIT_DATA) == before)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == ["MemoryError", "True"], done.stderr


def test_address_space_only_reserved_is_not_capped() -> None:
    # A JVM, a browser or a Go program reserves far more address space than it uses
    # (PROT_NONE, or read-only here); under the cap a test that starts one still starts it.
    script = textwrap.dedent(
        """
        import mmap
        from pytest_quest.engine import memory_cap

        memory_cap.headroom = lambda: 64 << 20
        with memory_cap.capped():
            reserved = mmap.mmap(-1, 8 << 30, prot=mmap.PROT_READ)
            print(len(reserved))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == [str(8 << 30)], done.stderr
