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
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.admin import service
from app.admin.models import AdminSession, AdminUser
from app.api.deps import SessionDep
from app.errors import Forbidden, Unauthorized

SESSION_COOKIE = "gpu_sizer_admin"
API_PREFIX = "/admin/api"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


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


def _check_role(user: AdminUser) -> None:
    if not user.is_active or user.role != "admin":
        raise Forbidden(f"{user.email} is not an active admin")


async def _check_csrf(request: Request, expected: str) -> None:
    sent = request.headers.get("x-csrf-token")
    if sent is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        sent = (await request.form()).get("csrf_token")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise Forbidden("the form's CSRF token is missing or wrong; reload the page and try again")


async def require_admin(request: Request, session: SessionDep, bearer: BearerDep) -> Principal:
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
    _check_role(live.user)
    if request.method not in SAFE_METHODS:
        await _check_csrf(request, live.csrf_token)
    return Principal(live.user, service.Actor(live.user.id, live.user.email, "ui", addr), live)


AdminDep = Annotated[Principal, Depends(require_admin)]
