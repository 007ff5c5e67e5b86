"""The wizard's form: query-string (or form-post) fields ⇄ the `POST /recommend` body.

The page state lives in the URL, so every field is a plain string in the query. `parse_wizard`
turns them into a `RecommendIn` body (the same JSON a sales tool would send) or field errors;
`field_errors_from_api` maps the API's 422 locations (`constraints.max_monthly_budget`,
`model.preset`…) back onto the form's own field names, so messages sit next to their inputs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import ValidationError

from app.estimator.vocabulary import LORA_TASKS, OBJECTIVES, OPTIMIZERS, PRECISIONS, TASKS, TERMS
from app.planner.schemas import RecommendIn
from app.text import messages
from app.text.field_words import BILLION, pydantic_message
from app.text.i18n import Translator

NumberProblem = Literal["unparsable", "infinite", "fractional"]

SOURCES = ("preset", "hub", "params", "config")
DEFAULTS: dict[str, str] = {
    "source": "preset",
    "preset": "llama-2-7b",
    "task": "lora",
    "seq_len": "2048",
    "precision": "bf16",
    "optimizer": "adamw",
    "lora_rank": "16",
    "epochs": "1",
    "term": "monthly",
    "objective": "balanced",
}
SINGLE_FIELDS = (
    "source",
    "preset",
    "params_b",
    "hf_id",
    "hf_config",
    "task",
    "seq_len",
    "micro_batch",
    "global_batch",
    "precision",
    "optimizer",
    "lora_rank",
    "tokens_b",
    "dataset_tokens_b",
    "epochs",
    "deadline_days",
    "start_date",
    "budget",
    "total_budget",
    "term",
    "objective",
)
MULTI_FIELDS = ("regions", "gpu_types")

# API location (dotted) → the form field that shows its message; the longest matching prefix wins.
API_TO_FIELD = {
    "model.preset": "preset",
    "model.params": "params_b",
    "model.hf_id": "hf_id",
    "model.hf_config": "hf_config",
    "model": "source",
    "task": "task",
    "seq_len": "seq_len",
    "micro_batch": "micro_batch",
    "global_batch": "global_batch",
    "precision": "precision",
    "optimizer": "optimizer",
    "lora.rank": "lora_rank",
    "lora": "lora_rank",
    "tokens": "tokens_b",
    "constraints.max_monthly_budget": "budget",
    "constraints.max_total_budget": "total_budget",
    "constraints.deadline_days": "deadline_days",
    "constraints.start_date": "start_date",
    "constraints.term": "term",
    "constraints.gpu_types": "gpu_types",
    "constraints.regions": "regions",
    "constraints.objective": "objective",
}


@dataclass
class WizardForm:
    """The raw strings as typed (re-shown on error) and the errors by field name."""

    values: dict[str, str]
    multi: dict[str, list[str]]
    errors: dict[str, list[str]] = field(default_factory=dict)

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)

    def value(self, name: str) -> str:
        return self.values.get(name, "")

    def query_items(self) -> list[tuple[str, str]]:
        """The non-empty fields as (name, value) pairs, in a stable order, for the shareable URL."""
        items = [(name, self.values[name]) for name in SINGLE_FIELDS if self.values.get(name)]
        items += [(name, v) for name in MULTI_FIELDS for v in self.multi.get(name, [])]
        return items


def options(values: tuple[str, ...], t: Translator, label_prefix: str | None = None) -> list[tuple[str, str]]:
    """(value, label) pairs for a select or radio group, in the vocabulary's order; without a label
    prefix the label is the value in capitals (BF16)."""
    return [(v, t(label_prefix + v) if label_prefix else v.upper()) for v in values]


def read_form(data: Mapping[str, str], multi_items: Iterable[tuple[str, str]]) -> WizardForm:
    """From `request.query_params` (or a posted form); an empty wizard gets the defaults."""
    given = {name: str(data.get(name, "")).strip() for name in SINGLE_FIELDS if name in data}
    values = dict(DEFAULTS) if not given else {**_sparse_defaults(), **given}
    multi: dict[str, list[str]] = {name: [] for name in MULTI_FIELDS}
    for name, value in multi_items:
        if name in MULTI_FIELDS and value.strip() and value.strip() not in multi[name]:
            multi[name].append(value.strip())
    return WizardForm(values=values, multi=multi)


def _sparse_defaults() -> dict[str, str]:
    """A shared link may omit fields: the choices that must have a value fall back to defaults."""
    keep = ("source", "preset", "task", "precision", "optimizer", "term", "objective", "seq_len")
    return {k: DEFAULTS[k] for k in keep}


# A count typed with its unit, in the form's billions field: "100M", "2B", "1.5T", "5000万", "1亿".
COUNT_UNITS = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "万": 1e4, "亿": 1e8}
COUNT_PATTERN = re.compile(r"^(?P<number>[0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(?P<unit>[kmbgt万亿])?$", re.IGNORECASE)


def _count(form: WizardForm, name: str, t: Translator) -> float | None:
    """A raw count from a billions field: a bare number is billions, a unit ("100M", "1亿") says its own scale."""
    raw = form.value(name).replace(",", "").replace("_", "").replace("，", "").strip()
    if not raw:
        return None
    match = COUNT_PATTERN.match(raw)
    value = float(match["number"]) * COUNT_UNITS[(match["unit"] or "b").lower()] if match else None
    if value is None or not math.isfinite(value):
        form.add_error(name, t("err_billions"))
        return None
    return value


def _number(form: WizardForm, name: str, t: Translator, *, integer: bool = False) -> float | int | None:
    raw = form.value(name).replace(",", "").replace("_", "")
    if not raw:
        return None
    value, problem = parse_number(raw, integer=integer)
    if problem is not None:
        whole = problem == "fractional" or (problem == "unparsable" and integer)
        form.add_error(name, t("err_integer" if whole else "err_number"))
    return value


def parse_number(raw: str, *, integer: bool) -> tuple[float | int | None, NumberProblem | None]:
    """A form field's number (its separators already removed): the value, or None and why not: `unparsable`,
    `infinite` (inf, nan), or `fractional` where a whole number is asked for."""
    try:
        value = float(raw)
    except ValueError:
        return None, "unparsable"
    if not math.isfinite(value):
        return None, "infinite"
    if integer:
        if value != int(value):
            return None, "fractional"
        return int(value), None
    return value, None


def _choice(form: WizardForm, name: str, allowed: tuple[str, ...], t: Translator) -> str:
    value = form.value(name)
    if value not in allowed:
        form.add_error(name, t("err_choice"))
        return allowed[0]
    return value


def _model(form: WizardForm, t: Translator) -> dict[str, Any] | None:
    source = _choice(form, "source", SOURCES, t)
    if source == "preset":
        if not form.value("preset"):
            form.add_error("preset", t("err_required"))
            return None
        return {"preset": form.value("preset")}
    if source == "hub":
        if not form.value("hf_id"):
            form.add_error("hf_id", t("err_required"))
            return None
        return {"hf_id": form.value("hf_id")}
    if source == "params":
        params = _count(form, "params_b", t)
        if params is None:
            if "params_b" not in form.errors:
                form.add_error("params_b", t("err_required"))
            return None
        return {"params": params}
    return _hf_config(form, t)


def _hf_config(form: WizardForm, t: Translator) -> dict[str, Any] | None:
    text = form.value("hf_config")
    if not text:
        form.add_error("hf_config", t("err_required"))
        return None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        form.add_error("hf_config", t("err_json", detail=f"{exc.msg} (line {exc.lineno}, column {exc.colno})"))
        return None
    if not isinstance(config, dict):
        form.add_error("hf_config", t("err_json_object"))
        return None
    return {"hf_config": config}


def _tokens(form: WizardForm, t: Translator) -> float | None:
    tokens = _count(form, "tokens_b", t)
    if tokens is not None or "tokens_b" in form.errors:
        return tokens
    dataset = _count(form, "dataset_tokens_b", t)
    epochs = _number(form, "epochs", t)
    if dataset is None:
        return None
    if epochs is not None and epochs <= 0:
        form.add_error("epochs", t("err_gt", limit=0))
        return None
    return dataset * (epochs or 1)


def _budget(form: WizardForm, t: Translator, name: str = "budget") -> str | None:
    raw = form.value(name).replace(",", "").replace("¥", "").strip()
    if not raw:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        form.add_error(name, t("err_number"))
        return None
    if not value.is_finite():
        form.add_error(name, t("err_number"))
        return None
    return str(value)


def build_body(form: WizardForm, t: Translator) -> dict[str, Any]:
    """The `POST /recommend` body for the form, leaving out what the API would default anyway."""
    body: dict[str, Any] = {"model": _model(form, t), "task": _choice(form, "task", TASKS, t)}
    for name, integer in (("seq_len", True), ("micro_batch", True), ("global_batch", True)):
        value = _number(form, name, t, integer=integer)
        if value is not None:
            body[name] = value
    body["precision"] = _choice(form, "precision", PRECISIONS, t)
    body["optimizer"] = _choice(form, "optimizer", OPTIMIZERS, t)
    if body["task"] in LORA_TASKS:
        rank = _number(form, "lora_rank", t, integer=True)
        if rank is not None:
            body["lora"] = {"rank": rank}
    tokens = _tokens(form, t)
    if tokens is not None:
        body["tokens"] = tokens
    body["constraints"] = _constraints(form, t)
    return body


def _constraints(form: WizardForm, t: Translator) -> dict[str, Any]:
    constraints: dict[str, Any] = {
        "term": _choice(form, "term", TERMS, t),
        "objective": _choice(form, "objective", OBJECTIVES, t),
    }
    budget = _budget(form, t)
    if budget is not None:
        constraints["max_monthly_budget"] = budget
    total = _budget(form, t, "total_budget")
    if total is not None:
        constraints["max_total_budget"] = total
    deadline = _number(form, "deadline_days", t)
    if deadline is not None:
        constraints["deadline_days"] = deadline
    start = form.values.get("start_date", "").strip()
    if start:  # YYYY-MM-DD; the planner checks it is within the booking window (422 on constraints.start_date)
        constraints["start_date"] = start
    for name in MULTI_FIELDS:
        if form.multi.get(name):
            constraints[name] = list(form.multi[name])
    return constraints


def parse_wizard(form: WizardForm, t: Translator) -> RecommendIn | None:
    """The validated request, or None with `form.errors` filled."""
    body = build_body(form, t)
    already = set(form.errors)
    # A model that failed to parse already has its message; a stand-in lets the other fields be
    # checked too, so one submit reports every mistake.
    probe = {**body, "model": body["model"] or {"params": BILLION}}
    try:
        validated = RecommendIn.model_validate(probe)
    except ValidationError as exc:
        for err in exc.errors():
            name = field_for(".".join(str(part) for part in err.get("loc", ())))
            if name not in already:
                form.add_error(name, pydantic_message(err, t))
        return None
    return None if form.errors else validated


def field_for(api_location: str) -> str:
    """The form field showing an API location's message; `form` (the top of the page) if none."""
    parts = api_location.split(".") if api_location else []
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in API_TO_FIELD:
            return API_TO_FIELD[prefix]
    return "form"


def api_message(err: Mapping[str, Any], t: Translator) -> str:
    """An API error's message in the page's language where the catalog words its code (a Hugging Face Hub
    refusal, app.text.messages.HUB; a GPU type or region the catalog lacks, app.text.messages.UNKNOWN; the estimator's;
    the domain's other refusals, app.text.messages.REFUSALS); else the API's own message."""
    code, params = err.get("type"), err.get("params")
    if isinstance(code, str) and code in messages.HUB["en"] and isinstance(params, Mapping):
        return messages.hub(code, params, t.lang)
    if isinstance(code, str) and code in messages.UNKNOWN["en"] and isinstance(params, Mapping):
        return messages.unknown(code, params, t.lang)
    if isinstance(code, str) and code in messages.ESTIMATOR_ERRORS["en"] and isinstance(params, Mapping):
        return messages.estimator_text(code, params, t.lang)
    if isinstance(code, str) and code in messages.REFUSALS["en"] and isinstance(params, Mapping):
        return messages.refusal(code, params, t.lang)  # the booking window, a SKU's card counts
    return str(err.get("message", ""))


def api_body_json(body: dict[str, Any]) -> str:
    return json.dumps(body, indent=2, ensure_ascii=False)


def curl_command(base_url: str, body: dict[str, Any]) -> str:
    compact = json.dumps(body, ensure_ascii=False, separators=(",", ":")).replace("'", "'\\''")
    return (
        f"curl -sS -X POST '{base_url.rstrip('/')}/recommend' \\\n"
        f"  -H 'Content-Type: application/json' \\\n  -d '{compact}'"
    )
