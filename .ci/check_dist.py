"""Check the built wheel and sdist hold what a user of the package needs.

    python .ci/check_dist.py DIST_FOLDER

Fails (exit 1, one line per problem) unless the folder holds exactly one wheel
and one sdist of pytest-quest, and:
  * both hold LICENSE and pytest_quest/py.typed;
  * the wheel registers the pytest11 entry point and its metadata declares
    the MIT licence, the Pytest framework and the README as its description;
  * every module of pytest_quest/ in the sdist is in the wheel.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path


def main(folder: Path) -> list[str]:
    problems: list[str] = []
    wheels = sorted(folder.glob("pytest_quest-*.whl"))
    sdists = sorted(folder.glob("pytest_quest-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"{folder}: expected one wheel and one sdist, found {wheels + sdists}"]
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode("utf-8"))
        entry_points = wheel.read(f"{info}/entry_points.txt").decode("utf-8")
    for needed in (f"{info}/licenses/LICENSE", "pytest_quest/py.typed"):
        if needed not in names:
            problems.append(f"{wheels[0].name}: {needed} is missing")
    if "quest = pytest_quest.plugin.hooks" not in entry_points:
        problems.append(f"{wheels[0].name}: no pytest11 entry point 'quest'")
    if metadata.get("License-Expression") != "MIT":
        problems.append(
            f"{wheels[0].name}: License-Expression is {metadata.get('License-Expression')!r}"
        )
    if "Framework :: Pytest" not in metadata.get_all("Classifier", []):
        problems.append(f"{wheels[0].name}: no 'Framework :: Pytest' classifier")
    if metadata.get("Description-Content-Type") != "text/markdown":
        problems.append(f"{wheels[0].name}: the README is not the markdown description")
    with tarfile.open(sdists[0]) as sdist:
        members = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for needed in ("LICENSE", "pytest_quest/py.typed", "pyproject.toml", "README.md"):
        if needed not in members:
            problems.append(f"{sdists[0].name}: {needed} is missing")
    modules = {m for m in members if m.startswith("pytest_quest/") and m.endswith(".py")}
    for module in sorted(modules - names):
        problems.append(f"{wheels[0].name}: {module} is in the sdist but not in the wheel")
    return problems


if __name__ == "__main__":
    found = main(Path(sys.argv[1]))
    for problem in found:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not found:
        print(
            "check_dist: wheel and sdist hold LICENSE, py.typed, the entry point and every module"
        )
    sys.exit(1 if found else 0)
