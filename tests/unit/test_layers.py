"""The package's layers: every import points one way, and there is no cycle.

Layer order, lowest first: core < engine < verify < report < app < plugin < mcp
(docs/architecture.md). A module may import its own layer or a lower one.
`mcp` (the MCP server, an entry point of its own) sits on top: nothing imports
it, it imports no pytest, and only it imports the MCP SDK.
Imports inside functions count too: hiding one there does not make it right.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_quest"
LAYERS = ("core", "engine", "verify", "report", "app", "plugin", "mcp")
# Third-party packages a layer may not import at all (stdlib and the package
# itself are always fine for the layers above core).
FORBIDDEN_ANYWHERE = {
    "core": None,  # None: stdlib only
    "verify": {"pytest", "_pytest", "coverage", "rich", "pluggy"},
    "report": {"pytest", "_pytest", "coverage"},
    "app": {"pytest", "_pytest"},
    # The MCP server runs pytest in child processes; it never loads it (nor the plugin).
    "mcp": {"pytest", "_pytest"},
}
# Third-party packages only one layer may import: the optional MCP SDK.
ONLY_IN = {"mcp": "mcp", "mcp_types": "mcp"}
# Standard modules that do I/O: the core computes with values, engine/ talks to the world.
CORE_IO_MODULES = {
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
    "os",
    "io",
    "multiprocessing",
    "threading",
    "asyncio",
    "select",
    "selectors",
    "fcntl",
    "sqlite3",
    "pty",
    "urllib",
    "http",
    "ssl",
    "ctypes",
    "mmap",
    "filelock",
}
# Calls that write or start something, however the module was reached.
CORE_IO_CALLS = {
    "write_text",
    "write_bytes",
    "mkdir",
    "unlink",
    "rmdir",
    "touch",
    "symlink_to",
    "Popen",
    "killpg",
    "execv",
    "execve",
    "fork",
}
# Not at module level: engine code runs in processes that must start fast and
# must not need pytest to be importable (a child process imports it itself).
FORBIDDEN_AT_IMPORT = {"engine": {"pytest", "_pytest"}}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted
    line: int
    in_function: bool
    typing_only: bool = False  # under `if TYPE_CHECKING:`: never run, but still a dependency
    dynamic: bool = False  # `importlib.import_module(...)`, `__import__(...)`


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    function_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    function_lines.add(inner.lineno)
    type_checking_lines = _type_checking_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (target := _dynamic_import(node)) is not None:
            yield Import(name, target, node.lineno, node.lineno in function_lines, dynamic=True)
            continue
        if node.__class__ not in (ast.Import, ast.ImportFrom):
            continue
        typing_only = node.lineno in type_checking_lines
        in_function = node.lineno in function_lines
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno, in_function, typing_only)
            continue
        assert isinstance(node, ast.ImportFrom)
        base = node.module or ""
        if node.level:
            anchor = name.split(".") if is_package else name.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            # `from pkg import mod` imports the module pkg.mod when there is one.
            candidate = f"{base}.{alias.name}"
            target = candidate if _is_module(candidate, root) else base
            yield Import(name, target, node.lineno, in_function, typing_only)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines of imports that only a type checker runs: the body of ``if TYPE_CHECKING:``.

    Only that exact test counts (``if not TYPE_CHECKING:`` runs its body; an
    ``else:`` runs too), so an import cannot hide behind a test that mentions the name.
    """
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for statement in node.body:
                for inner in ast.walk(statement):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        lines.add(inner.lineno)
    return lines


# Calls that import a module named by a value: `importlib.import_module("x")`, `__import__("x")`.
_DYNAMIC_IMPORTS = (
    "importlib.import_module",
    "import_module",
    "__import__",
    "importlib.__import__",
)


def _dynamic_import(call: ast.Call) -> str | None:
    """The module a dynamic import call names (`?` when not a literal), or None for another call."""
    if ast.unparse(call.func) not in _DYNAMIC_IMPORTS:
        return None
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return "?"


def _is_module(dotted: str, root: Path) -> bool:
    if not dotted.startswith(root.name + "."):
        return False
    rel = Path(*dotted.split(".")[1:])
    return (root / rel).with_suffix(".py").exists() or (root / rel / "__init__.py").exists()


def layer_of(dotted: str, root_name: str) -> str | None:
    parts = dotted.split(".")
    if parts[0] != root_name or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def all_imports(root: Path) -> list[Import]:
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        found.extend(imports_of(path, root))
    return found


#: Modules that import the project's code under test by a name the judge computed (no
#: module of pytest-quest): the clean witness search's process.
IMPORTS_THE_CODE_UNDER_TEST = frozenset({"pytest_quest.engine.clean_child"})


def violations(root: Path) -> list[str]:
    """Every import against the layer order or a layer's third-party rule."""
    problems: list[str] = []
    stdlib = set(sys.stdlib_module_names)
    for imp in all_imports(root):
        source_layer = layer_of(imp.module, root.name)
        top = imp.target.split(".")[0]
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        if imp.target == "?":
            if imp.module != root.name and imp.module not in IMPORTS_THE_CODE_UNDER_TEST:
                # the package __init__'s lazy names: test_the_lazy_names_...
                problems.append(
                    f"{imp.module}:{imp.line}: a module imported by a name made at run time"
                )
            continue
        if imp.module == root.name:
            # The package's __init__ runs before any of its modules: keep it to the bottom layers.
            target_layer = layer_of(imp.target, root.name)
            if target_layer not in (None, "core", "engine"):
                problems.append(f"{where}: the package __init__ may import only core and engine")
            continue
        if source_layer is None:
            continue
        if top == root.name:
            target_layer = layer_of(imp.target, root.name)
            if target_layer is None:
                if imp.target != root.name:
                    problems.append(f"{where}: module outside the layers")
                continue
            if LAYERS.index(target_layer) > LAYERS.index(source_layer):
                problems.append(
                    f"{where}: {source_layer} may not import {target_layer} (a higher layer)"
                )
            continue
        if top in ONLY_IN and source_layer != ONLY_IN[top]:
            problems.append(f"{where}: only the {ONLY_IN[top]} layer may import {top}")
        if imp.typing_only:
            continue  # a name for the type checker: the layer order holds, the third-party rules do not
        if source_layer in FORBIDDEN_ANYWHERE:
            banned = FORBIDDEN_ANYWHERE[source_layer]
            if (banned is None and top not in stdlib and top != "__future__") or (
                banned is not None and top in banned
            ):
                problems.append(f"{where}: {source_layer} may not import {top}")
        if not imp.in_function and top in FORBIDDEN_AT_IMPORT.get(source_layer, set()):
            problems.append(f"{where}: {source_layer} may not import {top} at module level")
        if source_layer == "core" and top in CORE_IO_MODULES:
            problems.append(f"{where}: core is pure: {top} does I/O (engine/ is its place)")
    return problems + io_calls_in_core(root)


def io_calls_in_core(root: Path) -> list[str]:
    """Calls in core/ that write files or start processes, whatever module they came from."""
    problems = []
    for path in sorted((root / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            name = called.rsplit(".", 1)[-1]
            if name in CORE_IO_CALLS or (called == "open" and _opens_for_writing(node)):
                rel = path.relative_to(root.parent)
                problems.append(
                    f"{rel}:{node.lineno} calls {called}: core is pure (engine/ is its place)"
                )
    return problems


def _opens_for_writing(call: ast.Call) -> bool:
    modes = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(
        not (
            isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) <= set("rbt")
        )
        for m in modes
    )


def cycles(root: Path) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for imp in all_imports(root):
        if imp.target.startswith(root.name + ".") and imp.target != imp.module:
            graph.setdefault(imp.module, set()).add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_imports_follow_the_layer_order() -> None:
    assert violations(PACKAGE) == []


def test_no_import_cycle() -> None:
    assert cycles(PACKAGE) == []


def outside_the_layers(root: Path) -> list[str]:
    """Modules that belong to no layer: at the package root (but its `__init__`) or in another folder."""
    outside = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] not in LAYERS and rel != Path("__init__.py"):
            outside.append(rel.as_posix())
    return outside


# The longest a function may be, in lines from its `def` to its last line,
# docstring and comments included: one screen. A module is as long as its one
# idea; a function longer than a screen hides several, which the reader then
# holds in their head at once. Branching is limited apart, by ruff's C901
# (a complexity of 15, [tool.ruff.lint.mccabe] in pyproject.toml).
FUNCTION_LINES = 80


def long_functions(root: Path, limit: int = FUNCTION_LINES) -> list[str]:
    """Functions of more than `limit` lines, as `path:line name (N lines)`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    rel = path.relative_to(root).as_posix()
                    found.append(f"{rel}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_every_module_is_in_a_layer() -> None:
    assert outside_the_layers(PACKAGE) == []


def test_no_function_is_longer_than_the_limit() -> None:
    assert long_functions(PACKAGE) == []


def test_the_length_check_bites(tmp_path: Path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(FUNCTION_LINES))
    root = _package(tmp_path, {"core/long.py": f"def short():\n    pass\n\n\ndef long():\n{body}"})
    assert long_functions(root) == [f"core/long.py:5 long ({FUNCTION_LINES + 1} lines)"]


def test_the_core_imports_no_third_party_package() -> None:
    code = (
        "import sys\n"
        "import pytest_quest.core.gate, pytest_quest.core.states, pytest_quest.core.ratchet\n"
        "bad = sorted(m for m in ('pytest', '_pytest', 'coverage', 'rich', 'pluggy') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    # Without this run's coverage.py, which a measured suite hands to every
    # Python it starts (`patch = subprocess`).
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    assert out.stdout.strip() == ""


# -- the checker bites: forbidden imports added by hand are caught --------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pytest_quest"
    for layer in LAYERS:
        (root / layer).mkdir(parents=True, exist_ok=True)
        (root / layer / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"core/gate.py": "from pytest_quest.engine import store\n", "engine/store.py": ""},
            "core may not import engine",
        ),
        (
            {
                "core/gate.py": "def f():\n    from pytest_quest.plugin import hooks\n",
                "plugin/hooks.py": "",
            },
            "core may not import plugin",
        ),
        ({"core/gate.py": "import pytest\n"}, "core may not import pytest"),
        ({"core/gate.py": "def f():\n    import coverage\n"}, "core may not import coverage"),
        ({"engine/store.py": "import pytest\n"}, "engine may not import pytest at module level"),
        ({"app/scan.py": "def f():\n    import pytest\n"}, "app may not import pytest"),
        (
            {"verify/vote.py": "from ..app import scan\n", "app/scan.py": ""},
            "verify may not import app",
        ),
        (
            {"report/text.py": "from pytest_quest.plugin.hooks import x\n", "plugin/hooks.py": ""},
            "report may not import plugin",
        ),
        (
            {"plugin/hooks.py": "from pytest_quest.mcp import server\n", "mcp/server.py": ""},
            "plugin may not import mcp",
        ),
        ({"app/next.py": "def f():\n    import mcp\n"}, "only the mcp layer may import mcp"),
        ({"mcp/server.py": "import pytest\n"}, "mcp may not import pytest"),
        # An import the type checker never sees is still run: only `if TYPE_CHECKING:`'s body is typing.
        (
            {
                "core/gate.py": "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n"
                "    from pytest_quest.engine import store\n",
                "engine/store.py": "",
            },
            "core may not import engine",
        ),
        (
            {
                "core/gate.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
                "    import pytest\n"
            },
            "core may not import pytest",
        ),
        # Dynamic imports count as imports.
        (
            {
                "core/gate.py": "import importlib\nengine = importlib.import_module('pytest_quest.engine.store')\n",
                "engine/store.py": "",
            },
            "imports pytest_quest.engine.store: core may not import engine",
        ),
        (
            {"app/scan.py": "def f():\n    return __import__('pytest')\n"},
            "app may not import pytest",
        ),
        (
            {"app/scan.py": "import importlib\ndef f(n):\n    return importlib.import_module(n)\n"},
            "a module imported by a name made at run time",
        ),
        # The core does no I/O, whichever standard module would do it.
        (
            {"core/gate.py": "import subprocess\nsubprocess.run(['true'])\n"},
            "core is pure: subprocess",
        ),
        ({"core/gate.py": "import socket\n"}, "core is pure: socket"),
        (
            {"core/gate.py": "def f(p):\n    p.write_text('x')\n"},
            "calls p.write_text: core is pure",
        ),
        ({"core/gate.py": "def f(p):\n    open(p, 'w').write('x')\n"}, "calls open: core is pure"),
    ],
)
def test_the_checker_catches_a_forbidden_import(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    found = violations(_package(tmp_path, files))
    assert any(expected in problem for problem in found), found


def test_the_checker_allows_imports_down_the_layers(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/model.py": "import dataclasses\n",
            "engine/store.py": "import filelock\nfrom pytest_quest.core import model\n",
            "app/scan.py": "from ..engine import store\nfrom . import helpers\n",
            "app/helpers.py": "",
            "plugin/hooks.py": "import pytest\nfrom pytest_quest.app import scan\n",
        },
    )
    assert violations(root) == []


def test_the_checker_lets_the_core_read_files_it_is_handed(tmp_path: Path) -> None:
    root = _package(
        tmp_path, {"core/gate.py": "def f(p):\n    return open(p).read() + open(p, 'rb').read()\n"}
    )
    assert violations(root) == []


def test_the_checker_finds_a_cycle_through_type_checking(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "plugin/a.py": "from pytest_quest.plugin import b\n",
            "plugin/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_quest.plugin import a\n",
        },
    )
    assert cycles(root) == [["pytest_quest.plugin.a", "pytest_quest.plugin.b"]]


def test_the_checker_finds_a_module_outside_the_layers(tmp_path: Path) -> None:
    root = _package(tmp_path, {})
    (root / "helpers.py").write_text("")
    assert outside_the_layers(root) == ["helpers.py"]


def test_the_lazy_names_of_the_package_come_from_core_and_engine() -> None:
    import pytest_quest

    homes = vars(pytest_quest)["_HOMES"]
    assert homes and all(home.split(".")[0] in ("core", "engine") for home in homes.values())
    for name in homes:
        assert getattr(pytest_quest, name) is not None


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/a.py": "from pytest_quest.core import b\n",
            "core/b.py": "def f():\n    from pytest_quest.core import a\n",
        },
    )
    assert cycles(root) == [["pytest_quest.core.a", "pytest_quest.core.b"]]
