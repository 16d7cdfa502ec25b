"""The dashboard's pages: Jinja2 templates over ``gate.dashboard.data``, plotly.js served from the installed
``plotly`` package (no CDN: the pages work offline), and HTML error pages for anything outside ``/api``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import plotly
from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from gate.bot.rendering import cell_link
from gate.dashboard import api, data
from gate.domain.vocabulary import Decision
from gate.evaluate import summary
from gate.web import ReadSessionDep, latest_verdict

HERE = Path(__file__).parent
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
DECISIONS = {  # Okabe-Ito colours (safe for colour-blind readers); the word and the symbol are always written too
    Decision.PASS: ("#009E73", "✓"),
    Decision.FAIL: ("#D55E00", "✗"),
    Decision.INCONCLUSIVE: ("#E69F00", "?"),
    Decision.ERROR: ("#CC79A7", "!"),
    Decision.ACCEPTED: ("#0072B2", "◎"),  # a fail accepted on record
    "not evaluated": ("#999999", "·"),
}
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.globals["DECISIONS"] = DECISIONS
templates.env.globals["RATIO"] = summary.RATIO
templates.env.globals["cell_link"] = cell_link  # a row's dashboard cell, as the PR comment links it
templates.env.filters["seg"] = lambda text: quote(str(text), safe="")  # a URL path segment
router = APIRouter(include_in_schema=False)


def _page(request: Request, name: str, **context):
    return templates.TemplateResponse(request, name, context)


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/machines")


@router.get("/static/plotly.min.js")
def plotly_js() -> FileResponse:
    return FileResponse(PLOTLY_JS, media_type="text/javascript")


@router.api_route("/machines", methods=["GET", "HEAD"])
def machines_page(request: Request, session: ReadSessionDep):
    return _page(request, "machines.html", machines=data.machines(session))


@router.get("/machines/{machine}")
def matrix_page(
    request: Request,
    machine: str,
    session: ReadSessionDep,
    commit: str | None = None,
    impl: str | None = None,
    placement: api.PlacementQ = None,
    base: str | None = None,
):
    m = api.matrix(machine, session, commit=commit, impl=impl, placement=placement, base=base)
    rows = sorted({(c.task, c.num_envs) for c in m.cells})
    threads = sorted({c.threads for c in m.cells})
    by = {(c.task, c.num_envs, c.threads): c for c in m.cells}
    return _page(request, "matrix.html", m=m, rows=rows, threads=threads, by=by)


@router.get("/history/{machine}")
def history_page(
    request: Request,
    machine: str,
    session: ReadSessionDep,
    cell: api.CellDep,
    limit: api.Limit = data.HISTORY_LIMIT,
    placement: api.PlacementQ = None,
):
    h = api.cell_history(machine, request, session, cell, limit=limit, placement=placement, find_steps=False)
    return _page(request, "history.html", h=h, query=request.url.query)


@router.get("/compare")
def compare_page(request: Request, session: ReadSessionDep, cell: api.CellDep):
    return _page(request, "compare.html", c=api.compare(session, cell), query=request.url.query)


@router.get("/threads/{machine}")
def threads_page(
    request: Request,
    machine: str,
    session: ReadSessionDep,
    task: Annotated[str, Query(max_length=64)],
    num_envs: Annotated[int, Query(ge=1, le=2**31 - 1)],
    commit: str | None = None,
    placement: api.PlacementQ = None,
):
    curve = api.threads(machine, session, task, num_envs, commit=commit, placement=placement)
    counts = sorted({p.threads for line in curve.lines for p in line.points})
    by = {(line.impl, p.threads): p for line in curve.lines for p in line.points}
    return _page(request, "threads.html", c=curve, counts=counts, by=by, query=request.url.query)


@router.get("/pr/{base}/{head}")
def pr_page(request: Request, base: str, head: str, session: ReadSessionDep):
    e = latest_verdict(request, session, base, head)  # the API's answer, and its errors (422: a bad ref)
    order = {Decision.FAIL: 0, Decision.ERROR: 1, Decision.INCONCLUSIVE: 2}
    problems = sorted(
        (c for c in e.comparisons if c.decision not in (Decision.PASS, Decision.ACCEPTED)),
        key=lambda c: order.get(c.decision, 3),
    )
    accepted = [c for c in e.comparisons if c.decision == Decision.ACCEPTED]
    passes = [c for c in e.comparisons if c.decision == Decision.PASS]
    s = summary.of(e)
    findings = [(f, cell_link("", f.worst)) for f in s.listed]
    return _page(
        request, "pr.html", e=e, s=s, findings=findings, problems=problems, accepted=accepted, passes=passes
    )


def install(app: FastAPI) -> None:
    """Mount the pages, the static files and the HTML error pages on ``app``."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def _html(request: Request) -> bool:
        return not request.url.path.startswith("/api/") and request.url.path not in ("/openapi.json",)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if _html(request):
            return templates.TemplateResponse(
                request,
                "error.html",
                {"status": exc.status_code, "detail": exc.detail},
                status_code=exc.status_code,
            )
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        if _html(request):
            return templates.TemplateResponse(
                request, "error.html", {"status": 400, "detail": f"bad request: {problems}"}, status_code=400
            )
        # The API's one problem shape (gate.web.Problem), not FastAPI's list of error objects.
        return JSONResponse({"detail": f"invalid request: {problems}"}, status_code=422)
