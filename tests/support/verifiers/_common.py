"""Shared by the fake verifiers: read the prompt, answer in the five-block protocol."""

from __future__ import annotations

import re
import sys


def read_prompt() -> str:
    return sys.stdin.read()


def questions(prompt: str) -> list[str]:
    """The numbered questions of the prompt's Questions section."""
    section = prompt.split("## Questions", 1)[1].split("## Reply format", 1)[0]
    return re.findall(r"^[0-9]+\. (.+)$", section, re.MULTILINE)


def reply(prompt: str, findings: list[str]) -> str:
    asked = questions(prompt)
    answer = "yes" if findings else "no"
    return "\n".join(
        [
            f"<status>{'verified-with-corrections' if findings else 'verified-clean'}</status>",
            "<questions>",
            *[f"- {question}" for question in asked],
            "</questions>",
            "<answers>",
            *[f"- {answer}, from the code shown" for _ in asked],
            "</answers>",
            "<discrepancies>",
            *([f"- {finding}" for finding in findings] or ["none"]),
            "</discrepancies>",
            "<final>done</final>",
        ]
    )
