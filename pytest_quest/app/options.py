"""The quest options as plain values: what every use case reads, with no pytest in sight."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMMANDS = ("scan", "next", "submit", "status", "check", "audit", "export")
FORMATS = ("text", "json")
VERIFY_MODES = ("on", "off", "auto")
MUTANT_MODES = ("on", "off")


@dataclass
class QuestOptions:
    command: str | None
    sources: list[Path]
    quest_file: Path
    max_tries: int
    format: str
    quest_id: str | None
    timeout: float
    lock_timeout: float
    strict: bool
    reopen: str | None
    accept: str | None
    export_to: str | None
    export_force: bool
    mutants: bool
    verify: str
    measure_out: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    verifier_cmds: list[str] = field(default_factory=list)
    verify_questions: int = 3
    verify_threshold: int | None = None
    verify_timeout: float = 300.0
    verify_exclude: list[str] = field(default_factory=list)

    @property
    def json(self) -> bool:
        return self.format == "json"


__all__ = ["COMMANDS", "FORMATS", "MUTANT_MODES", "VERIFY_MODES", "QuestOptions"]
