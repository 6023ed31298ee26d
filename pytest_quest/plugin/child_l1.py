"""In the mutation child: the project's L1 hooks and plugin verifiers, asked on the judge's evidence.

They live in the project's code, so they run in the child, never in the judge.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from pytest_quest.core.model import Fact, FunctionFacts, Verdict
from pytest_quest.core.run import CollectionError, RunReport
from pytest_quest.engine.codec import loads
from pytest_quest.verify.adapters import answer_to_dict, hook_verifiers, request_from_dict


def l1_results(config: pytest.Config, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's ``pytest_quest_l1_check`` hooks on the judge's evidence, as plain dicts.

    Only FAIL and REVIEW are kept (the judge keeps only those too); a hook
    that raises is one REVIEW fact (``l1.error``).
    """

    quest_id = evidence["quest"]
    try:
        ratchet = loads(Path(evidence["ratchet"]).read_bytes(), evidence["ratchet"])
        quest = ratchet.quests[quest_id]
        function = dict(evidence["function"])
        function["missing_branches"] = [tuple(arc) for arc in function["missing_branches"]]
        run = dict(evidence["run"])
        run["collection_errors"] = [CollectionError(**e) for e in run["collection_errors"]]
        results = config.hook.pytest_quest_l1_check(
            quest=quest, function=FunctionFacts(**function), run=RunReport(**run)
        )
        found = []
        for checks in results:
            for verdict, fact in checks or []:
                if Verdict(verdict) is not Verdict.PASS:
                    found.append({"verdict": Verdict(verdict).value, "fact": asdict(fact)})
        return found
    except Exception as exc:
        error = Fact(
            check="l1.error",
            field=quest_id,
            expected="the pytest_quest_l1_check hooks run",
            actual=f"{type(exc).__name__}: {exc}",
            message=f"could not confirm: an L1 check raised {type(exc).__name__}: {exc}",
        )
        return [{"verdict": Verdict.REVIEW.value, "fact": asdict(error)}]


def verifier_answers(config: pytest.Config, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's plugin verifiers (``pytest_quest_verify``) asked here, one answer each."""

    ratchet = loads(Path(evidence["ratchet"]).read_bytes(), evidence["ratchet"])
    request, prompt = request_from_dict(evidence["verify"], ratchet.quests[evidence["quest"]])
    rootdir = Path(str(config.rootpath))
    return [
        answer_to_dict(v(request, prompt)) for v in hook_verifiers(config.pluginmanager, rootdir)
    ]
