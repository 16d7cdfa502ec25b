"""The service's one settings object, from ``FUSEGATE_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

from gate.store import db


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FUSEGATE_")

    database_url: str = db.default_url()
    repo: Path = Path(
        "."
    )  # a clone of the project: the gate reads the policy from the base commit through git
