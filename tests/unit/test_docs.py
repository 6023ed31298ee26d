"""The docs cannot rot: every option is documented, every linked page exists."""

from __future__ import annotations

import re

import pytest

from pytest_quest.plugin.options import _OPTIONS
from tests.support import paths

ROOT = paths.ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", [flags[0] for _, flags, *_ in _OPTIONS])
def test_every_option_is_in_the_readme_or_docs(flag):
    docs = README + "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    assert flag in docs, f"{flag} is not documented in README.md or docs/"


def test_every_linked_doc_exists():
    links = re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)\)", README)
    assert links, "the README links no docs"
    for link in links:
        assert (ROOT / link).is_file(), f"README links {link}, which does not exist"


def test_the_readme_commands_exist():
    for script in ("demo.sh", "run-tests.sh"):
        assert f"bash {script}" in README
        assert (ROOT / script).is_file()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "run-tests.sh" in ci, ".ci/run must run the README's test command"
