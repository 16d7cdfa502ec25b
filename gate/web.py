"""What the API routes and the dashboard's pages share: a session per request, the runner behind a bearer token,
refs resolved in the service's repository (or 422), and the problem schema of every 4xx."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Path, Query, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from sqlalchemy.orm import Session

from gate import git
from gate.domain.evaluations import EvaluationRecord
from gate.domain.machines import MACHINE_NAME_MAX, MACHINE_NAME_PATTERN
from gate.services import verdicts
from gate.store import db, queries
from gate.store.models import Token


class Problem(BaseModel):
    """Every 4xx and 5xx answer of the API: what is wrong and what to do."""

    detail: str


# Parameters typed where they arrive, so a bad value is a 422 that names it (never a 500 deeper in):
ID_MAX = 2**63 - 1  # past it the drivers cannot even bind the value (PostgreSQL's keys are smaller: 404)
Id = Annotated[int, Path(ge=1, le=ID_MAX)]
MachineQ = Annotated[
    str | None,
    Query(max_length=MACHINE_NAME_MAX, pattern=MACHINE_NAME_PATTERN, description="only this machine's"),
]


def get_read_session(request: Request) -> Iterator[Session]:
    with db.transaction(request.app.state.database_url, write=False) as session:
        yield session


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


def latest_verdict(request: Request, session: Session, base: str, head: str) -> EvaluationRecord:
    """The latest stored verdict for refs of a request's path: 422 for a ref that names no commit, 404 when
    (base, head) was never evaluated."""
    try:
        base_sha, head_sha, evaluation = verdicts.latest(
            session, repo=request.app.state.repo, base=base, head=head
        )
    except git.RefError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    if evaluation is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"no evaluation of base {base_sha[:12]} -> head {head_sha[:12]}; POST /api/evaluations with an admin token to run one",
        )
    return evaluation
