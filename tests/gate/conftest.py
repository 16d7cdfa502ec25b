"""Stores for the gate's tests: every store test runs on SQLite and on a real PostgreSQL server.

PostgreSQL comes from ``FUSEGATE_TEST_POSTGRES_URL`` (``.ci/run`` starts a server and sets it). Without it the
PostgreSQL cases are skipped locally and fail under CI, so a CI run can never pass without them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from gate.store import db
from gate.store.models import Base

POSTGRES_URL = os.environ.get("FUSEGATE_TEST_POSTGRES_URL")
if POSTGRES_URL and "options=" not in POSTGRES_URL:
    # Sessions in a time zone other than UTC: every time the gate stores, compares or shows must not depend on it.
    POSTGRES_URL += ("&" if "?" in POSTGRES_URL else "?") + "options=-c%20timezone%3DAsia%2FTokyo"


@pytest.fixture(scope="session")
def _postgres_migrated():
    if not POSTGRES_URL:
        if os.environ.get("CI"):
            pytest.fail(
                "CI must test the PostgreSQL store: FUSEGATE_TEST_POSTGRES_URL is not set (see .ci/run)"
            )
        pytest.skip("no PostgreSQL server (set FUSEGATE_TEST_POSTGRES_URL)")
    with db.engine(POSTGRES_URL).begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    db.upgrade(POSTGRES_URL)
    return POSTGRES_URL


@pytest.fixture(scope="session")
def _sqlite_migrated(tmp_path_factory) -> Path:
    """One SQLite store migrated to the newest schema: each test gets a copy (migrating costs ~0.3 s)."""
    path = tmp_path_factory.mktemp("store") / "migrated.db"
    db.upgrade(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:  # everything in the one file a copy takes
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request, tmp_path) -> str:
    """An empty, migrated store."""
    if request.param == "sqlite":
        path = tmp_path / "gate.db"
        shutil.copyfile(request.getfixturevalue("_sqlite_migrated"), path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("_postgres_migrated")
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with db.engine(url).begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    return url
