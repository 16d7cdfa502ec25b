"""cost signal: which signal decided a comparison, the cost ratio beside the time ratio; why a result failed;
placement labels name the Numba pool ("pool=2"), not a thread count a 1-thread cell might be read as

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


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
    with op.batch_alter_table("result") as batch:
        batch.add_column(sa.Column("message", sa.Text(), nullable=False, server_default=""))
    _relabel("threads", "pool")


def downgrade() -> None:
    _relabel("pool", "threads")
    with op.batch_alter_table("result") as batch:
        batch.drop_column("message")
    with op.batch_alter_table("comparison") as batch:
        batch.drop_column("cost_ratio")
        batch.drop_column("signal")
