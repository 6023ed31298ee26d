"""The seal of a quest's issued baseline: a digest that makes a hand edit of it visible."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_quest.core.model import Fact, Quest, Verdict
from pytest_quest.core.policy import GatePolicy

SEAL_KEY = "issued_seal"


def issued_seal(quest: Quest) -> str:
    """A digest of what the gate compares a submission with, written when a quest is issued.

    Covers the identity (id, file, qualname), the fingerprint of the code
    and the excluded lines (by offset, so the function may move) and the
    issue time.  No secret: it makes a hand edit of these fields visible, it
    does not stop someone who recomputes it (see docs/gate.md).
    """
    body = {
        "id": quest.id,
        "file": quest.file,
        "qualname": quest.qualname,
        "fingerprint": quest.fingerprint,
        "excluded": sorted(line - quest.first for line in quest.excluded_lines),
        "issued_at": quest.issued_at,
    }
    # A seal from before the configuration was sealed has no such key, and
    # stays valid: step 2 then compares the ratchet file's own copy (docs/gate.md).
    if quest.config_digest is not None:
        body["config"] = quest.config_digest
    if quest.partial_lines is not None:
        body["partial"] = quest.partial_lines
    text = json.dumps(body, sort_keys=True)
    return "sha256:" + hashlib.sha256(("pytest-quest-seal/1\n" + text).encode()).hexdigest()[:32]


def config_digest(config: dict[str, Any], policy: GatePolicy | None) -> str:
    """The judge's copy of what shapes measurement and judging: ``cfg:<digest>;pol:<digest>``.

    Taken at issue and kept in the quest's seal, so editing the coverage
    configuration and the ratchet file's top-level ``coverage_config`` (or its
    ``policy``) together no longer passes gate step 2.
    """
    text = json.dumps(config, sort_keys=True, default=str)
    cfg = hashlib.sha256(text.encode()).hexdigest()[:16]
    pol = policy.digest() if policy is not None else "none"
    return f"cfg:{cfg};pol:{pol}"


def digest_parts(digest: str) -> dict[str, str]:
    """``{"cfg": ..., "pol": ...}`` of a `config_digest`."""
    parts: dict[str, str] = {}
    for part in digest.split(";"):
        key, _, value = part.partition(":")
        parts[key] = value
    return parts


def policy_digest_part(digest: str, policy: GatePolicy) -> str:
    """`digest` with its policy part for `policy` (a person changed the policy)."""
    return f"cfg:{digest_parts(digest).get('cfg', '')};pol:{policy.digest()}"


def seal_issued(quest: Quest) -> None:
    """Seal what the gate compares a submission with (a hand edit of it is REVIEW)."""
    quest.issued_seal = issued_seal(quest)


def seal_facts(quest: Quest) -> list[tuple[Verdict, Fact]]:
    """REVIEW when the quest's issued baseline does not match its seal (a hand edit)."""
    recorded = quest.issued_seal
    expected = issued_seal(quest)
    if recorded == expected:
        return []
    actual = "no seal" if not recorded else "fingerprint or excluded lines differ from the seal"
    return [
        (
            Verdict.REVIEW,
            Fact(
                check="guard.seal",
                field=f"{quest.file}:{quest.first}",
                expected="the quest's baseline as issued by the scan (sealed)",
                actual=actual,
                message=(
                    f"the ratchet entry of {quest.id} was edited by hand since it was issued "
                    "(fingerprint or excluded lines); a person must review it"
                ),
            ),
        )
    ]


__all__ = [
    "SEAL_KEY",
    "config_digest",
    "digest_parts",
    "issued_seal",
    "policy_digest_part",
    "seal_facts",
    "seal_issued",
]
