"""The store's column types: times stored with their zone and read back aware in UTC, and ``gate.domain``
enums stored as their values."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import DateTime, String, TypeDecorator


def now() -> datetime:
    return datetime.now(UTC)


def utc(moment: datetime) -> datetime:
    """An aware UTC datetime: SQLite hands stored datetimes back naive (they were stored as UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class UtcDateTime(TypeDecorator):
    """A time stored with its zone and always read back aware, in UTC: SQLite hands stored datetimes back naive,
    which the API would send without an offset (its schema says date-time, which needs one)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return None if value is None else utc(value).astimezone(UTC)

    def process_result_value(self, value, dialect):
        return None if value is None else utc(value).astimezone(UTC)


class Vocabulary(TypeDecorator):
    """A ``gate.domain`` StrEnum stored as its value in a VARCHAR: refused on write when it is not one of them,
    read back as the enum."""

    impl = String
    cache_ok = True

    def __init__(self, enum: type[StrEnum], length: int):
        super().__init__(length)
        self.enum = enum

    def process_bind_param(self, value, dialect):
        return None if value is None else self.enum(value).value

    def process_result_value(self, value, dialect):
        return None if value is None else self.enum(value)

    @property
    def python_type(self) -> type[StrEnum]:
        return self.enum
