"""Domain errors and their one rendering: RFC 9457 problem details (application/problem+json).

    AppError                      (500, base)
     ├── InvalidInput             422  the request is well-formed but its values are not allowed
     ├── NotFound                 404
     ├── Conflict                 409  stale version, idempotency key reuse
     └── ServiceUnavailable       503  the database is down

FastAPI's validation errors are rendered here too, without echoing the rejected input (a huge
value must not come back, and NaN/Infinity cannot be encoded as JSON at all).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.db.engine import DatabaseUnavailable
from app.estimator.specs import EstimatorError

log = logging.getLogger("app.errors")
PROBLEM_BASE = "https://gpu-sizer.dev/problems/"
PROBLEM_JSON = "application/problem+json"


class AppError(Exception):
    status = 500
    type_ = "internal"
    title = "Internal error"

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []


class InvalidInput(AppError):
    status, type_, title = 422, "invalid-input", "Invalid input"


class NotFound(AppError):
    status, type_, title = 404, "not-found", "Not found"


class Conflict(AppError):
    status, type_, title = 409, "conflict", "Conflict"


class ServiceUnavailable(AppError):
    status, type_, title = 503, "service-unavailable", "Service unavailable"


def problem(status: int, type_: str, title: str, detail: str, **extra: Any) -> JSONResponse:
    body = {"type": PROBLEM_BASE + type_, "title": title, "status": status, "detail": detail, **extra}
    headers = {"Retry-After": "5"} if status == 503 else None
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for err in exc.errors():
        loc = [str(part) for part in err.get("loc", ()) if part != "body"]
        out.append({"field": ".".join(loc) or "body", "message": str(err.get("msg", "invalid")), "type": err["type"]})
    return out


async def _on_validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = _field_errors(exc)
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    return problem(422, "invalid-input", "Invalid input", detail, errors=errors)


async def _on_app_error(_request: Request, exc: AppError) -> JSONResponse:
    extra = {"errors": exc.errors} if exc.errors else {}
    return problem(exc.status, exc.type_, exc.title, exc.detail, **extra)


async def _on_estimator_error(_request: Request, exc: EstimatorError) -> JSONResponse:
    errors = [{"field": exc.field or "body", "message": str(exc), "type": "estimator"}]
    return problem(422, "invalid-input", "Invalid input", str(exc), errors=errors)


async def _on_database_down(_request: Request, exc: Exception) -> JSONResponse:
    log.warning("database unavailable: %s", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return problem(503, "service-unavailable", "Service unavailable", "The database is unavailable; try again shortly.")


async def _on_http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
    type_ = {404: "not-found", 405: "method-not-allowed", 413: "payload-too-large"}.get(exc.status_code, "http-error")
    response = problem(exc.status_code, type_, str(exc.detail), str(exc.detail))
    for key, value in (exc.headers or {}).items():
        response.headers[key] = value
    return response


async def _on_unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return problem(500, "internal", "Internal error", "An unexpected error occurred; it has been logged.")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(AppError, _on_app_error)
    app.add_exception_handler(EstimatorError, _on_estimator_error)
    for exc_type in (DatabaseUnavailable, OperationalError, InterfaceError, PoolTimeout):
        app.add_exception_handler(exc_type, _on_database_down)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
