"""The one settings object of the service and the command line, from ``FUSEGATE_*`` environment variables
(pydantic-settings). The benchmark processes (what is measured, and where) and the kernels read theirs where they
start; docs/settings.md lists every variable and who reads it, and a test keeps it complete."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///.fusegate/fusegate.db"  # under the current directory


class SettingsError(ValueError):
    pass


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FUSEGATE_", env_ignore_empty=True)  # VAR= is unset

    database_url: str = DEFAULT_DATABASE_URL  # the store; PostgreSQL for a fleet: postgresql+psycopg://...
    repo: Path = Path(
        "."
    )  # a clone of the project: the gate reads the policy from the base commit through git
    public_url: str = "http://127.0.0.1:8000"  # how GitHub users reach this service (links in statuses)
    main_branch: str = "main"  # the dashboard's histories follow this branch's first parents
    # Request body limits (413 beyond them, before the body is read): uploads, GitHub's webhook, every other route.
    max_upload_bytes: int = Field(default=32 * 2**20, ge=1024)
    max_body_bytes: int = Field(default=64 * 2**10, ge=1024)
    max_webhook_bytes: int = Field(default=5 * 2**20, ge=1024)  # read before its signature can be checked

    # A runner (``fusegate upload``, ``fusegate rounds``): the service, its token, this machine's asv name.
    url: str | None = None
    token: SecretStr | None = None
    machine: str | None = None

    # The PR bot (gate.bot). It runs when the webhook secret and one kind of GitHub auth are set.
    github_webhook_secret: SecretStr | None = None
    github_api_url: str = "https://api.github.com"  # GitHub Enterprise Server: https://HOST/api/v3
    github_token: SecretStr | None = None
    github_app_id: str | None = None
    github_app_private_key_file: Path | None = None
    github_app_installation_id: int | None = None
    bot_window_s: float = 6 * 3600.0  # how long a check waits for its machines before it is an error
    bot_poll_s: float = 5.0  # the worker's idle poll; webhooks and uploads wake it at once
    github_attempts: int = 5
    github_backoff_s: float = 0.5

    def bot_enabled(self) -> bool:
        """True when the bot can run; refuses a half configuration with what is missing."""
        auth = self.github_token is not None or self.github_app_id is not None
        if self.github_webhook_secret is None:
            return False
        if not self.github_webhook_secret.get_secret_value():
            raise SettingsError("FUSEGATE_GITHUB_WEBHOOK_SECRET is empty: set the webhook's secret")
        if not auth:
            raise SettingsError(
                "FUSEGATE_GITHUB_WEBHOOK_SECRET is set but the bot cannot post to GitHub: set "
                "FUSEGATE_GITHUB_TOKEN, or FUSEGATE_GITHUB_APP_ID and FUSEGATE_GITHUB_APP_PRIVATE_KEY_FILE"
            )
        if self.github_token is not None and not self.github_token.get_secret_value().strip():
            raise SettingsError("FUSEGATE_GITHUB_TOKEN is blank: set a token or leave it unset")
        if self.github_app_id is not None and self.github_app_private_key_file is None:
            raise SettingsError(
                "FUSEGATE_GITHUB_APP_ID needs FUSEGATE_GITHUB_APP_PRIVATE_KEY_FILE (the App's PEM key)"
            )
        return True
