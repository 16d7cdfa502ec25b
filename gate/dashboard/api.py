"""The dashboard's JSON endpoints: every chart and table on its pages is one of these responses (the pages call
these functions, so a page and its endpoint cannot disagree)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status

from gate import git
from gate.dashboard import curves, data
from gate.web import Problem, ReadSessionDep

router = APIRouter(prefix="/api/dashboard", tags=["dashboard"], responses={404: {"model": Problem}})


@dataclass
class Cell:
    """One benchmark cell: the query parameters of the history and compare endpoints."""

    task: Annotated[str, Query(max_length=64)]
    impl: Annotated[str, Query(max_length=64)]
    num_envs: Annotated[int, Query(ge=1, le=2**31 - 1)]  # the store's cell columns are 32-bit
    threads: Annotated[int, Query(ge=1, le=2**31 - 1)]
    metric: Literal["paired", "time"] = "paired"  # paired: ratio to the hand-written kernel; time: seconds


CellDep = Annotated[Cell, Depends()]
Limit = Annotated[int, Query(ge=2, le=data.HISTORY_MAX, description="the newest commits shown")]
PlacementQ = Annotated[str | None, Query(description="a placement label; default: the newest run's")]


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
    commit: Annotated[str | None, Query(description="a full SHA; default: the machine's newest run")] = None,
    impl: Annotated[
        str | None, Query(description="default: the first implementation paired on the commit")
    ] = None,
    baseline: Annotated[
        str | None, Query(description="default: the one its evaluation judged impl against")
    ] = None,
    placement: PlacementQ = None,
    base: Annotated[
        str | None, Query(description="decisions from this base's evaluation; default: newest")
    ] = None,
) -> data.Matrix:
    """The machine's task x num_envs x threads cells: impl / baseline ratio, interval and decision."""
    return found(
        data.matrix,
        session,
        machine=machine,
        commit=commit,
        impl=impl,
        baseline=baseline,
        placement=placement,
        base=base,
    )


@router.get("/history/{machine}")
def history(
    machine: str,
    request: Request,
    session: ReadSessionDep,
    cell: CellDep,
    limit: Limit = data.HISTORY_LIMIT,
    placement: PlacementQ = None,
) -> data.History:
    """One cell along main on one machine: per-commit estimate with its interval, and the detected steps."""
    return cell_history(machine, request, session, cell, limit=limit, placement=placement)


def cell_history(
    machine, request, session, cell: Cell, *, limit, placement, find_steps: bool = True
) -> data.History:
    """The history endpoint's answer; the page asks without the step search, which its chart gets from here."""
    branch = request.app.state.main_branch
    return found(
        data.history,
        session,
        machine=machine,
        **asdict(cell),
        limit=limit,
        placement=placement,
        mainline=git.mainline(request.app.state.repo, branch),
        branch=branch,
        find_steps=find_steps,
    )


@router.get("/compare")
def compare(session: ReadSessionDep, cell: CellDep) -> data.Compare:
    """One cell on every machine, at each machine's newest commit and placement."""
    return found(data.compare, session, **asdict(cell))


@router.get("/threads/{machine}")
def threads(
    machine: str,
    session: ReadSessionDep,
    task: Annotated[str, Query(max_length=64)],
    num_envs: Annotated[int, Query(ge=1, le=2**31 - 1)],
    commit: Annotated[str | None, Query(description="a full SHA; default: the machine's newest run")] = None,
    placement: PlacementQ = None,
) -> curves.ThreadCurve:
    """Throughput against threads on one machine, one line per implementation, for a task and scale."""
    return found(
        curves.threads,
        session,
        machine=machine,
        task=task,
        num_envs=num_envs,
        commit=commit,
        placement=placement,
        not_found=data.NotFound,
    )
