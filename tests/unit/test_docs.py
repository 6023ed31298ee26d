"""The docs cannot rot: every option is documented, every linked page exists."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_quest.plugin.option_table import _OPTIONS
from tests.support import paths

ROOT = paths.ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", [flags[0] for _, flags, *_ in _OPTIONS])
def test_every_option_is_in_the_readme_or_docs(flag: str) -> None:
    docs = README + "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    assert flag in docs, f"{flag} is not documented in README.md or docs/"


def test_every_linked_doc_exists() -> None:
    links = re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)\)", README)
    assert links, "the README links no docs"
    for link in links:
        assert (ROOT / link).is_file(), f"README links {link}, which does not exist"


def test_the_readme_commands_exist() -> None:
    for script in ("demo.sh", "run-tests.sh"):
        assert f"bash {script}" in README
        assert (ROOT / script).is_file()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "run-tests.sh" in ci, ".ci/run must run the README's test command"


def _options_reference() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "options_reference", ROOT / "docs" / "_hooks" / "options_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_reference_is_generated_from_every_option() -> None:
    hook = _options_reference()
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert hook.MARKER in page
    rendered = hook.on_page_markdown(page, None, None, None)
    assert hook.MARKER not in rendered
    sections = rendered.split("\n### ")[1:]
    options = [s for s in sections if s.startswith("`--quest")]
    assert len(options) == len(_OPTIONS)
    for option, section in zip(_OPTIONS, options):
        assert section.startswith(f"`{option.flags[0]}")
        assert option.help in section
        ini = f"* ini option: `{option.name}` ({option.ini_type})"
        assert (ini in section) == (option.ini_type is not None), section
    # A page without the marker is left alone.
    assert hook.on_page_markdown("# other", None, None, None) == "# other"


def test_every_doc_page_is_in_the_site_nav() -> None:
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s*- (?:[^:\n]+: )?([\w-]+\.md)\s*$", mkdocs, flags=re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == nav, (
        f"in docs/ but not in the nav: {pages - nav}; in the nav only: {nav - pages}"
    )


def test_ci_builds_the_site_strictly_and_checks_the_package() -> None:
    # .ci/run starts .ci/checks beside the tests; the checks are there.
    assert "bash .ci/checks" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "checks").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in ci
    assert "-m build" in ci
    assert "twine check --strict" in ci
    assert ".ci/check_dist.py" in ci


def _prompt_and_snippet(text: str) -> tuple[list[str], list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("> Work through"))
    prompt = []
    for line in lines[start:]:
        if not line.startswith(">"):
            break
        prompt.append(line)
    first = lines.index("## Tests: pytest-quest")
    snippet = lines[first : lines.index("```", first)]
    return prompt, snippet


@pytest.mark.parametrize(
    "said",
    [
        "PASS", "FAIL", "REVIEW", "DONE", "exit 4", "75", '"done": true',
        "--quest-dispute M", "--quest-dispute LINE", "N->M", "spends a try",
    ],
)  # fmt: skip
def test_the_ready_prompt_and_the_snippet_cover_every_answer(said: str) -> None:
    # Every answer an agent can get, each dispute, in at most 15 lines each; the long form
    # (docs/agent-loop.md) repeats them word for word.
    prompt, snippet = _prompt_and_snippet(README)
    assert len(prompt) <= 15 and len(snippet) <= 15
    assert said in "\n".join(prompt), f"the ready prompt does not say {said!r}"
    assert said in "\n".join(snippet), f"the AGENTS.md snippet does not say {said!r}"
    loop = (ROOT / "docs" / "agent-loop.md").read_text(encoding="utf-8")
    assert _prompt_and_snippet(loop) == (prompt, snippet)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md", "docs/configuration.md"])
def test_the_setup_pages_show_both_pytest_tables_and_each_loads(
    page: str, pytester: pytest.Pytester
) -> None:
    """pytest 9 refuses a pyproject.toml holding both tables: a page shows each form, and each
    of its snippets is one pytest reads with its quest options."""
    text = (ROOT / page).read_text(encoding="utf-8")
    snippets = [s for s in re.findall(r"```toml\n(.*?)```", text, re.DOTALL) if "[tool.pytest" in s]
    tables = {re.search(r"^\[tool\.pytest[^\]]*\]", s, re.MULTILINE).group() for s in snippets}  # type: ignore[union-attr]
    assert tables == {"[tool.pytest]", "[tool.pytest.ini_options]"}, tables
    for snippet in snippets:
        pytester.makepyprojecttoml(snippet)
        config = pytester.parseconfig()
        assert config.getini("quest_source") == [pytester.path / "src" / "shop"], snippet


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_setup_pages_name_every_export_format(page: str) -> None:
    from pytest_quest.engine.outputs import FORMATS

    text = (ROOT / page).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "--quest export" in line]
    assert lines, f"{page} does not show --quest export"
    named = "".join(lines)
    missing = [suffix for suffix in FORMATS if suffix not in named]
    assert not missing, f"{page}: the --quest export lines do not name {missing}"
