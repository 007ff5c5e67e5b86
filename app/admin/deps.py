"""`require_admin`: the one dependency every /admin router carries (except the sign-in page).

- `/admin/api/...` accepts only `Authorization: Bearer <token>`: none or a bad/revoked token → 401.
- The HTML pages accept only the session cookie: none, expired or signed out → LoginRequired
  (a redirect to the sign-in page); a state-changing request must also carry the session's CSRF
  token (form field `csrf_token` or header `X-CSRF-Token`) → 403 without it.
- A valid credential of a user who is not an active admin → 403.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.admin import service
from app.admin.models import AdminSession, AdminUser
from app.common.errors import Forbidden, Unauthorized
from app.delivery.deps import SessionDep
from app.text.i18n_admin import ADMIN_EN

SESSION_COOKIE = "gpu_sizer_admin"
API_PREFIX = "/admin/api"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The header of an answer that carries a secret shown once (a new token, API key or webhook secret).
NO_STORE = {"Cache-Control": "no-store"}
# The largest id or version a row holds: its column is an INTEGER (32-bit signed); a larger one names no row, and
# PostgreSQL refuses to compare it, so in a path or query it is a 422 naming the field.
ROW_ID_MAX = 2**31 - 1
RowId = Annotated[int, Path(ge=1, le=ROW_ID_MAX)]


class LoginRequired(Unauthorized):
    """An HTML admin page without a live session: rendered as a redirect to the sign-in page."""


@dataclass(frozen=True, slots=True)
class Principal:
    user: AdminUser
    actor: service.Actor
    browser_session: AdminSession | None = None

    @property
    def csrf_token(self) -> str:
        return self.browser_session.csrf_token if self.browser_session else ""


def client_addr(request: Request) -> str:
    return request.client.host if request.client else ""


# Documents the bearer scheme in OpenAPI (the "Authorize" button of /docs); missing is not an error here.
bearer_scheme = HTTPBearer(auto_error=False, description="An API token from /admin/tokens or `create-token`")
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]


def _refused(field: str, code: str, **params: str) -> dict[str, Any]:
    """A 403's entry worded from its code (app/text/i18n_admin.py `admin_err_<code>`: the forbidden page words it in its
    reader's language)."""
    message = ADMIN_EN[f"admin_err_{code}"].format(**params)
    return {"field": field, "message": message, "type": code, "code": code, "params": params}


def _check_role(user: AdminUser) -> None:
    if not user.is_active or user.role != "admin":
        raise Forbidden(
            f"{user.email} is not an active admin", errors=[_refused("role", "not_admin", email=user.email)]
        )


async def sent_csrf_token(request: Request) -> str | None:
    """The CSRF token a state-changing page request carries (header, or the form's field); reading a form
    body needs the event loop, so this part of the check is async and the rest is not."""
    if request.method in SAFE_METHODS or request.url.path.startswith(API_PREFIX):
        return None
    sent = request.headers.get("x-csrf-token")
    if sent is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        posted = (await request.form()).get("csrf_token")
        sent = posted if isinstance(posted, str) else None
    return sent


def _check_csrf(sent: str | None, expected: str) -> None:
    if sent is None or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise Forbidden(
            "the form's CSRF token is missing or wrong; reload the page and try again",
            errors=[_refused("csrf_token", "csrf")],
        )


def require_admin(
    request: Request, session: SessionDep, bearer: BearerDep, sent_csrf: Annotated[str | None, Depends(sent_csrf_token)]
) -> Principal:
    """Synchronous, so its queries run on a worker thread rather than the event loop; it ends its own
    transaction (the credential's last-used touch) so that no connection waits with the request for a
    thread to run the endpoint."""
    principal = _authenticate(request, session, bearer, sent_csrf)
    session.commit()
    return principal


def require_signed_in(
    request: Request, session: SessionDep, sent_csrf: Annotated[str | None, Depends(sent_csrf_token)]
) -> Principal:
    """Any live browser session, a viewer's too (signing out needs no role); CSRF checked as for admins."""
    principal = _authenticate(request, session, None, sent_csrf, role_required=False)
    session.commit()
    return principal


def _authenticate(
    request: Request,
    session: Session,
    bearer: HTTPAuthorizationCredentials | None,
    sent_csrf: str | None,
    *,
    role_required: bool = True,
) -> Principal:
    addr = client_addr(request)
    if request.url.path.startswith(API_PREFIX):
        row = service.resolve_token(session, token=bearer.credentials) if bearer else None
        if row is None:
            raise Unauthorized(
                "a valid API token is required: Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"}
            )
        _check_role(row.user)
        return Principal(row.user, service.Actor(row.user.id, row.user.email, "api", addr))
    cookie = request.cookies.get(SESSION_COOKIE)
    live = service.resolve_session(session, token=cookie) if cookie else None
    if live is None:
        raise LoginRequired("sign in first")
    principal = Principal(live.user, service.Actor(live.user.id, live.user.email, "ui", addr), live)
    if role_required:
        try:
            _check_role(live.user)
        except Forbidden:
            # The refusal page still offers a way to sign out (plain values: a refusal rolls the session back).
            request.state.sign_out_csrf = live.csrf_token
            raise
    if request.method not in SAFE_METHODS:
        _check_csrf(sent_csrf, live.csrf_token)
    return principal


def is_admin(request: Request, session: Session) -> bool:
    """Whether a request outside /admin carries an active admin's API token or live browser session (no
    CSRF check: only safe requests ask). Installed as app.delivery.deps.ADMIN_CHECK for GET /quotes."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        row = service.resolve_token(session, token=token.strip())
        user = row.user if row is not None else None
    else:
        cookie = request.cookies.get(SESSION_COOKIE)
        live = service.resolve_session(session, token=cookie) if cookie else None
        user = live.user if live is not None else None
    return user is not None and user.is_active and user.role == "admin"


AdminDep = Annotated[Principal, Depends(require_admin)]
SignedInDep = Annotated[Principal, Depends(require_signed_in)]
