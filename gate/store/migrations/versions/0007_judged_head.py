"""judged head: the commit a pull request's head is judged as (the head merged into its base when it is behind
the base); NULL until the bot has made it

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pull_check") as batch:
        batch.add_column(sa.Column("judged_sha", sa.String(40), nullable=True))
        batch.create_index("ix_pull_check_judged_sha", ["judged_sha"])


def downgrade() -> None:
    with op.batch_alter_table("pull_check") as batch:
        batch.drop_index("ix_pull_check_judged_sha")
        batch.drop_column("judged_sha")
