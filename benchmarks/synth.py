"""A deterministic synthetic project for the performance benchmark.

``generate(root, functions=2000, tests=5000, seed=0)`` writes a package
``synthpkg`` (modules of plain functions, classes with methods, nested
functions, generators) and a test suite that calls them with arguments
drawn from a seeded random generator.  The expected values in the tests are
computed here by executing the generated code, so every test passes, and the
arguments leave a realistic mix of functions fully covered, partly covered
(a branch or an ``except`` never taken) and never called.  Same arguments,
same bytes: the benchmark can compare runs across machines and Pythons.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import Any

FUNCTIONS_PER_MODULE = 20

# Each template is one function region (or more, for classes and nested
# functions); "{n}" is the function's number, "{k1}".."{k3}" small constants.
TEMPLATES: list[tuple[str, int]] = [
    (
        """
        def f{n}(a, b):
            if a > {k1}:
                x = a - b
            elif a < -{k2}:
                x = a + b
            else:
                x = a * 2
            if b % 2 == 0:
                x += 1
            return x
        """,
        1,
    ),
    (
        """
        def f{n}(a, b):
            total = 0
            for i in range(abs(a) % {k3} + 5):
                if i % 3 == 0:
                    total += i
                else:
                    total -= b
            return total
        """,
        1,
    ),
    (
        """
        def f{n}(a, b):
            n = abs(a) + 1
            steps = 0
            while n != 1 and steps < {k3}:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps + b
        """,
        1,
    ),
    (
        """
        def f{n}(a, b):
            try:
                r = a // (b - {k1})
            except ZeroDivisionError:
                return None
            return r
        """,
        1,
    ),
    (
        """
        def f{n}(a, b):
            def scale(v):
                return v * {k1} if v % 2 else v
            return sum(scale(v) for v in range(abs(a) % {k3} + 3) if v != b)
        """,
        2,
    ),
    (
        """
        def f{n}(a, b):
            s = str(abs(a)) * (abs(b) % 4 + 1)
            out = []
            for ch in s:
                if ch in "13579":
                    out.append(ch)
                elif ch == "0":
                    continue
                else:
                    out.append(ch * 2)
            return "".join(out)
        """,
        1,
    ),
    (
        """
        class C{n}:
            def __init__(self, a):
                self.a = a

            def grow(self, b):
                if b > {k1}:
                    self.a += b
                else:
                    self.a -= 1
                return self.a

            @property
            def double(self):
                return self.a * 2
        """,
        3,
    ),
    (
        """
        def f{n}(a, b):
            def gen():
                for v in range(abs(a) % {k3} + 2):
                    if v > b:
                        yield v
                    else:
                        yield -v
            return [v for v in gen() if v % 2 == 0]
        """,
        2,
    ),
    (
        """
        def f{n}(a, b):
            data = {{"a": a, "b": b}}
            keys = sorted(data)
            if not keys:
                raise ValueError("empty")
            return len(keys) + (a if a > b else b)
        """,
        1,
    ),
]


def _render(template: str, n: int, rng: random.Random) -> str:
    return textwrap.dedent(template).format(
        n=n, k1=rng.randint(1, 20), k2=rng.randint(1, 20), k3=rng.randint(10, 60)
    )


def _call_expression(name: str, is_class: bool, a: object, b: object) -> str:
    if is_class:
        return f"m.{name}({a}).grow({b})"
    return f"m.{name}({a}, {b})"


def generate(root: Path, functions: int = 2000, tests: int = 5000, seed: int = 0) -> dict[str, Any]:
    """Write the project under `root`; return counts of what was written.

    `functions` counts function regions (a method, a nested function and a
    property each count), as pytest-quest counts quests.
    """
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    package = root / "synthpkg"
    test_dir = root / "tests"
    package.mkdir(exist_ok=True)
    test_dir.mkdir(exist_ok=True)
    (package / "__init__.py").write_text('"""Synthetic package for benchmarks."""\n')
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'synthpkg'\nversion = '0'\n\n"
        "[tool.pytest.ini_options]\ntestpaths = ['tests']\nquest_source = ['synthpkg']\n"
    )
    modules: list[list[tuple[str, bool, int]]] = []  # per module: (name, is_class, regions)
    made = 0
    number = 0
    while made < functions:
        entries: list[tuple[str, bool, int]] = []
        chunks = []
        while len(entries) < FUNCTIONS_PER_MODULE and made < functions:
            template, regions = TEMPLATES[rng.randrange(len(TEMPLATES))]
            if made + regions > functions:
                template, regions = TEMPLATES[0]
            chunks.append(_render(template, number, rng))
            is_class = template.lstrip().startswith("class")
            entries.append((f"C{number}" if is_class else f"f{number}", is_class, regions))
            made += regions
            number += 1
        index = len(modules)
        (package / f"mod{index:03d}.py").write_text(
            f'"""Synthetic module {index}."""\n\n' + "\n\n".join(chunks)
        )
        modules.append(entries)

    # Compute expected values by running the generated code.
    namespaces = []
    for index in range(len(modules)):
        namespace: dict[str, Any] = {}
        source = (package / f"mod{index:03d}.py").read_text()
        exec(compile(source, f"mod{index:03d}.py", "exec"), namespace)
        namespaces.append(namespace)

    # About 1 in 10 callables is never called by any test; the rest share
    # the tests, each called with a few argument pairs.
    callables = [
        (m, name, is_class) for m, entries in enumerate(modules) for name, is_class, _ in entries
    ]
    called = [c for c in callables if rng.random() >= 0.1]
    per_module: dict[int, list[str]] = {m: [] for m in range(len(modules))}
    written = 0
    parametrized = 0
    while written < tests:
        m, name, is_class = (
            called[written % len(called)] if written < len(called) else rng.choice(called)
        )
        namespace = namespaces[m]
        kind = rng.random()
        if kind < 0.15 and tests - written >= 4:
            cases = [(rng.randint(-30, 30), rng.randint(-10, 10)) for _ in range(4)]
            lines = [
                "@pytest.mark.parametrize(('a', 'b', 'expected'), ["
                + ", ".join(
                    f"({a}, {b}, {_expected(namespace, name, is_class, a, b)!r})" for a, b in cases
                )
                + "])",
                f"def test_{name}_cases_{written}(a, b, expected):",
                f"    assert {_call_expression(name, is_class, 'a', 'b')} == expected",
            ]
            written += 4
            parametrized += 4
        elif kind < 0.16:
            lines = [
                "@pytest.mark.skip(reason='synthetic skip')",
                f"def test_{name}_skipped_{written}():",
                f"    {_call_expression(name, is_class, 1, 1)}",
            ]
            written += 1
        else:
            a, b = rng.randint(-30, 30), rng.randint(-10, 10)
            expected = _expected(namespace, name, is_class, a, b)
            lines = [
                f"def test_{name}_{written}():",
                f"    assert {_call_expression(name, is_class, a, b)} == {expected!r}",
            ]
            written += 1
        per_module[m].append("\n".join(lines))
    for m, bodies in per_module.items():
        if not bodies:
            continue
        header = f"import pytest\n\nimport synthpkg.mod{m:03d} as m\n\n\n"
        (test_dir / f"test_mod{m:03d}.py").write_text(header + "\n\n\n".join(bodies) + "\n")
    return {
        "modules": len(modules),
        "functions": made,
        "tests": written,
        "parametrized": parametrized,
        "callables": len(callables),
        "never_called": len(callables) - len(called),
    }


def _expected(namespace: dict[str, Any], name: str, is_class: bool, a: int, b: int) -> Any:
    if is_class:
        return namespace[name](a).grow(b)
    return namespace[name](a, b)


if __name__ == "__main__":
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/_work/synth")
    print(generate(target))
