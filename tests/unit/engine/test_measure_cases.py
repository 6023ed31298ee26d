"""engine/measure.py's settings: the C tracer found, and the coverage settings that shape a
measurement, as plain values with paths under the rootdir made relative."""

from __future__ import annotations

from pathlib import Path

import coverage

from pytest_quest.engine.measure import CONFIG_SETTINGS, _has_ctracer, _portable, coverage_settings


def test_the_c_tracer_is_there() -> None:
    assert _has_ctracer() is True


def _coverage(tmp_path: Path) -> coverage.Coverage:
    cov = coverage.Coverage(
        data_file=str(tmp_path / ".cov"),
        config_file=False,
        branch=True,
        source=[str(tmp_path / "src"), "pkg"],
        omit=["*/skip/*"],
        messages=False,
    )
    cov.set_option("report:exclude_lines", ["pragma: no cover", "if TYPE_CHECKING:"])
    cov.set_option("run:include", (str(tmp_path.parent / "elsewhere"),))
    return cov


def test_coverage_settings_relative_to_the_rootdir(tmp_path: Path) -> None:
    settings = coverage_settings(_coverage(tmp_path), tmp_path)
    assert list(settings) == [f"{section}:{name}" for section, name in CONFIG_SETTINGS]
    assert settings["run:source"] == ["src", "pkg"]
    assert settings["run:include"] == [str(tmp_path.parent / "elsewhere")]
    assert settings["run:omit"] == ["*/skip/*"]
    assert settings["run:branch"] is True
    assert settings["run:dynamic_context"] is None
    assert settings["report:exclude_lines"] == ["pragma: no cover", "if TYPE_CHECKING:"]


def test_coverage_settings_without_a_rootdir_keep_absolute_paths(tmp_path: Path) -> None:
    settings = coverage_settings(_coverage(tmp_path))
    assert settings["run:source"] == [str(tmp_path / "src"), "pkg"]
    assert settings["run:branch"] is True


def test_portable() -> None:
    root = Path("/p/project")
    assert _portable("/p/project/src", root) == "src"
    assert _portable("/p/project", root) == "."
    assert _portable("/p/other", root) == "/p/other"
    assert _portable("/p", root) == "/p"
    assert _portable("src", root) == "src"
    assert _portable(7, root) == 7
    assert _portable("/p/project/src", None) == "/p/project/src"
