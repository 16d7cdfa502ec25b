from fastapi import APIRouter

from gate.api.schemas import MachineOut
from gate.store import queries
from gate.web import ReadSessionDep

router = APIRouter(tags=["machines"])


@router.get("/api/machines")
def list_machines(session: ReadSessionDep) -> list[MachineOut]:
    """Every machine that uploaded results, with its fingerprint."""
    return [MachineOut.model_validate(m) for m in queries.machines(session)]
