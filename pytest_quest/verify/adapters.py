"""The verifiers (a command, a plugin hook), asked in isolation, and L2 for one submission.

Nothing here reads pytest or the options: callers pass the commands, limits and hook verifiers.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from pytest_quest.core.errors import QuestUsageError
from pytest_quest.core.gate import GateResult
from pytest_quest.core.model import FunctionFacts, Quest
from pytest_quest.core.words import counted, counted_words
from pytest_quest.engine import reaper
from pytest_quest.engine.processes import reap_leftovers, stop_tree
from pytest_quest.verify.capped import OUTPUT_LIMIT, CappedReader, feed, size_text
from pytest_quest.verify.prompt import Request, TestSource, build_prompt, build_request
from pytest_quest.verify.protocol import (
    STATUS_CLEAN,
    STATUS_CORRECTIONS,
    Finding,
    ProtocolError,
    finding_from_json,
    parse_reply,
)
from pytest_quest.verify.vote import Answer, Verification, excluded_by, normalize_path, vote


class Verifier(Protocol):
    name: str

    def __call__(self, request: Request, prompt: str) -> Answer: ...


def _tail(text: str, lines: int = 2) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[:300]


def _not_startable(program: str, cwd: Path) -> str:
    """`program` when it names no executable file (checked here: the shim would only exit 127)."""
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
        return "" if os.access(path, os.X_OK) and path.is_file() else program
    return "" if shutil.which(program) else program


class CommandVerifier:
    """A command (an LLM CLI, a script) that reads the prompt on stdin and replies on stdout.

    The command line is split with `shlex` and run without a shell, in its
    own process group, from the project's rootdir; at `timeout` seconds the
    group is killed.  Its output is read in chunks and capped at
    `max_output` bytes: beyond it the call is an error and the group is
    killed, so a flood never sits in the judge's memory.
    """

    def __init__(
        self, command: str, timeout: float, cwd: Path, max_output: int = OUTPUT_LIMIT
    ) -> None:
        self.command = command
        self.name = command
        self.timeout = timeout
        self.cwd = cwd
        self.max_output = max_output

    def __call__(self, request: Request, prompt: str) -> Answer:
        started = time.monotonic()

        def failed(error: str) -> Answer:
            return Answer(self.name, time.monotonic() - started, error=error)

        try:
            argv = shlex.split(self.command)
        except ValueError as exc:
            return failed(f"cannot split the command line: {exc}")
        if not argv:
            return failed("empty command")
        missing = _not_startable(argv[0], self.cwd)
        if missing:
            return failed(f"cannot start: [Errno 2] No such file or directory: {missing!r}")
        try:
            process = subprocess.Popen(
                # Under the reaping shim: what the verifier starts ends with it.
                reaper.shim_command(argv),
                cwd=str(self.cwd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return failed(f"cannot start: {exc}")
        try:
            outcome = self._exchange(process, prompt.encode("utf-8"), started)
        except BaseException:
            # Interrupted (Ctrl-C): the verifier runs in its own session.
            process.stdin = process.stdout = process.stderr = None
            stop_tree(process)
            raise
        if isinstance(outcome, str):
            # The pipes belong to the reader threads (they end at the pipes' end):
            # stopping the tree only kills and reaps.
            process.stdin = process.stdout = process.stderr = None
            stop_tree(process)
            return failed(outcome)
        stdout, stderr = outcome
        seconds = time.monotonic() - started
        if process.returncode != 0:
            detail = _tail(stderr) or _tail(stdout)
            return Answer(
                self.name,
                seconds,
                error=f"exited with status {process.returncode}"
                + (f": {detail}" if detail else ""),
            )
        return answer_from_text(
            self.name, seconds=seconds, text=stdout, questions=len(request.questions)
        )

    def _exchange(
        self, process: subprocess.Popen[bytes], prompt: bytes, started: float
    ) -> tuple[str, str] | str:
        """The prompt in, stdout and stderr out (capped); a problem text instead on failure."""
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        out = CappedReader(process.stdout, self.max_output, stop_when_over=True)
        err = CappedReader(process.stderr, self.max_output, stop_when_over=False)
        writer = threading.Thread(target=feed, args=(process.stdin, prompt), daemon=True)
        for thread in (out, err, writer):
            thread.start()
        deadline = started + self.timeout
        while process.poll() is None or out.is_alive():
            if out.over.is_set():
                return (
                    f"its output exceeded the cap of {self.max_output} bytes "
                    f"({size_text(self.max_output)}) and it was stopped; "
                    "a verifier replies in a few kilobytes"
                )
            if time.monotonic() >= deadline:
                return f"timed out after {self.timeout:g}s (--quest-verify-timeout)"
            out.over.wait(0.02)
        if out.over.is_set():
            return (
                f"its output exceeded the cap of {self.max_output} bytes "
                f"({size_text(self.max_output)}) and it was stopped; "
                "a verifier replies in a few kilobytes"
            )
        err.join(max(0.0, deadline - time.monotonic()) + 1)
        writer.join(1)
        return out.text(), err.text()


def answer_from_text(name: str, *, seconds: float, text: str, questions: int) -> Answer:
    """An `Answer` from a reply text: its findings, or the protocol error."""
    try:
        reply = parse_reply(text)
    except ProtocolError as exc:
        return Answer(name, seconds, error=f"reply outside the protocol: {exc}")
    if len(reply.questions) != questions:
        return Answer(
            name,
            seconds,
            error=f"reply outside the protocol: {counted(questions, 'question')} asked, "
            f"{len(reply.questions)} answered",
        )
    return Answer(name, seconds, findings=list(reply.findings), status=reply.status)


class HookVerifier:
    """One plugin's ``pytest_quest_verify`` implementation, called on its own.

    It may return a list of `Finding` (or of dicts with ``file``, ``line``,
    ``quote``, ``reason``, or of discrepancy strings), a reply text in the
    protocol, or None to abstain.  An exception is an error of this verifier.
    """

    def __init__(self, name: str, function: Callable[..., Any], argnames: Sequence[str]) -> None:
        self.name = name
        self.function = function
        self.argnames = list(argnames)

    def __call__(self, request: Request, prompt: str) -> Answer:
        arguments = {
            "quest": request.quest,
            "function_source": request.function_source,
            "tests": list(request.tests),
            "questions": list(request.questions),
            "prompt": prompt,
        }
        started = time.monotonic()
        try:
            unknown = [name for name in self.argnames if name not in arguments]
            if unknown:
                raise TypeError(
                    f"unknown hook {counted_words(len(unknown), 'argument')} {', '.join(unknown)}"
                )
            returned = self.function(*[arguments[name] for name in self.argnames])
        except Exception as exc:
            return Answer(
                self.name, time.monotonic() - started, error=f"{type(exc).__name__}: {exc}"
            )
        seconds = time.monotonic() - started
        if returned is None:
            return Answer(self.name, seconds, abstained=True)
        if isinstance(returned, str):
            return answer_from_text(
                self.name, seconds=seconds, text=returned, questions=len(request.questions)
            )
        try:
            findings = [_hook_finding(item) for item in returned]
        except (TypeError, ProtocolError) as exc:
            return Answer(self.name, seconds, error=f"unusable findings: {exc}")
        status = STATUS_CORRECTIONS if findings else STATUS_CLEAN
        return Answer(self.name, seconds, findings=findings, status=status)


def _hook_finding(item: Any) -> Finding:
    if isinstance(item, Finding):
        return item
    if isinstance(item, (dict, str)):
        return finding_from_json(item)
    raise TypeError(f"a finding must be a Finding, a dict or a string, not {type(item).__name__}")


def hook_verifiers(pluginmanager: Any, rootdir: Path | None = None) -> list[HookVerifier]:
    """One verifier per plugin implementing ``pytest_quest_verify``, in pluggy's call order.

    A conftest plugin is named by its path relative to `rootdir`.
    """
    caller = getattr(pluginmanager.hook, "pytest_quest_verify", None)
    if caller is None:
        return []
    verifiers = []
    # pluggy calls the last registered first; so do we, one at a time.
    for impl in reversed(caller.get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:
            continue
        name = str(impl.plugin_name)
        if rootdir is not None and os.path.isabs(name):
            name = normalize_path(name, rootdir)
        verifiers.append(HookVerifier(f"plugin {name}", impl.function, list(impl.argnames)))
    return verifiers


class AnsweredVerifier:
    """A verifier that was asked elsewhere (a plugin hook, in a child that loads the project)."""

    def __init__(self, answer: Answer) -> None:
        self.name = answer.verifier
        self.answer = answer

    def __call__(self, request: Request, prompt: str) -> Answer:
        return self.answer


def request_to_dict(request: Request, prompt: str) -> dict[str, Any]:
    """What a child needs to ask the plugin verifiers (`files` stays with the judge's re-check)."""
    return {
        "quest": request.quest.id,
        "function_file": request.function_file,
        "function_first": request.function_first,
        "function_source": request.function_source,
        "tests": [asdict(test) for test in request.tests],
        "questions": list(request.questions),
        "prompt": prompt,
    }


def request_from_dict(data: dict[str, Any], quest: Quest) -> tuple[Request, str]:
    request = Request(
        quest=quest,
        function_file=str(data["function_file"]),
        function_first=int(data["function_first"]),
        function_source=str(data["function_source"]),
        tests=[TestSource(**test) for test in data["tests"]],
        questions=[str(q) for q in data["questions"]],
    )
    return request, str(data["prompt"])


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    data = asdict(answer)
    data["findings"] = [asdict(finding) for finding in answer.findings]
    return data


def answer_from_dict(data: dict[str, Any]) -> Answer:
    """An `Answer` a child sent; malformed parts become this verifier's error."""
    name = str(data.get("verifier", "plugin"))
    try:
        return Answer(
            verifier=name,
            seconds=float(data["seconds"]),
            findings=[Finding(**item) for item in data["findings"]],
            error=str(data.get("error", "")),
            status=str(data.get("status", "")),
            abstained=bool(data.get("abstained", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        return Answer(name, 0.0, error=f"unusable answer from the child: {exc}")


def run_verification(
    request: Request,
    verifiers: Sequence[Verifier],
    *,
    threshold: int | None,
    rootdir: Path | None = None,
    prompt: str | None = None,
) -> Verification:
    """Ask every verifier in isolation (commands in parallel), re-check, and vote.

    `prompt`: another text than the submission's (a disputed mutant's, verify/equivalence.py).
    """
    if prompt is None:
        prompt = build_prompt(request)
    commands = [v for v in verifiers if isinstance(v, CommandVerifier)]
    others = [v for v in verifiers if not isinstance(v, CommandVerifier)]
    answers: dict[int, Answer] = {}
    if commands:
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            futures = {
                id(verifier): pool.submit(verifier, request, prompt) for verifier in commands
            }
            for verifier in others:
                answers[id(verifier)] = verifier(request, prompt)
            for key, future in futures.items():
                answers[key] = future.result()
    else:
        for verifier in others:
            answers[id(verifier)] = verifier(request, prompt)
    reap_leftovers()  # in the judge: what the verifier commands left behind
    ordered = [answers[id(verifier)] for verifier in verifiers]
    return vote(
        ordered,
        request.files,
        threshold=threshold,
        questions=len(request.questions),
        rootdir=rootdir,
    )


def checked_verifiers(
    *,
    commands: Sequence[str],
    hooks: Sequence[Verifier],
    timeout: float,
    threshold: int | None,
    rootdir: Path,
) -> list[Verifier]:
    """The verifier `commands`, then the plugin verifiers `hooks`.

    Raises `QuestUsageError` for a setup that cannot work.

    ``submit`` has it checked before running any test, so that a bad setup costs nothing.
    """
    verifiers: list[Verifier] = [CommandVerifier(command, timeout, rootdir) for command in commands]
    verifiers += hooks
    # A verifier's vote is counted by its name: the same command twice is two voters.
    seen: dict[str, int] = {}
    for verifier in verifiers:
        seen[verifier.name] = seen.get(verifier.name, 0) + 1
        if seen[verifier.name] > 1:
            verifier.name = f"{verifier.name} #{seen[verifier.name]}"
    if not verifiers:
        raise QuestUsageError(
            "verification is on but there is no verifier: pass --quest-verifier-cmd CMD, "
            "set the ini option quest_verifier_cmd, install a plugin "
            "implementing pytest_quest_verify, or turn it off with --quest-verify off"
        )
    if threshold is not None and threshold > len(verifiers):
        raise QuestUsageError(
            f"--quest-verify-threshold {threshold} asks for more verifiers "
            f"than the {len(verifiers)} configured; lower it or add verifiers"
        )
    for command in commands:
        try:
            argv = shlex.split(command)
            if not argv:
                raise ValueError("empty command")
        except ValueError as exc:
            raise QuestUsageError(
                f"verifier command {command!r} cannot be split into arguments ({exc}); "
                "fix --quest-verifier-cmd or quest_verifier_cmds"
            ) from None
        missing = _not_startable(argv[0], rootdir)
        if missing:
            # Said before any test runs: a verifier that cannot start would only make REVIEW.
            raise QuestUsageError(
                f"verifier command {command!r} cannot be started: no program {missing!r} "
                "(on PATH or from the rootdir); fix --quest-verifier-cmd or quest_verifier_cmd"
            )
    return verifiers


def verify_submission(
    *,
    rootdir: Path,
    quest: Quest,
    current: FunctionFacts,
    changed_files: Sequence[str],
    result: GateResult,
    verifiers: Sequence[Verifier],
    threshold: int | None,
    questions: int,
    exclude: Sequence[str],
) -> tuple[GateResult, dict[str, Any]]:
    """L2 for a submission L1 would PASS: the (possibly raised) result and its record.

    `verifiers` come from `checked_verifiers` (and the answers of the project's
    plugin verifiers).  It may turn a PASS into REVIEW, never anything else; a
    quest under an `exclude` pattern is not verified (the record says which).
    """
    pattern = excluded_by(quest, exclude)
    if pattern is not None:
        return result, {"result": "excluded", "excluded_by": pattern}
    request = build_request(
        rootdir=rootdir,
        quest=quest,
        current=current,
        covering_tests=current.covering_tests,
        changed_files=changed_files,
        questions=questions,
    )
    verification = run_verification(request, list(verifiers), threshold=threshold, rootdir=rootdir)
    return verification.judge(result), verification.record()
