"""Shards on disk: write one job's coverage data and manifest, read them back, merge the data.

The data goes through coverage.py's own machinery: ``CoverageData.update``
with a `map_path` makes the paths relative to the rootdir on the way out
(a shard is portable to another checkout folder) and absolute under the
combining rootdir on the way in; contexts (the fold's passing union, its
per-test rows, each test's own context) merge by name.  What the shards
mean together is core/shard.py's.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_quest.core.errors import MeasurementError, QuestError, QuestUsageError
from pytest_quest.core.shard import DATA, MANIFEST, Shard, digest_bytes, manifest_of, read_manifest
from pytest_quest.engine.codec import strict_parse
from pytest_quest.engine.measure import Measurer, quiet_coverage
from pytest_quest.engine.source import relpath
from pytest_quest.engine.store_help import read_regular

if TYPE_CHECKING:
    from coverage import Coverage

# The names a shard is written under before its renames (left over by a crash).
_TEMPORARY = (".data-", f".{MANIFEST}.tmp")


def environment() -> dict[str, str]:
    """What a shard's arcs depend on besides the code: the Python and coverage.py versions."""
    import coverage  # start-up time (engine/measure.py)

    python = f"{platform.python_implementation()} {'.'.join(platform.python_version_tuple()[:2])}"
    return {"python": python, "coverage": coverage.__version__}


def head_commit(rootdir: Path) -> str:
    """The commit checked out at `rootdir`; "" outside a git work tree (or without git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD"],
            cwd=rootdir,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.decode(errors="replace").strip() if out.returncode == 0 else ""


def file_digest(path: Path) -> str | None:
    """The digest of the regular file at `path`; None when it is missing or not a regular file."""
    try:
        return digest_bytes(read_regular(path))
    except (OSError, QuestError):
        return None


def prepare_folder(folder: Path) -> None:
    """Make `folder` for a shard; one holding anything but a shard is refused (exit 4)."""
    if folder.exists() and not folder.is_dir():
        raise QuestUsageError(f"--quest-shard-out {folder}: not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    strangers = sorted(
        name
        for name in os.listdir(folder)
        if name not in (MANIFEST, DATA) and not name.startswith(_TEMPORARY)
    )
    if strangers:
        raise QuestUsageError(
            f"--quest-shard-out {folder}: the folder holds other files ({', '.join(strangers[:3])}); "
            "give a new or empty folder (a shard there is replaced)"
        )


def write_shard(folder: Path, shard: Shard, data_filename: str | None, rootdir: Path) -> Shard:
    """Write `shard` to `folder`: its data (paths made relative to `rootdir`), then its manifest.

    Fills in the shard's data digest and the digests of the measured files
    under the rootdir.  The manifest is written last, by rename: a folder
    with a manifest holds a whole shard.
    """
    from coverage import CoverageData  # start-up time
    from coverage.exceptions import DataError

    prepare_folder(folder)
    manifest_path = folder / MANIFEST
    if manifest_path.exists():
        manifest_path.unlink()  # the old shard is gone from here on
    handle, temporary = tempfile.mkstemp(prefix=".data-", dir=folder)
    os.close(handle)
    os.unlink(temporary)

    def portable(path: str) -> str:
        rel = relpath(path, rootdir)
        return path if rel == ".." or rel.startswith("../") else rel

    try:
        with quiet_coverage():
            out = CoverageData(basename=temporary)
            if data_filename and os.path.exists(data_filename):
                measured = CoverageData(basename=data_filename)
                try:
                    measured.read()
                    out.update(measured, map_path=portable)
                except (DataError, sqlite3.Error) as exc:
                    raise MeasurementError(
                        f"the coverage data of the job's tests could not be read ({exc}); "
                        f"no shard was written to {folder}"
                    ) from None
            else:
                out.add_arcs({})  # measured nothing: still a data file of arcs
            names = sorted(out.measured_files())
            out.close()
        os.replace(temporary, folder / DATA)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    shard.data_digest = file_digest(folder / DATA) or ""
    digests = {}
    for name in names:
        if not os.path.isabs(name):
            digest = file_digest(rootdir / name)
            if digest is not None:
                digests[name] = digest
    shard.source_digests = digests
    text = json.dumps(manifest_of(shard), indent=1, sort_keys=True) + "\n"
    temporary = str(folder / f".{MANIFEST}.tmp")
    with open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, manifest_path)
    return shard


def read_shard(folder: Path, where: str) -> Shard:
    """The shard in `folder`, its manifest validated and its data file matching its digest."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise QuestUsageError(f"shard {where}: not a folder")
    if not path.exists():
        raise QuestUsageError(
            f"shard {where}: no {MANIFEST} (not a shard folder: make one with "
            "`pytest --quest scan --quest-shard-out DIR`)"
        )
    try:
        raw = read_regular(path)
    except (OSError, QuestError) as exc:  # a FIFO or a device where the manifest should be
        raise QuestUsageError(f"shard {where}: {MANIFEST} cannot be read ({exc})") from None
    try:
        data = strict_parse(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError, a duplicate key, a bad number are too
        raise QuestUsageError(
            f"shard {where}: {MANIFEST} is not valid JSON ({exc}; truncated or hand-edited?)"
        ) from None
    shard = read_manifest(data, where)
    found = file_digest(folder / DATA)
    if found is None:
        raise QuestUsageError(f"shard {where}: its data file {DATA} is missing or unreadable")
    if found != shard.data_digest:
        raise QuestUsageError(
            f"shard {where}: its data file {DATA} does not match the digest in {MANIFEST} "
            "(truncated, damaged or replaced); make the shard again"
        )
    names = _data_files(folder / DATA, where)
    unchecked = sorted(
        name for name in names if not os.path.isabs(name) and name not in shard.source_digests
    )
    if unchecked:
        raise QuestUsageError(
            f"shard {where}: its data names {unchecked[0]}, which has no digest in {MANIFEST} "
            "(hand-edited?); make the shard again"
        )
    return shard


def _data_files(path: Path, where: str) -> list[str]:
    """The file names in a shard's data file, read without writing to it."""
    try:
        connection = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            return [str(row[0]) for row in connection.execute("select path from file")]
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise QuestUsageError(
            f"shard {where}: its data file {DATA} is not coverage.py's data ({exc})"
        ) from None


def source_digests(rootdir: Path, names: list[str]) -> dict[str, str | None]:
    """The digest of each file (relative to `rootdir`) here, None for one missing."""
    return {name: file_digest(rootdir / name) for name in names}


def combining_measurer(rootdir: Path, sources: list[str], data_dir: str) -> Measurer:
    """A measurer configured as a scan's (never started): its coverage object analyzes the shards."""
    return Measurer(
        rootdir, sources, os.path.join(data_dir, ".coverage"), data_dir=data_dir, children=False
    )


def combine_data(cov: Coverage, rootdir: Path, folders: list[tuple[Path, str]]) -> None:
    """Add each shard's data file to `cov`'s data, its paths made absolute under `rootdir`."""
    from coverage import CoverageData  # start-up time
    from coverage.exceptions import CoverageException

    def local(path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(str(rootdir), path)

    with quiet_coverage():
        data = cov.get_data()
        for folder, where in folders:
            try:
                data.update(CoverageData(basename=str(folder / DATA)), map_path=local)
            except (CoverageException, sqlite3.Error) as exc:
                raise QuestUsageError(
                    f"shard {where}: coverage.py could not combine its data file: {exc}"
                ) from None
