"""Request dependencies: a session per request, the runner behind a bearer token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from gate import git
from gate.store import db, queries
from gate.store.models import Token


def get_session(request: Request) -> Iterator[Session]:
    with db.transaction(request.app.state.database_url) as session:
        yield session


def get_read_session(request: Request) -> Iterator[Session]:
    with db.transaction(request.app.state.database_url, write=False) as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]
ReadSessionDep = Annotated[Session, Depends(get_read_session)]
_bearer = HTTPBearer(auto_error=False, description="a runner token from `fusegate token create NAME`")


def get_runner(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Token:
    unauthorized = HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "missing or unknown bearer token: send 'Authorization: Bearer <token>' with a token from "
        "`fusegate token create NAME`",
        headers={"WWW-Authenticate": "Bearer"},
    )
    if credentials is None:
        raise unauthorized
    with db.transaction(request.app.state.database_url, write=False) as session:
        token = queries.token_by_secret(session, secret=credentials.credentials)
        if token is None:
            raise unauthorized
        return token


RunnerDep = Annotated[Token, Depends(get_runner)]


def commit_sha(request: Request, ref: str) -> str:
    """A ref of the request's path resolved in the service's repository, or 422 saying why not."""
    try:
        return git.resolve(request.app.state.repo, ref)
    except git.RefError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
