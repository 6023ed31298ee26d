"""The verifier reply protocol of ``pytest_quest/verify/protocol.py``: five blocks, or JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_quest.verify.protocol import (
    STATUS_CLEAN,
    STATUS_CORRECTIONS,
    Finding,
    ProtocolError,
    Reply,
    parse_finding,
    parse_reply,
)
from tests.support.profiles import examples


def format_reply(reply: Reply) -> str:
    """The five-block text of `reply` (the exact format the prompt asks for)."""

    def bullets(items: Sequence[str]) -> str:
        return "\n".join(f"- {item}" for item in items)

    if reply.findings:
        discrepancies = "\n".join(
            f"- {finding.where} `{finding.quote}` {finding.reason}".rstrip()
            for finding in reply.findings
        )
    else:
        discrepancies = "none"
    return (
        f"<status>{reply.status}</status>\n"
        f"<questions>\n{bullets(reply.questions)}\n</questions>\n"
        f"<answers>\n{bullets(reply.answers)}\n</answers>\n"
        f"<discrepancies>\n{discrepancies}\n</discrepancies>\n"
        f"<final>{reply.final}</final>\n"
    )


CLEAN = """\
<status>verified-clean</status>
<questions>
- Does any test pass whatever the function returns?
- Does an assertion compute its expected value with the code under test?
</questions>
<answers>
- no: every assertion compares with a literal
- no, the expected values are literals
</answers>
<discrepancies>
none
</discrepancies>
<final>The tests check the function.</final>
"""


def test_clean_reply() -> None:
    reply = parse_reply(CLEAN)
    assert reply == Reply(
        status=STATUS_CLEAN,
        questions=(
            "Does any test pass whatever the function returns?",
            "Does an assertion compute its expected value with the code under test?",
        ),
        answers=(
            "no: every assertion compares with a literal",
            "no, the expected values are literals",
        ),
        findings=(),
        final="The tests check the function.",
    )


def test_any_block_order_star_bullets_and_surrounding_text() -> None:
    text = """Let me think about this first.
<final>one problem</final>
<discrepancies>
* tests/test_a.py:12 `assert f(2) == f(2)` the expected value comes from f itself
</discrepancies>
<answers>
* Yes - line 12 compares f with itself
</answers>
<STATUS> verified-with-corrections </STATUS>
<questions>
* Does an assertion compute its expected value with the code under test?
</questions>
Thanks!"""
    reply = parse_reply(text)
    assert reply.status == STATUS_CORRECTIONS
    assert reply.answers == ("Yes - line 12 compares f with itself",)
    assert reply.findings == (
        Finding(
            "tests/test_a.py", 12, "assert f(2) == f(2)", "the expected value comes from f itself"
        ),
    )
    assert reply.final == "one problem"


def test_numbered_items_and_continuation_lines() -> None:
    text = CLEAN.replace(
        "- Does any test pass whatever the function returns?",
        "1. Does any test pass whatever\n   the function returns?",
    ).replace(
        "- Does an assertion compute its expected value with the code under test?",
        "2) Does an assertion compute its expected value with the code under test?",
    )
    assert parse_reply(text).questions == (
        "Does any test pass whatever the function returns?",
        "Does an assertion compute its expected value with the code under test?",
    )


def test_a_block_quoted_before_the_answer_is_overridden_by_the_last_one() -> None:
    text = "I must answer <status>verified-clean|verified-with-corrections</status>.\n" + CLEAN
    assert parse_reply(text).status == STATUS_CLEAN


@pytest.mark.parametrize(
    "none", ["none", "- none", "None.", "", "  * NONE  ", "None found.", "No discrepancies"]
)
def test_no_discrepancy_spellings(none: str) -> None:
    text = CLEAN.replace("<discrepancies>\nnone\n", f"<discrepancies>\n{none}\n")
    assert parse_reply(text).findings == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (CLEAN.replace("<final>The tests check the function.</final>", ""), "missing block"),
        (CLEAN.replace("verified-clean", "looks-good"), "neither verified-clean"),
        (CLEAN.replace("- no, the expected values are literals\n", ""), "2 questions but 1"),
        (CLEAN.replace("- no: every", "- perhaps: every"), "answer 1 does not start with yes"),
        (CLEAN.replace("verified-clean", "verified-with-corrections"), "no discrepancy listed"),
        (
            CLEAN.replace("none", "- a.py:1 `x` wrong"),
            "status verified-clean but 1 discrepancy listed",
        ),
        ("The tests are fine.", "no <status> block and no JSON"),
        ("", "no <status> block and no JSON"),
        (
            CLEAN.replace("- Does any test pass whatever the function returns?\n", "").replace(
                "- Does an assertion compute its expected value with the code under test?\n", ""
            ),
            "lists no question",
        ),
    ],
)
def test_replies_outside_the_protocol(text: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_reply(text)


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            "tests/t.py:4 `assert x` vacuous",
            Finding("tests/t.py", 4, "assert x", "vacuous"),
        ),
        (
            "`tests/t.py:4` `assert x` -- vacuous",
            Finding("tests/t.py", 4, "assert x", "vacuous"),
        ),
        (
            "vacuous assertion at tests/t.py:4: ``assert `x` == 1``",
            Finding("tests/t.py", 4, "assert `x` == 1", "vacuous assertion at"),
        ),
        ("the tests are weak", Finding("", 0, "", "the tests are weak")),
        ("tests/t.py:4 no quote here", Finding("tests/t.py", 4, "", "no quote here")),
        ("`assert x` somewhere", Finding("", 0, "assert x", "somewhere")),
    ],
)
def test_parse_finding(item: str, expected: Finding) -> None:
    assert parse_finding(item) == expected


def test_json_alternative_in_a_code_fence() -> None:
    data = {
        "status": "verified-with-corrections",
        "questions": ["Q1?"],
        "answers": ["yes"],
        "discrepancies": [
            {"file": "tests/t.py", "line": "7", "quote": "assert True", "reason": "vacuous"},
            "src/m.py:3 `return 1` constant",
        ],
        "final": "two",
    }
    reply = parse_reply("```json\n" + json.dumps(data) + "\n```")
    assert reply.findings == (
        Finding("tests/t.py", 7, "assert True", "vacuous"),
        Finding("src/m.py", 3, "return 1", "constant"),
    )
    assert reply.questions == ("Q1?",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"status": "verified-clean"}, "lacks key"),
        (
            {
                "status": "verified-clean",
                "questions": [1],
                "answers": ["no"],
                "discrepancies": [],
                "final": "",
            },
            "questions must be a list of strings",
        ),
        (
            {
                "status": "verified-clean",
                "questions": ["q"],
                "answers": ["no"],
                "discrepancies": 3,
                "final": "",
            },
            "discrepancies must be",
        ),
        (
            {
                "status": "verified-clean",
                "questions": ["q"],
                "answers": ["no"],
                "discrepancies": [7],
                "final": "",
            },
            "each discrepancy must be",
        ),
    ],
)
def test_bad_json_replies(data: object, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_reply(json.dumps(data))


def test_json_finding_with_an_unusable_line_is_kept_for_the_recheck_to_drop() -> None:
    data = {
        "status": "verified-with-corrections",
        "questions": ["q"],
        "answers": ["yes"],
        "discrepancies": [{"file": "a.py", "line": "twelve", "quote": "x"}],
        "final": "",
    }
    assert parse_reply(json.dumps(data)).findings == (Finding("a.py", 0, "x", ""),)


# -- properties ------------------------------------------------------------------------

TAGS = ["status", "questions", "answers", "discrepancies", "final"]
fragment = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [f"<{tag}>" for tag in TAGS]
        + [f"</{tag}>" for tag in TAGS]
        + ["verified-clean", "verified-with-corrections", "- ", "* ", "none", "yes", "no"]
        + ["\n", "`", "``", "a.py:3", "{", "}", '"status":', "[", "]", "```json\n", "```"]
    ),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.text())
def test_arbitrary_text_never_crashes(text: str) -> None:
    try:
        parse_reply(text)
    except ProtocolError:
        pass


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(fragment, max_size=40).map("".join))
def test_protocol_like_text_never_crashes(text: str) -> None:
    try:
        reply = parse_reply(text)
    except ProtocolError:
        return
    assert reply.status in (STATUS_CLEAN, STATUS_CORRECTIONS)
    assert len(reply.answers) == len(reply.questions) >= 1


@settings(max_examples=examples(200), deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from([*TAGS, "file", "line"]), inner, max_size=6)
        ),
        max_leaves=20,
    )
)
def test_arbitrary_json_never_crashes(value: object) -> None:
    try:
        parse_reply(json.dumps(value))
    except ProtocolError:
        pass


# Items are one line of plain words: what a verifier writes, minus the markup.
words = (
    st.text(
        alphabet=st.characters(
            whitelist_categories=("L", "N"), whitelist_characters=" ,;?!()'=+", max_codepoint=0x2FF
        ),
        min_size=1,
        max_size=30,
    )
    .map(str.strip)
    .filter(lambda text: text and text.lower() != "none")
)
reason = st.text(alphabet="abcdefghij klmnop", max_size=20).map(lambda text: " ".join(text.split()))
quote = st.text(alphabet="abcxyz_()=+<>. 0123", min_size=1, max_size=20).map(str.strip).filter(bool)
path = st.from_regex(r"[a-z_]{1,8}(/[a-z_]{1,8}){0,2}\.py", fullmatch=True)
finding = st.builds(Finding, path, st.integers(1, 99_999), quote, reason)


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    count = draw(st.integers(1, 6))
    questions = tuple(draw(st.lists(words, min_size=count, max_size=count)))
    answers = tuple(
        f"{draw(st.sampled_from(['yes', 'no', 'Yes', 'No']))} {draw(words)}" for _ in questions
    )
    findings = tuple(draw(st.lists(finding, max_size=4)))
    status = STATUS_CORRECTIONS if findings else STATUS_CLEAN
    return Reply(status, questions, answers, findings, draw(words | st.just("")))


@settings(max_examples=examples(300), deadline=None)
@given(replies())
def test_well_formed_replies_round_trip(reply: Reply) -> None:
    assert parse_reply(format_reply(reply)) == reply


@settings(max_examples=examples(200), deadline=None)
@given(replies(), st.permutations(range(5)), st.sampled_from(["-", "*"]))
def test_round_trip_in_any_block_order_and_bullet(
    reply: Reply, order: list[int], bullet: str
) -> None:
    blocks = re.split(
        r"\n(?=<(?:status|questions|answers|discrepancies|final)>)", format_reply(reply)
    )
    assert len(blocks) == 5
    text = "\n".join(blocks[index] for index in order).replace("\n- ", f"\n{bullet} ")
    assert parse_reply(text) == reply


@settings(max_examples=examples(200), deadline=None)
@given(replies())
def test_json_round_trip(reply: Reply) -> None:
    data = {
        "status": reply.status,
        "questions": list(reply.questions),
        "answers": list(reply.answers),
        "discrepancies": [item.to_dict() for item in reply.findings],
        "final": reply.final,
    }
    assert parse_reply("Here it is:\n" + json.dumps(data, indent=2)) == reply


def test_a_huge_reply_of_unclosed_tags_parses_in_linear_time() -> None:
    import time

    started = time.monotonic()
    with pytest.raises(ProtocolError, match="no <status> block"):
        parse_reply("<status><questions>" * 20_000 + "x" * 100_000)
    assert time.monotonic() - started < 2


def test_status_in_markup_is_understood() -> None:
    assert parse_reply(CLEAN.replace("verified-clean", "**`Verified_Clean`**.")).status == (
        STATUS_CLEAN
    )
