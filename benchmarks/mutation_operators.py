r"""Per mutation operator: how many mutants, killed, survived, on a project's honest tests.

    # once per project, in its folder (a venv with the project and pytest-quest installed):
    pytest -p no:cacheprovider --quest scan --quest-source boltons
    # then, from anywhere:
    python benchmarks/mutation_operators.py /tmp/mut-bench/boltons --out boltons.json
    python benchmarks/mutation_operators.py /tmp/mut-bench/dateutil --limit 150 --out du.json
    python benchmarks/mutation_operators.py --table boltons.json du.json

Takes the scan's baseline PASS functions (fully covered by the project's own
tests: honest tests), plans every operator's mutants for each (the policy
``operators=all``) and runs them against the function's covering tests in
one mutation child per batch, exactly as ``audit`` does.  Writes per
function the mutants with their status, and prints per operator: mutants,
killed, survived, other (unreached, not applied), and the quests that would
FAIL with the default set (a surviving default-set mutant) and with each
operator alone.  ``--sample N`` prints N surviving mutants per operator (a
fixed seed) for the equivalence inspection by hand.  ``--operators default``
plans the default set only (faster, when only the verdicts are wanted).
``--only FILE`` judges only the functions FILE names (one quest id a line), and
``--sandbox`` starts the mutation children in the kernel sandbox a judged run
gets under ``sandbox=required`` (engine/sandbox.py; without it they run
unsandboxed).

Each function is counted under both rules of gate step 4: ``strict`` (a
surviving default-set mutant FAILs it) and ``on``, the default (only a
survivor with a witness call, or one the witness search could not judge,
FAILs it: core/gate.py); the functions whose verdict the two rules give
differently are named.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pytest_quest.core.mutants import DEFAULT_OPERATORS, plan_mutants
from pytest_quest.core.observed import held_because, observed_text, witness_text
from pytest_quest.core.operators import ALL_OPERATORS
from pytest_quest.engine.clean_search import SearchPath
from pytest_quest.engine.codec import loads
from pytest_quest.engine.mutation import Target, run_mutation_checks
from pytest_quest.engine.source import facts_from_source


def targets(
    root: Path,
    limit: int | None,
    seed: int,
    operators: tuple[str, ...] = tuple(ALL_OPERATORS),
    only: set[str] | None = None,
) -> list[tuple[str, Target]]:
    ratchet = loads((root / "quest.json").read_bytes(), "quest.json")
    chosen = []
    for quest in ratchet.ordered():
        if quest.state.value != "PASS" or not quest.baseline or not quest.covering_tests:
            continue
        if only is not None and quest.id not in only:
            continue
        facts = facts_from_source(quest.id, quest.file, root, all_missing=False)
        if facts is None:
            continue
        target = Target(
            root / quest.file,
            facts.start,
            tuple(sorted(quest.covering_tests)),
            quest.id,
            operators,
            confirm_kills=False,  # as audit: the project's own tests, no fresh run per kill
        )
        chosen.append((quest.id, target))
    if limit is not None and len(chosen) > limit:
        chosen = sorted(random.Random(seed).sample(chosen, limit))
    return chosen


def search_path(root: Path) -> SearchPath:
    """Where the clean witness search imports from, as audit sets it (app/deep_checks.py)."""
    ratchet = loads((root / "quest.json").read_bytes(), "quest.json")
    sources = [(root / s).resolve() for s in (ratchet.policy.sources if ratchet.policy else [])]
    path = [str(root), *(str(source.parent) for source in sources)]
    roots = sources or [root]
    return SearchPath(tuple(dict.fromkeys(path)), tuple(str(r) for r in roots))


def measure(
    root: Path, chosen: list[tuple[str, Target]], batch: int, timeout: float, out: Path | None
) -> list[Any]:
    results: list[Any] = []
    for at in range(0, len(chosen), batch):
        part = chosen[at : at + batch]
        started = time.monotonic()
        reports = run_mutation_checks(
            [t for _, t in part],
            rootdir=root,
            inifile=None,
            timeout=timeout * len(part),
            cwd=root,
            search_path=search_path(root),
        )
        print(
            f"  {at + len(part)}/{len(chosen)} functions, {time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
        for (quest_id, _), report in zip(part, reports):
            results.append(
                {
                    "id": quest_id,
                    "completed": report.completed,
                    "problem": report.problem,
                    "unstable": report.unstable(),
                    "mutants": report.mutants,
                }
            )
        if out is not None:  # kept after each batch: a long run can be read half way
            out.write_text(json.dumps(results, indent=1))
    return results


def replanned(results: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """`results` with only the mutants the planner (as it is now) still plans, by id."""
    kept = []
    for result in results:
        file = result["id"].split("::")[0]
        facts = facts_from_source(result["id"], file, root, all_missing=False)
        if facts is None:
            continue
        source = (root / file).read_text(encoding="utf-8")
        planned = {m.id for m in plan_mutants(source, facts.start, ALL_OPERATORS)}
        mutants = [m for m in result["mutants"] if m["id"] in planned]
        kept.append({**result, "mutants": mutants})
    return kept


def table(results: list[dict[str, Any]], project: str) -> list[str]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    failing: dict[str, set[str]] = defaultdict(set)
    judged = [r for r in results if r["completed"] and not r["unstable"]]
    for result in judged:
        for mutant in result["mutants"]:
            operator, status = mutant["operator"], mutant["status"]
            counts[operator]["mutants"] += 1
            counts[operator][status if status in ("killed", "survived") else "other"] += 1
            if status == "survived":
                failing[operator].add(result["id"])
    default = set().union(*(failing[o] for o in DEFAULT_OPERATORS))
    held = {
        result["id"]
        for result in judged
        for m in result["mutants"]
        if m["status"] == "survived" and m["operator"] in DEFAULT_OPERATORS and _held(m)
    }
    lines = [
        f"{project}: {len(judged)} baseline PASS functions judged "
        f"({len(results) - len(judged)} left out: incomplete or unstable); "
        f"would FAIL with the default set: {len(default)} "
        f"({100 * len(default) / max(1, len(judged)):.1f}%) under mutants=strict, "
        f"{len(held)} ({100 * len(held) / max(1, len(judged)):.1f}%) under mutants=on "
        "(a survivor held only with a witness or a reason)",
        "",
        *(f"- PASS under on, FAIL under strict: `{name}`" for name in sorted(default - held)),
        "",
        "| operator | default | mutants | killed | survived | other | functions failed |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for operator in ALL_OPERATORS:
        c = counts[operator]
        lines.append(
            f"| `{operator}` | {'yes' if operator in DEFAULT_OPERATORS else 'opt-in'} | "
            f"{c['mutants']} | {c['killed']} | {c['survived']} | {c['other']} | "
            f"{len(failing[operator])} |"
        )
    return lines


def _held(mutant: dict[str, Any]) -> bool:
    """Whether a survivor FAILs its function under ``mutants=on`` (core/gate.py)."""
    search = mutant.get("search")
    witnessed = observed_text(mutant.get("observed")) or witness_text(search)
    return bool(witnessed or held_because(search))


def sample(results: list[dict[str, Any]], per_operator: int, seed: int) -> list[str]:
    by: dict[str, list[str]] = defaultdict(list)
    for result in results:
        for m in result["mutants"]:
            if m["status"] == "survived":
                by[m["operator"]].append(
                    f"{result['id']} line {m['line']} {m['id']}: `{m['original']}` -> `{m['mutated']}`"
                )
    lines = []
    for operator in ALL_OPERATORS:
        found = by.get(operator, [])
        picked = random.Random(seed).sample(found, min(per_operator, len(found)))
        lines.append(f"## {operator} ({len(found)} survivors, {len(picked)} shown)")
        lines += [f"- {item}" for item in sorted(picked)]
    return lines


def enter_sandbox(root: Path) -> str:
    """Start the mutation children in the strongest sandbox that starts here, as a judge does."""
    import sysconfig

    from pytest_quest.engine import sandbox
    from pytest_quest.engine.store import RatchetStore, journal_folder

    choice = sandbox.choose()
    if choice.engine is None:
        raise SystemExit(f"--sandbox: no sandbox starts here ({'; '.join(choice.refused)})")
    store = RatchetStore(root / "quest.json")
    protected = [store.path, store.lock_path, store.claims_path, Path(sys.prefix)]
    protected += [Path(sysconfig.get_paths()[name]) for name in ("purelib", "platlib")]
    sandbox.use(
        choice.engine,
        protected=tuple(dict.fromkeys(protected)),
        hidden=(journal_folder().parent,),
    )
    return choice.engine.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--batch", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--table", nargs="*", type=Path, help="print the tables of saved runs")
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--operators", choices=("all", "default"), default="all")
    parser.add_argument("--only", type=Path, help="judge only the quest ids this file lists")
    parser.add_argument("--sandbox", action="store_true", help="judge in the kernel sandbox")
    parser.add_argument(
        "--replan",
        type=Path,
        help="with --table: keep only the mutants today's planner still plans for ROOT's sources",
    )
    args = parser.parse_args()
    if args.table:
        for path in args.table:
            results = json.loads(path.read_text())
            if args.replan:
                results = replanned(results, args.replan.resolve())
            print("\n".join(table(results, path.stem)))
            if args.sample:
                print("\n".join(sample(results, args.sample, args.seed)))
            print()
        return
    root = args.project.resolve()
    operators = tuple(ALL_OPERATORS if args.operators == "all" else sorted(DEFAULT_OPERATORS))
    only = None
    if args.only is not None:
        only = {line.strip() for line in args.only.read_text().splitlines() if line.strip()}
    chosen = targets(root, args.limit, args.seed, operators, only)
    engine = enter_sandbox(root) if args.sandbox else "none"
    print(f"{len(chosen)} baseline PASS functions, sandbox: {engine}", file=sys.stderr)
    started = time.monotonic()
    results = measure(root, chosen, args.batch, args.timeout, args.out)
    print(f"{time.monotonic() - started:.0f} s in all", file=sys.stderr)
    print("\n".join(table(results, root.name)))
    if args.sample:
        print("\n".join(sample(results, args.sample, args.seed)))


if __name__ == "__main__":
    main()
