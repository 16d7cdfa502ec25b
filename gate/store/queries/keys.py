"""Rows found by their natural key, inserted when absent (shared by ingest and evaluations)."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def content_hash(value: dict) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def get_or_create(session: Session, model, *, key: dict, values: dict | None = None) -> int:
    """Id of the row matching ``key``, inserting it if absent; safe against a concurrent insert of the same key."""
    dialect = sqlite if session.get_bind().dialect.name == "sqlite" else postgresql
    stmt = dialect.insert(model).values(**key, **(values or {})).on_conflict_do_nothing()
    session.execute(stmt)
    return session.scalar(select(model.id).filter_by(**key))
