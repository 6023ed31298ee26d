"""The answer bank of the scripted agent on semver: a test file body per quest id.

Written for the vendored semver 3.1.2 (tests/acceptance/projects/semver), not
taken from semver's own suite. Each body is an honest test: it checks exact
values and exceptions on both sides of every branch of its function, so the
gate's mutants (step 4) die; none reads or patches the code under test.

Quests left out on purpose (the agent must skip them through the JSON):
``__main__.py::main``, ``_deprecated.py::deprecated`` and its ``wrapper``,
``cli.py::createparser``/``cmd_bump``/``main`` and the larger ``Version``
methods (``__init__``, ``parse``, ``next_version``, ``bump_prerelease``...).
"""

from __future__ import annotations

DEPRECATED = "src/semver/_deprecated.py::"
CLI = "src/semver/cli.py::"
VERSION = "src/semver/version.py::"

# The message every deprecated function of semver's module-level API warns with.
_WARNS = """
import re

import pytest


def deprecated(name, since="2.10.0", use=None):
    use = f"Use {use!r} instead." if use else f"Use the respective 'semver.Version.{name}' instead."
    text = (
        f"Function 'semver.{name}' is deprecated. Deprecated since version {since}.  "
        f"This function will be removed in semver 3. {use}"
    )
    return pytest.deprecated_call(match="^" + re.escape(text) + "$")
"""

ANSWERS: dict[str, str] = {
    DEPRECATED + "parse": _WARNS
    + """

from semver import parse


def test_parse_returns_the_parts_as_a_dict():
    with deprecated("parse"):
        assert parse("1.2.3-rc.1+b.5") == {
            "major": 1, "minor": 2, "patch": 3, "prerelease": "rc.1", "build": "b.5",
        }
    with deprecated("parse"):
        assert parse("0.0.7") == {
            "major": 0, "minor": 0, "patch": 7, "prerelease": None, "build": None,
        }
""",
    DEPRECATED + "parse_version_info": _WARNS
    + """

from semver import Version, parse_version_info


def test_parse_version_info_returns_a_version():
    with deprecated("parse_version_info", use="semver.version.Version.parse"):
        version = parse_version_info("3.4.5-pre.2+build.4")
    assert type(version) is Version
    assert version.to_tuple() == (3, 4, 5, "pre.2", "build.4")
""",
    DEPRECATED + "match": _WARNS
    + """

from semver import match


def test_match_compares_with_the_expression():
    with deprecated("match"):
        assert match("2.0.0", ">=1.0.0") is True
    with deprecated("match"):
        assert match("1.0.0", ">1.0.0") is False
    with deprecated("match"):
        assert match("1.0.0", "1.0.0") is True
""",
    DEPRECATED + "max_ver": _WARNS
    + """

from semver import max_ver


def test_max_ver_returns_the_greater_version_as_text():
    with deprecated("max_ver", since="2.10.2", use="max"):
        assert max_ver("1.0.0", "2.0.0") == "2.0.0"
    with deprecated("max_ver", since="2.10.2", use="max"):
        assert max_ver("1.10.0", "1.9.0") == "1.10.0"
    with deprecated("max_ver", since="2.10.2", use="max"):
        assert max_ver("1.0.0-rc.1", "1.0.0") == "1.0.0"
""",
    DEPRECATED + "min_ver": _WARNS
    + """

from semver import min_ver


def test_min_ver_returns_the_lesser_version_as_text():
    with deprecated("min_ver", since="2.10.2", use="min"):
        assert min_ver("1.0.0", "2.0.0") == "1.0.0"
    with deprecated("min_ver", since="2.10.2", use="min"):
        assert min_ver("1.10.0", "1.9.0") == "1.9.0"
    with deprecated("min_ver", since="2.10.2", use="min"):
        assert min_ver("1.0.0", "1.0.0-rc.1") == "1.0.0-rc.1"
""",
    DEPRECATED + "format_version": _WARNS
    + """

from semver import format_version


def test_format_version_joins_the_parts():
    with deprecated("format_version", use="str(versionobject)"):
        assert format_version(3, 4, 5, "pre.2", "build.4") == "3.4.5-pre.2+build.4"
    with deprecated("format_version", use="str(versionobject)"):
        assert format_version(1, 0, 0) == "1.0.0"
""",
    DEPRECATED + "bump_major": _WARNS
    + """

from semver import bump_major


def test_bump_major_resets_the_rest():
    with deprecated("bump_major"):
        assert bump_major("3.4.5-rc.1+b.2") == "4.0.0"
    with deprecated("bump_major"):
        assert bump_major("0.1.0") == "1.0.0"
""",
    DEPRECATED + "bump_minor": _WARNS
    + """

from semver import bump_minor


def test_bump_minor_resets_patch_and_labels():
    with deprecated("bump_minor"):
        assert bump_minor("3.4.5-rc.1+b.2") == "3.5.0"
    with deprecated("bump_minor"):
        assert bump_minor("1.0.9") == "1.1.0"
""",
    DEPRECATED + "bump_patch": _WARNS
    + """

from semver import bump_patch


def test_bump_patch_drops_the_labels():
    with deprecated("bump_patch"):
        assert bump_patch("3.4.5-rc.1+b.2") == "3.4.6"
    with deprecated("bump_patch"):
        assert bump_patch("1.0.0") == "1.0.1"
""",
    DEPRECATED + "bump_prerelease": _WARNS
    + """

from semver import bump_prerelease


def test_bump_prerelease_with_default_and_given_token():
    with deprecated("bump_prerelease"):
        assert bump_prerelease("1.2.3") == "1.2.3-rc.1"
    with deprecated("bump_prerelease"):
        assert bump_prerelease("1.2.3", "beta") == "1.2.3-beta.1"
    with deprecated("bump_prerelease"):
        assert bump_prerelease("1.2.3-beta.4", "alpha") == "1.2.3-beta.5"
""",
    DEPRECATED + "bump_build": _WARNS
    + """

from semver import bump_build


def test_bump_build_with_default_and_given_token():
    with deprecated("bump_build"):
        assert bump_build("1.2.3") == "1.2.3+build.1"
    with deprecated("bump_build"):
        assert bump_build("1.2.3", "nightly") == "1.2.3+nightly.1"
    with deprecated("bump_build"):
        assert bump_build("1.2.3-rc.1+b.9") == "1.2.3-rc.1+b.10"
""",
    DEPRECATED + "finalize_version": _WARNS
    + """

from semver import finalize_version


def test_finalize_version_drops_prerelease_and_build():
    with deprecated("finalize_version"):
        assert finalize_version("1.2.3-rc.5+build.7") == "1.2.3"
    with deprecated("finalize_version"):
        assert finalize_version("0.4.0") == "0.4.0"
""",
    DEPRECATED + "replace": _WARNS
    + """

from semver import replace


def test_replace_changes_the_named_parts():
    with deprecated("replace"):
        assert replace("1.2.3", major=2, prerelease="rc.1") == "2.2.3-rc.1"
    with deprecated("replace"):
        assert replace("1.2.3+b.1", build=None) == "1.2.3"
""",
    CLI + "cmd_compare": """
import argparse

from semver.cli import cmd_compare


def test_cmd_compare_prints_the_ordering():
    assert cmd_compare(argparse.Namespace(version1="1.0.0", version2="2.0.0")) == "-1"
    assert cmd_compare(argparse.Namespace(version1="2.0.0", version2="1.0.0")) == "1"
    assert cmd_compare(argparse.Namespace(version1="1.0.0+a", version2="1.0.0+b")) == "0"
""",
    CLI + "cmd_nextver": """
import argparse

from semver.cli import cmd_nextver


def test_cmd_nextver_names_the_next_version():
    assert cmd_nextver(argparse.Namespace(version="1.2.3", part="minor")) == "1.3.0"
    assert cmd_nextver(argparse.Namespace(version="1.2.3-rc.1", part="patch")) == "1.2.3"
    assert cmd_nextver(argparse.Namespace(version="2.0.0", part="major")) == "3.0.0"
""",
    CLI + "cmd_check": """
import argparse

import pytest

from semver.cli import cmd_check


def test_cmd_check_accepts_a_valid_version():
    assert cmd_check(argparse.Namespace(version="1.2.3-rc.1+b.2")) is None


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "1.2.3-"])
def test_cmd_check_rejects_an_invalid_version(text):
    with pytest.raises(ValueError) as info:
        cmd_check(argparse.Namespace(version=text))
    assert str(info.value) == f"Invalid version {text!r}"
""",
    CLI + "process": """
import argparse

import pytest

from semver.cli import process


class Parser:
    def __init__(self):
        self.helped = 0

    def print_help(self):
        self.helped += 1


def test_process_calls_the_command_with_the_arguments():
    parser = Parser()
    args = argparse.Namespace(parser=parser, func=lambda got: ("ran", got.value), value=7)
    assert process(args) == ("ran", 7)
    assert parser.helped == 0


def test_process_without_a_command_prints_help_and_exits():
    parser = Parser()
    with pytest.raises(SystemExit) as info:
        process(argparse.Namespace(parser=parser))
    assert info.value.code is None
    assert parser.helped == 1
""",
    VERSION + "Version.major@2": """
import pytest

from semver import Version


def test_major_is_read_only():
    version = Version(1, 2, 3)
    with pytest.raises(AttributeError, match="^attribute 'major' is readonly$"):
        version.major = 9
    assert version.to_tuple() == (1, 2, 3, None, None)
""",
    VERSION + "Version.minor@2": """
import pytest

from semver import Version


def test_minor_is_read_only():
    version = Version(1, 2, 3)
    with pytest.raises(AttributeError, match="^attribute 'minor' is readonly$"):
        version.minor = 9
    assert version.to_tuple() == (1, 2, 3, None, None)
""",
    VERSION + "Version.patch@2": """
import pytest

from semver import Version


def test_patch_is_read_only():
    version = Version(1, 2, 3)
    with pytest.raises(AttributeError, match="^attribute 'patch' is readonly$"):
        version.patch = 9
    assert version.to_tuple() == (1, 2, 3, None, None)
""",
    VERSION + "Version.prerelease@2": """
import pytest

from semver import Version


def test_prerelease_is_read_only():
    version = Version(1, 2, 3, "rc.1")
    with pytest.raises(AttributeError, match="^attribute 'prerelease' is readonly$"):
        version.prerelease = "rc.2"
    assert version.to_tuple() == (1, 2, 3, "rc.1", None)
""",
    VERSION + "Version.build@2": """
import pytest

from semver import Version


def test_build_is_read_only():
    version = Version(1, 2, 3, None, "b.1")
    with pytest.raises(AttributeError, match="^attribute 'build' is readonly$"):
        version.build = "b.2"
    assert version.to_tuple() == (1, 2, 3, None, "b.1")
""",
    VERSION + "Version.__iter__": """
from semver import Version


def test_iterating_yields_the_five_parts():
    assert list(Version(1, 2, 3, "rc.1", "b.7")) == [1, 2, 3, "rc.1", "b.7"]
    assert tuple(Version(4)) == (4, 0, 0, None, None)
""",
    VERSION + "Version._increment_string": """
import pytest

from semver import Version


@pytest.mark.parametrize(
    "text, expected",
    [
        ("build.1", "build.2"),
        ("0", "1"),
        ("a9b", "a10b"),
        ("build.09", "build.10"),
        ("build.009", "build.010"),
        ("1.2.99", "1.2.100"),
        ("abc", "abc"),
        ("", ""),
    ],
)
def test_increment_string_raises_the_last_number(text, expected):
    assert Version._increment_string(text) == expected
""",
    VERSION + "Version.bump_major": """
from semver import Version


def test_bump_major():
    assert Version(3, 4, 5, "rc.1", "b.2").bump_major().to_tuple() == (4, 0, 0, None, None)
    assert Version(0).bump_major().to_tuple() == (1, 0, 0, None, None)


def test_bump_major_keeps_the_subclass():
    class Mine(Version):
        pass

    assert type(Mine(1, 2, 3).bump_major()) is Mine
""",
    VERSION + "Version.bump_minor": """
from semver import Version


def test_bump_minor():
    assert Version(3, 4, 5, "rc.1", "b.2").bump_minor().to_tuple() == (3, 5, 0, None, None)
    assert Version(1, 0, 9).bump_minor().to_tuple() == (1, 1, 0, None, None)


def test_bump_minor_keeps_the_subclass():
    class Mine(Version):
        pass

    assert type(Mine(1, 2, 3).bump_minor()) is Mine
""",
    VERSION + "Version.bump_build": """
import pytest

from semver import Version


def bumped(version, *token):
    return version.bump_build(*token).to_tuple()


def test_an_existing_build_is_raised():
    assert bumped(Version(1, 2, 3, None, "build.4")) == (1, 2, 3, None, "build.5")
    assert bumped(Version(1, 2, 3, "rc.1", "b.9"), "other") == (1, 2, 3, "rc.1", "b.10")


def test_a_build_without_digits_gets_dot_zero():
    assert bumped(Version(1, 2, 3, None, "abc")) == (1, 2, 3, None, "abc.0")


def test_a_new_build_starts_at_one():
    assert bumped(Version(1, 2, 3)) == (1, 2, 3, None, "build.1")
    assert bumped(Version(1, 2, 3, "rc.2"), "nightly") == (1, 2, 3, "rc.2", "nightly.1")
    assert bumped(Version(1, 2, 3), "") == (1, 2, 3, None, "1")
    assert bumped(Version(1, 2, 3), None) == (1, 2, 3, None, "build.1")


def test_an_invalid_token_is_rejected():
    with pytest.raises(ValueError, match="^'a_b' is not a valid build token"):
        Version(1, 2, 3).bump_build("a_b")


def test_bump_build_keeps_the_subclass():
    class Mine(Version):
        pass

    assert type(Mine(1, 2, 3).bump_build()) is Mine
""",
    VERSION + "Version.__getitem__": """
import pytest

from semver import Version

VERSION = Version(1, 2, 3, "rc.1", "b.9")


def test_an_index_gives_one_part():
    assert [VERSION[i] for i in range(5)] == [1, 2, 3, "rc.1", "b.9"]


def test_a_slice_gives_a_tuple_of_the_parts_that_are_set():
    assert VERSION[0:2] == (1, 2)
    assert VERSION[3:5] == ("rc.1", "b.9")
    assert VERSION[:] == (1, 2, 3, "rc.1", "b.9")
    assert VERSION[1:] == (2, 3, "rc.1", "b.9")
    assert VERSION[:3] == (1, 2, 3)
    assert VERSION[::2] == (1, 3, "b.9")
    assert Version(1, 2, 3)[:5] == (1, 2, 3)


def test_a_slice_of_one_part_gives_that_part():
    assert VERSION[0:1] == 1
    assert VERSION[4:5] == "b.9"


@pytest.mark.parametrize("index", [-1, slice(-2, None), slice(None, -1), slice(-3, -1)])
def test_negative_indexes_are_refused(index):
    with pytest.raises(IndexError, match="^Version index cannot be negative$"):
        VERSION[index]


@pytest.mark.parametrize("index", [3, 4, slice(3, 5), slice(5, 9)])
def test_parts_that_are_not_set_are_undefined(index):
    with pytest.raises(IndexError, match="^Version part undefined$"):
        Version(1, 2, 3)[index]
""",
    VERSION + "Version.__repr__": """
from semver import Version


def test_repr_names_every_part():
    assert repr(Version(1, 2, 3, "rc.1", "b.2")) == (
        "Version(major=1, minor=2, patch=3, prerelease='rc.1', build='b.2')"
    )
    assert repr(Version(0)) == "Version(major=0, minor=0, patch=0, prerelease=None, build=None)"


def test_repr_names_the_subclass():
    class Mine(Version):
        pass

    assert repr(Mine(4, 5, 6)) == "Mine(major=4, minor=5, patch=6, prerelease=None, build=None)"
""",
    VERSION + "Version.finalize_version": """
from semver import Version


def test_finalize_version_drops_prerelease_and_build():
    assert Version(1, 2, 3, "rc.5", "b.7").finalize_version().to_tuple() == (1, 2, 3, None, None)
    assert Version(0, 4).finalize_version().to_tuple() == (0, 4, 0, None, None)


def test_finalize_version_keeps_the_subclass():
    class Mine(Version):
        pass

    assert type(Mine(1, 2, 3, "rc.1").finalize_version()) is Mine
""",
    VERSION + "Version.match": """
import pytest

from semver import Version

LOW, SAME, HIGH = "1.9.9", "2.0.0", "2.0.1"


@pytest.mark.parametrize(
    "operator, low, same, high",
    [
        (">", True, False, False),
        ("<", False, False, True),
        ("==", False, True, False),
        ("!=", True, False, True),
        (">=", True, True, False),
        ("<=", False, True, True),
        ("", False, True, False),
    ],
)
def test_match_each_operator(operator, low, same, high):
    version = Version(2, 0, 0)
    assert version.match(operator + LOW) is low
    assert version.match(operator + SAME) is same
    assert version.match(operator + HIGH) is high


def test_match_with_a_prerelease():
    assert Version(2, 0, 0, "rc.1").match("<2.0.0") is True
    assert Version(2, 0, 0, "rc.1").match(">=2.0.0-rc.1") is True


@pytest.mark.parametrize("expression", ["", "=2.0.0", "~2.0.0", "X1.0.0", "v2.0.0"])
def test_match_rejects_an_unknown_operator(expression):
    with pytest.raises(ValueError) as info:
        Version(2, 0, 0).match(expression)
    assert str(info.value) == (
        "match_expr parameter should be in format <op><ver>, where <op> is one of "
        "['<', '>', '==', '<=', '>=', '!=']. You provided: " + repr(expression)
    )
""",
    VERSION + "Version.is_compatible": """
import pytest

from semver import Version


@pytest.mark.parametrize(
    "left, right, expected",
    [
        ((1, 1, 0), (1, 2, 0), True),
        ((1, 1, 0), (1, 1, 5), True),
        ((1, 2, 0), (1, 1, 0), False),
        ((1, 0, 0), (2, 0, 0), False),
        ((1, 0, 0, "rc.1"), (1, 0, 0), False),
        ((1, 0, 0, "rc.1"), (1, 3, 0, "rc.1"), True),
        ((0, 1, 0), (0, 1, 0), True),
        ((0, 1, 0), (0, 1, 1), False),
        ((0, 1, 0), (0, 2, 0), False),
        ((0, 1, 0, "rc.1"), (0, 1, 0, "rc.1"), True),
        # Major 0: the build is not part of what must be equal.
        ((0, 1, 0, None, "b.1"), (0, 1, 0, None, "b.2"), True),
        ((0, 1, 0, "rc.1", "b.1"), (0, 1, 0, "rc.1", "b.2"), True),
        ((0, 1, 0), (1, 1, 0), False),
    ],
)
def test_is_compatible(left, right, expected):
    assert Version(*left).is_compatible(Version(*right)) is expected


def test_is_compatible_needs_a_version():
    with pytest.raises(TypeError, match="^Expected a Version type but got <class 'str'>$"):
        Version(1, 0, 0).is_compatible("1.0.0")
""",
}

# The answers the acceptance test gives the agent: enough for 20 PASS with a
# margin, fewer than all to keep CI short (each submit runs the gate's children).
CI_ANSWERS: tuple[str, ...] = (
    DEPRECATED + "parse",
    DEPRECATED + "parse_version_info",
    DEPRECATED + "match",
    DEPRECATED + "max_ver",
    DEPRECATED + "min_ver",
    DEPRECATED + "format_version",
    DEPRECATED + "bump_build",
    DEPRECATED + "replace",
    CLI + "cmd_compare",
    CLI + "cmd_nextver",
    CLI + "cmd_check",
    CLI + "process",
    VERSION + "Version.major@2",
    VERSION + "Version.build@2",
    VERSION + "Version.__iter__",
    VERSION + "Version._increment_string",
    VERSION + "Version.bump_major",
    VERSION + "Version.bump_minor",
    VERSION + "Version.bump_build",
    VERSION + "Version.__getitem__",
    VERSION + "Version.__repr__",
    VERSION + "Version.finalize_version",
    VERSION + "Version.match",
    VERSION + "Version.is_compatible",
)
