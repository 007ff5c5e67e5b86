"""The wizard's pages. GET forms: the state lives in the URL, so a results page can be bookmarked
and reproduces itself. The routes are thin: the planner (`run_recommend`) and the quotes service
do the work; app.web.forms maps fields, app.web.present words the answer.

    GET  /                      the wizard (pre-filled from the query when "change the inputs")
    GET  /results?…             ranked options, or the wizard again with inline errors (422)
    GET  /results.csv?…         the options as CSV
    GET  /results/launch.json?…&option=N   option N's launch config for its stack (DeepSpeed, FSDP or Megatron)
    GET  /quote?…&option=N      the quote request form for option N
    POST /quote                 issue the quote → 303 to its printable page
    GET  /quote/{id}/accept     the customer's confirmation page for accepting a quote
    POST /quote/{id}/accept     accept it → 303 to the printable page, now marked accepted
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from anyio import to_thread
from fastapi import APIRouter, Form, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.capacity.service import CapacityTaken
from app.catalog.schemas import SkuOut
from app.catalog.service import public_skus
from app.common.errors import BadGateway, Conflict, InvalidInput, ServiceUnavailable
from app.delivery.deps import SessionDep, SettingsDep
from app.delivery.error_pages import WebRoute, error_page, wants_html
from app.estimator.presets import list_presets
from app.estimator.specs import EstimatorError
from app.hub.service import with_hub_config
from app.planner.schemas import RecommendIn, RecommendOut
from app.planner.service import run_recommend
from app.quotes import printing, service as quotes_service
from app.quotes.reservations import SalesConfirmationNeeded
from app.text import messages
from app.text.i18n import Translator, negotiate
from app.text.templating import templates
from app.web import forms
from app.web.charts import MEMORY_PARTS, MIN_SAVING_HOURS, scatter, useful_front
from app.web.present import CSV_COLUMNS, csv_row, download_stem, model_name, option_view, plan_words
from app.web.quote_form import QuoteEntry, find_option, option_problem, quote_form_context, quote_from_form

router = APIRouter(route_class=WebRoute, include_in_schema=False)


# ---- helpers -------------------------------------------------------------------------------------


def _page(
    request: Request,
    name: str,
    context: dict[str, Any],
    t: Translator,
    *,
    status: int = 200,
    query: list[tuple[str, str]] | None = None,
) -> HTMLResponse:
    """Render with the context every page needs: translator, language switch link."""
    items = [(k, v) for k, v in (query if query is not None else request.query_params.multi_items()) if k != "lang"]
    other = "zh" if t.lang == "en" else "en"
    switch = f"{request.url.path}?{urlencode([*items, ('lang', other)])}"
    if request.method != "GET":
        switch = f"/?{urlencode([('lang', other)])}"
    return templates.TemplateResponse(
        request, name, {"t": t, "lang": t.lang, "switch_url": switch, **context}, status_code=status
    )


def _catalog(session: Session) -> list[SkuOut]:
    return public_skus(session)


def _wizard(
    request: Request, session: Session, form: forms.WizardForm, t: Translator, *, status: int = 200
) -> HTMLResponse:
    skus = _catalog(session)
    regions = sorted({r for sku in skus for r in sku.regions})
    gpus = sorted({(sku.gpu.id, sku.gpu.name) for sku in skus})
    presets = [(p.id, p.name, p.published_params) for p in list_presets()]
    context = {"form": form, "presets": presets, "regions": regions, "gpus": gpus, "forms": forms}
    return _page(request, "web/wizard.html", context, t, status=status)


def _recommend(
    request: Request, session: Session, form: forms.WizardForm, t: Translator
) -> tuple[RecommendIn, RecommendOut] | None:
    """Parse and run the planner; None with the form's errors filled (bad input, the planner's 422, or a
    Hugging Face id the Hub could not give). The request comes back with a Hub model's config filled in."""
    request_in = forms.parse_wizard(form, t)
    if request_in is None:
        return None
    try:
        request_in = with_hub_config(session, request_in, settings=request.app.state.settings)
        return request_in, run_recommend(session, request_in)
    except EstimatorError as exc:
        form.add_error(forms.field_for(exc.field or ""), messages.estimator_error(exc, t.lang))
    except (InvalidInput, BadGateway, ServiceUnavailable) as exc:
        for err in exc.errors or [{"field": "", "message": exc.detail}]:
            form.add_error(forms.field_for(str(err.get("field", ""))), forms.api_message(err, t))
    return None


def _query_form(request: Request) -> tuple[forms.WizardForm, Translator]:
    """The wizard's fields from the URL, and the language to answer in."""
    return forms.read_form(request.query_params, request.query_params.multi_items()), Translator(negotiate(request))


def _download_answer(
    request: Request, session: Session
) -> tuple[tuple[RecommendIn, RecommendOut] | Response, Translator]:
    """The answer a download (CSV, launch config) is made from; inputs the planner refuses send the
    browser to the results page, which shows why."""
    form, t = _query_form(request)
    answer = _recommend(request, session, form, t)
    if answer is None:
        return RedirectResponse(f"/results?{urlencode(_state(form, t))}", status_code=303), t
    return answer, t


def _state(form: forms.WizardForm, t: Translator) -> list[tuple[str, str]]:
    return [*form.query_items(), ("lang", t.lang)]


def _results_context(
    request: Request,
    session: Session,
    form: forms.WizardForm,
    request_in: RecommendIn,
    result: RecommendOut,
    t: Translator,
) -> dict[str, Any]:
    state = _state(form, t)
    qs = urlencode(state)
    skus = _catalog(session)
    gpu_names = {sku.gpu.id: sku.gpu.name for sku in skus}
    # A Hub model's body names it by id alone: the server reads (or has kept) its config
    hub_config = {"model": {"hf_config"}} if request_in.model.hf_id else None
    body = request_in.model_dump(mode="json", exclude_defaults=True, exclude=hub_config)
    name = model_name(body["model"], result.model, t)
    front, left_out = useful_front(result.pareto)
    gpu_of_sku = {sku.id: sku.gpu.name for sku in skus}
    return {
        "form": form,
        "result": result,
        "model_name": name,
        "task": request_in.task,
        "tokens_given": request_in.tokens is not None,
        "qs": qs,
        "gpu_names": gpu_names,
        "sku_names": {sku.id: sku.name for sku in skus},
        "units": {sku.id: sku.rental_unit for sku in skus},
        "views": [option_view(o, result.model, request_in.task, t, gpu_names, name=name) for o in result.options],
        "near": [option_view(o, result.model, request_in.task, t, gpu_names, name=name) for o in result.near_misses],
        "chart": scatter(result.options, front, gpu_of_sku),
        "front": front,
        "front_left_out": left_out,
        "min_saving": t.duration(MIN_SAVING_HOURS),
        "memory_parts": MEMORY_PARTS,
        "currency": result.options[0].cost.currency if result.options else "CNY",
        "body_json": forms.api_body_json(body),
        "curl": forms.curl_command(str(request.base_url), body),
        "option_url": lambda path, rank: f"{path}?{urlencode([*state, ('option', rank)])}",
    }


# ---- pages ---------------------------------------------------------------------------------------

FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.ico"


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """Browsers ask for it on every site; without it each page logs a 404 in the console."""
    return FileResponse(FAVICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"})


@router.get("/", response_class=HTMLResponse)
def wizard(request: Request, session: SessionDep) -> HTMLResponse:
    form, t = _query_form(request)
    return _wizard(request, session, form, t)


def _serving_url(form: forms.WizardForm, t: Translator) -> str | None:
    """The wizard's "Inference" for a shipped or Hub model: the serving sizing of that model (traffic,
    latency targets, replicas), which `/serve` answers; the API's `task: "inference"` still sizes one request."""
    source = form.value("source")
    if form.value("task") != "inference" or source not in ("preset", "hub"):
        return None
    model = ("preset", form.value("preset")) if source == "preset" else ("hf_id", form.value("hf_id"))
    state = [("source", source), model, ("term", form.value("term") or "monthly"), ("lang", t.lang)]
    return f"/serve/results?{urlencode(state)}"


@router.get("/results", response_class=HTMLResponse)
def results(request: Request, session: SessionDep) -> Response:
    form, t = _query_form(request)
    serving = _serving_url(form, t)
    if serving is not None:
        return RedirectResponse(serving, status_code=303)
    if any(value == "" for _, value in request.query_params.multi_items()):
        # The wizard submits its empty fields too: answer with the short URL worth bookmarking.
        return RedirectResponse(f"/results?{urlencode(_state(form, t))}", status_code=303)
    answer = _recommend(request, session, form, t)
    if answer is None:
        return _wizard(request, session, form, t, status=422)
    context = _results_context(request, session, form, *answer, t)
    return _page(request, "web/results.html", context, t)


@router.get("/results.csv")
def results_csv(request: Request, session: SessionDep) -> Response:
    answer, _ = _download_answer(request, session)
    if isinstance(answer, Response):
        return answer
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_row(o) for o in answer[1].options)
    headers = {"Content-Disposition": f'attachment; filename="gpu-sizer-{download_stem(*answer)}.csv"'}
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


@router.get("/results/launch.json")
def launch_config(request: Request, session: SessionDep) -> Response:
    answer, t = _download_answer(request, session)
    if isinstance(answer, Response):
        return answer
    option = find_option(answer[1], request.query_params.get("option"))
    if option is None:
        if wants_html(request):
            return error_page(request, 404, message=t("option_missing"))
        return option_problem(len(answer[1].options), t)  # a machine-readable download: 422 naming `option`
    request_in, result = answer
    name = f"{download_stem(request_in, result)}-option{option.rank}-{option.sku.id}-{option.total_gpus}gpu.json"
    model = request_in.model.model_dump(mode="json", exclude_defaults=True, exclude={"hf_config"})
    payload = {
        "model": {"name": model_name(request_in.model.model_dump(mode="json"), result.model, t), **model},
        "task": request_in.task,
        "tokens": request_in.tokens,
        "sku": option.sku.id,
        "nodes": option.nodes,
        "gpus_per_node": option.gpus_per_node,
        "plan": option.plan.model_dump(),
        "stack": option.stack,
        **{stack: _launch_in(block, t) for stack, block in (option.launch or {}).items()},
    }
    return Response(
        json.dumps(payload, indent=2, ensure_ascii=False),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _launch_in(block: Any, t: Translator) -> Any:
    """A stack's launch block with its notes in the page's language (from their codes, `texts`)."""
    texts = block.get("texts") if isinstance(block, dict) else None
    if not texts:
        return block
    return {**block, "notes": [t.launch(text) for text in texts["notes"]]}


@router.get("/quote", response_class=HTMLResponse)
def quote_form(request: Request, session: SessionDep) -> HTMLResponse:
    form, t = _query_form(request)
    answer = _recommend(request, session, form, t)
    if answer is None:
        return _wizard(request, session, form, t, status=422)
    option = find_option(answer[1], request.query_params.get("option"))
    if option is None:
        return error_page(request, 404, message=t("option_missing"))
    return _quote_page(request, session, form, t, QuoteEntry.blank(option))


def _quote_page(
    request: Request, session: Session, form: forms.WizardForm, t: Translator, entry: QuoteEntry, status: int = 200
) -> HTMLResponse:
    state = _state(form, t)
    summary = plan_words(entry.option.plan, t)
    context = quote_form_context(session, entry, state, summary=summary, results_path="/results")
    return _page(request, "web/quote.html", context, t, status=status, query=state)


@router.post("/quote", response_class=HTMLResponse)
async def issue_quote(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    posted = await request.form()
    t = Translator(negotiate(request, posted.get("lang")))
    fields = {k: str(v) for k, v in posted.items() if isinstance(v, str)}
    form = forms.read_form(fields, [(k, str(v)) for k, v in posted.multi_items() if isinstance(v, str)])
    # The planner and the database are synchronous: off the event loop.
    addons = [str(v) for k, v in posted.multi_items() if k == "addons" and isinstance(v, str)]
    return await to_thread.run_sync(_issue_quote, request, session, settings, form, fields, addons, t)


def _issue_quote(
    request: Request,
    session: Session,
    settings: Any,
    form: forms.WizardForm,
    fields: dict[str, str],
    addons: list[str],
    t: Translator,
) -> Response:
    answer = _recommend(request, session, form, t)
    if answer is None:
        return _wizard(request, session, form, t, status=422)
    request_in, result = answer
    option = find_option(result, fields.get("option"))
    if option is None:
        return error_page(request, 404, message=t("option_missing"))
    printable, entry = quote_from_form(session, request_in, option, fields, addons, t, settings.quote_validity_days)
    if printable is not None:
        return RedirectResponse(printable, status_code=303)
    return _quote_page(request, session, form, t, entry, status=422)


# ---- accepting a quote from the browser ----------------------------------------------------------


@router.get("/quote/{public_id}/accept", response_class=HTMLResponse)
def accept_page(public_id: str, request: Request, session: SessionDep) -> HTMLResponse:
    quote, seller = quotes_service.printable(session, public_id=public_id)
    lang = negotiate(request)
    problem = None if quote.status == "issued" else _not_acceptable(quote.status, lang)
    html = printing.render_html(quote, seller, lang=lang, template="quotes/accept.html", problem=problem)
    return HTMLResponse(html, status_code=200 if problem is None else 409)


def _not_acceptable(status: str, lang: str) -> str:
    labels = printing.LABELS[lang]
    return labels["not_acceptable"].format(status=labels[f"status_{status}"])


@router.post("/quote/{public_id}/accept")
def accept_from_browser(public_id: str, request: Request, session: SessionDep, lang: str = Form("")) -> Response:
    lang = negotiate(request, lang)
    try:
        quote = quotes_service.accept_quote(session, public_id=public_id)
    except Conflict as exc:
        quote, seller = quotes_service.printable(session, public_id=public_id)
        taken = isinstance(exc, CapacityTaken)  # its units are no longer free: say which and how many are
        problem = messages.quote_check("capacity_taken", exc.errors[0]["params"], lang) if taken else None
        problem = problem or _not_acceptable(quote.status, lang)
        html = printing.render_html(quote, seller, lang=lang, template="quotes/accept.html", problem=problem)
        return HTMLResponse(html, status_code=409)
    except SalesConfirmationNeeded as exc:  # it would take tracked units: sales confirm it (review R4-5)
        quote, seller = quotes_service.printable(session, public_id=public_id)
        problem = messages.quote_check("accept_needs_sales", exc.errors[0]["params"], lang)
        html = printing.render_html(quote, seller, lang=lang, template="quotes/accept.html", problem=problem)
        return HTMLResponse(html, status_code=403)
    return RedirectResponse(f"{quote.links.print}?lang={lang}", status_code=303)
