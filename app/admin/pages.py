"""The browser admin: server-rendered pages (Jinja2, no inline script) over the same services as the
JSON API. Sign-in is public; every other page sits behind `require_admin` (session cookie + CSRF).

Each save runs in a SAVEPOINT: a refused one (invalid input, stale version) is rolled back to it,
so nothing of it is written, and the page is shown again, as it now stands, with the reason; a
successful one redirects (post/redirect/get).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Annotated, Any, Literal, Protocol
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session

from app.admin import capacity_editing, catalog_editing, service
from app.admin.audit_labels import audit_label_key
from app.admin.deps import (
    NO_STORE,
    SESSION_COOKIE,
    AdminDep,
    Principal,
    RowId,
    SignedInDep,
    client_addr,
    require_admin,
)
from app.admin.schemas import AddonIn, AvailabilityIn, PriceCreate, SkuCreate, SkuPatch, audit_changes
from app.catalog import repository as catalog_repository
from app.catalog.zone import catalog_zone
from app.common.errors import AppError, InvalidInput, TooManyRequests, in_language
from app.delivery.deps import SessionDep, UnitOfWorkRoute
from app.estimator.vocabulary import QUOTE_STATUSES, RENTAL_UNITS, SKU_STATUSES, TERMS, QuoteStatus
from app.quotes import service as quotes_service
from app.text.field_words import pydantic_message
from app.text.i18n import Translator, negotiate
from app.text.i18n_admin import ADMIN_EN
from app.text.templating import templates

LOGIN_CSRF_COOKIE = "gpu_sizer_admin_login"
# What a page says after a change (`?msg=`), worded in app/text/i18n_admin.py as `admin_msg_<code>`.
MESSAGES = frozenset(
    {"saved", "price", "retired", "reactivated", "availability", "created", "revoked", "key-revoked", "cancelled"}
    | {"addon", "hold", "hold-deleted", "signed-out", "paused", "resumed", "replayed"}
)
public = APIRouter(prefix="/admin", include_in_schema=False, route_class=UnitOfWorkRoute)
router = APIRouter(
    prefix="/admin", include_in_schema=False, dependencies=[Depends(require_admin)], route_class=UnitOfWorkRoute
)


def _cookie_kwargs(request: Request) -> dict[str, Any]:
    return {"httponly": True, "samesite": "lax", "secure": request.url.scheme == "https", "path": "/admin"}


def _page(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200, headers: dict[str, str] | None = None
) -> HTMLResponse:
    context = {**admin_words(request, context), **context}
    return templates.TemplateResponse(request, f"admin/{name}", context, status_code=status_code, headers=headers)


def admin_words(request: Request, context: dict[str, Any]) -> dict[str, Any]:
    """The page's translator (its language chosen as the wizard's: `?lang=`, then Accept-Language) and the message
    `?msg=` names, in that language."""
    t = context.get("t") or Translator(negotiate(request))
    code = request.query_params.get("msg", "")
    message = t(f"admin_msg_{code}") if code in MESSAGES else None
    return {"t": t, "message": message, "field_label": partial(field_label, t), "audit_label": partial(audit_label, t)}


def _t(request: Request) -> Translator:
    """The page's translator: `?lang=`, then Accept-Language."""
    return Translator(negotiate(request))


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _safe_next(value: str | None) -> str:
    return value if value and value.startswith("/admin") and not value.startswith("//") else "/admin/skus"


def _errors(exc: AppError | ValidationError, request: Request) -> tuple[str, list[dict[str, Any]]]:
    """The summary and each field's error, in the page's language (a pydantic error's from its type and bounds)."""
    t = Translator(negotiate(request))
    if isinstance(exc, ValidationError):
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]), "message": pydantic_message(e, t)} for e in exc.errors()
        ]
        return t("admin_refused"), errors
    return in_language(exc, t.lang)  # a refusal with codes (a quote's: cancel_accepted) worded in the page's language


# The SKU form's fields as its labels name them (app/templates/admin/_sku_fields.html), for "your edit, not saved".
SKU_FIELD_LABELS = {
    "version": "admin_col_version",
    "name": "admin_f_name",
    "gpu": "admin_f_gpu",
    "rental_unit": "admin_f_rented_by",
    "gpus_per_node": "admin_f_gpus_per_node",
    "card_counts": "admin_f_card_counts",
    "intra_node_link": "admin_f_intra_node_link",
    "interconnect": "admin_f_interconnect",
    "host_cpu": "admin_f_host_cpu",
    "host_ram_gib": "admin_f_host_ram",
    "host_nvme": "admin_f_host_nvme",
    "network": "admin_f_network",
    "inter_node_fabric": "admin_f_fabric",
    "regions": "admin_f_regions",
    "infiniband_addon": "admin_f_ib_addon",
    "indicative_price": "admin_f_indicative",
    "discount_monthly": "admin_f_discount_monthly",
    "discount_annual": "admin_f_discount_annual",
    "notes": "admin_f_notes",
    "amount": "admin_f_new_price",
    "currency": "admin_f_currency",
    "effective_from": "admin_f_effective",
    "note": "admin_f_note",
}


# A refused field as the refusal names it (app/templates/admin/base.html): by its form label, the SKU form's fields
# also under the admin API's names for them (app/admin/schemas.py SkuCreate: price, discounts; PriceCreate: terms);
# a price is worded as per month, which reads right on the new price's form and the add-on's alike. A field without
# a label here is shown as its id.
FIELD_LABELS = SKU_FIELD_LABELS | {
    "id": "admin_f_id",
    "price": "admin_sku_price",  # a stale save: the price written since (app.admin.catalog_editing.stale)
    "amount": "admin_f_price_month",
    "price.amount": "admin_f_monthly_list",
    "price.currency": "admin_f_currency",
    "price.effective_from": "admin_f_effective",
    "price.note": "admin_f_note",
    **{f"{group}.{term}": f"admin_f_discount_{term}" for group in ("discounts", "terms") for term in TERMS},
    "region": "admin_f_region",
    "starts_on": "admin_audit_from",
    "ends_on": "admin_f_back_on",
    "units": "admin_f_units",
    "units_available": "admin_col_units",
    "code": "admin_f_addon_code",
    "per_unit": "admin_f_per",
    "ports_per_server": "admin_f_ports",
    "port_gbps": "admin_f_port_gbps",
    "bandwidth_source": "admin_f_bandwidth_source",
    "scopes": "admin_key_scopes",
    "events": "admin_webhook_events",
}


def field_label(t: Translator, field: str) -> str | None:
    """The label a refusal names `field` by, in the page's language (None: no label, the page shows the id)."""
    key = FIELD_LABELS.get(field)
    return None if key is None else t(key)


def audit_label(t: Translator, entity_type: str, field: str) -> str | None:
    """The label the audit page shows `field` of an `entity_type` entry under (app.admin.audit_labels), in the page's
    language; None: no label (the page shows the field's name)."""
    key = audit_label_key(entity_type, field)
    return field_label(t, field) if key is None else t(key)


def _submitted_words(submitted: dict[str, Any], t: Translator) -> list[tuple[str, Any]]:
    """What the admin posted, each field under its label (the CSRF token left out)."""
    return [
        (t(SKU_FIELD_LABELS[k]) if k in SKU_FIELD_LABELS else k, v) for k, v in submitted.items() if k != "csrf_token"
    ]


# --- sign-in / sign-out -------------------------------------------------------------------------


def _login_page(
    request: Request,
    *,
    error: str | None = None,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    email: str = "",
) -> HTMLResponse:
    token = request.cookies.get(LOGIN_CSRF_COOKIE) or secrets.token_urlsafe(32)
    response = _page(
        request,
        "login.html",
        {"csrf_token": token, "error": error, "email": email, "next": _safe_next(request.query_params.get("next"))},
        status_code=status_code,
        headers=headers,
    )
    response.set_cookie(LOGIN_CSRF_COOKIE, token, max_age=3600, **_cookie_kwargs(request))
    return response


@public.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> HTMLResponse:
    return _login_page(request)


@public.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    session: SessionDep,
    email: Annotated[str, Form(max_length=254)],
    password: Annotated[str, Form(max_length=1024)],
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    next: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    expected = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not expected or not hmac.compare_digest(csrf_token.encode(), expected.encode()):
        return _login_page(request, error=_t(request)("admin_login_expired"), status_code=403, email=email)
    try:
        attempt = service.claim_sign_in(session, email=email, client_addr=client_addr(request))
    except TooManyRequests as exc:
        wait = exc.headers.get("Retry-After", "1")
        error = _t(request)("admin_login_throttled", seconds=wait)
        return _login_page(request, error=error, status_code=429, headers=exc.headers, email=email)
    session.commit()  # the throttle's count and this attempt, stored together before the slow password check
    user = service.verify_sign_in(session, attempt=attempt, password=password)
    if user is None:
        return _login_page(request, error=_t(request)("admin_login_wrong"), status_code=401, email=email)
    token, _row = service.start_session(
        session, user=user, client_addr=client_addr(request), user_agent=request.headers.get("user-agent", "")
    )
    response = _see(_safe_next(next))
    response.set_cookie(
        SESSION_COOKIE, token, max_age=int(service.SESSION_LIFETIME.total_seconds()), **_cookie_kwargs(request)
    )
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/admin")
    return response


@public.post("/logout")
def logout(session: SessionDep, user: SignedInDep) -> Response:
    """Any signed-in user may sign out, a viewer included."""
    if user.browser_session is not None:
        service.end_session(session, row=user.browser_session)
    response = _see("/admin/login?msg=signed-out")
    response.delete_cookie(SESSION_COOKIE, path="/admin")
    return response


# --- SKUs ----------------------------------------------------------------------------------------


async def _form(request: Request) -> dict[str, str]:
    return {k: v for k, v in (await request.form()).items() if isinstance(v, str) and k != "csrf_token"}


# The form is read on the event loop; the saves then run on a worker thread, like every database call.
FormDep = Annotated[dict[str, str], Depends(_form)]


@router.get("", response_class=HTMLResponse)
def home() -> Response:
    return _see("/admin/skus")


@router.get("/skus", response_class=HTMLResponse)
def sku_list(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _page(request, "skus.html", {"admin": admin, "skus": catalog_editing.admin_skus(session)})


def _edit_page(
    request: Request,
    session: Session,
    admin: Principal,
    slug: str,
    *,
    status_code: int = 200,
    error: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    submitted: dict[str, Any] | None = None,
) -> HTMLResponse:
    sku = catalog_editing.sku_admin_out(session, catalog_editing.get_sku(session, slug))
    gpus = catalog_repository.list_gpu_types(session)
    context = {
        "admin": admin,
        "sku": sku,
        "gpus": gpus,
        "error": error,
        "errors": errors or [],
        "submitted": _submitted_words(submitted or {}, Translator(negotiate(request))),
        "holds": capacity_editing.holds(session, slug=slug),
        "rental_units": RENTAL_UNITS,  # an add-on's unit and status, worded by the page (admin_f_<unit>)
        "sku_statuses": SKU_STATUSES,
        "zone": catalog_zone(session),  # the prices' times, read and shown on the catalog's clock (review R7-4)
    }
    return _page(request, "sku_edit.html", context, status_code=status_code)


@router.get("/skus/new", response_class=HTMLResponse)
def sku_new_form(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    gpus = catalog_repository.list_gpu_types(session)
    return _page(request, "sku_new.html", {"admin": admin, "gpus": gpus, "form": {}, "errors": []})


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.replace(";", ",").split(",") if part.strip()]


def _ints(value: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in _split(value)]


def _texts(form: dict[str, str], *names: str) -> dict[str, Any]:
    """These form fields as typed (a missing one: empty text)."""
    return {name: form.get(name, "") for name in names}


def _sku_fields(form: dict[str, str]) -> dict[str, Any]:
    """The SKU form's text fields as API values (lists from comma-separated text, checkboxes)."""
    fields = _texts(
        form,
        "name",
        "gpu",
        "rental_unit",
        "intra_node_link",
        "interconnect",
        "host_cpu",
        "host_nvme",
        "network",
        "notes",
    )
    fields["gpus_per_node"] = (
        int(form["gpus_per_node"]) if form.get("gpus_per_node", "").isdigit() else form.get("gpus_per_node")
    )
    fields["card_counts"] = _ints(form.get("card_counts", ""))
    fields["regions"] = _split(form.get("regions", ""))
    ram = form.get("host_ram_gib", "").strip()
    fields["host_ram_gib"] = int(ram) if ram.isdigit() else (ram or None)
    fields["inter_node_fabric"] = form.get("inter_node_fabric", "").strip() or None
    fields["infiniband_addon"] = form.get("infiniband_addon") == "on"
    fields["indicative_price"] = form.get("indicative_price") == "on"
    fields["discounts"] = {t: form[f"discount_{t}"].strip() for t in TERMS if form.get(f"discount_{t}", "").strip()}
    return fields


@router.post("/skus/new", response_class=HTMLResponse)
def sku_create(request: Request, session: SessionDep, admin: AdminDep, form: FormDep) -> Response:
    try:
        data = SkuCreate(
            id=form.get("id", "").strip(),
            **_sku_fields(form),
            price=_texts(form, "amount", "currency"),
        )
        with session.begin_nested():
            sku = catalog_editing.create_sku(session, data=data, actor=admin.actor)
    except (AppError, ValidationError) as exc:
        error, errors = _errors(exc, request)
        gpus = catalog_repository.list_gpu_types(session)
        return _page(
            request,
            "sku_new.html",
            {"admin": admin, "gpus": gpus, "form": form, "error": error, "errors": errors},
            status_code=_status(exc),
        )
    return _see(f"/admin/skus/{sku.slug}?msg=created")


def _status(exc: AppError | ValidationError) -> int:
    return 422 if isinstance(exc, ValidationError) else exc.status


def _refusal(exc: AppError | ValidationError, request: Request) -> dict[str, Any]:
    """A refused form's answer, as a page builder's keywords: its status, the summary and each field's error."""
    error, errors = _errors(exc, request)
    return {"status_code": _status(exc), "error": error, "errors": errors}


@router.get("/skus/{slug}", response_class=HTMLResponse)
def sku_edit_form(request: Request, slug: str, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _edit_page(request, session, admin, slug)


@dataclass(frozen=True)
class SkuEdit:
    """One form posted to a SKU's edit page: who posted what to which SKU, and the page to answer with."""

    request: Request
    session: Session
    admin: Principal
    slug: str
    form: dict[str, str]

    def refused(self, exc: AppError | ValidationError) -> HTMLResponse:
        return _edit_page(
            self.request, self.session, self.admin, self.slug, submitted=self.form, **_refusal(exc, self.request)
        )

    def apply(self, change: Callable[[], object], *, done: str) -> Response:
        """Apply the change in a savepoint, then back to the SKU's page with `?msg=done`; a refused
        change shows the page again, saying why."""
        try:
            with self.session.begin_nested():
                change()
        except (AppError, ValidationError) as exc:
            return self.refused(exc)
        except ValueError as exc:  # int() of a version or a count that is not a whole number
            return self.refused(_as_app_error(exc))
        return _see(f"/admin/skus/{self.slug}?msg={done}")

    def save(
        self, edit: Callable[..., object], parse: Callable[[dict[str, str]], BaseModel], *, done: str, **at: str
    ) -> Response:
        """Parse the form into the edit's body and apply `edit(session, slug, data, actor, **at)`."""
        return self.apply(
            lambda: edit(self.session, slug=self.slug, data=parse(self.form), actor=self.admin.actor, **at), done=done
        )


def _sku_edit(request: Request, slug: str, session: SessionDep, admin: AdminDep, form: FormDep) -> SkuEdit:
    return SkuEdit(request, session, admin, slug, form)


SkuEditDep = Annotated[SkuEdit, Depends(_sku_edit)]


def _whole(value: str | None) -> Any:
    """A whole-number form field: empty is None, digits an int, anything else the text (the schema refuses it)."""
    text = (value or "").strip()
    return int(text) if text.isdigit() else (text or None)


def _version(form: dict[str, str]) -> int | None:
    version = form.get("version") or None
    return int(version) if version else None


def _sku_patch(form: dict[str, str]) -> SkuPatch:
    return SkuPatch(version=int(form.get("version", "0") or 0), **_sku_fields(form))


def _price(form: dict[str, str]) -> PriceCreate:
    return PriceCreate(
        **_texts(form, "amount", "currency", "note"),
        effective_from=form.get("effective_from") or None,
        version=_version(form),
    )


def _addon(form: dict[str, str]) -> AddonIn:
    # the bandwidth fields as the page sends them (empty: cleared); a form without them keeps the add-on's
    bandwidth: dict[str, Any] = {name: _whole(form[name]) for name in ("ports_per_server", "port_gbps") if name in form}
    if "bandwidth_source" in form:
        bandwidth["bandwidth_source"] = form["bandwidth_source"]
    return AddonIn(
        **_texts(form, "name", "currency", "per_unit"),
        **bandwidth,
        amount=form.get("amount") or None,
        status=form.get("status", "active"),
        version=_version(form),
    )


def _availability(form: dict[str, str]) -> AvailabilityIn:
    return AvailabilityIn(units_available=int(form.get("units_available", "-1") or -1), version=_version(form))


@router.post("/skus/{slug}", response_class=HTMLResponse)
def sku_save(edit: SkuEditDep) -> Response:
    return edit.save(catalog_editing.update_sku, _sku_patch, done="saved")


@router.post("/skus/{slug}/prices", response_class=HTMLResponse)
def sku_price(edit: SkuEditDep) -> Response:
    return edit.save(catalog_editing.add_price, _price, done="price")


@router.post("/skus/{slug}/addons", response_class=HTMLResponse)
def sku_addon(edit: SkuEditDep) -> Response:
    return edit.save(catalog_editing.set_addon, _addon, done="addon", code=edit.form.get("code", "").strip())


@router.post("/skus/{slug}/{action}", response_class=HTMLResponse)
def sku_status(edit: SkuEditDep, action: Literal["retire", "reactivate"]) -> Response:
    status, message = {"retire": ("retired", "retired"), "reactivate": ("active", "reactivated")}[action]
    if action == "retire" and edit.form.get("confirm") != "yes":
        return edit.refused(
            InvalidInput(
                ADMIN_EN["admin_err_retire_confirm"], errors=[catalog_editing.coded("confirm", "retire_confirm")]
            )
        )

    def change() -> None:
        version = int(edit.form.get("version", "0") or 0)
        catalog_editing.set_status(edit.session, slug=edit.slug, version=version, status=status, actor=edit.admin.actor)

    return edit.apply(change, done=message)


def _as_app_error(exc: Exception) -> AppError:
    if isinstance(exc, AppError):
        return exc
    error = catalog_editing.coded("version", "whole_numbers")
    return InvalidInput(error["message"], errors=[error])


@router.post("/skus/{slug}/availability/{region}", response_class=HTMLResponse)
def sku_availability(edit: SkuEditDep, region: str) -> Response:
    return edit.save(catalog_editing.set_availability, _availability, done="availability", region=region)


# --- audit log -----------------------------------------------------------------------------------


class AuditQuery(BaseModel):
    """The audit page's filters as its form sends them: text, empty for any."""

    actor: str = Field("", max_length=254)
    action: str = Field("", max_length=64)
    entity_type: str = Field("", max_length=32)
    entity_id: str = Field("", max_length=200)
    since: str = Field("", max_length=40)
    until: str = Field("", max_length=40)
    offset: int = Field(0, ge=0, le=1_000_000)


@router.get("/audit", response_class=HTMLResponse)
def audit_page(
    request: Request, session: SessionDep, admin: AdminDep, asked: Annotated[AuditQuery, Query()]
) -> HTMLResponse:
    filters = asked.model_dump(exclude={"offset"})
    offset = asked.offset
    error = None
    try:
        since_at, until_at = (datetime.fromisoformat(v) if v else None for v in (asked.since, asked.until))
    except ValueError:
        error, since_at, until_at = "Dates look like 2026-11-29 or 2026-11-29T10:00.", None, None
    chosen = service.AuditFilter(
        actor=asked.actor or None,
        action=asked.action or None,
        entity_type=asked.entity_type or None,
        entity_id=asked.entity_id or None,
        since=since_at,
        until=until_at,
    )
    rows, total = service.audit_page(session, chosen, limit=50, offset=offset)
    query = "&".join(f"{k}={quote(v)}" for k, v in filters.items() if v)
    return _page(
        request,
        "audit.html",
        {
            "admin": admin,
            "rows": rows,
            "total": total,
            "filters": filters,
            "offset": offset,
            "query": query,
            "error": error,
            "changes": audit_changes,
        },
        status_code=422 if error else 200,
    )


# --- API tokens ----------------------------------------------------------------------------------


@router.get("/tokens", response_class=HTMLResponse)
def tokens_page(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    return _page(request, "tokens.html", {"admin": admin, "tokens": service.list_tokens(session), "created": None})


@router.post("/tokens", response_class=HTMLResponse)
def token_create(
    request: Request, session: SessionDep, admin: AdminDep, name: Annotated[str, Form(max_length=200)] = ""
) -> HTMLResponse:
    try:
        with session.begin_nested():
            plain, _row = service.create_token(session, user=admin.user, name=name, actor=admin.actor)
    except AppError as exc:
        refusal = _refusal(exc, request)
        status = refusal.pop("status_code")
        context = {"admin": admin, "tokens": service.list_tokens(session), "created": None, **refusal}
        return _page(request, "tokens.html", context, status_code=status)
    # Shown once, on this response only; never stored in plain text.
    return _page(
        request,
        "tokens.html",
        {"admin": admin, "tokens": service.list_tokens(session), "created": plain},
        status_code=201,
        headers=NO_STORE,
    )


@router.api_route("/tokens/{token_id}/revoke", methods=["GET", "POST"], response_class=HTMLResponse)
def token_revoke(request: Request, token_id: RowId, session: SessionDep, admin: AdminDep, form: FormDep) -> Response:
    t = Translator(negotiate(request))
    return _confirmed(request, session, admin, form, _revoke_confirmation(session, token_id, admin, t))


def _revoke_confirmation(session: Session, token_id: int, admin: Principal, t: Translator) -> Confirmation:
    token = service.get_token(session, token_id=token_id)
    return revoke_confirmation(
        token,
        title=t("admin_token_revoke_title", name=token.name),
        details=[(t("admin_col_starts"), f"{token.prefix}…"), (t("admin_col_owner"), token.user.email)],
        t=t,
        kind="token",
        item_id=token_id,
        act=lambda: service.revoke_token(session, token_id=token_id, actor=admin.actor),
        done_msg="revoked",
    )


class Credential(Protocol):
    """What the revoking page reads of an API key or an admin token."""

    @property
    def name(self) -> str: ...
    @property
    def last_used_at(self) -> datetime | None: ...
    @property
    def revoked_at(self) -> datetime | None: ...


def revoke_confirmation(
    credential: Credential,
    *,
    title: str,
    details: list[tuple[str, str]],
    t: Translator,
    kind: Literal["key", "token"],
    item_id: int,
    act: Callable[[], object],
    done_msg: str,
) -> Confirmation:
    """Revoking a credential (an API key, an admin token): one page for both, worded by `kind`, its rows the
    credential's name, `details`, and when it was last used; back to the list's page (/admin/keys, /admin/tokens),
    the action its item's revoke path, then the list saying `done_msg`."""
    back = f"/admin/{kind}s"
    rows = [(t("admin_col_name"), credential.name), *details]
    rows.append((t("admin_col_last_used"), _when(credential.last_used_at, t)))
    return Confirmation(
        title=title,
        rows=rows,
        consequence=t(f"admin_{kind}_revoke_consequence"),
        action=f"{back}/{item_id}/revoke",
        check=t("admin_revoke_check", name=credential.name),
        button=t(f"admin_{kind}_revoke_button"),
        back=back,
        done=t(f"admin_{kind}_revoked_already") if credential.revoked_at is not None else None,
        act=act,
        then=f"{back}?msg={done_msg}",
    )


# --- quotes --------------------------------------------------------------------------------------


@router.get("/quotes", response_class=HTMLResponse)
def quotes_page(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    status: Annotated[QuoteStatus | None, Query()] = None,
    customer: Annotated[str, Query(max_length=200)] = "",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> HTMLResponse:
    page = quotes_service.list_quotes(session, status=status, customer=customer or None, limit=50, offset=offset)
    filters = {"status": status or "", "customer": customer}
    context = {"admin": admin, "page": page, "filters": filters, "statuses": QUOTE_STATUSES}
    return _page(request, "quotes.html", context)


@router.api_route("/quotes/{public_id}/cancel", methods=["GET", "POST"], response_class=HTMLResponse)
def quote_cancel(request: Request, public_id: str, session: SessionDep, admin: AdminDep, form: FormDep) -> Response:
    t = Translator(negotiate(request))
    return _confirmed(request, session, admin, form, _cancel_confirmation(session, public_id, admin, t))


def _when(at: datetime | None, t: Translator) -> str:
    """A last use as the admin pages show it: its UTC minute, or never."""
    return at.strftime("%Y-%m-%d %H:%M") if at else t("admin_never")


def _cancel_confirmation(session: Session, public_id: str, admin: Principal, t: Translator) -> Confirmation:
    quote = quotes_service.get_quote(session, public_id=public_id)
    customer = ", ".join(part for part in (quote.customer.name, quote.customer.company, quote.customer.email) if part)
    status = t(f"admin_quote_status_{quote.status}")  # in the page's language (review R7-8)
    return Confirmation(
        title=t("admin_quote_cancel_title", number=quote.number),
        rows=[
            (t("admin_col_customer"), customer),
            (t("admin_col_total"), f"{quote.total} {quote.currency}"),
            (t("admin_col_status"), status),
            (t("admin_col_valid_until"), quote.valid_until.strftime("%Y-%m-%d")),
        ],
        consequence=t("admin_quote_cancel_consequence"),
        action=f"/admin/quotes/{public_id}/cancel",
        check=t("admin_quote_cancel_check", number=quote.number),
        button=t("admin_quote_cancel_button"),
        back="/admin/quotes",
        done=None if quote.status == "issued" else t("admin_quote_not_cancellable", status=status),
        link=(quote.links.print, t("admin_quote_printable")),
        act=lambda: service.cancel_quote(session, public_id=public_id, actor=admin.actor),
        then="/admin/quotes?msg=cancelled",
    )


# --- confirmations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Confirmation:
    """A page that asks before an action that cannot be undone; its form posts `confirm=yes` only when
    the box is ticked (plain HTML: no script needed), and the action refuses without it."""

    title: str
    rows: list[tuple[str, str]]
    consequence: str
    action: str
    check: str
    button: str
    back: str
    done: str | None = None  # already revoked, cancelled, accepted or expired: why nothing is left to confirm
    link: tuple[str, str] | None = None
    act: Callable[[], object] = lambda: None  # the action, run once the box is ticked
    then: str = "/admin"  # where to go after it


def _confirmed(
    request: Request, session: Session, admin: Principal, form: dict[str, str], confirmation: Confirmation
) -> Response:
    """GET: the confirmation page. POST: the action, run only when the form carries the ticked box;
    otherwise, or when the action is refused (a quote accepted meanwhile), nothing is written and the
    confirmation page comes back saying why."""
    if request.method == "GET":
        return _confirm_page(request, admin, confirmation)
    if form.get("confirm") != "yes":
        return _confirm_page(request, admin, confirmation, refused=True)
    try:
        with session.begin_nested():
            confirmation.act()
    except AppError as exc:
        return _confirm_page(request, admin, confirmation, error=exc)
    return _see(confirmation.then)


def _confirm_page(
    request: Request,
    admin: Principal,
    confirmation: Confirmation,
    *,
    refused: bool = False,
    error: AppError | None = None,
) -> HTMLResponse:
    context: dict[str, Any] = {"admin": admin, "c": confirmation}
    if refused:
        t = Translator(negotiate(request))
        context["error"] = t("admin_confirm_nothing_done")
        context["errors"] = [{"field": "confirm", "message": t("admin_confirm_tick", check=confirmation.check)}]
    if error is not None:
        context["error"], context["errors"] = _errors(error, request)
    status = error.status if error is not None else 422 if refused else 200
    return _page(request, "confirm.html", context, status_code=status)
