"""roles: a token is a runner's (uploads) or an admin's (may also write official verdicts); an evaluation is
official (the verdict the bot, the dashboard and GET /api/verdicts read) or ad hoc (asked for by a token, kept
apart); a revoked token's name can be given to a new token

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# SQLite's unique constraint on token.name was created unnamed: batch mode finds it by this convention.
_NAMES = {"uq": "uq_%(table_name)s_%(column_0_name)s"}


def _name_constraint() -> str:
    return "token_name_key" if op.get_bind().dialect.name == "postgresql" else "uq_token_name"


def upgrade() -> None:
    with op.batch_alter_table("token", naming_convention=_NAMES) as batch:
        batch.add_column(sa.Column("role", sa.String(16), nullable=False, server_default="runner"))
        batch.drop_constraint(_name_constraint(), type_="unique")
    op.create_index(
        "ix_token_live_name",
        "token",
        ["name"],
        unique=True,
        sqlite_where=sa.text("NOT revoked"),
        postgresql_where=sa.text("NOT revoked"),
    )
    with op.batch_alter_table("evaluation") as batch:
        batch.add_column(sa.Column("official", sa.Boolean(), nullable=False, server_default=sa.true()))
        batch.add_column(sa.Column("requested_by", sa.String(200), nullable=True))


def downgrade() -> None:
    op.execute(
        sa.text(
            "DELETE FROM comparison WHERE evaluation_id IN (SELECT id FROM evaluation WHERE NOT official)"
        )
    )
    op.execute(sa.text("DELETE FROM evaluation WHERE NOT official"))
    with op.batch_alter_table("evaluation") as batch:
        batch.drop_column("requested_by")
        batch.drop_column("official")
    op.drop_index("ix_token_live_name", table_name="token")
    # Names held by more than one token (revoked ones reused) keep the newest token's; the older are deleted.
    op.execute(sa.text("DELETE FROM token WHERE id NOT IN (SELECT MAX(id) FROM token GROUP BY name)"))
    with op.batch_alter_table("token", naming_convention=_NAMES) as batch:
        batch.drop_column("role")
        batch.create_unique_constraint(_name_constraint(), ["name"])
