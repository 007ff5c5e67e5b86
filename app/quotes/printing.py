"""The printable quote: one HTML document, shown in the browser (with print CSS) and rendered to
PDF by WeasyPrint (app.quotes.documents). It is drawn only from the quote's own frozen figures, never
from the catalog.

WeasyPrint needs Pango and, for Chinese, a CJK font (`make system-deps` installs both on Debian).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from app.catalog.zone import catalog_zone
from app.estimator.models import model_from_hf_config
from app.estimator.params import count_params
from app.estimator.presets import get_preset, model_title
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import LANGUAGES
from app.quotes import serving_words
from app.quotes.pdf_render import CSS_DIR
from app.quotes.schemas import QuoteLineOut, QuoteOut
from app.text import messages, words
from app.text.i18n import REGIONS
from app.text.quote_words import (
    LABELS as LABELS,  # re-exported: the web pages read printing.LABELS
    SELLER as SELLER,  # re-exported: a quote freezes printing.SELLER
    SERVING_LABELS,
)
from app.text.templating import templates

PRINT_CSS = CSS_DIR / "print.css"


def seller_block(stored: Mapping[str, Any], lang: str) -> dict[str, str]:
    """The seller block a quote froze, in `lang`: its own words in that language (every language is frozen at issue),
    else (a quote issued before, which froze the English alone) the catalog's words in `lang` where the English it
    froze is the catalog's, word for word, and that English as frozen otherwise."""
    words = stored.get(lang)
    if isinstance(words, Mapping):
        return {key: str(value) for key, value in words.items()}
    english = stored.get("en")
    if isinstance(english, Mapping):
        return {key: str(value) for key, value in english.items()}
    flat = {key: str(value) for key, value in stored.items()}
    return dict(SELLER[lang]) if flat == SELLER["en"] and lang in SELLER else flat


for _lang, _labels in LABELS.items():
    _labels.update({f"task_{task}": label for task, label in messages.TASK_LABELS["title"][_lang].items()})


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def price_since(quote: QuoteOut) -> str:
    """The day the quote's list price took effect, in the catalog's timezone: a price dated by a bare day takes
    effect at that day's midnight there (app.catalog.zone, review R7-4), whose UTC date is the day before east of
    UTC. The process's CATALOG_TIMEZONE (the page has no request's)."""
    frozen = str(quote.catalog.get("price_effective_from") or "")
    try:
        moment = datetime.fromisoformat(frozen)
    except ValueError:
        return frozen[:10]
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(catalog_zone()).date().isoformat()


def _grouped(amount: str | None) -> str:
    """'2040000.00' → '2,040,000.00' for people; exact (Decimal formatting, no float)."""
    return "" if amount is None else f"{Decimal(amount):,}"


def _model_size(model: dict[str, Any]) -> float | None:
    """The parameter count of a quote's model, where its description gives one."""
    try:
        if model.get("preset"):
            return float(get_preset(str(model["preset"])).published_params)
        if isinstance(model.get("params"), int | float):
            return float(model["params"])
        if isinstance(model.get("hf_config"), dict):
            return float(count_params(model_from_hf_config(model["hf_config"])).total)
    except (EstimatorError, KeyError, TypeError, ValueError):
        return None
    return None


def _hours(plan: dict[str, Any], key: str) -> float | None:
    """Hours the quote froze (a decimal string, app.quotes.plan_check; a number on quotes issued before)."""
    return _positive(plan.get(key))


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 < number < math.inf else None


def _model_name(model: dict[str, Any], t: dict[str, str]) -> str | None:
    """The Model row's name: a shipped preset's own name as is; any other name is the customer's text (a
    Hub id, a name, a pasted config's `_name_or_path`) and prints quoted as theirs, never as the seller's."""
    preset = model.get("preset")
    if isinstance(preset, str):
        try:
            return get_preset(preset).name
        except EstimatorError:
            pass
    name = model_title(model)
    return t["customer_named"].format(name=name) if name else None


def _model_rows(raw_model: Any, lang: str) -> list[tuple[str, str]]:
    """The quote's "Model" row: a preset's name and size, or the customer's name for it, labelled so."""
    t = LABELS.get(lang, LABELS["en"])
    model = {"preset": raw_model} if isinstance(raw_model, str) else dict(raw_model or {})
    if not model:
        return []
    if isinstance(raw_model, str):
        try:
            get_preset(raw_model)
        except EstimatorError:
            model = {"hf_id": raw_model}
    size = _model_size(model)
    name = _model_name(model, t)
    size_words = words.count(size, lang, 1) if size else ""
    if name and size_words:
        return [(t["model"], t["model_words"].format(name=name, size=size_words))]
    if name or size_words:
        return [(t["model"], name or t["params_model"].format(size=size_words))]
    return []


def job_rows(quote: QuoteOut, lang: str) -> list[tuple[str, str]]:
    """The job the quote sizes, as label/prose rows in the reader's language: model and size, task,
    tokens, the plan in words, time to finish (with its range), billed against used time."""
    t = LABELS.get(lang, LABELS["en"])
    workload, plan = dict(quote.workload or {}), dict(quote.plan or {})
    rows: list[tuple[str, str]] = _model_rows(workload.get("model"), lang)
    task = str(workload.get("task", "")).replace("-", "_")
    if task:
        rows.append((t["task"], t.get(f"task_{task}", task)))
    if task == "serving":
        return rows + serving_words.serving_rows(quote, lang)
    tokens = workload.get("tokens")
    counted = isinstance(tokens, int | float) and not isinstance(tokens, bool) and tokens > 0
    if counted and isinstance(tokens, int | float):
        rows.append((t["tokens"], t["tokens_words"].format(n=words.count(float(tokens), lang))))
    if {"dp", "tp", "pp", "cp"} & plan.keys():  # a layout stated (and checked); none is never worded as one GPU
        # Worded from the plan's own fields: a summary sent with the quote never prints as is.
        rows.append((t["plan"], words.plan_summary({k: v for k, v in plan.items() if k != "summary"}, lang)))
    hours = _hours(plan, "time_to_train_hours")
    if hours is not None:
        text = t["about"].format(time=words.duration(hours, lang))
        spread = plan.get("time_to_train_hours_range")
        ends = [_positive(v) for v in spread] if isinstance(spread, list | tuple) and len(spread) == 2 else []
        if ends and all(end is not None for end in ends):
            low, high = sorted(end or 0.0 for end in ends)
            span = t["range"].format(low=words.duration(low, lang), high=words.duration(high, lang))
            text += t["paren"].format(text=span)
        rows.append((t["time"], text))
        billed = "billed_words_one" if quote.months == 1 else "billed_words"
        used = words.duration(hours, lang)
        rows.append((t["billed"], t[billed].format(months=quote.months, hours=quote.months * 720, used=used)))
    elif workload or plan:  # with tokens: the estimator could not size this model (kept, unchecked)
        rows.append((t["time"], t["not_estimated"] if counted else t["no_time"]))
    needed = _positive(plan.get("host_ram_unconfirmed_gib"))  # app.quotes.plan_check: host RAM to confirm
    if needed is not None:
        rows.append((t["condition"], t["host_ram_condition"].format(gib=math.ceil(needed))))
    return rows


def term_words(quote: QuoteOut, lang: str) -> str:
    """'Monthly, 1 month' / 'Annual, 12 months' / '年付，12 个月'."""
    t = LABELS.get(lang, LABELS["en"])
    key = "term_words_one" if quote.months == 1 else "term_words"
    return t[key].format(term=t[quote.term.capitalize()], months=quote.months)


def configuration_words(quote: QuoteOut, lang: str) -> str:
    t = LABELS.get(lang, LABELS["en"])
    gpus_per_unit = 1 if quote.unit == "card" else int(quote.sku.get("gpus_per_node") or 1)
    gpus = quote.quantity * gpus_per_unit
    key = "configuration_words_one" if gpus == 1 else "configuration_words"
    return t[key].format(quantity=quote.quantity, sku=quote.sku.get("name", ""), gpus=gpus)


def region_words(region: str, lang: str) -> str:
    """A region id in the reader's words, as the results pages print it (app.text.i18n.REGIONS); the id if unknown."""
    return REGIONS.get(lang, REGIONS["en"]).get(region, region)


def held_words(quote: QuoteOut, lang: str) -> str | None:
    """What the quote holds: '2 × server in Singapore, …' / '新加坡 2 台服务器，…'; None when it holds nothing."""
    held = quote.reservation
    if held is None or not held.holding:
        return None
    t = LABELS.get(lang, LABELS["en"])
    return t["held_words"].format(
        units=held.units, unit=t.get(f"held_{quote.unit}", quote.unit), region=region_words(held.region, lang),
        starts_on=held.starts_on.isoformat(), last_day=held.last_day.isoformat(),
    )  # fmt: skip


def quote_money(amount: Any, currency: str) -> str:
    """An amount in a note as the quote's lines print theirs: 'CNY 2,999.99' (the API's notes: '2999.99 CNY')."""
    return f"{currency} {_grouped(str(amount))}"


def notes_words(quote: QuoteOut, lang: str) -> list[str]:
    """The quote's notes in `lang`, from their codes, their amounts grouped as the lines' (review R5-11); as issued
    (the API's English) on a quote that kept none."""
    if len(quote.note_codes) != len(quote.notes):
        return list(quote.notes)
    return [messages.quote_note(n.code, n.params, lang, quote_money) for n in quote.note_codes]


def units_words(quantity: int, unit: str, lang: str) -> str:
    """'1 card', '6 servers', '6 台服务器': a line's or the quote's quantity in its unit (review R5-11)."""
    return messages.unit_words(quantity, unit, lang)


def gpu_words(quote: QuoteOut, lang: str) -> str:
    """The GPUs the quote rents (review R5-11: a 1-card quote printed the server's 4): by the card, the cards rented and
    the server they sit in; by the server, each server's GPUs and, for several, the GPUs in all."""
    t = LABELS.get(lang, LABELS["en"])
    name, per_node = str(quote.sku.get("gpu", {}).get("name", "")), int(quote.sku.get("gpus_per_node") or 1)
    if quote.unit == "card":
        return t["gpu_cards"].format(n=quote.quantity, gpu=name, per_node=per_node)
    if quote.quantity == 1:
        return t["gpu_server"].format(per_node=per_node, gpu=name)
    return t["gpu_servers"].format(per_node=per_node, gpu=name, gpus=per_node * quote.quantity)


def line_note(line: QuoteLineOut, quote: QuoteOut, lang: str) -> str:
    """A line's note in `lang`: an add-on priced on consultation, or the term's discount on the rental; as issued
    otherwise."""
    if lang == "en" or not line.note:
        return line.note
    if line.kind == "addon" and line.amount is None:
        return messages.quote_note("line_on_consultation", {}, lang)
    if line.kind == "rental" and line.discount_percent != "0":
        return messages.quote_note("term_discount", {"term": quote.term, "percent": line.discount_percent}, lang)
    return line.note


def render_html(
    quote: QuoteOut,
    seller: Mapping[str, Any],
    *,
    lang: str = "en",
    inline_css: bool = False,
    base_url: str = "",
    template: str = "quotes/print.html",
    problem: str | None = None,
) -> str:
    """The printable page (`inline_css`: the PDF's copy, without the screen's toolbar), or another
    page about the quote (`template`, e.g. the accept confirmation). `seller` is the block the quote froze
    (seller_block words it in `lang`). `base_url` makes the accept address absolute on paper."""
    lang = lang if lang in LANGUAGES else "en"
    return templates.get_template(template).render(
        problem=problem,
        q=quote,
        seller=seller_block(seller, lang),
        t=LABELS[lang],
        lang=lang,
        when=_when,
        day=lambda moment: moment.strftime("%Y-%m-%d"),
        fmt=_grouped,
        price_since=price_since(quote),
        job_rows=job_rows(quote, lang),
        job_title=SERVING_LABELS[lang]["job"] if (quote.workload or {}).get("task") == "serving" else None,
        term_words=term_words(quote, lang),
        notes=notes_words(quote, lang),
        units=lambda quantity, unit: units_words(quantity, unit, lang),
        gpu_words=gpu_words(quote, lang),
        line_note=lambda line: line_note(line, quote, lang),
        configuration_words=configuration_words(quote, lang),
        held_words=held_words(quote, lang),
        regions_words=LABELS[lang]["list_sep"].join(region_words(r, lang) for r in quote.sku.get("regions") or []),
        accept_url=f"{base_url.rstrip('/')}/quote/{quote.id}/accept?lang={lang}",
        screen=not inline_css,
        css=PRINT_CSS.read_text(encoding="utf-8") if inline_css else None,
    )
