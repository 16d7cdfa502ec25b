"""cost signal: which signal decided a comparison and the cost ratio beside the time ratio; why a result failed;
one calibration per cost metric; placement labels name the Numba pool ("pool=2"), not a thread count; machine
ids hash CPUs and topology, not node memory (which drifts on ballooned VMs)

Revision ID: 0004
Revises: 0003
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_KEYS = ("arch", "cpu_model", "cpu_flags", "logical_cpus", "physical_cores", "sockets", "caches")


def _old_id(fp: dict) -> str:
    """gate.domain.machines.machine_id before this revision (node memory included), frozen here."""
    payload = json.dumps({k: fp[k] for k in (*_KEYS, "numa_nodes")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _new_id(fp: dict) -> str:
    """gate.domain.machines.machine_id as of this revision, frozen here."""
    payload = {k: fp[k] for k in _KEYS}
    payload["numa_nodes"] = {node: info["cpus"] for node, info in fp["numa_nodes"].items()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _rehash() -> None:
    """Runs that saw the hardware their machine last reported get that hardware's new id; runs of other
    hardware keep theirs (the store holds one fingerprint per machine, so only those can be recomputed)."""
    bind = op.get_bind()
    machine = sa.table(
        "machine", sa.column("id"), sa.column("fingerprint", sa.JSON), sa.column("fingerprint_hash")
    )
    run = sa.table("run", sa.column("machine_id"), sa.column("fingerprint_hash"))
    for row in bind.execute(sa.select(machine.c.id, machine.c.fingerprint)).all():
        fp = row.fingerprint if isinstance(row.fingerprint, dict) else json.loads(row.fingerprint or "null")
        try:
            old, new = _old_id(fp), _new_id(fp)
        except (KeyError, TypeError, AttributeError):
            continue  # not a fingerprint this revision can read: leave it
        bind.execute(
            run.update()
            .where(run.c.machine_id == row.id, run.c.fingerprint_hash == old)
            .values(fingerprint_hash=new)
        )
        bind.execute(machine.update().where(machine.c.id == row.id).values(fingerprint_hash=new))


def _relabel(old: str, new: str) -> None:
    placement = sa.table("placement", sa.column("id", sa.Integer), sa.column("label", sa.String))
    bind = op.get_bind()
    for row in bind.execute(sa.select(placement.c.id, placement.c.label)).all():
        if row.label and f" {old}=" in row.label:
            bind.execute(
                placement.update()
                .where(placement.c.id == row.id)
                .values(label=row.label.replace(f" {old}=", f" {new}="))
            )


def upgrade() -> None:
    with op.batch_alter_table("comparison") as batch:
        batch.add_column(sa.Column("signal", sa.String(16), nullable=False, server_default="time"))
        batch.add_column(sa.Column("cost_ratio", sa.Float(), nullable=True))
    comparison = sa.table("comparison", sa.column("kind"), sa.column("decision"), sa.column("signal"))
    op.execute(
        comparison.update()
        .where(sa.or_(comparison.c.kind.in_(("correctness", "machine")), comparison.c.decision == "error"))
        .values(signal="none")
    )
    with op.batch_alter_table("result") as batch:
        batch.add_column(sa.Column("message", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("calibration") as batch:
        batch.alter_column("design", type_=sa.String(32), existing_type=sa.String(16))
    _relabel("threads", "pool")
    _rehash()


def downgrade() -> None:
    _relabel("pool", "threads")
    op.execute(sa.text("DELETE FROM calibration WHERE design LIKE 'cost:%'"))
    with op.batch_alter_table("calibration") as batch:
        batch.alter_column("design", type_=sa.String(16), existing_type=sa.String(32))
    with op.batch_alter_table("result") as batch:
        batch.drop_column("message")
    with op.batch_alter_table("comparison") as batch:
        batch.drop_column("cost_ratio")
        batch.drop_column("signal")
