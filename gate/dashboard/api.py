"""The dashboard's JSON endpoints: every chart and table on its pages is one of these responses."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, status

from gate.api.deps import ReadSessionDep
from gate.api.schemas import Problem
from gate.dashboard import data

router = APIRouter(prefix="/api/dashboard", tags=["dashboard"], responses={404: {"model": Problem}})


def found(build, *args, **kwargs):
    """``build(...)``, with ``data.NotFound`` as a 404 that says what was not found."""
    try:
        return build(*args, **kwargs)
    except data.NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


@router.get("/machines")
def machines(session: ReadSessionDep) -> list[data.MachineRow]:
    """Every machine: fingerprint, placements, newest run, A/A noise floor and minimum detectable effect."""
    return data.machines(session)


@router.get("/matrix/{machine}")
def matrix(
    machine: str,
    session: ReadSessionDep,
    commit: str | None = Query(default=None, description="a full SHA; default: the machine's newest run"),
    impl: str = "assembled",
    baseline: str = "handwritten",
) -> data.Matrix:
    """The machine's task x num_envs x threads cells: impl / baseline ratio, interval and decision."""
    return found(data.matrix, session, machine=machine, commit=commit, impl=impl, baseline=baseline)


@router.get("/history/{machine}")
def history(
    machine: str,
    session: ReadSessionDep,
    task: str,
    impl: str,
    num_envs: int,
    threads: int,
    metric: str = Query(default="paired", description="paired (ratio to hand-written) or time (seconds)"),
    limit: int = Query(default=data.HISTORY_LIMIT, description=f"newest commits, 2..{data.HISTORY_MAX}"),
) -> data.History:
    """One cell along main on one machine: per-commit estimate with its interval, and the detected steps."""
    return found(
        data.history, session, machine=machine, metric=metric, task=task, impl=impl, num_envs=num_envs,
        threads=threads, limit=limit,
    )  # fmt: skip


@router.get("/compare")
def compare(
    session: ReadSessionDep,
    task: str,
    impl: str,
    num_envs: int,
    threads: int,
    metric: str = "paired",
) -> data.Compare:
    """One cell on every machine, at each machine's newest commit."""
    return found(
        data.compare, session, metric=metric, task=task, impl=impl, num_envs=num_envs, threads=threads
    )
