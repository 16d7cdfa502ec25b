"""API tokens: created with a role (and a machine for a runner), found by their secret's hash, revoked."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.orm import Session

from gate.domain.machines import machine_name_problem
from gate.store.models import ROLES, Token


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(
    session: Session, *, name: str, secret: str, machine: str | None = None, role: str = "runner"
) -> Token:
    """A new token; ``machine`` binds a runner's uploads to that machine name. Raises ValueError (what to do)
    for a name held by a live token, an unknown role or a machine name that is not one."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    if machine is not None and (problem := machine_name_problem(machine)):
        raise ValueError(problem)
    if not 0 < len(name) <= 200 or not name.isprintable():
        raise ValueError(f"a token name is 1-200 printable characters, got {name[:40]!r}")
    live = select(Token.id).where(Token.name == name, Token.revoked.is_(False))
    if session.scalar(live) is not None:
        raise ValueError(f"a token named {name!r} exists; revoke it first or choose another name")
    token = Token(name=name, hash=token_hash(secret), machine=machine, role=role)
    session.add(token)
    session.flush()
    return token


def token_by_secret(session: Session, *, secret: str) -> Token | None:
    return session.scalar(select(Token).where(Token.hash == token_hash(secret), Token.revoked.is_(False)))


def revoke_token(session: Session, *, name: str) -> bool:
    token = session.scalar(select(Token).where(Token.name == name, Token.revoked.is_(False)))
    if token is None:
        return False
    token.revoked = True
    return True
