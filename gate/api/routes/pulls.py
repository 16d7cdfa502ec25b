"""What the bot knows of a pull request, and what it asks of the runners (more rounds)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, status

from gate.api.deps import ReadSessionDep, commit_sha
from gate.api.schemas import CheckOut, ComparisonOut, Problem, PullOut, RoundsOut
from gate.evaluate import is_stale
from gate.store import pulls, queries

router = APIRouter(tags=["pulls"])


@router.get("/api/pulls/{owner}/{name}/{number}", responses={404: {"model": Problem}})
def read_pull(owner: str, name: str, number: int, session: ReadSessionDep) -> PullOut:
    """A pull request the bot has seen, with its check (commit status) for every head."""
    pull = pulls.pull(session, repo=f"{owner}/{name}", number=number)
    if pull is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"no pull request {owner}/{name}#{number}: no webhook delivered it yet"
        )
    checks = [CheckOut.model_validate(c) for c in pulls.checks_of(session, pull_id=pull.id)]
    return PullOut.model_validate(
        {**{k: getattr(pull, k) for k in PullOut.model_fields if k != "checks"}, "checks": checks}
    )


@router.get("/api/rounds/{base}/{head}", responses={404: {"model": Problem}})
def rounds(base: str, head: str, machine: str, request: Request, session: ReadSessionDep) -> RoundsOut:
    """Whether ``machine`` should run more rounds of (base, head): its inconclusive cells under the round budget."""
    base_sha, head_sha = commit_sha(request, base), commit_sha(request, head)
    evaluation = queries.latest_evaluation(session, base_sha=base_sha, head_sha=head_sha)
    if evaluation is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"no evaluation of base {base_sha[:12]} -> head {head_sha[:12]} yet: upload results first",
        )
    budget = int(evaluation.policy.get("max_rounds", 0))
    cells = [
        ComparisonOut.model_validate(c)
        for c in evaluation.comparisons
        if c.machine == machine and c.decision == "inconclusive" and c.groups < budget
    ]
    more = evaluation.verdict == "inconclusive" and bool(cells)
    return RoundsOut(
        base_sha=base_sha, head_sha=head_sha, machine=machine, more=more,
        stale=is_stale(session, evaluation), budget=budget, cells=cells,
    )  # fmt: skip
