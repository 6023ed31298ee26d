"""core/policy.py: what makes a gate policy weaker, per key; the compact form; the effective policy."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.policy import (
    KEYS,
    MUTANT_RULES,
    OPERATORS,
    GatePolicy,
    PolicyError,
    change,
    effective,
    from_dict,
    parse_assignment,
    parse_compact,
    parse_value,
    weaker_keys,
)

BASE = GatePolicy(sources=("src/pkg",))

policies = st.builds(
    GatePolicy,
    mutants=st.sampled_from(MUTANT_RULES),
    operators=st.lists(st.sampled_from(OPERATORS), unique=True).map(lambda x: tuple(sorted(x))),
    max_tries=st.integers(1, 1000),
    timeout_floor=st.floats(0.5, 10_000.0),
    stability_reruns=st.integers(0, 5),
    verify=st.booleans(),
    verify_threshold=st.none() | st.integers(1, 9),
    sources=st.lists(st.sampled_from(["src", "src/pkg", "lib"]), unique=True, min_size=1).map(
        lambda x: tuple(sorted(x))
    ),
    subprocesses=st.booleans(),
    sandbox=st.sampled_from(["required", "off"]),
)


@pytest.mark.parametrize(
    ("key", "weaker", "tighter"),
    [
        ("mutants", "off", "strict"),
        ("max_tries", 10, 1),
        ("timeout_floor", 5.0, 1200.0),
        ("stability_reruns", 0, 3),
        ("sources", ("src",), ("src/pkg",)),
    ],
)
def test_weaker_and_tighter_per_key(key: str, weaker: Any, tighter: Any) -> None:
    assert weaker_keys(BASE, replace(BASE, **{key: weaker})) == [key]
    assert weaker_keys(BASE, replace(BASE, **{key: tighter})) == []


def test_mutants_off_recorded_allows_on() -> None:
    recorded = replace(BASE, mutants="off")
    assert weaker_keys(recorded, BASE) == []
    assert weaker_keys(BASE, recorded) == ["mutants"]


def test_mutants_strict_is_tighter_than_the_witnessed_default() -> None:
    strict = replace(BASE, mutants="strict")
    assert (
        BASE.mutants == "on"
        and BASE.checks_mutants
        and not replace(BASE, mutants="off").checks_mutants
    )
    assert weaker_keys(BASE, strict) == []
    assert weaker_keys(strict, BASE) == ["mutants"]
    with pytest.raises(QuestUsageError, match=r"mutants=strict.*--quest-policy"):
        effective(strict, BASE, {"mutants"})
    assert parse_compact(strict.compact()) == strict


def test_a_policy_recorded_on_or_off_reads_as_before() -> None:
    # "on" named the default when it was recorded: it reads as the default now.
    assert from_dict({**BASE.to_dict(), "mutants": "on"}).mutants == "on"
    assert from_dict({**BASE.to_dict(), "mutants": True}).mutants == "on"
    assert from_dict({**BASE.to_dict(), "mutants": False}).mutants == "off"
    # The digest sealed in quests issued under "on" is unchanged.
    assert BASE.to_dict()["mutants"] == "on"


def test_fewer_operators_are_weaker() -> None:
    fewer = replace(BASE, operators=("body.skip",))
    assert weaker_keys(BASE, fewer) == ["operators"]
    assert weaker_keys(fewer, BASE) == []


def test_verification_off_and_a_higher_threshold_are_weaker() -> None:
    recorded = replace(BASE, verify=True, verify_threshold=2)
    assert weaker_keys(recorded, replace(recorded, verify=False)) == ["verify"]
    assert weaker_keys(recorded, replace(recorded, verify_threshold=3)) == ["verify_threshold"]
    assert weaker_keys(recorded, replace(recorded, verify_threshold=None)) == ["verify_threshold"]
    assert weaker_keys(recorded, replace(recorded, verify_threshold=1)) == []
    # Verification off in the record: its threshold does not matter.
    assert weaker_keys(BASE, replace(BASE, verify_threshold=5)) == []
    assert weaker_keys(BASE, replace(BASE, verify=True)) == []


def test_a_different_source_is_weaker_either_way() -> None:
    assert weaker_keys(BASE, replace(BASE, sources=("src/pkg", "lib"))) == ["sources"]


@given(policies)
def test_a_policy_is_never_weaker_than_itself(policy: GatePolicy) -> None:
    assert not weaker_keys(policy, policy)


@given(policies, policies, policies)
def test_not_weaker_is_transitive(a: GatePolicy, b: GatePolicy, c: GatePolicy) -> None:
    if not weaker_keys(a, b) and not weaker_keys(b, c):
        assert not weaker_keys(a, c)


@given(policies)
def test_compact_and_dict_forms_round_trip(policy: GatePolicy) -> None:
    assert parse_compact(policy.compact()) == policy
    assert from_dict(policy.to_dict()) == policy


def test_compact_names_every_key() -> None:
    text = BASE.compact()
    assert [part.split("=")[0] for part in text.split(";")] == list(KEYS)
    assert "mutants=on" in text and "sources=src/pkg" in text
    off = replace(BASE, subprocesses=False)
    assert parse_compact(off.compact()) == off and from_dict(off.to_dict()) == off


def test_subprocess_measurement_off_is_weaker_and_a_record_without_it_is_on() -> None:
    off = replace(BASE, subprocesses=False)
    assert weaker_keys(BASE, off) == ["subprocesses"]
    assert weaker_keys(off, BASE) == []
    older = {key: value for key, value in BASE.to_dict().items() if key != "subprocesses"}
    assert from_dict(older).subprocesses is True  # a record from before the key: on
    assert parse_compact(BASE.compact().replace(";subprocesses=on", "")) == BASE
    assert replace(BASE, subprocesses=False).digest() != BASE.digest()
    assert BASE.shown("subprocesses") == "subprocesses=on"
    assert parse_value("subprocesses", "off") is False
    with pytest.raises(QuestUsageError, match="subprocesses=on"):
        effective(BASE, off, {"subprocesses"})


def test_effective_keeps_what_is_not_given_and_applies_tightening() -> None:
    recorded = replace(BASE, max_tries=5)
    requested = replace(BASE, max_tries=2, mutants="off")
    # mutants not given: the record holds, whatever the default says.
    chosen = effective(recorded, requested, {"max_tries"})
    assert chosen.max_tries == 2 and chosen.mutants == "on"


def test_effective_refuses_weakening_naming_the_record_and_the_action() -> None:
    with pytest.raises(QuestUsageError, match=r"mutants=on.*--quest-policy"):
        effective(BASE, replace(BASE, mutants="off"), {"mutants"})
    with pytest.raises(QuestUsageError, match="max_tries=3"):
        effective(BASE, replace(BASE, max_tries=10), {"max_tries"})


def test_a_weakening_says_which_way_the_key_may_move_and_gives_the_persons_change() -> None:
    """The fix offered is the change asked for, made by a person, never the recorded value."""
    with pytest.raises(QuestUsageError) as caught:
        effective(BASE, replace(BASE, timeout_floor=0.01), {"timeout_floor"})
    message = str(caught.value)
    assert message == (
        "the gate policy recorded in the ratchet file has timeout_floor=600; timeout_floor=0.01 "
        "would weaken it: a submit can only raise the timeout of a gate run (--quest-timeout). "
        "Only a person changes the policy, at a terminal: "
        '`pytest --quest-policy timeout_floor=0.01 --quest-reason "why"`'
    )


@pytest.mark.parametrize("key", KEYS)
def test_every_key_says_which_way_a_submit_may_move_it(key: str) -> None:
    from pytest_quest.core.policy import _ONLY

    assert _ONLY[key].startswith("a submit can")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("x", "expected an object"),
        ({**BASE.to_dict(), "mutants": "maybe"}, "mutants: expected one of off, on, strict"),
        ({**BASE.to_dict(), "verify": "maybe"}, "verify: expected on or off, got 'maybe'"),
        ({**BASE.to_dict(), "max_tries": 0}, "max_tries"),
        ({**BASE.to_dict(), "max_tries": True}, "max_tries"),
        ({**BASE.to_dict(), "timeout_floor": -1}, "timeout_floor"),
        ({**BASE.to_dict(), "operators": ["nope"]}, "operators: unknown operator"),
        ({**BASE.to_dict(), "extra": 1}, "extra: unknown field"),
        ({k: v for k, v in BASE.to_dict().items() if k != "sources"}, "sources: missing"),
    ],
)
def test_bad_policy_values_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        from_dict(data)


def test_assignments() -> None:
    assert parse_assignment("max-tries=5") == ("max_tries", "5")
    assert change(BASE, [parse_assignment("mutants=off")]).mutants == "off"
    assert change(BASE, [("sources", "src,lib")]).sources == ("lib", "src")
    for bad in ("max_tries", "colour=red", "max_tries=zero"):
        with pytest.raises(PolicyError):
            parse_assignment(bad)


def test_operators_default_all_or_a_list_of_known_names() -> None:
    from pytest_quest.core.policy import KNOWN_OPERATORS

    assert change(BASE, [("operators", "all")]).operators == KNOWN_OPERATORS
    assert change(BASE, [("operators", "default")]).operators == OPERATORS
    opted = change(BASE, [("operators", ",".join([*OPERATORS, "compare.boundary"]))])
    assert "compare.boundary" in opted.operators and "compare.boundary" not in OPERATORS
    assert weaker_keys(opted, BASE) == ["operators"]
    assert opted.shown("operators").startswith("operators=")
    assert change(BASE, [("operators", "all")]).shown("operators") == "operators=all"
    assert BASE.shown("operators") == "operators=default"
    assert parse_compact(opted.compact()) == opted
    with pytest.raises(PolicyError, match="unknown operator"):
        change(BASE, [("operators", "nope")])


def test_sandbox_off_is_weaker_than_required_and_a_record_without_it_is_off() -> None:
    required = replace(BASE, sandbox="required")
    off = replace(BASE, sandbox="off")
    assert weaker_keys(required, off) == ["sandbox"]
    assert weaker_keys(off, required) == []
    older = {key: value for key, value in required.to_dict().items() if key != "sandbox"}
    assert from_dict(older).sandbox == "off"  # a record from before the key: judged unsandboxed
    assert "sandbox" not in off.stored() and required.stored()["sandbox"] == "required"
    assert from_dict(off.stored()) == off and from_dict(required.stored()) == required
    assert off.digest() == replace(off, sandbox="off").digest() != required.digest()
    assert parse_value("sandbox", "required") == "required"
    with pytest.raises(PolicyError, match="sandbox: expected required or off"):
        parse_value("sandbox", "on")
    with pytest.raises(QuestUsageError, match="sandbox=required"):
        effective(required, off, {"sandbox"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [(600, 600.0), ("2.5", 2.5), (" 30 ", 30.0), (0.25, 0.25)],
)
def test_a_timeout_floor_is_seconds_from_a_number_or_text(value: Any, expected: float) -> None:
    parsed = parse_value("timeout_floor", value)
    assert parsed == expected and type(parsed) is float


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "timeout_floor: expected a number of seconds, got True"),
        ("soon", "timeout_floor: expected a number of seconds, got 'soon'"),
        ("0", "timeout_floor: expected a number of seconds above 0, got 0.0"),
        (float("inf"), "timeout_floor: expected a number of seconds above 0, got inf"),
        (float("nan"), "timeout_floor: expected a number of seconds above 0, got nan"),
        ([1], "timeout_floor: expected a number of seconds above 0, got [1]"),
    ],
)
def test_a_timeout_floor_that_is_not_seconds_above_zero_is_refused(
    value: Any, message: str
) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_value("timeout_floor", value)
    assert str(raised.value) == message


def test_sources_are_names_sorted_without_repeats_from_a_list_or_text() -> None:
    assert parse_value("sources", " src , lib,,src ") == ("lib", "src")
    assert parse_value("sources", ["b", "a", "b"]) == ("a", "b")
    assert parse_value("sources", "") == ()


@pytest.mark.parametrize("value", [3, ["src", ""], ["src", 1], None])
def test_sources_that_are_not_a_list_of_names_are_refused(value: Any) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_value("sources", value)
    assert str(raised.value) == f"sources: expected a list of names, got {value!r}"


def test_an_unknown_policy_key_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(PolicyError) as raised:
        parse_value("colour", "red")
    assert str(raised.value) == (
        "unknown policy key 'colour' (known: mutants, operators, max_tries, timeout_floor, "
        "stability_reruns, verify, verify_threshold, sources, environment_failures, subprocesses, sandbox)"
    )


def test_a_compact_policy_reads_back_every_value() -> None:
    text = (
        "mutants=strict;operators=(none);max_tries=5;timeout_floor=30;stability_reruns=2;"
        "verify=on;verify_threshold=2;sources=lib,src"
    )
    assert parse_compact(text) == GatePolicy(
        mutants="strict",
        operators=(),
        max_tries=5,
        timeout_floor=30.0,
        stability_reruns=2,
        verify=True,
        verify_threshold=2,
        sources=("lib", "src"),
        environment_failures=3,
        subprocesses=True,
    )


@pytest.mark.parametrize("part", ["max_tries", "colour=red", ""])
def test_a_compact_policy_with_a_part_that_is_no_key_is_refused(part: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_compact(f"mutants=on;{part}")
    assert str(raised.value) == f"not a compact policy: {part!r}"


def test_a_compact_policy_missing_a_key_names_the_first_missing() -> None:
    with pytest.raises(PolicyError) as raised:
        parse_compact("mutants=on;operators=default;max_tries=3")
    assert str(raised.value) == "timeout_floor: missing in compact policy"
