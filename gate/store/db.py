"""Engines, sessions and migrations for the results store.

The settings' ``database_url`` (``FUSEGATE_DATABASE_URL``) selects the store: a SQLite file is the embedded
default, PostgreSQL serves a fleet (``postgresql+psycopg://user:password@host/db``). ``upgrade`` brings any of them
to the newest schema with alembic (``fusegate db upgrade``, a start-up step of ``fusegate serve``); ``check`` is
what the service asks before it serves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, InterfaceError, InternalError, OperationalError
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


@cache
def _writers(url: str) -> threading.RLock | None:
    """SQLite has one writer at a time: this process's writers queue on a lock of their own, in turn, rather
    than each polling SQLite's busy handler (which sleeps and retries, so under 20 uploaders its waits reach the
    busy timeout). Other processes still meet at SQLite's lock. PostgreSQL needs none."""
    return threading.RLock() if make_url(url).get_backend_name() == "sqlite" else None


@contextmanager
def transaction(url: str, *, write: bool = True) -> Iterator[Session]:
    """One session, one transaction: committed on success, rolled back entirely on any exception.

    ``write=False`` is for reads: on SQLite it does not take the write lock. Keep write transactions short:
    compute first, then write (``gate.services.verdicts.evaluate``).
    """
    lock = _writers(url) if write else None
    with lock or nullcontext(), sessions(url, write=write)() as session, session.begin():
        yield session


def alembic_config(url: str):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


class StoreError(ValueError):
    """The store cannot be opened or used: which store, why, and what to do (the CLI prints it, exit 2)."""


def shown(url: str) -> str:
    """The URL as it may be printed: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(not a database URL)"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store, None for PostgreSQL or an in-memory store."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.query.get("uri") == "true" and parsed.database.startswith(
        "file:"
    ):  # sqlite:///file:PATH?uri=true
        return Path(parsed.database.removeprefix("file:"))
    return Path(parsed.database)


@contextmanager
def _opening(url: str) -> Iterator[None]:
    """Turns a store that cannot be reached or written into a StoreError naming it (not a driver traceback)."""
    try:
        yield
    except (OperationalError, InterfaceError, InternalError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        path = sqlite_file(url)
        where = (
            f"the file {path.resolve()} (and its directory) must exist and be readable and writable by this user"
            if path is not None
            else "the server must be up, and reachable and writable with the URL's user"
        )
        raise StoreError(
            f"cannot use the store at {shown(url)}: {reason}; {where} (FUSEGATE_DATABASE_URL or --db)"
        ) from None


def _missing(path: Path, url: str) -> StoreError:
    return StoreError(
        f"no store at {path.resolve()}: create it with `fusegate db upgrade --db {url}` (or `fusegate serve "
        "--create`), or point FUSEGATE_DATABASE_URL / --db at the existing store"
    )


def _check_server(url: str) -> None:
    """A PostgreSQL database must be UTF8. Asked through psycopg itself before SQLAlchemy connects: on SQL_ASCII
    SQLAlchemy's first connect fails inside its dialect (a TypeError on the server's version as bytes)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return
    import psycopg

    parts = {
        "host": parsed.host,
        "port": parsed.port,
        "dbname": parsed.database,
        "user": parsed.username,
        "password": parsed.password,
        **parsed.query,
    }
    conninfo = psycopg.conninfo.make_conninfo(**{k: v for k, v in parts.items() if v is not None})
    with _opening(url):
        try:
            with psycopg.connect(conninfo, connect_timeout=10) as connection:
                encoding = connection.execute("SHOW server_encoding").fetchone()[0]
        except psycopg.Error as exc:
            raise OperationalError("connect", {}, exc) from None
        if encoding != "UTF8":
            raise StoreError(
                f"the PostgreSQL database's encoding is {encoding}; the store needs UTF8: create it with "
                "`createdb -E UTF8 -T template0 NAME` (or CREATE DATABASE ... ENCODING 'UTF8' TEMPLATE template0)"
            )


def upgrade(url: str, *, create: bool = True) -> None:
    """Create or migrate the store at ``url`` to the newest schema (idempotent). ``create=False`` refuses a
    SQLite store that does not exist yet instead of making an empty one (a mistyped path is not a new store)."""
    from alembic import command

    engine(url)  # validates the URL with a clear message before alembic sees it
    path = sqlite_file(url)
    if path is not None and not path.exists():
        if not create:
            raise _missing(path, url)
        with _opening(url):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store's directory {path.parent.resolve()}: {exc}"
                ) from None
    _check_server(url)
    with _opening(url):
        command.upgrade(alembic_config(url), "head")


class SchemaError(ValueError):
    """The store's schema is not the one this fusegate reads."""


def revisions(url: str) -> tuple[str | None, str]:
    """(the store's schema revision or None for an empty store, the newest revision this fusegate knows)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    _check_server(url)
    with _opening(url), engine(url).connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return current, head


def writable(url: str, *, wait: float = 2.0) -> bool:
    """True when the store took a write now (a no-op update of the schema's row in a write transaction); False
    when this process's writers kept SQLite's write lock past ``wait`` s: busy writing, which is not unwritable.
    Raises the driver's error when the store refuses the write."""
    lock = _writers(url)
    if lock is not None and not lock.acquire(timeout=wait):
        return False
    try:
        with transaction(url) as session:  # the lock is re-entrant: taken again here at no cost
            session.execute(text("UPDATE alembic_version SET version_num = version_num"))
        return True
    finally:
        if lock is not None:
            lock.release()


def check(url: str) -> None:
    """Refuse to serve a store that is missing, unusable or not at the newest schema, saying what to run."""
    path = sqlite_file(url)
    if path is not None and not path.exists():
        raise _missing(path, url)
    current, head = revisions(url)
    if current != head:
        what = "has no schema" if current is None else f"is at schema {current}"
        raise SchemaError(
            f"the store at {shown(url)} {what}; this fusegate reads schema {head}: run `fusegate db upgrade` first "
            "(fusegate serve does it unless --no-upgrade)"
        )
