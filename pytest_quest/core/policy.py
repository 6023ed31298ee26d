"""The gate policy recorded in the ratchet file, and what makes one policy weaker than another.

Pure values: the app layer reads the options, this module says whether they weaken the record.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.mutants import DEFAULT_OPERATORS
from pytest_quest.core.operators import ALL_OPERATORS

#: The mutation operators a new policy records: the planner's default set
#: (core/mutants.py); `KNOWN_OPERATORS` adds the opt-in ones.
OPERATORS: tuple[str, ...] = tuple(sorted(DEFAULT_OPERATORS))
KNOWN_OPERATORS: tuple[str, ...] = tuple(sorted(ALL_OPERATORS))

#: The rules of gate step 4, weakest first: ``off`` (no mutants), ``on`` (a
#: survivor fails the quest only with a witness call on which it and the
#: function differ), ``strict`` (every survivor fails the quest).  A policy
#: recorded as ``on`` before witnesses existed reads as today's ``on``: it
#: named the default, and the default is the witnessed rule.
MUTANT_RULES: tuple[str, ...] = ("off", "on", "strict")

#: The person action that changes a recorded policy.
POLICY_ACTION = "pytest --quest-policy KEY=VALUE"

#: The keys a policy has, in the order they are shown.
KEYS = (
    "mutants",
    "operators",
    "max_tries",
    "timeout_floor",
    "stability_reruns",
    "verify",
    "verify_threshold",
    "sources",
    "environment_failures",
    "subprocesses",
    "sandbox",
)

#: The values of the ``sandbox`` key: judge only inside a kernel sandbox, or without one.
SANDBOX_REQUIRED, SANDBOX_OFF = "required", "off"
SANDBOX_VALUES = (SANDBOX_REQUIRED, SANDBOX_OFF)

#: Keys added after policies were first recorded, with the value a policy without them has.
#: (as `to_dict` writes them).
LATER_KEYS: dict[str, Any] = {
    "environment_failures": 3,
    "subprocesses": "on",
    # A policy recorded before judged runs were sandboxed judges as it did: unsandboxed.
    "sandbox": SANDBOX_OFF,
}


@dataclass(frozen=True)
class GatePolicy:
    """How hard the gate is: the settings a submit may tighten for one run, never weaken.

    `timeout_floor` is the least ``--quest-timeout`` a submit may use;
    `verify_threshold` None means a majority of the verifiers; `sources` are
    folders relative to the rootdir, sorted.
    """

    #: One of `MUTANT_RULES`.
    mutants: str = "on"
    operators: tuple[str, ...] = OPERATORS
    max_tries: int = 3
    timeout_floor: float = 600.0
    stability_reruns: int = 1
    verify: bool = False
    verify_threshold: int | None = None
    sources: tuple[str, ...] = field(default_factory=tuple)
    #: Runs in a row that cannot complete for reasons outside the submission
    #: (core/environment.py) before the quest is REVIEW.
    environment_failures: int = 3
    #: Measure the processes the tests start and apply mutants there.
    subprocesses: bool = True
    #: Judge only inside a kernel sandbox (engine/sandbox.py): ``required`` or
    #: ``off`` (unsandboxed; the judge's own detection only).  A scan records
    #: ``required`` where a sandbox starts.
    sandbox: str = SANDBOX_OFF

    def to_dict(self) -> dict[str, Any]:
        return {
            "mutants": self.mutants,
            "operators": list(self.operators),
            "max_tries": self.max_tries,
            "timeout_floor": self.timeout_floor,
            "stability_reruns": self.stability_reruns,
            "verify": "on" if self.verify else "off",
            "verify_threshold": self.verify_threshold,
            "sources": list(self.sources),
            "environment_failures": self.environment_failures,
            "subprocesses": "on" if self.subprocesses else "off",
            "sandbox": self.sandbox,
        }

    def stored(self) -> dict[str, Any]:
        """`to_dict` as the ratchet file stores it: ``sandbox`` left out while ``off``.

        A file written before the key existed reads as ``off`` (`LATER_KEYS`)
        and is written back byte for byte.
        """
        data = self.to_dict()
        if data["sandbox"] == LATER_KEYS["sandbox"]:
            del data["sandbox"]
        return data

    def shown(self, key: str) -> str:
        """One value as a message quotes it (``mutants=on``)."""
        value: Any = self.to_dict()[key]
        if key == "operators" and tuple(value) == OPERATORS:
            value = "default"  # the planner's default set: the common case, kept short
        elif key == "operators" and tuple(value) == KNOWN_OPERATORS:
            value = "all"
        elif isinstance(value, list):
            value = ",".join(str(item) for item in value) or "(none)"
        elif value is None:
            value = "majority"
        elif isinstance(value, float):
            value = str(int(value)) if value.is_integer() else repr(value)
        return f"{key}={value}"

    def compact(self) -> str:
        """The policy as one short line, stored with every PASS (`parse_compact` reads it)."""
        return ";".join(self.shown(key) for key in KEYS)

    def digest(self) -> str:
        data = self.to_dict()
        # A later key at its old implicit value leaves the digest as sealed before it existed.
        for key, value in LATER_KEYS.items():
            if data[key] == value:
                del data[key]
        text = json.dumps(data, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def checks_mutants(self) -> bool:
        """Whether gate step 4 runs at all."""
        return self.mutants != "off"


class PolicyError(ValueError):
    """A policy value that cannot be read; the message names the key."""


def _bool(key: str, value: Any) -> bool:
    if value in ("on", True):
        return True
    if value in ("off", False):
        return False
    raise PolicyError(f"{key}: expected on or off, got {value!r}")


def _int(key: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool):
        raise PolicyError(f"{key}: expected a whole number, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise PolicyError(f"{key}: expected a whole number, got {value!r}") from None
    if not isinstance(value, int) or value < low:
        raise PolicyError(f"{key}: expected a whole number of at least {low}, got {value!r}")
    return value


def _float(key: str, value: Any) -> float:
    if isinstance(value, bool):
        raise PolicyError(f"{key}: expected a number of seconds, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise PolicyError(f"{key}: expected a number of seconds, got {value!r}") from None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PolicyError(f"{key}: expected a number of seconds above 0, got {value!r}")
    return float(value)


def _names(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise PolicyError(f"{key}: expected a list of names, got {value!r}")
    return tuple(sorted(set(value)))


def _rule(key: str, value: Any) -> str:
    if value in MUTANT_RULES:
        return str(value)
    if isinstance(value, bool):  # a policy written when the key was on or off only
        return "on" if value else "off"
    raise PolicyError(f"{key}: expected one of {', '.join(MUTANT_RULES)}, got {value!r}")


def parse_value(key: str, value: Any) -> Any:
    """One policy value from JSON or from ``--quest-policy KEY=VALUE`` text."""
    if key == "mutants":
        return _rule(key, value)
    if key in {"verify", "subprocesses"}:
        return _bool(key, value)
    if key == "operators":
        if value == "default":
            return OPERATORS
        if value == "all":
            return KNOWN_OPERATORS
        names = _names(key, value)
        unknown = sorted(set(names) - set(KNOWN_OPERATORS))
        if unknown:
            raise PolicyError(
                f"{key}: unknown operator {unknown[0]!r} (known: {', '.join(KNOWN_OPERATORS)})"
            )
        return names
    if key == "sources":
        return _names(key, value)
    if key == "sandbox":
        if value not in SANDBOX_VALUES:
            raise PolicyError(f"{key}: expected required or off, got {value!r}")
        return value
    if key in ("max_tries", "stability_reruns", "environment_failures"):
        return _int(key, value, low=0 if key == "stability_reruns" else 1)
    if key == "timeout_floor":
        return _float(key, value)
    if key == "verify_threshold":
        if value is None or value in ("majority", ""):
            return None
        return _int(key, value)
    raise PolicyError(f"unknown policy key {key!r} (known: {', '.join(KEYS)})")


def from_dict(data: Any) -> GatePolicy:
    """A policy from the ratchet file's ``policy`` object; `PolicyError` names the key at fault."""
    if not isinstance(data, dict):
        raise PolicyError(f"expected an object, found {type(data).__name__}")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise PolicyError(f"{unknown[0]}: unknown field (known: {', '.join(KEYS)})")
    data = {**LATER_KEYS, **data}
    missing = [key for key in KEYS if key not in data]
    if missing:
        raise PolicyError(f"{missing[0]}: missing field")
    return GatePolicy(**{key: parse_value(key, data[key]) for key in KEYS})


def parse_compact(text: str) -> GatePolicy:
    """The policy `GatePolicy.compact` wrote."""
    values: dict[str, Any] = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if not sep or key not in KEYS:
            raise PolicyError(f"not a compact policy: {part!r}")
        if key in ("operators", "sources"):
            value = "" if value == "(none)" else value
        values[key] = parse_value(key, value)
    values = {**{key: parse_value(key, value) for key, value in LATER_KEYS.items()}, **values}
    missing = [key for key in KEYS if key not in values]
    if missing:
        raise PolicyError(f"{missing[0]}: missing in compact policy")
    return GatePolicy(**values)


def weaker_keys(recorded: GatePolicy, requested: GatePolicy) -> list[str]:
    """The keys on which `requested` is weaker than `recorded`, in `KEYS` order.

    Weaker: a mutant rule earlier in `MUTANT_RULES` (off, on, strict), fewer operators, more tries, a lower timeout
    floor (a gate run stopped sooner has less to show), fewer stability reruns,
    verification off when on, a higher verification threshold (or the majority
    instead of a number), different sources (other code is judged), more
    environment failures in a row before REVIEW, no sandbox when one is required.
    """
    found = []
    if MUTANT_RULES.index(requested.mutants) < MUTANT_RULES.index(recorded.mutants):
        found.append("mutants")
    if not set(recorded.operators) <= set(requested.operators):
        found.append("operators")
    if requested.max_tries > recorded.max_tries:
        found.append("max_tries")
    if requested.timeout_floor < recorded.timeout_floor:
        found.append("timeout_floor")
    if requested.stability_reruns < recorded.stability_reruns:
        found.append("stability_reruns")
    if recorded.verify and not requested.verify:
        found.append("verify")
    if (
        recorded.verify
        and recorded.verify_threshold is not None
        and (
            requested.verify_threshold is None
            or requested.verify_threshold > recorded.verify_threshold
        )
    ):
        found.append("verify_threshold")
    if set(recorded.sources) != set(requested.sources):
        found.append("sources")
    if requested.environment_failures > recorded.environment_failures:
        found.append("environment_failures")
    if recorded.subprocesses and not requested.subprocesses:
        found.append("subprocesses")
    if recorded.sandbox == SANDBOX_REQUIRED and requested.sandbox != SANDBOX_REQUIRED:
        found.append("sandbox")
    return found


def effective(
    recorded: GatePolicy, requested: GatePolicy, given: set[str] | frozenset[str]
) -> GatePolicy:
    """The policy one submit runs under: the record, tightened by the `given` requested keys.

    Raises `QuestUsageError` naming the recorded value and the person action
    when a given key would weaken it.  A key not given keeps the recorded value.
    """
    chosen = {key: getattr(requested, key) for key in KEYS if key in given}
    candidate = replace(recorded, **chosen)
    weakened = weaker_keys(recorded, candidate)
    if weakened:
        key = weakened[0]
        action = POLICY_ACTION.split(" KEY", maxsplit=1)[0]
        raise QuestUsageError(
            f"the gate policy recorded in the ratchet file has {recorded.shown(key)}; "
            f"{candidate.shown(key)} would weaken it: {_ONLY[key]}. Only a person changes "
            f'the policy, at a terminal: `{action} {candidate.shown(key)} --quest-reason "why"`'
        )
    return candidate


#: Which way a submit may move each key: the rest weakens the recorded policy.
_ONLY = {
    "mutants": "a submit can only make the mutation check stricter (--quest-mutants on, then strict)",
    "operators": "a submit can only add mutation operators",
    "max_tries": "a submit can only lower the tries a quest allows (--quest-max-tries)",
    "timeout_floor": "a submit can only raise the timeout of a gate run (--quest-timeout)",
    "stability_reruns": "a submit can only raise the stability reruns",
    "verify": "a submit can only turn verification on (--quest-verify on)",
    "verify_threshold": "a submit can only lower the verifiers a finding needs "
    "(--quest-verify-threshold)",
    "sources": "a submit cannot judge other code than the recorded sources (--quest-source)",
    "environment_failures": "a submit can only lower the environment failures before REVIEW",
    "subprocesses": "a submit can only keep measuring the processes the tests start",
    "sandbox": "a submit can only keep the judged runs in the kernel sandbox",
}


def change(policy: GatePolicy, changes: list[tuple[str, str]]) -> GatePolicy:
    """`policy` with ``KEY=VALUE`` changes applied; `PolicyError` for a bad key or value."""
    values = {key: parse_value(key, value) for key, value in changes}
    return replace(policy, **values)


def parse_assignment(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` as given to ``--quest-policy``; `PolicyError` for anything else."""
    key, sep, value = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or key not in KEYS:
        raise PolicyError(f"{text!r}: expected KEY=VALUE with KEY one of {', '.join(KEYS)}")
    parse_value(key, value)
    return key, value.strip()
