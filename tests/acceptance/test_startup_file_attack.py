"""A `.pth` file planted in site-packages by a judged test: undone, and never run in a judge.

Python runs the `.pth` files of its site folders in every process it starts:
one written by a judged test would run in the next judge, before pytest-quest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.attacks import (
    CALC_SOURCE,
    LEVEL,
    SIGN,
    assert_only_the_judged_entry_changed,
    attack_fixtures,
    checks,
)
from tests.support.quests import ratchet_view
from tests.support.runner import FAST, child_environ

# The judge's own detection, without a kernel sandbox (docs/sandbox.md covers the sandboxed path).
pytestmark = [pytest.mark.slow, pytest.mark.unsandboxed]


template, scanned = attack_fixtures(CALC_SOURCE)


def bridged_venv(venv: Path) -> Path:
    """A new virtualenv that reaches this run's packages (a ``.pth`` adding their site
    folder): its own site-packages is private, so what a test plants there reaches no
    other test of the run (xdist workers share this run's venv). Its interpreter."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True, capture_output=True, env=child_environ(),
    )  # fmt: skip
    python = venv / "bin" / "python"
    ours = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    bridge = "".join(f"import site; site.addsitedir({path!r})\n" for path in ours)
    (Path(purelib_of(python)) / "_running_venv.pth").write_text(bridge)
    return python


def purelib_of(python: Path) -> str:
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run(
        [str(python), "-c", ask], check=True, capture_output=True, text=True
    ).stdout.strip()


def submit_with(python: Path, root: Path, quest_id: str) -> dict[str, Any]:
    """``--quest submit`` in `root` run by `python` (as tests/support/runner.py runs pytest)."""
    done = subprocess.run(
        [str(python), "-m", "pytest", *FAST, "--quest", "submit", "--quest-id", quest_id,
         "--quest-format", "json"],
        cwd=root, env=child_environ(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    data: dict[str, Any] = json.loads(done.stdout)
    assert "verdict" in data, (data, done.stderr)
    return data


def test_a_pth_file_planted_by_a_test_is_undone_and_never_runs_in_a_judge(
    scanned: Path, tmp_path: Path
) -> None:
    # Python runs the .pth files of its site folders in every process it
    # starts: one written by a judged test would run in the next judge, before
    # pytest-quest (code under judgement in the process that decides).
    python = bridged_venv(tmp_path / "venv")
    purelib = Path(purelib_of(python))
    name = f"zz_quest_attack_{os.getpid()}_{tmp_path.name}.pth"
    mark = tmp_path / "judges.txt"
    line = (
        f"import os, sys; os.path.isdir({str(tmp_path)!r}) and '--quest' in sys.argv and "
        f"open({str(mark)!r}, 'a').write(' '.join(sys.argv) + chr(10))"
    )
    (scanned / "tests" / "test_attack.py").write_text(
        textwrap.dedent(
            f"""
            import sysconfig
            from pathlib import Path
            from pkg.calc import sign

            def test_sign():
                assert sign(3) == "positive"
                assert sign(-3) == "negative"
                assert sign(0) == "zero"
                pth = Path(sysconfig.get_paths()["purelib"]) / {name!r}
                pth.write_text({line!r} + "\\n")
            """
        )
    )
    before = ratchet_view((scanned / "quest.json").read_bytes())
    data = submit_with(python, scanned, SIGN)
    assert data["verdict"] == "REVIEW", data["quest"]["facts"]
    assert checks(data)[0] == "guard.startup_files", checks(data)
    assert_only_the_judged_entry_changed(scanned, before, SIGN)
    assert not (purelib / name).exists()
    (scanned / "tests" / "test_attack.py").write_text("def test_nothing():\n    pass\n")
    submit_with(python, scanned, LEVEL)
    assert not mark.exists(), mark.read_text()
