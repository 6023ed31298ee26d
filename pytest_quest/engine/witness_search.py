"""The witness search: a call on which a surviving mutant and the function differ.

For a survivor the covering tests' calls do not tell apart, the function is
called directly: with each call a covering test made, then with calls
Hypothesis draws around those (derandomized, bounded, shrunk).  Each runs the
original twice (they must agree) and the mutant once; the first difference in
what it returns, raises, prints or leaves in its arguments is the witness.
Effects it cannot compare (files, processes, globals) are blocked and
reported as `Search.escapes`: docs/gate.md, "A witness, or no verdict".
"""

from __future__ import annotations

import dis
import io
import signal
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from copy import deepcopy  # bound here: a test that patches copy.deepcopy changes nothing
from dataclasses import dataclass, field
from types import BuiltinFunctionType, CodeType, FunctionType, ModuleType
from typing import Any

from pytest_quest.engine.memory_cap import capped
from pytest_quest.engine.observe import Call, first_difference, shown, state, whole_state
from pytest_quest.engine.witness_strategies import calls_strategy

#: Examples Hypothesis draws per survivor, and seconds the search may take: the
#: examples bound it (the same witness on every run); the seconds are a safety net
#: for a slow function, far above what 100 examples take on a loaded machine.
MAX_EXAMPLES = 100
SECONDS = 10.0
#: Seconds one call may take before the candidate is dropped (a mutant that loops; one
#: that allocates without end meets the memory cap, one that recurses without end the
#: recursion limit: dropped too).
CALL_SECONDS = 1.0
#: Items taken of what a generator function yields.
MAX_ITEMS = 50
#: More calls of the original and of the mutant, each, that must end as the first did
#: before a difference is a witness (a chance difference between two equally likely
#: answers then stands one time in 64, against one in four on the first calls alone).
AGAIN = 2

_GENERATOR = 0x20

#: Audit events that reach outside what the search compares (sys.addaudithook).
_ESCAPING = (
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.mkdir",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.utime",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.kill",
    "os.killpg",
    "os.putenv",
    "os.unsetenv",
    "os.chdir",
    "shutil.",
    "subprocess.Popen",
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "sqlite3.connect",
    "urllib.Request",
)


class _Escaped(BaseException):
    """Raised by the audit hook in a call that reaches outside (a BaseException: `except
    Exception` in the function does not swallow it)."""


class _Timeout(BaseException):
    """One call ran past `CALL_SECONDS`."""


class _Guard:
    """The audit hook (installed once per process, active only while the search calls)."""

    def __init__(self) -> None:
        self.active = False
        self.seen = ""
        self.installed = False

    def install(self) -> None:
        if not self.installed:
            sys.addaudithook(self._hook)
            self.installed = True

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            mode = args[1] if len(args) > 1 else None
            flags = args[2] if len(args) > 2 else 0
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            if mode is None and isinstance(flags, int):
                writes = bool(flags & 0o3 or flags & 0o100)  # O_WRONLY|O_RDWR, O_CREAT
            if not writes:
                return
        elif not event.startswith(_ESCAPING):
            return
        self.seen = self.seen or (
            f"writes a file ({args[0]!r})"[:120] if event == "open" else event
        )
        self.active = False  # raised once; the function's own handling is its business
        raise _Escaped(event)


_GUARD = _Guard()


@dataclass
class Search:
    """What the search found for one survivor."""

    #: The witness as the judge words it (core/observed.py `witness_text`), or None.
    witness: dict[str, str] | None = None
    #: Calls made with the mutant (each also twice with the original).
    calls: int = 0
    #: What a call did that the search cannot compare ("" when nothing).
    escapes: str = ""
    #: Why no call could be tried ("" when some were).
    problem: str = ""
    #: The arguments whose whole state (private attributes, an iterator's position)
    #: the mutant left otherwise on some call, where nothing public differed ("" when none).
    hidden: str = ""
    #: Calls on which the original returned (or yielded) rather than raised.
    returned: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The fields the child hands the judge."""
        escapes = self.escapes
        if not escapes and self.witness is None and self.hidden:
            # Not a call an agent can assert on, not the same either: held.
            escapes = f"the mutant leaves the private state of {self.hidden} otherwise"
        found: dict[str, Any] = {"calls": self.calls, "escapes": escapes}
        found["problem"] = self.problem
        if self.witness is not None:
            found["witness"] = self.witness
        return found


@dataclass(frozen=True)
class Target:
    """The live function, its original and mutated code, and the calls a test made."""

    function: FunctionType
    original: CodeType
    mutant: CodeType
    kept: list[dict[str, Any]]
    #: Watched module globals: the function's own module, by name.
    watched_globals: bool = True


def search(target: Target, seconds: float = SECONDS, examples: int = MAX_EXAMPLES) -> Search:
    """The first difference between `target`'s mutant and original over its calls, then a search."""
    found = Search()
    began = time.monotonic()
    if not target.kept:
        found.problem = "no call of the function by a covering test could be recorded"
        return found
    _GUARD.install()
    try:
        # A mutant that allocates without end in C ends with MemoryError, as in its test runs.
        with capped():
            for kept in target.kept:
                if _try(target, kept, found):
                    break
            else:
                _hypothesis(target, found, began + seconds, examples)
    finally:
        target.function.__code__ = target.original
    found.seconds = round(time.monotonic() - began, 4)
    return found


def _try(target: Target, arguments: dict[str, Any], found: Search) -> bool:
    """Whether `arguments` tell mutant and original apart (the witness set in `found`)."""
    if found.escapes:
        return False
    _GUARD.seen = ""
    mutant: Outcome | None = None
    ran = [_call(target, code, arguments) for code in (target.original, target.original)]
    if not _GUARD.seen and None not in ran:
        mutant = _call(target, target.mutant, arguments)
        found.calls += 1
    if _GUARD.seen:
        found.escapes = _GUARD.seen
        return False
    if None in ran or mutant is None:
        return False
    original, again = ran
    assert original is not None and again is not None
    found.returned += original.call.ended != "raises"
    if original.globals or again.globals:
        # The function itself changes its module's state: what a later call sees of
        # it is not compared, so no difference found here is a verdict.
        found.escapes = f"changes module globals ({(original.globals or again.globals)[:80]})"
        return False
    difference = first_difference([mutant.call], [original.call], [again.call])
    if difference is not None and (
        _both_refuse_the_types(mutant.call, original.call) or _both_crash(mutant, original)
    ):
        difference = None  # arguments neither can take: outside the function's domain
    if difference is None and mutant.globals:
        difference = {
            "mutant": f"leaves globals {mutant.globals[:60]}",
            "original": "leaves globals as they were",
        }
    if difference is not None and not _again(target, arguments, original, mutant):
        return False  # chance (a sample, a shuffle, the clock): no witness to assert on
    if difference is None:
        if not found.hidden and original.hidden == again.hidden:
            found.hidden = ", ".join(
                name
                for (name, left), (_, expected) in zip(mutant.hidden, original.hidden)
                if left != expected
            )
        return False
    found.witness = {
        "call": call_text(target, arguments),
        "mutant": difference["mutant"],
        "original": difference["original"],
    }
    return True


def _both_refuse_the_types(mutant: Call, original: Call) -> bool:
    """Whether both calls raised TypeError and left their arguments alike (the messages aside)."""
    return (
        mutant.ended == original.ended == "raises"
        and mutant.value.startswith("TypeError(")
        and original.value.startswith("TypeError(")
        and mutant.after == original.after
    )


def _both_crash(mutant: Outcome, original: Outcome) -> bool:
    """Whether both calls raised from inside an operation, not at a `raise` statement,
    and left their arguments alike.

    Neither refuses the arguments on purpose: each fails on a value it cannot work
    with (``dict.update('a')`` against ``'a'['a']``), so which error comes first asks
    nothing of a test.  Where either side raises at a statement (a check of its
    input, anywhere down the call) the difference stays a witness.
    """
    return (
        mutant.call.ended == original.call.ended == "raises"
        and not (mutant.stated or original.stated)
        and mutant.call.after == original.call.after
    )


def _raised_at_a_statement(exc: BaseException) -> bool:
    """Whether `exc` began at a `raise` statement (not in an operation or a C function)."""
    where = exc.__traceback__
    if where is None:
        return False
    while where.tb_next is not None:
        where = where.tb_next
    code = where.tb_frame.f_code.co_code
    return 0 <= where.tb_lasti < len(code) and dis.opname[code[where.tb_lasti]] == "RAISE_VARARGS"


def _again(target: Target, arguments: dict[str, Any], original: Outcome, mutant: Outcome) -> bool:
    """Whether the original and the mutant each end as before in `AGAIN` more calls apiece.

    The original's two runs agreeing is not enough where the answer is chance: with
    two outcomes they agree half the time, and the mutant's run differs half of that.
    """
    for _ in range(AGAIN):
        for code, before in ((target.original, original), (target.mutant, mutant)):
            now = _call(target, code, arguments)
            # What it left in module globals is not asked again: the first call changed them.
            if now is None or now.call != before.call:
                return False
    return True


@dataclass(frozen=True)
class Outcome:
    """One direct call: how it ended and what it left, the module globals it changed
    (names, "" when none), and the whole state of the objects it was given."""

    call: Call
    globals: str
    hidden: tuple[tuple[str, str], ...]
    #: It raised at a `raise` statement (a check of its input), not inside an operation.
    stated: bool = False


def _call(target: Target, code: CodeType, arguments: dict[str, Any]) -> Outcome | None:
    """How one call with a fresh copy of `arguments` ended (None: it ran too long)."""
    function = target.function
    stated = False
    try:
        given = deepcopy(arguments)
    except Exception:
        return None
    positional, keywords = _split(function.__code__, given)
    held = [(name, value) for name, value in given.items() if not _immutable(value)]
    before = _globals(function) if target.watched_globals else {}
    out = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
    function.__code__ = code
    _GUARD.active = True
    try:
        with redirect_stdout(out), redirect_stderr(out):
            try:
                value = function(*positional, **keywords)
                ended = "returns"
                if code.co_flags & _GENERATOR:
                    value, ended = _drain(value), "yields"
                shown_value = shown(value)
            except (_Timeout, _Escaped, MemoryError, RecursionError):
                return None  # ran away: no answer to compare (a test would be stopped)
            except BaseException as exc:  # what the function raises is what it does
                ended, shown_value = "raises", shown(exc)
                stated = _raised_at_a_statement(exc)
    except (_Timeout, _Escaped):
        return None
    finally:
        _GUARD.active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        function.__code__ = target.original
    after = tuple((name, state(value)) for name, value in held)
    printed = out.getvalue()
    if printed:
        after += (("output", shown(printed)),)
    after_globals = _globals(function) if target.watched_globals else {}
    hidden = tuple((name, whole_state(value)) for name, value in held)
    changed = _changed(before, after_globals)
    return Outcome(Call("", ended, shown_value, after), changed, hidden, stated)


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _drain(generator: Any) -> Any:
    items = []
    for item in generator:
        items.append(item)
        if len(items) >= MAX_ITEMS:
            break
    return items


def _immutable(value: Any) -> bool:
    return isinstance(value, (int, float, complex, str, bytes, bool, type(None), frozenset, range))


def _split(code: CodeType, given: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    names = code.co_varnames
    positional = [given[name] for name in names[: code.co_argcount] if name in given]
    at = code.co_argcount
    keywords = {
        name: given[name] for name in names[at : at + code.co_kwonlyargcount] if name in given
    }
    at += code.co_kwonlyargcount
    if code.co_flags & 0x04:
        positional += list(given.get(names[at], ()))
        at += 1
    if code.co_flags & 0x08:
        keywords.update(given.get(names[at], {}))
    return positional, keywords


def _globals(function: FunctionType) -> dict[str, str]:
    """The function's module globals as a call can change them: rebound names, and the
    contents of containers and objects they hold (public state, `observe.state`)."""
    parts = {}
    for name, value in list(function.__globals__.items()):
        if name.startswith("__"):
            continue
        if isinstance(value, (ModuleType, type, FunctionType, BuiltinFunctionType)):
            parts[name] = f"@{id(value)}"
        else:
            parts[name] = f"@{id(value)}={state(value)}"
    return parts


def _changed(before: dict[str, str], after: dict[str, str]) -> str:
    """The globals a call changed, by name ("" when none)."""
    names = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    return ", ".join(names)


def call_text(target: Target, arguments: dict[str, Any]) -> str:
    """The call as an agent writes it: ``truncate('abcdefgh', 5)``, ``Cart.total()`` on the object."""
    code = target.function.__code__
    names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    shown_args = []
    receiver = ""
    for index, name in enumerate(names):
        if name not in arguments:
            continue
        if index == 0 and name in ("self", "cls"):
            receiver = state(arguments[name]) if name == "self" else shown(arguments[name])
            continue
        value = shown(arguments[name])
        shown_args.append(value if index < code.co_argcount else f"{name}={value}")
    text = f"{getattr(code, 'co_qualname', code.co_name)}({', '.join(shown_args)})"
    return f"{text} on {receiver}" if receiver else text


# --- the search around the recorded calls ------------------------------------------


def _hypothesis(target: Target, found: Search, deadline: float, examples: int) -> None:
    try:
        from hypothesis import HealthCheck, Phase, find, settings
        from hypothesis import strategies as st
        from hypothesis.errors import HypothesisException
    except ImportError:  # pragma: no cover - a runtime dependency
        return
    calls = calls_strategy(target.kept, st)
    if calls is None:
        return
    witnessed: list[dict[str, Any]] = []

    def differs(arguments: dict[str, Any]) -> bool:
        if time.monotonic() > deadline or found.escapes:
            return False
        probe = Search()
        if _try(target, arguments, probe):
            witnessed.append(arguments)
            found.witness = probe.witness
            found.calls += probe.calls
            return True
        found.calls += probe.calls
        found.returned += probe.returned
        found.escapes = found.escapes or probe.escapes
        found.hidden = found.hidden or probe.hidden
        return False

    chosen = settings(
        database=None,
        derandomize=True,
        max_examples=examples,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    try:
        find(calls, differs, settings=chosen)
    except HypothesisException:
        pass  # no example found (NoSuchExample), or unsatisfiable
    except Exception as exc:  # the search must never change a verdict by failing
        found.notes.append(f"{type(exc).__name__}: {exc}"[:200])
    if witnessed and found.witness is not None:
        found.witness["call"] = call_text(target, witnessed[-1])
