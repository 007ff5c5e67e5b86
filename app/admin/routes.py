"""Wires the admin into the app: its routers and the HTML rendering of its auth errors."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from app.admin import api, capacity_api, capacity_pages, key_pages, pages, webhooks_api, webhooks_pages
from app.admin.deps import API_PREFIX, LoginRequired, is_admin
from app.common.errors import Forbidden, NotFound, app_error_answer, handler_of
from app.delivery.deps import ADMIN_CHECK
from app.text.i18n import Translator, negotiate
from app.text.templating import templates


async def _on_login_required(request: Request, exc: LoginRequired) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/admin/login?next={quote(target)}", status_code=303)


async def _on_forbidden(request: Request, exc: Forbidden) -> Response:
    path = request.url.path
    if path.startswith("/admin") and not path.startswith(API_PREFIX):
        t = Translator(negotiate(request))
        context = {"t": t, "sign_out_csrf": getattr(request.state, "sign_out_csrf", None)}
        context |= pages.admin_words(request, context)
        coded = [e for e in exc.errors if "code" in e and t.has(f"admin_err_{e['code']}")]
        context["detail"] = t(f"admin_err_{coded[0]['code']}", **coded[0]["params"]) if coded else exc.detail
        return templates.TemplateResponse(request, "admin/forbidden.html", context, status_code=403)
    return app_error_answer(request, exc)


async def _on_not_found(request: Request, exc: NotFound) -> Response:
    """A missing SKU, token, key or webhook asked for by an admin page in a browser: the admin's 404 page in its
    language (the JSON problem elsewhere, as for every 404)."""
    path = request.url.path
    page = path.startswith("/admin") and not path.startswith(API_PREFIX)
    if page and "text/html" in request.headers.get("accept", ""):
        context = {"sign_out_csrf": getattr(request.state, "sign_out_csrf", None)}
        context |= pages.admin_words(request, context)
        return templates.TemplateResponse(request, "admin/not_found.html", context, status_code=404)
    return app_error_answer(request, exc)


def install_admin(app: FastAPI) -> None:
    # In this order: capacity_pages before pages, whose /skus/{slug}/{action} would take /holds.
    routers = (pages.public, capacity_pages.router, pages.router, key_pages.router, api.router, capacity_api.router)
    for router in (*routers, webhooks_api.router, webhooks_pages.router):
        app.include_router(router)
    setattr(app.state, ADMIN_CHECK, is_admin)  # GET /quotes: admins search every organisation's quotes
    app.add_exception_handler(LoginRequired, handler_of(_on_login_required))
    app.add_exception_handler(Forbidden, handler_of(_on_forbidden))
    app.add_exception_handler(NotFound, handler_of(_on_not_found))
