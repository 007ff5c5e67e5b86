"""The OpenAPI schema tells the truth about errors: every error response is problem+json.

FastAPI documents 422 as `HTTPValidationError` in application/json, and knows nothing of what the
shared middleware answers. This adds to every operation the errors it can get (400/408/413/415/422 for
a body, 422 for parameters, 404 for path parameters, 409 with an Idempotency-Key or If-Match
header, 429 where rate-limited, 503 when the database is down) and makes every 4xx/5xx response
`application/problem+json` with the `Problem` schema.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.common.errors import MAX_FIELD_ERRORS, PROBLEM_JSON
from app.common.settings import Settings
from app.http.ratelimit import SAFE_METHODS

PROBLEM_SCHEMA = {
    "title": "Problem",
    "description": "RFC 9457 problem details",
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "format": "uri"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "errors": {
            "type": "array",
            "maxItems": MAX_FIELD_ERRORS,
            "items": {
                "type": "object",
                "required": ["field", "message", "type"],
                "properties": {
                    "field": {"type": "string"},
                    "message": {"type": "string"},
                    "type": {"type": "string"},
                    "params": {
                        "type": "object",
                        "description": "The parameters of `type`'s message, where it has some",
                    },
                },
            },
        },
        "errors_omitted": {
            "type": "integer",
            "minimum": 1,
            "description": f"Field errors past the first {MAX_FIELD_ERRORS}, which `errors` leaves out",
        },
    },
}
DESCRIPTIONS = {
    400: "Malformed request (the body is not parseable JSON)",
    409: "Conflict: an Idempotency-Key reused with another body, or a stale version",
    404: "Not found",
    408: "The request body did not arrive within BODY_READ_TIMEOUT_S",
    413: "Request body too large",
    415: "The body is not JSON",
    422: "Invalid input, with field-level errors",
    429: "Rate limited; see Retry-After",
    503: "The database (or, for a model named by hf_id, the Hugging Face Hub) is unavailable; see Retry-After",
}
CONFLICT_HEADERS = {"idempotency-key", "if-match"}  # their reuse or staleness is a 409 (app.common.errors.Conflict)
PROBLEM_CONTENT = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _limited(path: str, entries: list[str]) -> bool:
    """Whether an OpenAPI path (`/quotes/{public_id}/accept`) falls under a rate-limit entry (`/quotes/*/accept`)."""
    concrete = re.sub(r"\{[^}]+\}", "x", path)
    return any(fnmatchcase(concrete, entry) for entry in entries)


def _errors_for(path: str, method: str, operation: dict[str, Any], limits: dict[str, list[str]]) -> list[int]:
    params = operation.get("parameters", [])
    statuses = [503]
    if "requestBody" in operation:
        statuses += [400, 408, 413, 415, 422]
    if params:
        statuses.append(422)
    if any(p.get("in") == "path" for p in params):
        statuses.append(404)
    if _limited(path, limits["pages"]) or (_limited(path, limits["paths"]) and method.upper() not in SAFE_METHODS):
        statuses.append(429)
    if any(p.get("in") == "header" and p.get("name", "").lower() in CONFLICT_HEADERS for p in params):
        statuses.append(409)
    return statuses


# OpenAPI links (3.0 §4.7.25): what a client (or a stateful fuzzer) can do next with a response's `id`.
# (source path, method, statuses) -> [(link name, target path, method)]
QUOTE = "/quotes/{public_id}"
LINKS: dict[tuple[str, str, tuple[str, ...]], list[tuple[str, str, str]]] = {
    ("/quotes", "post", ("200", "201")): [
        ("GetQuote", QUOTE, "get"),
        ("AcceptQuote", QUOTE + "/accept", "post"),
        ("CancelQuote", "/admin/api/quotes/{public_id}/cancel", "post"),
    ],
    (QUOTE + "/accept", "post", ("200",)): [
        ("GetQuote", QUOTE, "get"),
        ("CancelQuote", "/admin/api/quotes/{public_id}/cancel", "post"),
    ],
}


def _add_links(schema: dict[str, Any]) -> None:
    paths = schema.get("paths", {})
    for (source, method, statuses), targets in LINKS.items():
        operation = paths.get(source, {}).get(method)
        if operation is None:
            continue
        links = {
            name: {"operationId": paths[path][verb]["operationId"], "parameters": {"public_id": "$response.body#/id"}}
            for name, path, verb in targets
            if verb in paths.get(path, {})
        }
        for status in statuses:
            if status in operation["responses"]:
                operation["responses"][status]["links"] = links


def problem_openapi(schema: dict[str, Any], settings: Settings) -> dict[str, Any]:
    on = settings.rate_limit_per_minute > 0
    limits = {"paths": settings.rate_limit_paths if on else [], "pages": settings.rate_limit_pages if on else []}
    schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for status in _errors_for(path, method, operation, limits):
                responses.setdefault(str(status), {"description": DESCRIPTIONS[status]})
            for status, response in responses.items():
                if status[0] in "45":
                    response["content"] = PROBLEM_CONTENT
    _add_links(schema)
    schemas = schema["components"]["schemas"]
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return schema


def install_problem_openapi(app: FastAPI, settings: Settings) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                openapi_version=app.openapi_version,
                tags=app.openapi_tags,
                servers=app.servers,
            )
            app.openapi_schema = problem_openapi(schema, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
