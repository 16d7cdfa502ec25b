"""Engines, sessions and migrations for the results store.

The settings' ``database_url`` (``FUSEGATE_DATABASE_URL``) selects the store: a SQLite file is the embedded
default, PostgreSQL serves a fleet (``postgresql+psycopg://user:password@host/db``). ``upgrade`` brings any of them
to the newest schema with alembic (``fusegate db upgrade``, a start-up step of ``fusegate serve``); ``check`` is
what the service asks before it serves.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")


def _sqlite_pragmas(connection, _record) -> None:
    connection.isolation_level = None  # transactions are begun below, so SQLite's own autobegin stays out
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin(connection) -> None:
    # Writers take the write lock at BEGIN: two deferred transactions that both later write would otherwise fail
    # with "database is locked" instead of waiting their turn (concurrent uploads). Readers begin deferred and,
    # under WAL, never wait for a writer.
    readonly = connection.get_execution_options().get("fusegate_readonly", False)
    connection.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")


@cache
def engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ValueError(
            f"FUSEGATE_DATABASE_URL / --db is not a database URL: {url!r}; "
            "use sqlite:///path/to/file.db or postgresql+psycopg://user:password@host/db"
        ) from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        eng = create_engine(parsed, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(eng, "connect", _sqlite_pragmas)
        event.listen(eng, "begin", _sqlite_begin)
        return eng
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(
            f"unsupported database {parsed.get_backend_name()!r} in {url!r}; use sqlite or postgresql"
        )
    return create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=20)


@cache
def sessions(url: str, *, write: bool = True) -> sessionmaker[Session]:
    bind = engine(url) if write else engine(url).execution_options(fusegate_readonly=True)
    return sessionmaker(bind, expire_on_commit=False)


@contextmanager
def transaction(url: str, *, write: bool = True) -> Iterator[Session]:
    """One session, one transaction: committed on success, rolled back entirely on any exception.

    ``write=False`` is for reads: on SQLite it does not take the write lock.
    """
    with sessions(url, write=write)() as session, session.begin():
        yield session


def alembic_config(url: str):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str) -> None:
    """Create or migrate the store at ``url`` to the newest schema (idempotent)."""
    from alembic import command

    engine(url)  # validates the URL with a clear message before alembic sees it
    command.upgrade(alembic_config(url), "head")


class SchemaError(ValueError):
    """The store's schema is not the one this fusegate reads."""


def revisions(url: str) -> tuple[str | None, str]:
    """(the store's schema revision or None for an empty store, the newest revision this fusegate knows)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    with engine(url).connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return current, head


def check(url: str) -> None:
    """Refuse to serve a store that is not at the newest schema, saying what to run."""
    current, head = revisions(url)
    if current != head:
        what = "has no schema" if current is None else f"is at schema {current}"
        raise SchemaError(
            f"the store at {url} {what}; this fusegate reads schema {head}: run `fusegate db upgrade` first "
            "(fusegate serve does it unless --no-upgrade)"
        )
