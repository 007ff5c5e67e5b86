"""Domain errors and their one rendering: RFC 9457 problem details (application/problem+json).

    AppError                      (500, base)
     ├── InvalidInput             422  the request is well-formed but its values are not allowed
     ├── NotFound                 404
     ├── Conflict                 409  stale version, idempotency key reuse
     ├── Unauthorized             401  no or bad credentials
     ├── Forbidden                403  authenticated but not allowed, CSRF token missing
     ├── TooManyRequests          429  throttled; carries Retry-After
     ├── BadGateway               502  a service we read from (the Hugging Face Hub) answered wrongly
     └── ServiceUnavailable       503  the database, or the Hugging Face Hub, is down or too slow

Database errors map here too: unreachable or out of pool → 503; a lock or statement wait past its limit,
a deadlock or serialisation failure (PostgreSQL) or a locked SQLite file → 503 with Retry-After: 1; a
unique or foreign-key check lost to a concurrent write → 409.

A request body outside app.common.jsonguard's bounds is a BodyRefused (an HTTPException, 422 naming the field).
FastAPI's validation errors are rendered here too, without echoing the rejected input (a huge
value must not come back, and NaN/Infinity cannot be encoded as JSON at all). Plain HTTP statuses
(400, 404, 405, 413, 415, 429, …) get the stable types of HTTP_PROBLEMS; the middleware in app/http
(body limit, rate limit, trusted hosts, last-resort 500) answers with the same `http_problem`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from fastapi import FastAPI, Request, params
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.db.engine import DatabaseUnavailable
from app.estimator.specs import EstimatorError
from app.text import messages
from app.text.field_words import plain_message
from app.text.i18n import negotiate

log = logging.getLogger("app.errors")
E = TypeVar("E", bound=Exception)
PROBLEM_BASE = "https://gpu-sizer.dev/problems/"
PROBLEM_JSON = "application/problem+json"


# The stable `type` (and title) of each HTTP status the API answers with, AppError's subclasses included.
HTTP_PROBLEMS: dict[int, tuple[str, str]] = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    408: ("request-timeout", "Request timeout"),
    409: ("conflict", "Conflict"),
    413: ("payload-too-large", "Payload too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("invalid-input", "Invalid input"),
    429: ("too-many-requests", "Too many requests"),
    500: ("internal", "Internal error"),
    502: ("bad-gateway", "Bad gateway"),
    503: ("service-unavailable", "Service unavailable"),
}


class AppError(Exception):
    """A subclass names its HTTP status in its header (`class NotFound(AppError, status=404)`), or inherits
    its parent's; its problem type and title come from HTTP_PROBLEMS."""

    status = 500
    type_, title = HTTP_PROBLEMS[500]

    def __init_subclass__(cls, *, status: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.status = status or cls.status
        cls.type_, cls.title = HTTP_PROBLEMS[cls.status]

    def __init__(
        self,
        detail: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}
        self.extra = extra or {}  # members of the problem beside its standard ones (e.g. `code`, RFC 9457 §3.2)


class InvalidInput(AppError, status=422): ...


class NotFound(AppError, status=404): ...


class Conflict(AppError, status=409): ...


class Unauthorized(AppError, status=401): ...


class Forbidden(AppError, status=403): ...


class TooManyRequests(AppError, status=429): ...


class BadGateway(AppError, status=502): ...


class ServiceUnavailable(AppError, status=503): ...


A = TypeVar("A", bound=AppError)


def refused(kind: type[A], code: str, *, field: str, headers: dict[str, str] | None = None, **params: Any) -> A:
    """A `kind` error of `code` (app/text/refusal_words.py) with its figures: the English text its `detail` (a
    422's as `field: text`), `errors[0]` the field, the text, the code as its `type` and the figures as its
    `params`, worded in the request's language by the handler below; the code also as the problem's `code`."""
    message = messages.refusal(code, params)
    detail = f"{field}: {message}" if kind.status == 422 else message
    error = {"field": field, "message": message, "type": code, "params": params}
    return kind(detail, errors=[error], headers=headers, extra={"code": code})


MAX_MESSAGE_CHARS = 200  # a field error's message (and field path) never carries a huge value back
# A problem's `errors[]` lists at most this many; `errors_omitted` counts the rest. Output is bounded like
# input (review R4-7: 60,000 unknown keys in a 1 MB body came back as 5.2 MB of errors): 20 is more than
# the fields of any request model, so a person correcting a request still sees every field at once.
MAX_FIELD_ERRORS = 20
DETAIL_ERRORS = 5  # the errors `detail` repeats in one line


class BodyRefused(StarletteHTTPException):
    """A request body outside app.common.jsonguard's bounds: 422 naming the field. An HTTPException, because
    FastAPI passes those on from reading a body where it would call any other exception a parse error."""

    def __init__(self, field: str, message: str, type_: str, params: dict[str, Any] | None = None) -> None:
        super().__init__(422, f"{field}: {message}")
        self.errors = [{"field": field, "message": message, "type": type_, **({"params": params} if params else {})}]


def problem(
    status: int, type_: str, title: str, detail: str, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    body = {"type": PROBLEM_BASE + type_, "title": title, "status": status, "detail": detail, **extra}
    body.update(capped_errors(extra))
    headers = {"Retry-After": "5", **(headers or {})} if status == 503 else headers
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def capped_errors(members: Mapping[str, Any]) -> dict[str, Any]:
    """A problem's `errors` (and `errors_omitted`) where `members` lists more than MAX_FIELD_ERRORS; else nothing."""
    errors = members.get("errors")
    if not isinstance(errors, list) or len(errors) <= MAX_FIELD_ERRORS:
        return {}
    omitted = int(members.get("errors_omitted", 0)) + len(errors) - MAX_FIELD_ERRORS
    return {"errors": errors[:MAX_FIELD_ERRORS], "errors_omitted": omitted}


def http_problem(status: int, detail: str, *, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    """A problem for a plain HTTP status (404, 413, 429…) with its stable type and title."""
    type_, title = HTTP_PROBLEMS.get(status, ("http-error", "HTTP error"))
    return problem(status, type_, title, detail, headers=headers, **extra)


def internal_error_response() -> JSONResponse:
    return http_problem(500, "An unexpected error occurred; it has been logged.")


def field_errors(errors: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The API's `errors[]` of pydantic's errors (a request's here, an MCP tool's arguments in app.mcp): the field,
    what it allows in words (app.text.field_words) and pydantic's type; never the rejected input."""
    out = []
    for err in errors:
        # A JSON syntax error's location is a character position, not a field.
        loc = [] if err["type"] == "json_invalid" else [str(part) for part in err.get("loc", ()) if part != "body"]
        message = plain_message(err)[:MAX_MESSAGE_CHARS]
        out.append({"field": (".".join(loc) or "body")[:MAX_MESSAGE_CHARS], "message": message, "type": err["type"]})
        if err["type"] in messages.REFUSALS["en"]:  # a request model's refusal by its code: its figures too
            out[-1]["params"] = dict(err.get("ctx") or {})
    return out


def errors_detail(errors: Sequence[Mapping[str, Any]]) -> str:
    """A problem's `detail` of its field errors: the first DETAIL_ERRORS as `field: message`, one line."""
    return "; ".join(f"{e['field']}: {e['message']}" for e in errors[:DETAIL_ERRORS])


def validation_problem(errors: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The `detail` and the members (`errors`, and `errors_omitted` past MAX_FIELD_ERRORS) of the 422 for pydantic's
    `errors`: only the errors listed are worded, so a request with thousands costs no more to answer than one."""
    listed = field_errors(errors[:MAX_FIELD_ERRORS])
    omitted = len(errors) - len(listed)
    return errors_detail(listed), {"errors": listed, **({"errors_omitted": omitted} if omitted else {})}


def _json_media_type(content_type: str) -> bool:
    """`application/json` or `application/…+json`: what FastAPI parses as a JSON body (RFC 6839 §3.1)."""
    maintype, _, subtype = content_type.partition("/")
    return maintype == "application" and (subtype == "json" or subtype.endswith("+json"))


def _unsupported_media_type(request: Request, exc: RequestValidationError) -> bool:
    """A body sent as anything but JSON (text, a form, none named) to a route that takes a JSON body: FastAPI left
    it unparsed, so the whole body failed (`loc` `body`). A route of form fields (the pages) never gets here."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if _json_media_type(content_type):
        return False
    body_field = getattr(request.scope.get("route"), "body_field", None)
    if body_field is None or isinstance(body_field.field_info, params.Form):
        return False
    # No Content-Type and no body is a body missing (422), not one of the wrong type.
    whole_body = [err for err in exc.errors() if tuple(err.get("loc", ())) == ("body",)]
    return any(content_type or err.get("type") != "missing" for err in whole_body)


async def _on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    if _unsupported_media_type(request, exc):
        return http_problem(415, "The request body must be JSON (Content-Type: application/json).")
    detail, members = validation_problem(exc.errors())
    if not any("params" in error for error in members["errors"]):
        return http_problem(422, detail, **members)
    lang = negotiate(request)  # a request model's refusals by code, in the request's language
    errors = members["errors"] if lang == "en" else [_worded(error, lang) for error in members["errors"]]
    detail = detail if lang == "en" else errors_detail(errors)
    return http_problem(422, detail, headers={"Vary": "Accept-Language"}, **(members | {"errors": errors}))


def app_error_response(exc: AppError) -> JSONResponse:
    extra = {**exc.extra, **({"errors": exc.errors} if exc.errors else {})}
    return problem(exc.status, exc.type_, exc.title, exc.detail, headers=exc.headers or None, **extra)


def _worded(error: dict[str, Any], lang: str) -> dict[str, Any]:
    """A field error in `lang`, worded from its code (`type`) and figures (`params`): a quote's refusal
    (app.text.messages.quote_check), the estimator's (app.text.messages.estimator_text), an unknown constraint's
    (app.text.messages.unknown) or another refusal's (app.text.messages.refusal); as it was without them."""
    code, params = str(error.get("type", "")), error.get("params")
    if params is None:
        return error
    if code in messages.QUOTE_CHECKS["en"]:
        return {**error, "message": messages.quote_check(code, params, lang)}
    if code in messages.ESTIMATOR_ERRORS["en"]:
        return {**error, "message": messages.estimator_text(code, params, lang)}
    if code in messages.UNKNOWN["en"]:  # a constraint naming what the catalog does not hold
        return {**error, "message": messages.unknown(code, params, lang)}
    if code in messages.HUB["en"]:  # a Hugging Face model id that could not be read or sized
        return {**error, "message": messages.hub(code, params, lang)}
    if code in messages.REFUSALS["en"]:  # the domain's other refusals: not found, scope, search, webhook URL, PDF
        return {**error, "message": messages.refusal(code, params, lang)}
    return error


async def _on_app_error(request: Request, exc: AppError) -> JSONResponse:
    return app_error_answer(request, exc)


def app_error_answer(request: Request, exc: AppError) -> JSONResponse:
    """A problem with field errors in the request's language (Accept-Language, as the pages choose theirs:
    app.text.i18n.negotiate): its `errors[].message` worded from their codes and the `detail` from them (a 422's as
    `field: message`, another's, a 409 capacity_taken or a 403 accept_needs_sales, as the message alone); English, as
    raised, without one."""
    if not exc.errors:
        return app_error_response(exc)
    detail, errors = in_language(exc, negotiate(request), limit=MAX_FIELD_ERRORS)
    omitted = len(exc.errors) - len(errors)
    headers = {**exc.headers, "Vary": "Accept-Language"}
    members = {**exc.extra, "errors": errors, **({"errors_omitted": omitted} if omitted else {})}
    return problem(exc.status, exc.type_, exc.title, detail, headers=headers, **members)


def in_language(exc: AppError, lang: str, *, limit: int | None = None) -> tuple[str, list[dict[str, Any]]]:
    """An error's `detail` and its first `limit` field errors in `lang` (the API's answer above, the admin pages'
    refusals): each error worded from its code and figures, the detail from them; English, as raised, in English or
    without codes."""
    listed = exc.errors[:limit]
    errors = listed if lang == "en" else [_worded(error, lang) for error in listed]
    return (exc.detail if errors == listed else _worded_detail(exc.status, errors)), errors


def _worded_detail(status: int, errors: Sequence[Mapping[str, Any]]) -> str:
    """The `detail` of worded field errors: a 422's names the fields, another status's (a refusal of the quote as a
    whole) is the messages alone, as raised."""
    return errors_detail(errors) if status == 422 else "; ".join(e["message"] for e in errors[:DETAIL_ERRORS])


async def _on_estimator_error(request: Request, exc: EstimatorError) -> JSONResponse:
    lang = negotiate(request)
    item = messages.estimator_error_item(exc)
    item = item if exc.code is None else item | {"message": messages.estimator_error(exc, lang)}
    detail = str(exc) if lang == "en" else item["message"]
    return http_problem(422, detail, errors=[item], headers={"Vary": "Accept-Language"})


# PostgreSQL SQLSTATEs of a wait that ran out (DB_LOCK_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS) or of a
# transaction the database gave up on for another one's sake: the request may simply be sent again.
BUSY_SQLSTATES = {
    "55P03": "lock_not_available",
    "57014": "query_canceled",
    "40P01": "deadlock_detected",
    "40001": "serialization_failure",
}
BUSY_RETRY_AFTER_S = 1


def _sqlstate(exc: Exception) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def _sqlite_busy(exc: Exception) -> bool:
    return "database is locked" in str(getattr(exc, "orig", ""))


async def _on_database_down(_request: Request, exc: Exception) -> JSONResponse:
    state = _sqlstate(exc)
    if state in BUSY_SQLSTATES or _sqlite_busy(exc):
        log.warning("database busy: %s", BUSY_SQLSTATES.get(state or "", "database is locked"))
        return http_problem(
            503,
            "The data this request needs is busy with another change; try again in a moment.",
            headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
        )
    log.warning("database unavailable: %s", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return http_problem(503, "The database is unavailable; try again shortly.")


async def _on_integrity_error(_request: Request, exc: IntegrityError) -> JSONResponse:
    """A unique or foreign-key check lost to a concurrent write (two admins creating the same row)."""
    log.info("integrity conflict: %s", str(exc.orig).splitlines()[0] if exc.orig else type(exc).__name__)
    return http_problem(
        409, "A concurrent change got there first (the row now exists or changed); reload it and try again."
    )


async def _on_body_refused(_request: Request, exc: BodyRefused) -> JSONResponse:
    return http_problem(422, str(exc.detail), errors=exc.errors)


async def _on_http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = str(exc.detail)[:MAX_MESSAGE_CHARS]
    return http_problem(exc.status_code, detail, headers=dict(exc.headers or {}))


async def _on_unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return internal_error_response()


ExceptionHandler = Callable[[Request, Exception], Awaitable[Response]]


def handler_of(handle: Callable[[Request, E], Awaitable[Response]]) -> ExceptionHandler:
    """Starlette types every handler as taking any Exception; ours take the class they are installed for."""
    return cast(ExceptionHandler, handle)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, handler_of(_on_validation))
    app.add_exception_handler(AppError, handler_of(_on_app_error))
    app.add_exception_handler(EstimatorError, handler_of(_on_estimator_error))
    for exc_type in (DatabaseUnavailable, OperationalError, InterfaceError, PoolTimeout):
        app.add_exception_handler(exc_type, _on_database_down)
    app.add_exception_handler(IntegrityError, handler_of(_on_integrity_error))
    app.add_exception_handler(BodyRefused, handler_of(_on_body_refused))
    app.add_exception_handler(StarletteHTTPException, handler_of(_on_http_error))
    app.add_exception_handler(Exception, _on_unexpected)
