"""Quotes: issue (idempotent), read, print, PDF, accept. Cancelling is an admin action
(app.quotes.service.cancel_quote), exposed by the admin routes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, cast

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.api import examples
from app.api.responses import HUB, KEY_RESPONSES, PROBLEM
from app.apikeys import service as apikeys_service
from app.apikeys.service import Principal
from app.common.settings import Settings
from app.delivery.deps import (
    SessionDep,
    SettingsDep,
    UnitOfWorkRoute,
    admin_signed_in,
    api_key_scheme,
    optional_scope,
    require_scope,
)
from app.estimator.vocabulary import Language, QuoteStatus
from app.hub.service import FIELD, with_hub_config
from app.quotes import printing, search as quote_search, service
from app.quotes.plan_check import check_quote
from app.quotes.schemas import QuoteCreate, QuoteOut, QuotePage
from app.quotes.search import QuoteSearch
from app.text.i18n import negotiate

router = APIRouter(prefix="/quotes", tags=["quotes"], route_class=UnitOfWorkRoute)

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Retry-safe creation (Stripe's design): the same key and body return the same quote "
        "(200, `Idempotent-Replayed: true`); the same key with another body is a 409. Keys are kept with "
        "their quote, i.e. well beyond 24 hours.",
    ),
]
Lang = Annotated[
    Language | None,
    Query(description="Language of the labels; without it, Accept-Language's first supported one, else en"),
]
VARY = {"Vary": "Accept-Language"}  # the document's language follows the header where ?lang is absent


def _language(request: Request, lang: Language | None) -> Language:
    """`?lang` wins; then Accept-Language, as every page chooses its language (app.text.i18n.negotiate)."""
    return lang if lang is not None else cast(Language, negotiate(request))


def _with_hub_config(session: Session, data: QuoteCreate, settings: Settings) -> QuoteCreate:
    """A quote's workload with its Hub model's config filled in: the quote keeps the config it was priced on."""
    if data.workload is None:
        return data
    workload = with_hub_config(session, data.workload, settings=settings, field="workload." + FIELD)
    return data.model_copy(update={"workload": workload})


@router.post(
    "",
    status_code=201,
    summary="Issue a quote priced from the catalog as it stands now",
    responses={
        200: {"model": QuoteOut, "description": "An idempotent replay: the quote first issued"},
        **HUB,
        **KEY_RESPONSES,
    },
)
def create_quote(
    body: Annotated[QuoteCreate, Body(openapi_examples=examples.QUOTE)],
    session: SessionDep,
    settings: SettingsDep,
    response: Response,
    key: Annotated[Principal | None, Depends(optional_scope("quotes:write"))],
    idempotency_key: IdempotencyKey = None,
) -> QuoteOut:
    result = service.create_quote(
        session,
        data=_with_hub_config(session, body, settings),
        idempotency_key=idempotency_key,
        validity_days=settings.quote_validity_days,
        check_plan=check_quote,
        organisation=key.organisation if key else None,
    )
    response.headers["Location"] = result.quote.links.self
    if not result.created:
        response.status_code = 200
        response.headers["Idempotent-Replayed"] = "true"
    return result.quote


@dataclass(frozen=True, slots=True)
class QuoteReader:
    """Who searches quotes: an API key (scope quotes:read) its organisation's, an admin (None) everyone's."""

    organisation: str | None


def quote_reader(
    request: Request, session: SessionDep, _: Annotated[object, Security(api_key_scheme)] = None
) -> QuoteReader:
    """An API key with quotes:read, or an admin's API token or browser session; else 401 (403 out of scope)."""
    if apikeys_service.bearer_key(request.headers.get("authorization")) is None and admin_signed_in(request, session):
        return QuoteReader(None)
    return QuoteReader(require_scope("quotes:read")(request, session).organisation)


@router.get(
    "",
    summary="Search quotes, newest first: an API key's organisation's (scope quotes:read), an admin's every quote",
    responses=KEY_RESPONSES,
)
def search_quotes(
    request: Request,
    session: SessionDep,
    reader: Annotated[QuoteReader, Depends(quote_reader)],
    status: Annotated[QuoteStatus | None, Query(description="Expired includes issued quotes past validity")] = None,
    customer_email: Annotated[str | None, Query(max_length=320, description="The whole address, any case")] = None,
    company: Annotated[str | None, Query(max_length=200, description="Part of the customer's company")] = None,
    created_from: Annotated[datetime | None, Query(description="Inclusive; a bare date-time is UTC")] = None,
    created_to: Annotated[datetime | None, Query(description="Exclusive; a bare date-time is UTC")] = None,
    organisation: Annotated[str | None, Query(max_length=100, description="Admins: one organisation's")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=200, description="`next_cursor` of the previous page")] = None,
) -> QuotePage:
    quote_search.check_query(request.query_params.multi_items(), admin=reader.organisation is None)
    search = QuoteSearch(status, customer_email, company, created_from, created_to, organisation, limit, cursor)
    return quote_search.search_quotes(session, search, organisation=reader.organisation)


@router.get(
    "/{public_id}.pdf",
    summary="The quote as a PDF document",
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}}},
)
async def quote_pdf(public_id: str, request: Request, session: SessionDep, lang: Lang = None) -> Response:
    lang = _language(request, lang)
    # async, so that waiting on the rendering process holds no worker thread; the database work runs on one
    quote, html, pdf = await run_in_threadpool(
        service.pdf_source, session, public_id=public_id, lang=lang, base_url=str(request.base_url)
    )
    if pdf is None:
        # end the read's transaction first: no connection is held while the document renders
        await run_in_threadpool(session.commit)
        pdf = await request.app.state.pdf_renderer.render(html)
        await run_in_threadpool(
            service.keep_pdf,
            session,
            public_id=public_id,
            lang=lang,
            html=html,
            pdf=pdf,
            max_total_bytes=request.app.state.settings.pdf_store_max_bytes,
        )
    headers = {"Content-Disposition": f'inline; filename="{quote.number}.pdf"', **VARY}
    return Response(pdf, media_type="application/pdf", headers=headers)


@router.get(
    "/{public_id}/pdf",
    summary="The quote as a PDF document (same as /quotes/{id}.pdf)",
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}}},
)
async def quote_pdf_alias(public_id: str, request: Request, session: SessionDep, lang: Lang = None) -> Response:
    return await quote_pdf(public_id, request, session, lang)


@router.get("/{public_id}/print", summary="The printable quote page", response_class=HTMLResponse)
def quote_print(public_id: str, request: Request, session: SessionDep, lang: Lang = None) -> HTMLResponse:
    quote, seller = service.printable(session, public_id=public_id)
    page = printing.render_html(quote, seller, lang=_language(request, lang), base_url=str(request.base_url))
    return HTMLResponse(page, headers=VARY)


@router.get("/{public_id}", summary="A quote by its public id")
def get_quote(public_id: str, session: SessionDep) -> QuoteOut:
    return service.get_quote(session, public_id=public_id)


@router.post(
    "/{public_id}/accept",
    summary="The customer accepts an issued quote (refused once expired or cancelled)",
    responses={
        **KEY_RESPONSES,
        403: {
            "description": "The API key lacks quotes:write, or (`code` accept_needs_sales) the quote holds no units "
            "and accepting it would take tracked inventory: only a key with quotes:write or an admin's token may",
            **PROBLEM,
        },
        409: {"description": "The quote is cancelled or expired, or its units are no longer free"},
    },
)
def accept_quote(
    public_id: str,
    request: Request,
    session: SessionDep,
    key: Annotated[Principal | None, Depends(optional_scope("quotes:write"))],
) -> QuoteOut:
    sales = key is not None or admin_signed_in(request, session)  # may accept a quote that holds nothing
    return service.accept_quote(session, public_id=public_id, by_sales=sales)
