"""The tools' tests use the gate's stores: the same fixtures, on SQLite and PostgreSQL (``tests/gate/conftest.py``)."""

from tests.gate.conftest import _postgres_migrated, _sqlite_migrated, store_url

__all__ = ["_postgres_migrated", "_sqlite_migrated", "store_url"]
