"""dashboard indexes: a cell's history on one machine, a machine's newest run, evaluations of a head

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_cell_summary_history",
        "cell_summary",
        ["machine_id", "benchmark", "task", "impl", "num_envs", "threads"],
    )
    op.create_index("ix_run_machine_started", "run", ["machine_id", "started_at"])
    op.create_index("ix_evaluation_head", "evaluation", ["head_commit_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_evaluation_head", table_name="evaluation")
    op.drop_index("ix_run_machine_started", table_name="run")
    op.drop_index("ix_cell_summary_history", table_name="cell_summary")
