"""engine/sigterm.py: SIGTERM raising KeyboardInterrupt, and SIGTERM blocked across a fork
(left blocked when it already was)."""

from __future__ import annotations

import signal
import threading

import pytest

from pytest_quest.engine import sigterm


def _blocked() -> bool:
    return signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_terminated_raises_keyboard_interrupt() -> None:
    with pytest.raises(KeyboardInterrupt):
        sigterm._terminated(signal.SIGTERM, None)


def test_block_then_unblock() -> None:
    assert not _blocked()
    sigterm._block()
    try:
        assert _blocked()
        assert sigterm._BLOCKED_BEFORE[threading.get_ident()] is False
    finally:
        sigterm._unblock()
    assert not _blocked()
    assert threading.get_ident() not in sigterm._BLOCKED_BEFORE


def test_block_when_already_blocked_leaves_it_blocked() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        sigterm._block()
        assert sigterm._BLOCKED_BEFORE[threading.get_ident()] is True
        sigterm._unblock()
        assert _blocked()
        assert threading.get_ident() not in sigterm._BLOCKED_BEFORE
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def test_unblock_without_a_block_changes_nothing() -> None:
    sigterm._BLOCKED_BEFORE.pop(threading.get_ident(), None)
    sigterm._unblock()
    assert not _blocked()


def test_block_when_the_mask_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(how: int, mask: object) -> set[int]:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr("pytest_quest.engine.sigterm.signal.pthread_sigmask", refuse)
    sigterm._BLOCKED_BEFORE.pop(threading.get_ident(), None)
    sigterm._block()
    assert threading.get_ident() not in sigterm._BLOCKED_BEFORE
