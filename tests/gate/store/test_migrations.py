"""The migrations build exactly the tables the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from gate.store import db
from gate.store.models import Base


def test_migrated_schema_matches_the_models(store_url):
    with db.engine(store_url).connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []
