"""Thread curves: one machine's throughput against the thread count, one line per implementation, for a task and
scale at one commit and placement (the newest run's by default), from the stored ``HotSlice`` summaries."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from gate import stats
from gate.domain.benchmarks import TIME
from gate.domain.machines import host_of
from gate.domain.vocabulary import Status
from gate.evaluate import summary_of
from gate.store import dashboard as reads
from gate.store import queries


class CurvePoint(BaseModel):
    threads: int
    seconds: float = Field(description="median seconds per update_state call")
    low: float = Field(description="95% interval of the seconds, low end")
    high: float
    throughput: float = Field(description="env updates per second: num_envs / seconds")
    processes: int


class CurveLine(BaseModel):
    impl: str
    points: list[CurvePoint]
    best_threads: int = Field(description="the thread count of the highest throughput")


class PlacementBest(BaseModel):
    machine: str = Field(description="the asv machine name of one placement of the host (<host>__<label>)")
    impl: str
    best_threads: int
    throughput: float = Field(description="env updates per second at that count")


class ThreadCurve(BaseModel):
    machine: str
    commit: str
    placement: str
    placements: list[str]
    task: str
    num_envs: int
    lines: list[CurveLine]
    side_by_side: list[PlacementBest] = Field(
        default_factory=list,
        description="each implementation's fastest count at every placement of this machine's host measured at "
        "the commit (node0 bound, interleaved, ...), this one included; empty for a machine of one placement",
    )


def _point(c, num_envs: int) -> CurvePoint:
    # the level and interval of a summary, by the arithmetic of the history chart and the gate's paired cells
    level = stats.paired_estimate(summary_of(c), margin=0.0)
    return CurvePoint(
        threads=c.threads,
        seconds=level.ratio,
        low=level.low,
        high=level.high,
        throughput=num_envs / level.ratio,
        processes=c.groups,
    )


def threads(
    session: Session,
    *,
    machine: str,
    task: str,
    num_envs: int,
    commit: str | None = None,
    placement: str | None = None,
    not_found=LookupError,
) -> ThreadCurve:
    """The curve; ``not_found(message)`` is raised for a machine, commit, cell or placement it does not have."""
    m = reads.machine(session, name=machine)
    newest = None if m is None else reads.newest_run(session, machine_id=m.id)
    if newest is None:
        raise not_found(f"no runs of a machine named {machine!r}")
    commit = commit or newest[0]
    found = [
        (label, c)
        for _, _, label, c in queries.summaries(session, commit_sha=commit, machines=[machine])
        if c.benchmark == TIME and c.task == task and c.num_envs == num_envs and c.status == Status.OK
    ]
    placements = sorted({label for label, _ in found})
    if not placements:
        raise not_found(f"{machine!r} has no {task} timings at {num_envs} envs for commit {commit[:12]}")
    if placement is None:
        placement = newest[3] if newest[3] in placements else placements[0]
    elif placement not in placements:
        raise not_found(f"{machine!r} timed {task} at {commit[:12]} under {placements}, not {placement!r}")
    by_impl: dict[str, list[CurvePoint]] = {}
    for label, c in found:
        if label == placement:
            by_impl.setdefault(c.impl, []).append(_point(c, num_envs))
    lines = _lines(by_impl)
    return ThreadCurve(
        machine=machine,
        commit=commit,
        placement=placement,
        placements=placements,
        task=task,
        num_envs=num_envs,
        lines=lines,
        side_by_side=_side_by_side(session, machine, commit, task, num_envs),
    )


def _lines(by_impl: dict[str, list[CurvePoint]]) -> list[CurveLine]:
    return [
        CurveLine(
            impl=impl,
            points=sorted(points, key=lambda p: p.threads),
            best_threads=max(points, key=lambda p: p.throughput).threads,
        )
        for impl, points in sorted(by_impl.items())
    ]


def _side_by_side(
    session: Session, machine: str, commit: str, task: str, num_envs: int
) -> list[PlacementBest]:
    """Each implementation's fastest count at every placement of ``machine``'s host (its asv machines
    ``<host>__<label>``) at ``commit``, or [] when the host was measured at one placement."""
    host = host_of(machine)
    by_machine: dict[str, dict[str, list[CurvePoint]]] = {}
    for name, _, _, c in queries.summaries(session, commit_sha=commit):
        if host_of(name) == host and (c.benchmark, c.task, c.num_envs, c.status) == (
            TIME,
            task,
            num_envs,
            Status.OK,
        ):
            by_machine.setdefault(name, {}).setdefault(c.impl, []).append(_point(c, num_envs))
    if len(by_machine) < 2:
        return []
    return [
        PlacementBest(
            machine=name,
            impl=line.impl,
            best_threads=line.best_threads,
            throughput=max(p.throughput for p in line.points),
        )
        for name, by_impl in sorted(by_machine.items())
        for line in _lines(by_impl)
    ]
