"""Counting words for messages: ``1 function``, ``2 functions``, never ``1 functions``."""

from __future__ import annotations


def counted(number: int, noun: str, plural: str = "") -> str:
    """`number` and its noun, plural unless it is 1: ``1 test``, ``2 tests``, ``0 tests``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def counted_words(number: int, noun: str, plural: str = "") -> str:
    """`noun` alone in the form `number` takes: ``process``, ``processes``."""
    return noun if number == 1 else plural or noun + "s"
