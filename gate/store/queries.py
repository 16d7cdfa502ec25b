"""Every read and write of the store, as keyword-only functions on a Session. Handlers never build SQL."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, namedtuple
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, aliased, selectinload

from gate import stats
from gate.domain import COST_BENCHMARKS, STATUS_ONLY, ComparisonRecord, RunRecord, machine_name_problem
from gate.store.models import (
    ROLES,
    Calibration,
    CellSummary,
    Commit,
    Comparison,
    Environment,
    Evaluation,
    Machine,
    Placement,
    Result,
    Run,
    Token,
    now,
)


def _hash(value: dict) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _get_or_create(session: Session, model, *, key: dict, values: dict | None = None) -> int:
    """Id of the row matching ``key``, inserting it if absent; safe against a concurrent insert of the same key."""
    dialect = sqlite if session.get_bind().dialect.name == "sqlite" else postgresql
    stmt = dialect.insert(model).values(**key, **(values or {})).on_conflict_do_nothing()
    session.execute(stmt)
    return session.scalar(select(model.id).filter_by(**key))


def placement_label(placement: dict) -> str:
    """Where a run's processes ran. ``pool`` is the Numba thread pool the placement granted; each cell's own
    thread count is its ``threads`` (a 1-thread cell runs in a process whose pool has 2)."""
    granted = placement.get("granted") if isinstance(placement.get("granted"), dict) else {}
    label = (
        f"cpus={granted.get('cpus')} mem={granted.get('mem')} "
        f"pool={granted.get('threads')} layer={granted.get('layer')}"
    )
    return label if len(label) <= 200 else label[:197] + "..."  # the column's width; the hash is the identity


@dataclass(frozen=True, kw_only=True)
class IngestReport:
    stored: int  # runs new or replaced
    unchanged: int  # runs already stored with the same content
    results: int  # result rows written


def ingest_runs(session: Session, *, runs: Sequence[RunRecord]) -> IngestReport:
    """Store validated runs in the caller's transaction; identical content is stored once.

    A run is keyed by (machine, commit, asv environment, placement). asv rewrites a commit's result file when it
    measures it again, so a changed file replaces the run's results instead of adding to them.
    """
    stored = unchanged = written = 0
    touched: set[tuple[int, int, int]] = set()
    for record in sorted(runs, key=lambda r: (r.machine, r.commit)):  # one lock order for every upload
        machine_id = _get_or_create(
            session,
            Machine,
            key={"name": record.machine},
            values={
                "fingerprint_hash": record.fingerprint_hash,
                "fingerprint": record.fingerprint,
                "asv_machine": record.asv_machine,
            },
        )
        # Lock the machine's row: uploads of one machine are serialised (PostgreSQL; SQLite serialises all writers).
        machine = session.scalar(select(Machine).where(Machine.id == machine_id).with_for_update())
        machine.last_seen = now()
        machine.fingerprint, machine.fingerprint_hash = record.fingerprint, record.fingerprint_hash
        environment_id = _get_or_create(
            session, Environment, key={"hash": _hash(record.software)}, values={"software": record.software}
        )
        placement_id = _get_or_create(
            session,
            Placement,
            key={"hash": _hash(record.placement)},
            values={"placement": record.placement, "label": placement_label(record.placement)},
        )
        commit_id = _get_or_create(session, Commit, key={"sha": record.commit})
        key = {
            "machine_id": machine_id,
            "commit_id": commit_id,
            "env_name": record.env_name,
            "placement_id": placement_id,
        }
        run = session.scalar(select(Run).filter_by(**key))
        if run is not None and run.digest == record.digest:
            unchanged += 1
            continue
        if run is None:
            run = Run(
                **key,
                environment_id=environment_id,
                source="asv",
                digest=record.digest,
                fingerprint_hash=record.fingerprint_hash,
                started_at=record.started_at,
            )

            session.add(run)
            session.flush()
        else:
            session.execute(delete(Result).where(Result.run_id == run.id))
        run.digest, run.started_at, run.environment_id, run.uploaded_at = (
            record.digest,
            record.started_at,
            environment_id,
            now(),
        )
        run.fingerprint_hash = record.fingerprint_hash
        run.provenance = record.provenance or None
        session.add_all(
            Result(
                run_id=run.id,
                benchmark=r.benchmark,
                task=r.task,
                impl=r.impl,
                num_envs=r.num_envs,
                threads=r.threads,
                status=r.status,
                unit=r.unit,
                value=r.value,
                samples=r.samples,
                message=r.message,
            )
            for r in record.results
        )
        written += len(record.results)
        stored += 1
        touched.add((machine_id, commit_id, placement_id))
    session.flush()
    for machine_id, commit_id, placement_id in touched:
        summarize_cells(session, machine_id=machine_id, commit_id=commit_id, placement_id=placement_id)
    return IngestReport(stored=stored, unchanged=unchanged, results=written)


def summarize_cells(session: Session, *, machine_id: int, commit_id: int, placement_id: int) -> int:
    """Recompute the summaries of one (machine, commit, placement) from every run's samples."""
    rows = session.execute(
        select(Result)
        .join(Run)
        .where(Run.machine_id == machine_id, Run.commit_id == commit_id, Run.placement_id == placement_id)
    ).scalars()
    cells: dict[tuple, list[Result]] = defaultdict(list)
    for r in rows:
        cells[(r.benchmark, r.task, r.impl, r.num_envs or 0, r.threads or 0)].append(r)
    session.execute(
        delete(CellSummary).where(
            CellSummary.machine_id == machine_id,
            CellSummary.commit_id == commit_id,
            CellSummary.placement_id == placement_id,
        )
    )
    for (benchmark, task, impl, num_envs, threads), results in cells.items():
        summary = CellSummary(
            machine_id=machine_id,
            commit_id=commit_id,
            placement_id=placement_id,
            benchmark=benchmark,
            task=task,
            impl=impl,
            num_envs=num_envs,
            threads=threads,
        )
        failed = [r for r in results if r.status == "failed"]
        groups = [g for r in results for g in r.samples]
        if failed and benchmark in COST_BENCHMARKS:
            summary.status = "failed"
            summary.message = next((r.message for r in failed if r.message), "") or (
                "the cost pass raised in asv (a kernel that fails under callgrind, or no valgrind on the runner: "
                "apt-get install valgrind); asv's output names the exception"
            )
        elif failed:
            summary.status = "failed"
            summary.message = next((r.message for r in failed if r.message), "") or (
                "the benchmark raised (parity or construction failure) in asv; asv's output names the exception"
            )
        elif benchmark in STATUS_ONLY:  # passed: nothing to summarize (the value stays in the results)
            summary.status, summary.samples, summary.groups = "ok", len(results), len(results)
        elif benchmark in COST_BENCHMARKS:  # exact: one value per run, no samples to bootstrap
            try:
                _fill(summary, stats.exact([r.value for r in results]))
            except stats.InsufficientData as exc:
                summary.status, summary.message = "insufficient", str(exc)
        elif not groups:
            summary.status = "insufficient"
            summary.message = "no samples recorded (run asv with --record-samples)"
        else:
            try:
                s = stats.summarize(groups)
            except stats.InsufficientData as exc:
                summary.status, summary.message = "insufficient", str(exc)
            else:
                _fill(summary, s)
        session.add(summary)
    return len(cells)


def _fill(summary: CellSummary, s: stats.Summary) -> None:
    summary.status = "ok"
    summary.center, summary.se, summary.low, summary.high = s.center, s.se, s.low, s.high
    summary.between_se = s.between_se
    summary.samples, summary.groups = s.samples, s.groups


# --- reads -------------------------------------------------------------------------------------------------


def commit_id(session: Session, *, sha: str) -> int | None:
    return session.scalar(select(Commit.id).where(Commit.sha == sha))


SummaryRow = namedtuple("SummaryRow", [c.name for c in CellSummary.__table__.c])


def summaries(
    session: Session, *, commit_sha: str, machines: Iterable[str] | None = None
) -> list[tuple[str, str, str, CellSummary]]:
    """(machine name, placement hash, placement label, summary row) of every cell measured on a commit.

    The summary is a plain row with CellSummary's columns as attributes (no ORM identity: evaluations read many).
    """
    stmt = (
        select(Machine.name, Placement.hash, Placement.label, CellSummary.__table__)
        .join(Commit, CellSummary.commit_id == Commit.id)
        .join(Machine, CellSummary.machine_id == Machine.id)
        .join(Placement, CellSummary.placement_id == Placement.id)
        .where(Commit.sha == commit_sha)
    )
    if machines is not None:
        stmt = stmt.where(Machine.name.in_(list(machines)))
    return [(row[0], row[1], row[2], SummaryRow._make(row[3:])) for row in session.execute(stmt)]


def implementations(session: Session, *, commit_sha: str) -> set[str]:
    """Every implementation with a measured cell on a commit (an impl's baseline included)."""
    stmt = (
        select(CellSummary.impl)
        .join(Commit, CellSummary.commit_id == Commit.id)
        .where(Commit.sha == commit_sha)
        .distinct()
    )
    return set(session.scalars(stmt))


def fingerprints(session: Session, *, commit_sha: str) -> dict[str, set[str]]:
    """Machine name -> the hardware fingerprint hashes of its runs of a commit."""
    stmt = (
        select(Machine.name, Run.fingerprint_hash)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha == commit_sha)
        .distinct()
    )
    out: dict[str, set[str]] = defaultdict(set)
    for name, fingerprint in session.execute(stmt):
        out[name].add(fingerprint)
    return dict(out)


def provenances(session: Session, *, commit_sha: str) -> dict[tuple[str, str], list[dict]]:
    """(machine name, placement hash) -> the provenance of each run of a commit there ({}: not recorded)."""
    stmt = (
        select(Machine.name, Placement.hash, Run.provenance)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .where(Commit.sha == commit_sha)
        .order_by(Run.id)
    )
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for name, placement, provenance in session.execute(stmt):
        out[(name, placement)].append(provenance or {})
    return dict(out)


def machines(session: Session) -> list[Machine]:
    return list(session.scalars(select(Machine).order_by(Machine.name)))


def runs(
    session: Session, *, machine: str | None = None, commit_sha: str | None = None, limit: int = 100
) -> list[tuple[Run, str, str, str]]:
    """(run, machine name, commit sha, placement label), newest first."""
    stmt = (
        select(Run, Machine.name, Commit.sha, Placement.label)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .order_by(Run.uploaded_at.desc(), Run.id.desc())
        .limit(limit)
    )
    if machine is not None:
        stmt = stmt.where(Machine.name == machine)
    if commit_sha is not None:
        stmt = stmt.where(Commit.sha == commit_sha)
    return [tuple(row) for row in session.execute(stmt)]


def count_results(session: Session) -> int:
    return session.scalar(select(func.count(Result.id)))


def save_evaluation(
    session: Session,
    *,
    base_sha: str,
    head_sha: str,
    verdict: str,
    policy_source: str,
    policy: dict,
    reasons: list[str],
    comparisons: Sequence[ComparisonRecord],
    created_at: datetime | None = None,
    official: bool = True,
    requested_by: str | None = None,
) -> Evaluation:
    evaluation = Evaluation(
        created_at=created_at or now(),
        official=official,
        requested_by=requested_by,
        base_commit_id=_get_or_create(session, Commit, key={"sha": base_sha}),
        head_commit_id=_get_or_create(session, Commit, key={"sha": head_sha}),
        verdict=verdict,
        policy_source=policy_source,
        policy=policy,
        reasons=reasons,
    )
    session.add(evaluation)
    session.flush()
    if comparisons:  # one executemany, not an ORM object per cell
        session.execute(
            insert(Comparison), [{**asdict(c), "evaluation_id": evaluation.id} for c in comparisons]
        )
    session.expire(evaluation, ["comparisons"])
    return evaluation


def latest_evaluation(session: Session, *, head_sha: str, base_sha: str | None = None) -> Evaluation | None:
    """The newest stored official evaluation of ``head_sha`` (the one that saw the most data): against
    ``base_sha`` when given, else against any base. Ad-hoc evaluations are never the verdict."""
    head = commit_id(session, sha=head_sha)
    if head is None:
        return None
    stmt = select(Evaluation).where(Evaluation.head_commit_id == head, Evaluation.official.is_(True))
    if base_sha is not None:
        base = commit_id(session, sha=base_sha)
        if base is None:
            return None
        stmt = stmt.where(Evaluation.base_commit_id == base)
    return session.scalar(
        stmt.order_by(Evaluation.created_at.desc(), Evaluation.id.desc())
        .limit(1)
        .options(selectinload(Evaluation.comparisons))
    )


def uploads(session: Session, *, commit_shas: Iterable[str]) -> dict[int, datetime]:
    """Run id -> when it was uploaded, for every run of these commits."""
    stmt = select(Run.id, Run.uploaded_at).join(Commit, Run.commit_id == Commit.id)
    return {run: at for run, at in session.execute(stmt.where(Commit.sha.in_(list(commit_shas))))}


def last_upload(session: Session, *, commit_shas: Iterable[str]) -> datetime | None:
    """When results of any of these commits last arrived."""
    return session.scalar(
        select(func.max(Run.uploaded_at))
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha.in_(list(commit_shas)))
    )


def evaluation(session: Session, *, evaluation_id: int) -> Evaluation | None:
    return session.scalar(
        select(Evaluation).where(Evaluation.id == evaluation_id).options(selectinload(Evaluation.comparisons))
    )


def evaluations(session: Session, *, limit: int = 50) -> list[tuple[Evaluation, str, str]]:
    """(evaluation, base sha, head sha), newest first."""
    base, head = aliased(Commit), aliased(Commit)
    stmt = (
        select(Evaluation, base.sha, head.sha)
        .join(base, Evaluation.base_commit_id == base.id)
        .join(head, Evaluation.head_commit_id == head.id)
        .order_by(Evaluation.id.desc())
        .limit(limit)
    )
    return [tuple(row) for row in session.execute(stmt)]


def evaluation_pairs(
    session: Session, *, commit_sha: str | None = None, official: bool = True
) -> list[tuple[str, str]]:
    """Distinct (base, head) with a stored verdict (an official one unless ``official`` is False), those that
    involve ``commit_sha`` when given: re-evaluated when its results change."""
    base, head = aliased(Commit), aliased(Commit)
    stmt = (
        select(base.sha, head.sha)
        .select_from(Evaluation)
        .join(base, Evaluation.base_commit_id == base.id)
        .join(head, Evaluation.head_commit_id == head.id)
        .distinct()
        .order_by(base.sha, head.sha)
    )
    if commit_sha is not None:
        stmt = stmt.where((base.sha == commit_sha) | (head.sha == commit_sha))
    if official:
        stmt = stmt.where(Evaluation.official.is_(True))
    return [tuple(row) for row in session.execute(stmt)]


def save_calibration(
    session: Session, *, machine: str, design: str, threads: int, floor: stats.NoiseFloor, commit_sha: str
) -> None:
    machine_id = session.scalar(select(Machine.id).where(Machine.name == machine))
    session.execute(
        delete(Calibration).where(
            Calibration.machine_id == machine_id, Calibration.design == design, Calibration.threads == threads
        )
    )
    session.add(
        Calibration(
            machine_id=machine_id,
            design=design,
            threads=threads,
            noise_floor=floor.noise_floor,
            mde=floor.mde,
            cells=floor.cells,
            commit_sha=commit_sha,
        )
    )


def calibrations(session: Session, *, machines: Iterable[str] | None = None) -> list[tuple[str, Calibration]]:
    stmt = (
        select(Machine.name, Calibration)
        .join(Machine, Calibration.machine_id == Machine.id)
        .order_by(Calibration.design, Calibration.threads)
    )
    if machines is not None:
        stmt = stmt.where(Machine.name.in_(list(machines)))
    return [tuple(row) for row in session.execute(stmt)]


# --- tokens ------------------------------------------------------------------------------------------------


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(
    session: Session, *, name: str, secret: str, machine: str | None = None, role: str = "runner"
) -> Token:
    """A new token; ``machine`` binds a runner's uploads to that machine name. Raises ValueError (what to do)
    for a name held by a live token, an unknown role or a machine name that is not one."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    if machine is not None and (problem := machine_name_problem(machine)):
        raise ValueError(problem)
    if not 0 < len(name) <= 200 or not name.isprintable():
        raise ValueError(f"a token name is 1-200 printable characters, got {name[:40]!r}")
    live = select(Token.id).where(Token.name == name, Token.revoked.is_(False))
    if session.scalar(live) is not None:
        raise ValueError(f"a token named {name!r} exists; revoke it first or choose another name")
    token = Token(name=name, hash=token_hash(secret), machine=machine, role=role)
    session.add(token)
    session.flush()
    return token


def token_by_secret(session: Session, *, secret: str) -> Token | None:
    return session.scalar(select(Token).where(Token.hash == token_hash(secret), Token.revoked.is_(False)))


def revoke_token(session: Session, *, name: str) -> bool:
    token = session.scalar(select(Token).where(Token.name == name, Token.revoked.is_(False)))
    if token is None:
        return False
    token.revoked = True
    return True


def raw_samples(session: Session, *, commit_sha: str, benchmark: str) -> dict[tuple, list[list[float]]]:
    """(machine, placement hash, task, impl, num_envs, threads) -> every process's samples of a benchmark."""
    stmt = (
        select(Machine.name, Placement.hash, Result)
        .join(Run, Result.run_id == Run.id)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Placement, Run.placement_id == Placement.id)
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha == commit_sha, Result.benchmark == benchmark, Result.status == "ok")
    )
    out: dict[tuple, list[list[float]]] = defaultdict(list)
    for machine, placement, r in session.execute(stmt):
        out[(machine, placement, r.task, r.impl, r.num_envs, r.threads)].extend(r.samples)
    return dict(out)
