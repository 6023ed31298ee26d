"""The seal of a quest's issued baseline: a digest that makes a hand edit of it visible."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_quest.core.model import Fact, Quest, Ratchet, State, Verdict
from pytest_quest.core.policy import GatePolicy

#: The key, in a quest's ``extra``, of the seal of how it became PASS ("" on a quest not PASS).
PASS_SEAL_KEY = "pass_seal"
#: How a quest may become PASS: the gate (a judged submit), a scan's baseline, a person's
#: accept, or already PASS when the file was first written with PASS seals.
PASS_WAYS = ("submit", "scan", "accept", "legacy")


def issued_seal(quest: Quest) -> str:
    """A digest of what the gate compares a submission with, written when a quest is issued.

    Covers the identity (id, file, qualname), the fingerprint of the code
    and the excluded lines (by offset, so the function may move) and the
    issue time.  No secret: it makes a hand edit of these fields visible, it
    does not stop someone who recomputes it (see docs/judge.md).
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


def pass_seal(quest: Quest, way: str) -> str:
    """``WAY:DIGEST``: the seal of `quest`'s PASS as recorded, written when it became PASS.

    Covers what a PASS claims, not its place in the file.  It has no secret:
    it makes a hand-written PASS visible, no more (docs/judge.md).
    """
    body = {
        "id": quest.id,
        "fingerprint": quest.fingerprint,
        "passed_at": quest.passed_at,
        "covering_tests": sorted(quest.covering_tests),
        "statements": quest.statements,
        "branches": quest.branches,
        "way": way,
    }
    text = json.dumps(body, sort_keys=True)
    digest = hashlib.sha256(("pytest-quest-pass/1\n" + text).encode()).hexdigest()[:32]
    return f"{way}:sha256:{digest}"


def seal_pass(quest: Quest, way: str) -> None:
    """Seal `quest`'s PASS, reached the `way` given (one of `PASS_WAYS`)."""
    quest.extra[PASS_SEAL_KEY] = pass_seal(quest, way)


def sealed_file(ratchet: Ratchet) -> bool:
    """Whether the file records PASS seals (some quest carries the key)."""
    return any(PASS_SEAL_KEY in quest.extra for quest in ratchet.quests.values())


def mark_seals(ratchet: Ratchet, *, legacy: bool) -> bool:
    """Before a locked write: each quest not PASS records that it has no PASS (an empty seal).

    `legacy`: the file as read held no PASS seal yet (written by a version
    before them); its PASS entries are sealed as found (``legacy``), trusted as
    they were.  From then on a PASS without its seal was written by something
    else than pytest-quest's own transitions.  Returns whether anything changed.
    """
    changed = False
    for quest in ratchet.quests.values():
        if quest.state is not State.PASS:
            if quest.extra.get(PASS_SEAL_KEY) != "":
                quest.extra[PASS_SEAL_KEY] = ""
                changed = True
        elif legacy and PASS_SEAL_KEY not in quest.extra:
            seal_pass(quest, "legacy")
            changed = True
    return changed


def forged_passes(ratchet: Ratchet) -> dict[str, str]:
    """PASS entries no pytest-quest transition wrote (id -> why), in id order.

    A file with no PASS seal at all (never written by a version that seals)
    has none to check: its PASS entries are taken as they are (`mark_seals`
    seals them at its next write).
    """
    if not sealed_file(ratchet):
        return {}
    found: dict[str, str] = {}
    for qid in sorted(ratchet.quests):
        quest = ratchet.quests[qid]
        if quest.state is not State.PASS:
            continue
        recorded = quest.extra.get(PASS_SEAL_KEY)
        way = recorded.partition(":")[0] if isinstance(recorded, str) else ""
        if recorded is None:
            found[qid] = "PASS with no seal: not written by a judged submit, a scan or a person"
        elif recorded == "":
            found[qid] = "PASS where its seal says it never passed (edited from TODO)"
        elif way not in PASS_WAYS or recorded != pass_seal(quest, way):
            found[qid] = "PASS entry differs from its seal (edited since it passed)"
    return found
