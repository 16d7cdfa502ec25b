"""acceptances: regressions accepted on record for one pull request's head (who, why, from which comment, the
row's figures then), the /fusegate commands the webhook received for the worker to answer, and each evaluation's
acceptances as it applied them (NULL for evaluations stored before)

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("evaluation") as batch:
        batch.add_column(sa.Column("acceptances", sa.JSON(), nullable=True))
    op.create_table(
        "acceptance",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo", sa.String(length=200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(length=40), nullable=False),
        sa.Column("machine", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("task", sa.String(length=64), nullable=False),
        sa.Column("impl", sa.String(length=64), nullable=False),
        sa.Column("num_envs", sa.Integer(), nullable=True),
        sa.Column("threads", sa.Integer(), nullable=True),
        sa.Column("login", sa.String(length=100), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=True),
        sa.Column("comment_url", sa.Text(), nullable=False),
        sa.Column("ratio", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("cost_ratio", sa.Float(), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_acceptance_head", "acceptance", ["head_sha", "recorded_at"], unique=False)
    op.create_table(
        "pull_command",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pull_id", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.Column("login", sa.String(length=100), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("head_sha", sa.String(length=40), nullable=False),
        sa.Column("commented_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["pull_id"], ["pull_request.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_pull_command_pending", "pull_command", ["pull_id", "handled_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_pull_command_pending", table_name="pull_command")
    op.drop_table("pull_command")
    op.drop_index("ix_acceptance_head", table_name="acceptance")
    op.drop_table("acceptance")
    with op.batch_alter_table("evaluation") as batch:
        batch.drop_column("acceptances")
