"""What the dashboard shows, built once from the store as the wire schemas below.

The JSON endpoints return these models and the pages render the same models, so a page never shows a number the
API does not give. Ratios and intervals come from the gate's own statistics (``gate.stats``) and, for decisions,
from the stored evaluations: the dashboard computes no verdict of its own.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from gate import stats
from gate.domain.benchmarks import PAIRED, TIME
from gate.domain.vocabulary import Decision, Kind, Status
from gate.evaluate import summary_of
from gate.services.verdicts import is_stale
from gate.stats import changepoints
from gate.store import dashboard as reads
from gate.store import queries
from gate.store.columns import utc

METRICS = {"paired": PAIRED, "time": TIME}


class NotFound(LookupError):
    """What the request named does not exist: the pages answer 404 with this message."""


class CalibrationOut(BaseModel):
    design: str
    threads: int
    noise_floor: float = Field(description="A/A noise floor: the smallest fail margin across processes")
    mde: float = Field(description="minimum detectable effect at this noise")
    commit: str


class MachineRow(BaseModel):
    name: str
    fingerprint: dict
    placements: list[str]
    last_commit: str | None
    last_run: datetime | None = Field(description="the commit date asv recorded for the newest run")
    last_upload: datetime | None
    calibrations: list[CalibrationOut]


class MatrixCell(BaseModel):
    task: str
    num_envs: int
    threads: int
    ratio: float | None = Field(description="impl / baseline time ratio (paired), above 1 is slower")
    low: float | None
    high: float | None
    decision: str = Field(description="the stored evaluation's decision; 'not evaluated' when there is none")
    signal: str = Field(default="none", description="what decided: cost, time, base, sources, or none")
    cost_ratio: float | None = Field(default=None, description="impl / baseline cost ratio at 1 thread")
    reason: str
    groups: int


class Matrix(BaseModel):
    machine: str
    commit: str
    placement: str = Field(description="the placement shown: the newest run's unless asked for")
    placements: list[str] = Field(description="every placement measured on this commit")
    impl: str
    baseline: str
    evaluation_id: int | None = Field(description="the evaluation the decisions come from")
    evaluation_base: str | None = Field(description="its base commit (its policy was read from there)")
    stale: bool = Field(description="results arrived after that evaluation: its decisions may be out of date")
    cells: list[MatrixCell]


class Point(BaseModel):
    commit: str
    date: datetime | None
    value: float = Field(description="the estimate: a time in seconds (time) or a ratio (paired)")
    low: float
    high: float
    groups: int
    placement: str


class ChangePoint(BaseModel):
    index: int = Field(description="position in points of the first commit after the step")
    commit: str
    before: float
    after: float
    change: float = Field(description="after / before - 1")


class History(BaseModel):
    machine: str
    along: str = Field(
        description="which commits, in which order: the main branch's first parents when known"
    )
    placement: str
    placements: list[str] = Field(description="every placement this cell was measured under on this machine")
    total: int = Field(description="commits with this cell; points holds the newest `limit` of them")
    metric: str = Field(description="paired (impl / hand-written ratio) or time (seconds per call)")
    task: str
    impl: str
    num_envs: int
    threads: int
    points: list[Point]
    change_points: list[ChangePoint]
    method: str = Field(description="how the change points were found")


class CompareRow(BaseModel):
    machine: str
    commit: str | None
    placement: str | None
    point: Point | None = Field(
        description="the cell at the machine's newest commit; null if not measured there"
    )


class Compare(BaseModel):
    metric: str
    task: str
    impl: str
    num_envs: int
    threads: int
    machines: list[CompareRow]


def machines(session: Session) -> list[MachineRow]:
    rows = []
    for entry in reads.overview(session):
        m, last = entry["machine"], entry["last_run"]
        rows.append(
            MachineRow(
                name=m.name,
                fingerprint=m.fingerprint,
                placements=entry["placements"],
                last_commit=last[0] if last else None,
                last_run=_utc(last[1]) if last else None,
                last_upload=_utc(last[2]) if last else None,
                calibrations=[
                    CalibrationOut(
                        design=c.design,
                        threads=c.threads,
                        noise_floor=c.noise_floor,
                        mde=c.mde,
                        commit=c.commit_sha,
                    )
                    for c in entry["calibrations"]
                ],
            )
        )
    return rows


def _utc(moment: datetime | None) -> datetime | None:
    """Every time the dashboard shows is UTC, whatever the store's session time zone."""
    return None if moment is None else utc(moment).astimezone(UTC)


def _machine(session: Session, name: str):
    m = reads.machine(session, name=name)
    if m is None:
        known = ", ".join(x.name for x in queries.machines(session)) or "none yet"
        raise NotFound(f"no machine named {name!r} (known: {known})")
    return m


def _level(c) -> tuple[float, float, float]:
    """A summary's estimate with its interval, by the same arithmetic as the gate's paired cells."""
    e = stats.paired_estimate(summary_of(c), margin=0.0)
    return e.ratio, e.low, e.high


def matrix(
    session: Session,
    *,
    machine: str,
    commit: str | None,
    impl: str | None = None,
    baseline: str | None = None,
    placement: str | None = None,
    base: str | None = None,
) -> Matrix:  # default: the first impl paired on the commit, the baseline its evaluation judged it by
    m = _machine(session, machine)
    newest = reads.newest_run(session, machine_id=m.id)
    if newest is None:
        raise NotFound(f"machine {machine!r} has no runs")
    if commit is None:
        commit = newest[0]
    elif not reads.commit_measured(session, machine_id=m.id, sha=commit):
        raise NotFound(f"machine {machine!r} has no results for commit {commit!r}")
    paired = [
        (label, c)
        for _, _, label, c in queries.summaries(session, commit_sha=commit, machines=[machine])
        if c.benchmark == PAIRED
    ]
    if impl is None:
        impl = min((c.impl for _, c in paired), default="")
    summaries = [(label, c) for label, c in paired if c.impl == impl]
    placements = sorted({label for label, _ in summaries})
    if placement is None:
        placement = newest[3] if newest[3] in placements or not placements else placements[0]
    elif placement not in placements:
        raise NotFound(
            f"{machine!r} measured {impl} at {commit[:12]} under {placements or 'no placement'}, not {placement!r}"
        )
    evaluation = queries.latest_evaluation(session, head_sha=commit, base_sha=base)
    if base is not None and evaluation is None:
        raise NotFound(f"no evaluation of base {base[:12]} -> head {commit[:12]}")
    if baseline is None:
        judged = (
            [c.baseline for c in evaluation.comparisons if c.kind == Kind.IMPL_VS_BASELINE]
            if evaluation
            else []
        )
        baseline = next(iter(judged), "")
    decided = {}
    if evaluation is not None:
        for c in evaluation.comparisons:
            if (c.machine, c.kind, c.impl, c.baseline, c.detail) == (
                machine,
                Kind.IMPL_VS_BASELINE,
                impl,
                baseline,
                placement,
            ):
                decided[(c.task, c.num_envs, c.threads)] = c
    cells = []
    for label, c in summaries:
        if label != placement:
            continue
        row = decided.get((c.task, c.num_envs, c.threads))
        signal, cost_ratio = ("none", None) if row is None else (row.signal, row.cost_ratio)
        if row is not None:
            ratio, low, high, decision, reason = row.ratio, row.low, row.high, row.decision, row.reason
        elif c.status == Status.OK:
            (ratio, low, high), decision, reason = (
                _level(c),
                "not evaluated",
                "no stored evaluation of this commit",
            )
        else:
            ratio = low = high = None
            decision, reason = (Decision.FAIL if c.status == Status.FAILED else Decision.ERROR), c.message
        cells.append(
            MatrixCell(
                task=c.task,
                num_envs=c.num_envs,
                threads=c.threads,
                ratio=ratio,
                low=low,
                high=high,
                decision=decision,
                signal=signal,
                cost_ratio=cost_ratio,
                reason=reason,
                groups=c.groups,
            )
        )
    cells.sort(key=lambda x: (x.task, x.num_envs, x.threads))
    return Matrix(
        machine=machine,
        commit=commit,
        placement=placement,
        placements=placements,
        impl=impl,
        baseline=baseline,
        evaluation_id=evaluation.id if evaluation is not None else None,
        evaluation_base=evaluation.base_sha if evaluation is not None else None,
        stale=evaluation is not None and is_stale(session, evaluation),
        cells=cells,
    )


def _points(rows) -> list[Point]:
    points = []
    for sha, date, label, c in rows:
        if c.status != Status.OK:
            continue
        value, low, high = _level(c)
        points.append(
            Point(
                commit=sha, date=_utc(date), value=value, low=low, high=high, groups=c.groups, placement=label
            )
        )
    return points


def _metric(metric: str) -> str:
    if metric not in METRICS:
        raise NotFound(f"no metric {metric!r}: use one of {', '.join(METRICS)}")
    return METRICS[metric]


HISTORY_LIMIT = 200  # newest commits shown (and searched for steps) by default
HISTORY_MAX = 1000


def history(
    session: Session,
    *,
    machine: str,
    metric: str,
    task: str,
    impl: str,
    num_envs: int,
    threads: int,
    limit: int = HISTORY_LIMIT,
    placement: str | None = None,
    mainline: list[str] | None = None,
    branch: str = "main",
    find_steps: bool = True,
) -> History:
    """The cell along ``mainline`` (the branch's first parents, oldest first) when any of its commits is on it;
    else along every measured commit by the commit date asv recorded. One placement: ``placement``, or the
    newest point's."""
    m = _machine(session, machine)
    rows = reads.history(
        session,
        machine_id=m.id,
        benchmark=_metric(metric),
        task=task,
        impl=impl,
        num_envs=num_envs,
        threads=threads,
    )
    if not rows:
        raise NotFound(f"no {metric} results for {task} {impl} N={num_envs} threads={threads} on {machine!r}")
    position = {sha: i for i, sha in enumerate(mainline or [])}
    on_main = [r for r in rows if r[0] in position]
    if on_main:
        rows, along = sorted(on_main, key=lambda r: position[r[0]]), f"{branch}, first parents (git)"
    else:
        along = f"every measured commit by commit date (none is on {branch} in the service's repository)"
    placements = sorted({r[2] for r in rows})
    placement = placement or rows[-1][2]
    if placement not in placements:
        raise NotFound(f"this cell was measured under {placements} on {machine!r}, not {placement!r}")
    rows = [r for r in rows if r[2] == placement]
    points = _points([r for r in rows if r[3].status == Status.OK][-limit:])
    point_se = [math.log(p.high / p.low) / 3.92 for p in points if p.high > p.low]
    steps = (
        changepoints.detect(
            [p.value for p in points], min_sigma=float(np.median(point_se)) if point_se else 0.0
        )
        if find_steps
        else []
    )
    return History(
        machine=machine,
        along=along,
        placement=placement,
        placements=placements,
        metric=metric,
        task=task,
        impl=impl,
        num_envs=num_envs,
        threads=threads,
        points=points,
        total=len(rows),
        change_points=[
            ChangePoint(
                index=s.index, commit=points[s.index].commit, before=s.before, after=s.after, change=s.change
            )
            for s in steps
        ],
        method=f"{changepoints.CHOSEN}: penalty {changepoints.PENALTY} x sigma x log(n) on log values",
    )


def compare(session: Session, *, metric: str, task: str, impl: str, num_envs: int, threads: int) -> Compare:
    benchmark = _metric(metric)
    rows = []
    for m in queries.machines(session):
        newest = reads.newest_run(session, machine_id=m.id)
        point = None
        if newest is not None:
            key = (benchmark, task, impl, num_envs, threads, newest[3])  # the newest run's placement
            found = [
                (newest[0], newest[1], label, c)
                for _, _, label, c in queries.summaries(session, commit_sha=newest[0], machines=[m.name])
                if (c.benchmark, c.task, c.impl, c.num_envs, c.threads, label) == key
            ]
            point = next(iter(_points(found)), None)
        rows.append(
            CompareRow(
                machine=m.name,
                commit=newest[0] if newest else None,
                placement=newest[3] if newest else None,
                point=point,
            )
        )
    if not any(r.point for r in rows):
        raise NotFound(f"no machine measured {metric} of {task} {impl} N={num_envs} threads={threads}")
    return Compare(metric=metric, task=task, impl=impl, num_envs=num_envs, threads=threads, machines=rows)
