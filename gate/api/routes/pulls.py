"""What the bot knows of a pull request, and what it asks of the runners (more rounds)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request, status

from gate.api.schemas import AcceptanceOut, CheckOut, Problem, PullOut, RoundsOut
from gate.domain.machines import MACHINE_NAME_MAX, MACHINE_NAME_PATTERN
from gate.domain.vocabulary import Verdict
from gate.evaluate.reads import open_cells
from gate.policy import judged_by
from gate.store import acceptances, pulls
from gate.web import ReadSessionDep, latest_verdict

GitHubName = Annotated[
    str, Path(max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")
]  # an owner's or a repository's

router = APIRouter(tags=["pulls"])


@router.get("/api/pulls/{owner}/{name}/{number}", responses={404: {"model": Problem}})
def read_pull(
    owner: GitHubName,
    name: GitHubName,
    number: Annotated[int, Path(ge=1, le=2**31 - 1)],
    session: ReadSessionDep,
) -> PullOut:
    """A pull request the bot has seen, with its check (commit status) for every head and the regressions
    accepted on record for it."""
    pull = pulls.pull(session, repo=f"{owner}/{name}", number=number)
    if pull is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"no pull request {owner}/{name}#{number}: no webhook delivered it yet"
        )
    checks = [CheckOut.model_validate(c) for c in pulls.checks_of(session, pull_id=pull.id)]
    accepted = [
        AcceptanceOut.model_validate(a) for a in acceptances.of_pull(session, repo=pull.repo, number=number)
    ]
    own = {k: getattr(pull, k) for k in PullOut.model_fields if k not in ("checks", "acceptances")}
    return PullOut.model_validate({**own, "checks": checks, "acceptances": accepted})


@router.get("/api/rounds/{base}/{head}", responses={404: {"model": Problem}})
def rounds(
    base: str,
    head: str,
    machine: Annotated[str, Query(max_length=MACHINE_NAME_MAX, pattern=MACHINE_NAME_PATTERN)],
    request: Request,
    session: ReadSessionDep,
) -> RoundsOut:
    """Whether ``machine`` should run more rounds of (base, head): its inconclusive cells under the round budget."""
    evaluation = latest_verdict(request, session, base, head)  # 404 until the first evaluation
    policy = judged_by(evaluation)
    budget = policy.max_rounds if policy else 0
    cells = [c for c in open_cells(evaluation.comparisons, budget) if c.machine == machine]
    more = evaluation.verdict == Verdict.INCONCLUSIVE and bool(cells)
    return RoundsOut(
        base_sha=evaluation.base_sha,
        head_sha=evaluation.head_sha,
        machine=machine,
        more=more,
        stale=evaluation.stale,
        budget=budget,
        cells=cells,
    )
