"""The MCP tools: the JSON API's own request models as their input schemas, the same services behind them.

Each tool is one row of TOOLS: its input model (a REST request body: `EstimateIn` is POST /estimate's,
`RecommendIn` POST /recommend's, `QuoteCreate` POST /quotes'), its output model (the REST response), the
API-key scope it needs over HTTP, and the service call the REST route makes. A result carries the REST
answer's JSON twice, as MCP asks: as structured content, and as the text of its one content block. A refusal
is a tool error whose text is the problem document (RFC 9457) the REST route answers with, status included.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from app.catalog import service as catalog_service
from app.catalog.schemas import SkuOut
from app.common.errors import HTTP_PROBLEMS, PROBLEM_BASE, AppError, capped_errors, validation_problem
from app.common.jsonguard import Refusal, check_json
from app.common.schemas import RequestModel
from app.common.settings import Settings
from app.db.engine import CLIENT, LOCK_DEADLINE, SETTINGS, DatabaseUnavailable
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import ApiScope
from app.hub.service import FIELD, with_hub_config
from app.planner import service as planner_service
from app.planner.schemas import EstimateIn, EstimateOut, RecommendIn, RecommendOut
from app.quotes import service as quotes_service
from app.quotes.plan_check import check_quote
from app.quotes.schemas import QuoteCreate, QuoteOut
from app.text import messages

log = logging.getLogger("app.mcp")


class NoInput(RequestModel):
    """A tool that takes no arguments (an empty object)."""


class QuoteRef(RequestModel):
    public_id: str = Field(min_length=1, max_length=64, description="The quote's public id (its `id` field)")


class ModelList(BaseModel):
    models: list[dict[str, Any]] = Field(description="GET /models: the shipped model presets")


class SkuList(BaseModel):
    skus: list[SkuOut] = Field(description="GET /catalog/skus: the active server SKUs and their prices")


@dataclass(frozen=True)
class Call:
    """What a tool's service call gets: the session of its unit of work and the app's settings."""

    session: Session
    settings: Settings
    open_session: sessionmaker[Session]
    organisation: str | None


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    scope: ApiScope  # the API-key scope a call needs over HTTP (app.mcp.http)
    run: Callable[[Call, Any], BaseModel]
    read_only: bool = True


def _estimate(call: Call, body: EstimateIn) -> EstimateOut:
    body = with_hub_config(call.session, body, settings=call.settings)
    return planner_service.estimate(body, open_session=call.open_session)


def _recommend(call: Call, body: RecommendIn) -> RecommendOut:
    return planner_service.run_recommend(call.session, with_hub_config(call.session, body, settings=call.settings))


def _create_quote(call: Call, body: QuoteCreate) -> QuoteOut:
    if body.workload is not None:  # as POST /quotes: the quote keeps the Hub config it was priced on
        workload = with_hub_config(call.session, body.workload, settings=call.settings, field="workload." + FIELD)
        body = body.model_copy(update={"workload": workload})
    created = quotes_service.create_quote(
        call.session,
        data=body,
        validity_days=call.settings.quote_validity_days,
        check_plan=check_quote,
        organisation=call.organisation,
    )
    return created.quote


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "list_models",
            "The shipped model presets (ids for `model.preset`), with their sizes and sources. Same as GET /models.",
            NoInput,
            ModelList,
            "recommend",
            lambda call, _: ModelList(models=planner_service.model_presets()),
        ),
        Tool(
            "list_skus",
            "The active server SKUs (ids for `sku_id`) with list and per-term prices. Same as GET /catalog/skus.",
            NoInput,
            SkuList,
            "recommend",
            lambda call, _: SkuList(skus=catalog_service.public_skus(call.session)),
        ),
        Tool(
            "estimate",
            "Per-GPU memory, fit, speed and time to train of a workload on given hardware. "
            "Arguments and result as POST /estimate.",
            EstimateIn,
            EstimateOut,
            "recommend",
            _estimate,
        ),
        Tool(
            "recommend",
            "Rank rentable configurations (SKU x cards/nodes x parallel plan) by cost and time for a training, "
            "fine-tuning or serving workload. Arguments and result as POST /recommend; each option's `quote` "
            "is the argument of create_quote.",
            RecommendIn,
            RecommendOut,
            "recommend",
            _recommend,
        ),
        Tool(
            "create_quote",
            "Issue a quote priced from the catalog as it stands now (a new quote on every call). "
            "Arguments and result as POST /quotes.",
            QuoteCreate,
            QuoteOut,
            "quotes:write",
            _create_quote,
            read_only=False,
        ),
        Tool(
            "get_quote",
            "A quote by its public id, with its status. Same as GET /quotes/{public_id}.",
            QuoteRef,
            QuoteOut,
            "quotes:read",
            lambda call, ref: quotes_service.get_quote(call.session, public_id=ref.public_id),
        ),
    )
}


def input_schema(tool: Tool) -> dict[str, Any]:
    return tool.input.model_json_schema(mode="validation")


def output_schema(tool: Tool) -> dict[str, Any]:
    return tool.output.model_json_schema(mode="serialization")


def run_tool(
    tool: Tool,
    arguments: Mapping[str, Any],
    *,
    settings: Settings,
    open_session: sessionmaker[Session],
    client: str,
    organisation: str | None,
    arrived_at: float,
) -> dict[str, Any]:
    """The tool's result as the REST route's JSON, in one unit of work (committed, or rolled back on error).
    Raises what the service raises, pydantic's ValidationError for arguments the input model refuses, and
    app.common.jsonguard's Refusal for arguments outside its bounds (over HTTP the body was checked already; stdio's
    arguments are checked here)."""
    check_json(dict(arguments))
    body = tool.input.model_validate(dict(arguments))
    session = open_session()
    session.info.update({CLIENT: client, SETTINGS: settings})
    if settings.db_lock_timeout_ms > 0:  # as app.delivery.deps.get_session: lock waits end within the request's budget
        session.info[LOCK_DEADLINE] = arrived_at + settings.db_lock_timeout_ms / 1000
    try:
        result = tool.run(Call(session, settings, open_session, organisation), body)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    return dumped


def problem(status: int, detail: str, **extra: Any) -> dict[str, Any]:
    type_, title = HTTP_PROBLEMS.get(status, ("http-error", "HTTP error"))
    body = {"type": PROBLEM_BASE + type_, "title": title, "status": status, "detail": detail, **extra}
    return body | capped_errors(body)


def problem_of(exc: Exception) -> dict[str, Any]:
    """The problem document the REST API answers the same failure with (app.common.errors renders it there)."""
    if isinstance(exc, ValidationError):
        detail, members = validation_problem(exc.errors())
        return problem(422, detail, **members)
    if isinstance(exc, Refusal):
        return problem(
            422, f"{exc.field}: {exc.message}", errors=[{"field": exc.field, "message": exc.message, "type": exc.type}]
        )
    if isinstance(exc, AppError):
        extra = {**exc.extra, **({"errors": exc.errors} if exc.errors else {})}  # as app_error_response's
        body = {
            "type": PROBLEM_BASE + exc.type_,
            "title": exc.title,
            "status": exc.status,
            "detail": exc.detail,
            **extra,
        }
        return body | capped_errors(body)
    if isinstance(exc, DatabaseUnavailable | OperationalError | InterfaceError | PoolTimeout):
        log.warning("database unavailable or busy in an MCP tool: %s", type(exc).__name__)
        return problem(503, "The database is unavailable or busy; try again shortly.")
    if isinstance(exc, IntegrityError):
        return problem(409, "A concurrent change got there first; try again.")
    if isinstance(exc, EstimatorError):
        return problem(422, str(exc), errors=[messages.estimator_error_item(exc)])
    log.exception("unhandled error in an MCP tool", exc_info=exc)
    return problem(500, "An unexpected error occurred; it has been logged.")


def as_text(document: Mapping[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def now() -> float:
    return time.monotonic()
