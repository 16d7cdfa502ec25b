from fastapi import APIRouter
from sqlalchemy import text

from gate.web import ReadSessionDep

router = APIRouter(tags=["health"])


@router.get("/api/health")
def health(session: ReadSessionDep) -> dict:
    """Liveness and store reachability."""
    session.execute(text("SELECT 1"))
    return {"status": "ok"}
