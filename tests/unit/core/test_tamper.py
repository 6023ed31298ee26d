"""Tamper signs: every kind is caught however it is spelled, and honest test code never is.

A case's expected findings are the lines marked `# sign`.
"""

from __future__ import annotations

import ast
import keyword
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_quest.core.tamper import KINDS, Finding, SubmittedFile, _Changes, find_tamper_signs

DOCS = Path(__file__).resolve().parents[3] / "docs" / "judge.md"

CASES: dict[str, list[str]] = {
    "internals": [
        "import coverage  # sign",
        "from pytest_quest.core import gate as g  # sign",
        "cov = __import__('cov' 'erage')  # sign",
        "import sys\nsys.modules['pytest_quest.core.gate'].judge = None  # sign",
        "import importlib\nimportlib.import_module('coverage').Coverage.current()  # sign",
        "import sys\nmeasured = 'coverage' in sys.modules  # sign",
        "import os\nos.environ['COVERAGE_PROCESS_START']  # sign",
        "data = open('.coverage.host.1234.x').read()  # sign",
        "def test_x(tmp_path):\n    data = (tmp_path / '.coverage').read_bytes()  # sign",
        "import json, pathlib\njson.loads(pathlib.Path('quest.json').read_text())  # sign",
        "import pytest\n\n@pytest.mark.no_cover  # sign\ndef test_x():\n    pass",
        "import sys\nforged = any(a.startswith('--quest-measure') for a in sys.argv)  # sign",
        "def test_x(monkeypatch):\n    monkeypatch.setattr('coverage.Coverage.stop', id)  # sign",
        "import pytest\npytest.importorskip('pytest_cov')  # sign",
        "def test_x(request):\n    request.config.option.quest_mutants = 'off'  # sign",
    ],
    "tracing": [
        "import sys\nsys.settrace(None)  # sign",
        "from sys import setprofile as sp  # sign\nsp(None)  # sign",
        "import sys\ngetattr(sys, 'settrace')(None)  # sign",
        "import threading\nthreading.settrace(print)  # sign",
        "import sys\nsys.monitoring.use_tool_id(3, 'x')  # sign",
        "measured = __import__('sys').gettrace() is not None  # sign",
        "import sys\nsys.addaudithook(print)  # sign",
        "exec('import sys\\nsys.settrace(None)')  # sign",
        "CODE = 'import sys; sys.setprofile(print)'\n\ndef test_x():\n    exec(CODE)  # sign",
        "import operator, sys\noperator.attrgetter('settrace')(sys)(None)  # sign",
        "import sys\ngetattr(sys, 'set' + 'trace')(None)  # sign",
        "from sys import *\nsettrace(None)  # sign",
    ],
    "code": [
        "def f(): pass\ndef g(): pass\nf.__code__ = g.__code__  # sign",
        "def f(x=1): pass\nsetattr(f, '__defaults__', (2,))  # sign",
        "def test_x(monkeypatch, fn):\n    monkeypatch.setattr(fn, '__kwdefaults__', {})  # sign",
        "def f(): pass\nrenamed = f.__code__.replace(co_name='other')  # sign",
        "import types\nclone = types.FunctionType(compile('1', 'f', 'eval'), {})  # sign",
        "from types import CodeType as C  # sign\nC  # sign",
        "def f(): pass\nclone = type(f.__code__)  # sign",
        "def f(): pass\nsaved = f.__code__  # sign",
        "def f(): pass\ndef g(): pass\nf.__code__, n = g.__code__, 1  # sign",
        "def test_x(monkeypatch):\n    monkeypatch.setattr('shop.cart.total.__code__', None)  # sign",
    ],
    "builtins": [
        "import builtins\nbuiltins.pytest_quest_changed = lambda v: v  # sign",
        "import builtins as b\nb.len = lambda x: 0  # sign",
        "__builtins__['abs'] = abs  # sign",
        "import builtins\nsetattr(builtins, 'print', print)  # sign",
        "import builtins\nvars(builtins).update(open=None)  # sign",
        "import builtins\ndef test_x(monkeypatch):\n    monkeypatch.setattr(builtins, 'pytest_quest_reached', id)  # sign",
        "import builtins\ndel builtins.pytest_quest_changed  # sign",
        "import sys\nsys.modules['builtins'].len = len  # sign",
    ],
    "atexit": [
        "import atexit\natexit.register(print)  # sign",
        "import atexit\n\n@atexit.register  # sign\ndef later():\n    pass",
        "from atexit import register as on_exit  # sign\non_exit(print)  # sign",
        "import os\nos.register_at_fork(after_in_child=print)  # sign",
        "import importlib\nimportlib.import_module('atexit').register(print)  # sign",
    ],
    "process": [
        "import subprocess\nsubprocess.Popen(['sleep', '9'], start_new_session=True)  # sign",
        "from os import setsid as x  # sign\nx()  # sign",
        "import os\npid = os.fork()  # sign",
        "import subprocess\nsubprocess.Popen(['nohup', 'python', 'flip.py'])  # sign",
        "import os\nos.system('python flip.py &')  # sign",
        "import os, subprocess\nsubprocess.run(['x'], preexec_fn=os.setpgrp)  # sign",
        "import os\nos.spawnl(os.P_NOWAIT, '/bin/sleep', 'sleep', '9')  # sign",
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import os; os.setsid()'])  # sign",
        "import os\nos.kill(os.getppid(), 9)  # sign",
        "import asyncio\nasyncio.create_subprocess_exec('x', process_group=0)  # sign",
        "import os\nos.__dict__['fork']()  # sign",
        "import os\nfork = eval('os.fork')  # sign",
        "import os as o\nfork = vars(o)['fork']  # sign",
        "with open('/proc/self/stat') as f:  # sign\n    parent = f.read().split()[3]",
        "import os\nline = open(f'/proc/{os.getpid()}/cmdline').read()  # sign",
        "from pathlib import Path\nstatus = Path('/proc') / 'self' / 'status'  # sign",
    ],
    "ratchet": [
        "import os\nos.link('quest.json', 'elsewhere')  # sign",
        "from pathlib import Path\nPath('quest.json').write_text('{}')  # sign",
        "def test_x(root):\n    ratchet = root / 'quest.json'\n    with open(ratchet, 'w') as f:  # sign\n        f.write('{}')",
        "import pytest\nfrom pathlib import Path\n\n@pytest.fixture\ndef state():\n"
        "    return Path('quest.json')\n\ndef test_x(state):\n    state.write_text('{}')  # sign",
        "from filelock import FileLock\nFileLock('quest.json.lock').acquire()  # sign",
        "import fcntl\nfcntl.flock(open('quest.json.lock', 'a'), fcntl.LOCK_EX)  # sign",
        "import shutil\nshutil.copy('forged.json', 'quest.json')  # sign",
        "import os\nos.replace('tmp.json', 'quest.json')  # sign",
        "def test_x(tmp_path, target):\n    (tmp_path / 'q').hardlink_to(target)  # sign",
        "import subprocess\nsubprocess.run(['cp', 'x', 'quest.json'])  # sign",
        "import subprocess, sys\nR = 'quest.json'\nsubprocess.run([sys.executable, 'w.py', str(R)])  # sign",
        "import os\nos.open('quest.json', os.O_WRONLY)  # sign",
        "open('quest' + '.json', 'w')  # sign",
    ],
    "heap": [
        "import gc\ngc.get_referrers(print)  # sign",
        "from gc import get_objects as objs  # sign\nfound = objs()  # sign",
        "import gc\ngc.callbacks.append(print)  # sign",
        "getattr(__import__('gc'), 'get_referents')(1)  # sign",
    ],
    "ctypes": [
        "import ctypes  # sign",
        "from ctypes import pythonapi  # sign",
        "c = __import__('ctypes')  # sign",
        "import importlib\nimportlib.import_module('_ctypes')  # sign",
    ],
    "frames": [
        "import sys\nsys._getframe(3)  # sign",
        "import inspect\nlocals_ = inspect.currentframe().f_back.f_locals  # sign",
        "import inspect\nframe = inspect.stack()[2]  # sign",
        "import sys\nf = sys._getframe  # sign\nf(2)  # sign",
        "import traceback\nlist(traceback.walk_stack(None))  # sign",
        "import sys\nsys._current_frames()  # sign",
    ],
    "config": [
        "def pytest_runtest_makereport(item, call):  # sign\n    pass",
        "import pytest\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_call(item):  # sign\n"
        "    return (yield)",
        "pytest_plugins = ['evil_plugin']  # sign",
        "def pytest_sessionfinish(session, exitstatus):  # sign\n    pass",
        "def test_x(request):\n    request.config.pluginmanager.register(object())  # sign",
        "def pytest_configure(config):  # sign\n    config.option.verbose = 2",
        "def test_x(request, r):\n    request.node.ihook.pytest_runtest_logreport(report=r)  # sign",
    ],
}

CONFIG_CASES: list[tuple[str, str]] = [
    ("pytest.ini", "[pytest]\naddopts = -p evil_plugin  # sign"),
    ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["-o", "quest_mutants=off"]  # sign'),
    ("setup.cfg", "[tool:pytest]\naddopts =\n    --cov-fail-under=0  # sign\n    -x  # sign"),
    ("tox.ini", "[pytest]\naddopts = -pno:quest  # sign"),
    ("pyproject.toml", '[tool.pytest.ini_options]\nquest_mutants = "off"  # sign'),
    (
        "pytest.toml",
        "[pytest]\naddopts = [\n  '-q',\n  '--deselect', 'tests/test_a.py::test_b',  # sign\n]",
    ),
    ("pytest.ini", "[pytest]\naddopts = -k 'not slow'  # sign\n    --lf  # sign"),
]

HONEST: dict[str, str] = {
    "fixtures": """
        import json
        import pytest

        @pytest.fixture(scope="module")
        def vocabulary():
            return ("red", "blue")

        @pytest.fixture
        def data_file(tmp_path):
            path = tmp_path / "data.json"
            path.write_text(json.dumps({"a": 1}))
            with open(tmp_path / "log.txt", "w") as log:
                log.write("x")
            yield path
            path.unlink()
        """,
    "monkeypatch": """
        import sys
        import shop

        def test_env(monkeypatch, tmp_path):
            monkeypatch.setenv("SHOP_CURRENCY", "EUR")
            monkeypatch.delenv("HOME", raising=False)
            monkeypatch.chdir(tmp_path)
            monkeypatch.setattr(shop, "fetch", lambda url: {"ok": True})
            monkeypatch.setattr("shop.cart.TAX", 0)
            monkeypatch.setattr("builtins.input", lambda _: "y")
            monkeypatch.setattr(sys, "argv", ["shop", "--verbose"])
            monkeypatch.setitem(shop.CONFIG, "debug", True)
            monkeypatch.syspath_prepend(str(tmp_path))
            assert shop.main() == 0
        """,
    "mocks": """
        import os
        import signal
        from unittest import mock
        from unittest.mock import MagicMock, patch

        def test_read():
            with mock.patch("builtins.open", mock.mock_open(read_data="x")):
                assert open("f").read() == "x"

        @patch("os.fork", return_value=0)
        @patch.object(signal, "alarm")
        def test_forking_code(alarm, fork, monkeypatch):
            monkeypatch.setattr(os, "setsid", MagicMock())
            client = MagicMock()
            client.get.return_value = 3
            assert client.get() == 3
        """,
    "signals": """
        import faulthandler
        import signal

        def test_cli_interrupt():
            old = signal.signal(signal.SIGINT, lambda number, frame: None)
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                assert signal.getsignal(signal.SIGINT) is not old
            finally:
                signal.signal(signal.SIGINT, old)
            faulthandler.dump_traceback_later(60)
        """,
    "hypothesis": """
        from hypothesis import example, given, settings, strategies as st

        @settings(max_examples=30, deadline=None)
        @given(st.integers(), st.lists(st.text()))
        @example(0, [])
        def test_props(x, items):
            assert abs(x) >= 0
            assert len(items) >= 0
        """,
    "subprocesses": """
        import signal
        import subprocess
        import sys

        def test_cli(tmp_path):
            done = subprocess.run(
                [sys.executable, "-m", "shop", "--help"], capture_output=True, text=True, check=True
            )
            assert "usage" in done.stdout
            subprocess.run("make build && echo ok 2>&1", shell=True, check=True)
            proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
            proc.send_signal(signal.SIGINT)
            proc.wait()
        """,
    "pytest_idioms": """
        import pytest
        from shop import parse

        pytestmark = pytest.mark.filterwarnings("error")

        @pytest.mark.parametrize("text, expected", [("1", 1), ("2", 2)])
        def test_parse(text, expected, capsys, caplog):
            assert parse(text) == expected
            with pytest.raises(ValueError, match="empty"):
                parse("")
            assert capsys.readouterr().out == ""

        @pytest.mark.skipif("sys.platform == 'win32'")
        @pytest.mark.xfail(strict=True)
        def test_known_bug():
            assert parse("x") == 0
        """,
    "conftest": """
        import pytest

        pytest_plugins = ["pytester"]

        def pytest_addoption(parser):
            parser.addoption("--runslow", action="store_true")

        def pytest_configure(config):
            config.addinivalue_line("markers", "slow: a slow test")

        def pytest_generate_tests(metafunc):
            if "n" in metafunc.fixturenames:
                metafunc.parametrize("n", [1, 2])

        def pytest_report_header(config):
            return "shop tests"

        def test_plugin(pytester):
            pytester.makeconftest("def pytest_runtest_setup(item):\\n    import sys; sys.settrace(None)")
            config = pytester.parseconfig()
            config.pluginmanager.register(object(), "mine")
        """,
    "introspection": """
        import gc
        import importlib
        import inspect
        import sys
        import threading
        import weakref

        import shop

        def test_names():
            assert sys._getframe(1).f_code.co_name.startswith("test")
            assert sys._getframe().f_lineno > 0
            assert shop.total.__code__.co_filename.endswith("shop.py")
            assert inspect.signature(shop.total).parameters
            assert "def total" in inspect.getsource(shop.total)
            gc.collect()
            ref = weakref.ref(shop)
            assert ref() is shop
            importlib.reload(importlib.import_module("shop.cart"))
            sys.modules.pop("shop.config", None)
            thread = threading.Thread(target=print, daemon=True)
            thread.start()
            thread.join()
            report = {"coverage": 93}
            assert report["coverage"] == 93, "code coverage is 93%"
        """,
    "unittest": """
        import shutil
        import unittest

        class ShopTest(unittest.TestCase):
            def setUp(self):
                self.folder = self.enterContext(tempfile_dir())

            def test_copy(self):
                shutil.copy("a.txt", self.folder)
                self.assertEqual(1, 1)
        """,
}

HONEST_CONFIG: list[tuple[str, str]] = [
    (
        "pyproject.toml",
        "[tool.pytest.ini_options]\naddopts = \"-ra -q --strict-markers -p no:cacheprovider -m 'not slow'\"\n"
        'testpaths = ["tests"]\nmarkers = ["slow: slow tests"]\nfilterwarnings = ["error"]\n'
        '[tool.coverage.run]\nbranch = true\n[tool.other]\naddopts = "-x"\n',
    ),
    (
        "setup.cfg",
        "[tool:pytest]\naddopts = --doctest-modules -p pytester\n[flake8]\nmax-line-length = 99\n",
    ),
    ("tox.ini", "[testenv]\ncommands = pytest -x --cov\n[pytest]\nxfail_strict = true\n"),
]


def run(
    code: str,
    path: str = "tests/test_x.py",
    *,
    own_packages: tuple[str, ...] = (),
    ratchet_name: str = "quest.json",
    coverage_data_name: str | None = None,  # None: the API's default
) -> list[Finding]:
    files = [SubmittedFile(path, textwrap.dedent(code))]
    if coverage_data_name is None:
        return find_tamper_signs(files, own_packages=own_packages, ratchet_name=ratchet_name)
    return find_tamper_signs(
        files,
        own_packages=own_packages,
        ratchet_name=ratchet_name,
        coverage_data_name=coverage_data_name,
    )


def marked(code: str) -> set[int]:
    return {number for number, line in enumerate(code.splitlines(), 1) if "# sign" in line}


@pytest.mark.parametrize(
    "kind, code",
    [(kind, code) for kind, codes in CASES.items() for code in codes],
    ids=[f"{kind}-{index}" for kind, codes in CASES.items() for index in range(len(codes))],
)
def test_every_kind_is_found_at_its_lines(kind: str, code: str) -> None:
    found = run(code)
    assert {finding.line for finding in found if finding.kind == kind} == marked(code), found


@pytest.mark.parametrize(
    "name, text", CONFIG_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIG_CASES)]
)
def test_configuration_that_changes_the_run_is_found(name: str, text: str) -> None:
    found = run(text.replace("  # sign", ""), path=name)
    assert {finding.line for finding in found} == marked(text), found
    assert {finding.kind for finding in found} == {"config"}


def test_each_kind_has_at_least_three_variants() -> None:
    assert set(CASES) | {"unjudged"} == set(KINDS)
    assert all(len(codes) >= 3 for codes in CASES.values())


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_test_code_has_no_sign(name: str) -> None:
    assert run(HONEST[name]) == []


@pytest.mark.parametrize("name, text", HONEST_CONFIG, ids=[name for name, _ in HONEST_CONFIG])
def test_honest_configuration_has_no_sign(name: str, text: str) -> None:
    assert run(text, path=name) == []


def test_a_finding_is_a_review_fact_naming_file_line_and_construct() -> None:
    [finding] = run("import atexit\natexit.register(print, 0.5)\n")
    fact = finding.fact()
    assert (fact.check, fact.field) == ("tamper.atexit", "tests/test_x.py:2")
    assert fact.actual == "atexit.register(print, 0.5)"
    assert fact.text().startswith(
        "tests/test_x.py:2: tamper sign (atexit): `atexit.register(print, 0.5)`"
    )


def test_unparseable_and_unknown_files_give_nothing() -> None:
    assert run("import atexit\natexit.register(1\n") == []
    assert run("import ctypes\n", path="README.md") == []


def test_a_file_too_deep_to_walk_is_not_passed_as_clean() -> None:
    deep = "x = " + " + ".join(["'a'"] * 600) + "\nimport atexit\natexit.register(print)\n"
    [finding] = run(deep)
    assert (finding.kind, finding.line) == ("unjudged", 1)


def test_only_added_or_changed_lines_are_judged() -> None:
    before = "import atexit\n\ndef pytest_runtest_setup(item):\n    pass\n\natexit.register(print)\n"
    added_test = before + "\ndef test_new():\n    assert True\n"
    assert find_tamper_signs([SubmittedFile("tests/conftest.py", added_test, before)]) == []
    # A line of the existing hook changed: the hook is judged; the alias from an
    # unchanged line is still resolved on a new one.
    changed = before.replace("    pass", "    item.add_marker('x')") + "atexit.unregister(print)\n"
    found = find_tamper_signs([SubmittedFile("tests/conftest.py", changed, before)])
    assert [(finding.kind, finding.line) for finding in found] == [("config", 3), ("atexit", 7)]


def test_a_line_deleted_inside_a_hook_changes_the_hook() -> None:
    before = "def pytest_runtest_call(item):\n    check(item)\n    item.runtest()\n"
    after = "def pytest_runtest_call(item):\n    item.runtest()\n"
    [finding] = find_tamper_signs([SubmittedFile("tests/conftest.py", after, before)])
    assert (finding.kind, finding.line) == ("config", 1)


def test_configuration_lines_already_there_are_not_judged() -> None:
    before = '[tool.pytest.ini_options]\naddopts = ["-p", "xdist", "-x"]\n'
    after = before + 'testpaths = ["tests"]\n'
    assert find_tamper_signs([SubmittedFile("pyproject.toml", after, before)]) == []


def test_the_project_under_test_may_import_itself() -> None:
    code = "import pytest_quest\nimport coverage\nPath('quest.json').write_text('{}')\n"
    own = run(code, own_packages=("pytest_quest",))
    assert [(finding.kind, finding.line) for finding in own] == [("internals", 2)]
    assert run("import os\nos.link(a, b)\n", own_packages=("pytest_quest",))[0].kind == "ratchet"


def test_file_names_follow_the_configuration() -> None:
    code = "open('state.json', 'a')\nopen('quest.json', 'a')\nopen('cov.data')\n"
    found = run(code, ratchet_name="state.json", coverage_data_name="cov.data")
    assert [(finding.kind, finding.line) for finding in found] == [("ratchet", 1), ("internals", 3)]


def test_pytest_plugins_naming_submitted_modules_is_no_sign() -> None:
    files = [
        SubmittedFile("tests/conftest.py", "pytest_plugins = ['tests.helpers', 'other']\n"),
        SubmittedFile("tests/helpers.py", "import pytest\n"),
    ]
    [finding] = find_tamper_signs(files)
    assert finding.construct == "pytest_plugins: 'other'"


def test_every_kind_is_documented() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    section = docs[docs.index("## Tamper signs") :]
    assert all(f"`tamper.{kind}`" in section for kind in KINDS)


# -- properties ------------------------------------------------------------------------------

ALL_CODE = [code for codes in CASES.values() for code in codes] + list(HONEST.values())
TAMPER = [(kind, code) for kind, codes in CASES.items() for code in codes]


@given(st.sampled_from(ALL_CODE))
def test_a_file_that_did_not_change_has_no_finding(code: str) -> None:
    text = textwrap.dedent(code)
    assert find_tamper_signs([SubmittedFile("tests/test_x.py", text, text)]) == []


@given(st.sampled_from(sorted(HONEST)), st.sampled_from(TAMPER), st.data())
def test_a_sign_added_to_honest_code_is_found_on_the_added_lines(
    honest: str, case: tuple[str, str], data: st.DataObject
) -> None:
    before = textwrap.dedent(HONEST[honest]).strip("\n") + "\n"
    lines = before.splitlines(keepends=True)
    starts = [0, len(lines)] + [
        min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        for node in ast.parse(before).body
    ]
    at = data.draw(st.sampled_from(starts))
    kind, code = case
    snippet = code.replace("# sign", "") + "\n"
    after = "".join(lines[:at]) + snippet + "".join(lines[at:])
    found = find_tamper_signs([SubmittedFile("tests/test_x.py", after, before)])
    added = range(at + 1, at + 1 + snippet.count("\n"))
    assert kind in {finding.kind for finding in found}
    assert all(finding.line in added for finding in found), found


@given(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
        lambda name: not keyword.iskeyword(name) and name not in {"atexit", "register"}
    )
)
def test_any_alias_of_a_module_is_resolved(alias: str) -> None:
    code = f"import atexit as {alias}\nfrom atexit import register as {alias}_t\n{alias}.unregister(print)\n{alias}_t(print)\n"
    found = run(code)
    assert [(finding.kind, finding.line) for finding in found] == [
        ("atexit", 2),
        ("atexit", 3),
        ("atexit", 4),
    ]


@given(
    st.lists(st.sampled_from("abcde"), max_size=12),
    st.lists(st.sampled_from("abcdef"), max_size=12),
)
def test_lines_not_marked_changed_are_the_previous_lines_in_order(
    old: list[str], new: list[str]
) -> None:
    changes = _Changes("\n".join(new), "\n".join(old))
    kept = iter(old)
    # What is left unmarked is a subsequence of the previous text...
    assert all(
        any(line == before for before in kept)
        for number, line in enumerate(new, 1)
        if number not in changes.lines
    )
    # ...and a line the previous text never had is always marked.
    assert all(number in changes.lines for number, line in enumerate(new, 1) if line not in old)
