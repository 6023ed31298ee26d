"""What starting the plugin imports: no reader of the ratchet file (a kept view decodes nothing)."""

from __future__ import annotations

import subprocess
import sys


def test_the_sessionless_commands_start_without_the_ratchet_files_reader() -> None:
    # A fresh interpreter: this test process has imported everything already.
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, pytest_quest.plugin.sessionless; "
            "print('pytest_quest.engine.codec' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert found.stdout.strip() == "False"
