"""The wizard's "serve a model" path: traffic, lengths and latency targets in; the cheapest deployments
that carry them, with latency, cost per million output tokens, a memory bar with the KV cache and the
engine's command line out. GET only: the state lives in the URL (bookmarkable), like the wizard.

    GET /serve                     the form (pre-filled from the query)
    GET /serve/results?…           the deployments, or the form again with inline errors (422)
    GET /serve/quote?…&option=N    the quote request form for deployment N (the wizard's quote page)
    POST /serve/quote              issue the quote → 303 to its printable page

The route is thin: `run_recommend` with `task: "serving"` does the work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.common.errors import BadGateway, InvalidInput, ServiceUnavailable
from app.common.settings import Settings
from app.delivery.deps import SessionDep, SettingsDep
from app.delivery.error_pages import WebRoute, error_page
from app.estimator.presets import list_presets
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import ENGINES, SERVING_PRECISIONS, WEIGHT_FORMATS
from app.hub.service import with_hub_config
from app.planner.schemas import OptionOut, RecommendIn, RecommendOut
from app.planner.service import run_recommend
from app.quotes import serving_words
from app.text import messages, words
from app.text.field_words import pydantic_message
from app.text.i18n import Translator, negotiate
from app.text.templating import templates
from app.web.charts import memory_bar
from app.web.forms import api_message, parse_number
from app.web.present import miss_words
from app.web.quote_form import QuoteEntry, find_option, quote_form_context, quote_from_form
from app.web.serve_words import binding, binding_words, layout_words, servers_words

router = APIRouter(route_class=WebRoute, include_in_schema=False)

FIELDS = (
    "source", "preset", "hf_id", "input_tokens", "output_tokens", "requests_per_s", "peak_factor", "ttft_ms", "tpot_ms",
    "engine", "weights", "kv_cache", "term", "prefix_cache", "spec_method", "spec_tokens", "spec_acceptance",
    "disaggregated",
)  # fmt: skip
SPEC_METHODS = ("none", "eagle3", "mtp", "ngram")  # the wizard's speculation choices (draft_model: the API only)
DISAGGREGATION = {"no": False, "yes": True, "auto": "auto"}  # the form's choice -> serving.disaggregated
AS_SHIPPED = "checkpoint"  # the weights choice that leaves the format to the checkpoint's quantization_config
SOURCES = ("preset", "hub")  # a shipped preset, or a Hugging Face model id (its config.json read from the Hub)
DEFAULTS = {
    "source": "preset",
    "preset": "llama-3.1-8b",
    "input_tokens": "1024",
    "output_tokens": "256",
    "requests_per_s": "5",
    "peak_factor": "1.5",
    "ttft_ms": "2000",
    "tpot_ms": "50",
    "engine": "vllm",
    "weights": "checkpoint",
    "kv_cache": "bf16",
    "term": "monthly",
    "prefix_cache": "0",
    "spec_method": "none",
    "spec_tokens": "3",
    "spec_acceptance": "0.7",
    "disaggregated": "no",
}
# API location → the form field that shows its message.
API_TO_FIELD = {
    "model.preset": "preset",
    "model.hf_id": "hf_id",
    "serving.input_tokens": "input_tokens",
    "serving.output_tokens": "output_tokens",
    "serving.requests_per_s": "requests_per_s",
    "serving.peak_factor": "peak_factor",
    "serving.slo.ttft_ms": "ttft_ms",
    "serving.slo.tpot_ms": "tpot_ms",
    "serving.engine": "engine",
    "weights": "weights",
    "precision": "weights",
    "kv_cache_precision": "kv_cache",
    "constraints.term": "term",
    "serving.prefix_cache_hit_rate": "prefix_cache",
    "serving.speculative": "spec_method",
    "serving.speculative.num_speculative_tokens": "spec_tokens",
    "serving.speculative.acceptance_rate": "spec_acceptance",
    "serving.disaggregated": "disaggregated",
}
INTEGER_FIELDS = ("input_tokens", "output_tokens", "spec_tokens")
NUMBER_FIELDS = ("requests_per_s", "peak_factor", "ttft_ms", "tpot_ms", "prefix_cache", "spec_acceptance")


@dataclass
class ServeForm:
    values: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    multi: dict[str, list[str]] = field(default_factory=dict)  # the shared macros read it

    def value(self, name: str) -> str:
        return self.values.get(name, "")

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)


def read_form(query: Any) -> ServeForm:
    given = {name: str(query.get(name, "")).strip() for name in FIELDS if name in query}
    return ServeForm(values={**DEFAULTS, **given})


def field_for(location: str) -> str:
    best = max((key for key in API_TO_FIELD if location == key or location.startswith(key + ".")), key=len, default="")
    return API_TO_FIELD.get(best, "preset")


def _number(form: ServeForm, name: str, t: Translator, *, integer: bool) -> float | int | None:
    raw = form.value(name).replace(",", "")
    if raw == "":
        return None
    value, problem = parse_number(raw, integer=integer)
    if problem is not None:
        form.add_error(name, t("serve_err_integer" if problem == "fractional" else "serve_err_number"))
    return value


def parse(form: ServeForm, t: Translator) -> RecommendIn | None:
    """The POST /recommend body for the form, or None with the form's errors filled."""
    numbers = {name: _number(form, name, t, integer=name in INTEGER_FIELDS) for name in INTEGER_FIELDS + NUMBER_FIELDS}
    source = form.value("source")
    if source not in SOURCES:
        form.add_error("source", t("serve_err_choice", allowed=", ".join(SOURCES)))
    elif source == "hub" and not form.value("hf_id"):
        form.add_error("hf_id", t("err_required"))
    if form.value("disaggregated") not in DISAGGREGATION:
        form.add_error("disaggregated", t("serve_err_choice", allowed=", ".join(DISAGGREGATION)))
    if form.value("spec_method") not in SPEC_METHODS:
        form.add_error("spec_method", t("serve_err_choice", allowed=", ".join(SPEC_METHODS)))
    if form.value("kv_cache") not in SERVING_PRECISIONS:  # the API's precision type also holds fp32, not served
        form.add_error("kv_cache", t("serve_err_choice", allowed=", ".join(SERVING_PRECISIONS)))
    if form.errors:
        return None
    weights = form.value("weights")
    slo = {k: numbers[k] for k in ("ttft_ms", "tpot_ms") if numbers[k] is not None}
    serving: dict[str, Any] = {
        "input_tokens": numbers["input_tokens"],
        "output_tokens": numbers["output_tokens"],
        "requests_per_s": numbers["requests_per_s"],
        "peak_factor": numbers["peak_factor"],
        "engine": form.value("engine"),
        "slo": slo or None,
        "prefix_cache_hit_rate": numbers["prefix_cache"],
        "speculative": _speculative(form, numbers),
        "disaggregated": DISAGGREGATION[form.value("disaggregated")],
    }
    body = {
        "model": {"hf_id": form.value("hf_id")} if source == "hub" else {"preset": form.value("preset")},
        "task": "serving",
        "precision": "fp8" if weights == "fp8" else "bf16",
        "weights": None if weights == AS_SHIPPED else weights,
        "kv_cache_precision": form.value("kv_cache"),
        "serving": {k: v for k, v in serving.items() if v is not None},
        "constraints": {"term": form.value("term")},
    }
    try:
        return RecommendIn.model_validate(body)
    except ValidationError as exc:
        for err in exc.errors():
            location = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
            form.add_error(field_for(location), pydantic_message(err, t))  # in the page's language
        return None


def _speculative(form: ServeForm, numbers: dict[str, float | int | None]) -> dict[str, Any] | None:
    """The serving.speculative block of the form's levers; None when none is chosen."""
    method = form.value("spec_method")
    if method == "none":
        return None
    acceptance = numbers["spec_acceptance"]
    return {"method": method, "num_speculative_tokens": numbers["spec_tokens"], "acceptance_rate": acceptance}


def _page(request: Request, t: Translator, context: dict[str, Any], *, status: int = 200) -> HTMLResponse:
    items = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    switch = f"{request.url.path}?{urlencode([*items, ('lang', 'zh' if t.lang == 'en' else 'en')])}"
    presets = [(p.id, p.name) for p in list_presets()]
    return templates.TemplateResponse(
        request,
        "web/serve.html",
        {
            "t": t,
            "lang": t.lang,
            "switch_url": switch,
            "presets": presets,
            "engines": ENGINES,
            "weight_formats": (AS_SHIPPED, *WEIGHT_FORMATS),
            "spec_methods": SPEC_METHODS,
            **context,
        },
        status_code=status,
    )


@router.get("/serve", response_class=HTMLResponse)
def serve_form(request: Request) -> HTMLResponse:
    t = Translator(negotiate(request))
    return _page(request, t, {"form": read_form(request.query_params), "result": None})


def _answer(
    session: Session, form: ServeForm, t: Translator, settings: Settings
) -> tuple[RecommendIn, RecommendOut] | None:
    """The form's request (a Hugging Face model's config read in) and its deployments; None with the form's errors
    filled, in the page's language, where the form or the planner refuses it."""
    body = parse(form, t)
    if body is None:
        return None
    try:
        body = with_hub_config(session, body, settings=settings)
        return body, run_recommend(session, body)
    except EstimatorError as exc:
        form.add_error(field_for(exc.field or ""), messages.estimator_error(exc, t.lang))
    except (InvalidInput, BadGateway, ServiceUnavailable) as exc:
        for err in exc.errors or [{"field": "model.preset", "message": exc.detail}]:
            form.add_error(field_for(str(err.get("field", ""))), api_message(err, t))
    return None


@router.get("/serve/results", response_class=HTMLResponse)
def serve_results(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    t = Translator(negotiate(request))
    form = read_form(request.query_params)
    answer = _answer(session, form, t, settings)
    if answer is None:
        return _page(request, t, {"form": form, "result": None}, status=422)
    body, result = answer
    assert body.serving is not None  # a result comes from a parsed serving request
    slo = body.serving.slo
    targets = {k: v for k, v in (("ttft_ms", slo.ttft_ms), ("tpot_ms", slo.tpot_ms)) if v} if slo else {}
    percentile = slo.percentile if slo else "p90"

    def binds(o: OptionOut) -> str:
        return binding_words(binding(o, targets, percentile), t)

    views = [(o, memory_bar(o.memory), None, binds(o)) for o in result.options]
    near = [(o, memory_bar(o.memory), miss_words(o, t), binds(o)) for o in result.near_misses]
    context = {
        "form": form,
        "result": result,
        "views": views,
        "near": near,
        "quote_qs": urlencode(_state(form, t)),
        "servers_words": lambda o: servers_words(o, t),
        "layout_words": lambda o: layout_words(o, t),
        "rate": body.serving.requests_per_s or 0,
        "factor": body.serving.peak_factor,
        "percentile": percentile,
    }
    return _page(request, t, context)


# ---- quotes from a deployment --------------------------------------------------------------------


def _state(form: ServeForm, t: Translator) -> list[tuple[str, str]]:
    return [*((name, form.value(name)) for name in FIELDS if form.value(name)), ("lang", t.lang)]


def _quote_page(
    request: Request, session: Session, form: ServeForm, t: Translator, entry: QuoteEntry, status: int = 200
) -> HTMLResponse:
    state = _state(form, t)
    items = [(k, v) for k, v in state if k != "lang"]
    switch = f"/serve/results?{urlencode([*items, ('lang', 'zh' if t.lang == 'en' else 'en')])}"
    option, served = entry.option, entry.option.serving
    plan = option.plan  # an option without serving figures: its replicas × TP (× PP) in the page's language
    summary = words.serving_summary(plan.dp, plan.tp, plan.pp, None, t.lang, plan.ep)
    if served is not None:
        summary = layout_words(option, t)
        if served.pools:
            summary = serving_words.deployment_words(
                {"pools": {name: pool.model_dump() for name, pool in served.pools.items()}},
                option.cost.units, "node", t.lang,
            )  # fmt: skip
    quote_form = quote_form_context(session, entry, state, summary=summary, results_path="/serve/results")
    context = {"t": t, "lang": t.lang, "switch_url": switch, **quote_form, "form_action": "/serve/quote"}
    return templates.TemplateResponse(request, "web/quote.html", context, status_code=status)


@router.get("/serve/quote", response_class=HTMLResponse)
def serve_quote_form(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    t = Translator(negotiate(request))
    form = read_form(request.query_params)
    answer = _answer(session, form, t, settings)
    if answer is None:  # the form's fields refused: the form again, its errors in the page's language
        return _page(request, t, {"form": form, "result": None}, status=422)
    option = find_option(answer[1], request.query_params.get("option"))
    if option is None:
        return error_page(request, 404, message=t("option_missing"))
    return _quote_page(request, session, form, t, QuoteEntry.blank(option))  # ticks its quote body's add-ons


@router.post("/serve/quote", response_class=HTMLResponse)
async def serve_issue_quote(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    posted = await request.form()
    t = Translator(negotiate(request, posted.get("lang")))
    fields = {k: v for k, v in posted.items() if isinstance(v, str)}
    addons = [v for k, v in posted.multi_items() if k == "addons" and isinstance(v, str)]
    return await to_thread.run_sync(_issue, request, session, settings, fields, addons, t)


def _issue(
    request: Request,
    session: Session,
    settings: Settings,
    fields: dict[str, str],
    addons: list[str],
    t: Translator,
) -> Response:
    form = read_form(fields)
    answer = _answer(session, form, t, settings)
    if answer is None:  # a hidden field refused (edited, or stale): the form again with its errors, as POST /quote
        return _page(request, t, {"form": form, "result": None}, status=422)
    option = find_option(answer[1], fields.get("option"))
    if option is None:
        return error_page(request, 404, message=t("option_missing"))
    printable, entry = quote_from_form(session, answer[0], option, fields, addons, t, settings.quote_validity_days)
    if printable is not None:
        return RedirectResponse(printable, status_code=303)
    return _quote_page(request, session, form, t, entry, status=422)
