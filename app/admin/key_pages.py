"""The admin's API key pages: the list, the issuing form (the key is shown on its answer, once) and the
revoking confirmation. Same services as the JSON API (/admin/api/keys), so the same audit rows."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.admin import service
from app.admin.deps import NO_STORE, AdminDep, Principal, RowId, require_admin
from app.admin.pages import FormDep, _confirmed, _page, _refusal, revoke_confirmation
from app.apikeys import service as apikeys_service
from app.apikeys.schemas import DEFAULT_RATE_LIMIT_PER_MINUTE, ApiKeyCreate
from app.common.errors import AppError
from app.delivery.deps import SessionDep, UnitOfWorkRoute
from app.estimator.vocabulary import API_SCOPES
from app.text.i18n import Translator, negotiate

router = APIRouter(
    prefix="/admin", include_in_schema=False, dependencies=[Depends(require_admin)], route_class=UnitOfWorkRoute
)


def _keys_page(
    request: Request, session: Session, admin: Principal, status_code: int = 200, **context: Any
) -> HTMLResponse:
    values = {"admin": admin, "keys": apikeys_service.list_keys(session), "scopes": API_SCOPES, "created": None}
    values |= {"default_limit": DEFAULT_RATE_LIMIT_PER_MINUTE, "form": {}, **context}
    headers = NO_STORE if values["created"] else None
    return _page(request, "keys.html", values, status_code=status_code, headers=headers)


@router.get("/keys", response_class=HTMLResponse)
def keys_page(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _keys_page(request, session, admin)


@router.post("/keys", response_class=HTMLResponse)
def key_create(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    name: Annotated[str, Form(max_length=200)] = "",
    organisation: Annotated[str, Form(max_length=200)] = "",
    scopes: Annotated[list[str], Form(max_length=3)] = [],  # noqa: B006 (FastAPI copies defaults per request)
    rate_limit_per_minute: Annotated[str, Form(max_length=12)] = "",
    expires_on: Annotated[str, Form(max_length=10)] = "",
) -> HTMLResponse:
    form = {"name": name, "organisation": organisation, "scopes": scopes}
    form |= {"rate_limit_per_minute": rate_limit_per_minute, "expires_on": expires_on}
    try:
        expires_at = datetime.combine(date.fromisoformat(expires_on), datetime.min.time(), UTC) if expires_on else None
        data = ApiKeyCreate.model_validate(
            {
                "name": name,
                "organisation": organisation,
                "scopes": scopes,
                "rate_limit_per_minute": int(rate_limit_per_minute or DEFAULT_RATE_LIMIT_PER_MINUTE),
                "expires_at": expires_at,
            }
        )
        with session.begin_nested():
            issued = service.issue_api_key(session, data=data, actor=admin.actor)
    except (AppError, ValidationError) as exc:
        return _keys_page(request, session, admin, form=form, **_refusal(exc, request))
    except ValueError as exc:  # a bad date or number
        return _keys_page(request, session, admin, 422, error=f"Please correct: {exc}", errors=[], form=form)
    # Shown once, on this response only; never stored in plain text.
    return _keys_page(request, session, admin, 201, created=issued)


@router.api_route("/keys/{key_id}/revoke", methods=["GET", "POST"], response_class=HTMLResponse)
def key_revoke(request: Request, key_id: RowId, session: SessionDep, admin: AdminDep, form: FormDep) -> Response:
    key = apikeys_service.key_out(apikeys_service.get_key(session, key_id=key_id))
    t = Translator(negotiate(request))
    confirmation = revoke_confirmation(
        key,
        title=t("admin_key_revoke_title", name=key.name, organisation=key.organisation),
        details=[
            (t("admin_col_organisation"), key.organisation),
            (t("admin_col_starts"), f"{key.prefix}…"),
            (t("admin_col_scopes"), ", ".join(key.scopes)),
        ],
        t=t,
        kind="key",
        item_id=key_id,
        act=lambda: service.revoke_api_key(session, key_id=key_id, actor=admin.actor),
        done_msg="key-revoked",
    )
    return _confirmed(request, session, admin, form, confirmation)
