"""``/docs``: Swagger UI served from the installed ``fastapi-offline`` package's copy (no CDN: a locked-down host
shows it too), and the OpenAPI document made true to what the service answers.

FastAPI documents its own validation errors as a list of objects; this service answers every 4xx in one shape
(``Problem``, ``{"detail": "..."}``), so the document says that: 422 on every operation (its parameters, or a
control character in the target, see ``gate.api.guards``), 400 and 413 on every operation with a body, 503 when
the store is unreachable.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from gate.ingest.bundle import Bundle

SWAGGER = Path(fastapi_offline.__file__).parent / "static"
HERE = Path(__file__).parent / "static"
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fusegate API</title>
<link rel="stylesheet" href="/swagger/swagger-ui.css"><link rel="icon" href="/swagger/favicon.png"></head>
<body><div id="swagger-ui"></div>
<script src="/swagger/swagger-ui-bundle.js"></script><script src="/docs.js"></script></body></html>
"""
_PROBLEM = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
ANSWERS = {
    "400": "the body could not be read as JSON",
    "413": "the body is over the route's size limit",
    "422": "a parameter or the body is not valid: the detail says which and why",
    "503": "the store is unreachable: retry after the Retry-After header's seconds",
}


PRINTABLE = r"^[^\x00-\x1f\x7f]*$"  # gate.api.guards refuses a control character anywhere in a path or query


def _printable(schema: dict) -> None:
    """A string parameter's schema says what the service takes: no control characters (unless it says more)."""
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "string" and "pattern" not in option and "enum" not in option:
            option["pattern"] = PRINTABLE


def _documented(app: FastAPI) -> dict:
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    bundle = Bundle.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(bundle.pop("$defs", {}))
    components["Bundle"] = bundle
    for operations in schema["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                _printable(parameter.get("schema", {}))
            responses = operation.setdefault("responses", {})
            answers = ["422", "503"] + (["400", "413"] if "requestBody" in operation else [])
            for code in answers:  # FastAPI's own 422 (a list of error objects) is not what the service sends
                if code == "422" or code not in responses:
                    responses[code] = {"description": ANSWERS[code], "content": _PROBLEM}
    return schema


def install(app: FastAPI) -> None:
    """``/docs``, its files, and the corrected ``/openapi.json`` (build the app with ``docs_url=None``)."""

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = _documented(app)
        return app.openapi_schema

    app.openapi = openapi
    app.mount("/swagger", StaticFiles(directory=SWAGGER), name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(PAGE)

    @app.get("/docs.js", include_in_schema=False)
    def docs_js() -> FileResponse:
        return FileResponse(HERE / "docs.js", media_type="text/javascript")
