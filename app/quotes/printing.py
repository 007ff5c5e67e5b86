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
from app.text.templating import templates

PRINT_CSS = CSS_DIR / "print.css"

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "quote": "Quote",
        "number": "Quote number",
        "issued": "Issued",
        "valid_until": "Valid until",
        "rental_start": "Rental starts",
        "held": "Reserved",
        "held_words": "{units} × {unit} in {region}, {starts_on} to {last_day}",
        "held_card": "card",
        "held_node": "server",
        "status": "Status",
        "seller": "Seller",
        "customer": "Customer",
        "configuration": "Configuration",
        "plan": "Parallel plan",
        "lines": "Line items",
        "description": "Description",
        "quantity": "Quantity",
        "months": "Months",
        "unit_price": "Unit price / month",
        "discount": "Discount",
        "amount": "Amount",
        "subtotal": "Subtotal",
        "discount_total": "Term discount",
        "total": "Total",
        "on_consultation": "on consultation",
        "notes": "Notes",
        "host_ram": "{gib} GiB RAM",
        "gpu_cards": "{n} × {gpu}, rented by the card (in a server of {per_node})",
        "gpu_server": "{per_node} × {gpu}",
        "gpu_servers": "{per_node} × {gpu} per server ({gpus} in all)",
        "list_sep": ", ",
        "condition": "Condition",
        "host_ram_condition": "The catalog does not list this server's host RAM: the plan needs {gib:,} GiB of host "
        "RAM per server (to load the model), to be confirmed before the job starts.",
        "gpu": "GPU",
        "interconnect": "Interconnect",
        "host": "Host",
        "network": "Network",
        "regions": "Regions",
        "term": "Term",
        "monthly": "monthly",
        "annual": "annual",
        "card": "card",
        "node": "server",
        "catalog": "Catalog version",
        "catalog_versions": "SKU v{sku}, price #{price} ({since})",
        "estimator": "Estimator version",
        "status_issued": "issued",
        "status_accepted": "accepted",
        "status_cancelled": "cancelled",
        "status_expired": "EXPIRED",
        "expired_banner": "This quote has expired and can no longer be accepted.",
        "cancelled_banner": "This quote was cancelled.",
        "indicative": "Indicative price",
        "plus_fabric": "+ fabric on consultation",
        "at_a_glance": "At a glance",
        "configuration_words": "{quantity} × {sku} ({gpus} GPUs)",
        "configuration_words_one": "{quantity} × {sku} ({gpus} GPU)",
        "term_words_one": "{term}, {months} month",
        "term_words": "{term}, {months} months",
        "Monthly": "Monthly",
        "Annual": "Annual",
        "job": "The job",
        "model": "Model",
        "model_words": "{name}, {size} parameters",
        "customer_named": "“{name}” (as the customer named it)",
        "task": "Task",
        "tokens": "Training tokens",
        "tokens_words": "{n} tokens",
        "time": "Time to finish",
        "about": "about {time}",
        "range": "{low} to {high}",
        "paren": " ({text})",
        "no_time": "not estimated: the quote gives no token count",
        "not_estimated": "not estimated: the estimator cannot size this model on the SKU quoted",
        "billed": "Billed versus used",
        "billed_words_one": "{months} month billed ({hours} h); the job uses about {used}",
        "billed_words": "{months} months billed ({hours} h); the job uses about {used}",
        "params_model": "a model of {size} parameters",
        "pdf": "Download PDF",
        "print": "Print",
        "accept_button": "Accept this quote",
        "back": "Size another job",
        "accept_online": "To accept, open {url} and choose “Accept this quote” before {date}.",
        "accepted_banner": "Accepted on {date}. The seller will contact you to arrange the rental.",
        "confirm_title": "Accept quote {number}?",
        "confirm_text": "You accept {configuration}, {term}, for {total} as priced on this quote. The seller "
        "will contact {email} to arrange the rental.",
        "confirm_button": "Accept the quote",
        "back_to_quote": "Back to the quote",
        "not_acceptable": "This quote can no longer be accepted: it is {status}.",
    },
    "zh": {
        "quote": "报价单",
        "number": "报价单号",
        "issued": "开具日期",
        "valid_until": "有效期至",
        "rental_start": "租期开始",
        "held": "已预留",
        "held_words": "{region} {units} {unit}，{starts_on} 至 {last_day}",
        "held_card": "张卡",
        "held_node": "台服务器",
        "status": "状态",
        "seller": "供应方",
        "customer": "客户",
        "configuration": "配置",
        "plan": "并行方案",
        "lines": "明细",
        "description": "项目",
        "quantity": "数量",
        "months": "月数",
        "unit_price": "单价/月",
        "discount": "折扣",
        "amount": "金额",
        "subtotal": "小计",
        "discount_total": "期限折扣",
        "total": "合计",
        "on_consultation": "面议",
        "notes": "备注",
        "host_ram": "{gib} GiB 内存",
        "gpu_cards": "{n} × {gpu}，按卡租用（所在服务器共 {per_node} 张）",
        "gpu_server": "{per_node} × {gpu}",
        "gpu_servers": "每台服务器 {per_node} × {gpu}（共 {gpus} 张）",
        "list_sep": "、",
        "condition": "条件",
        "host_ram_condition": "目录未列出这台服务器的主机内存：该方案每台服务器需要 {gib:,} GiB 主机内存"
        "（用于加载模型），须在任务开始前确认。",
        "gpu": "GPU",
        "interconnect": "互联",
        "host": "主机",
        "network": "网络",
        "regions": "地域",
        "term": "租期",
        "monthly": "月付",
        "annual": "年付",
        "card": "卡",
        "node": "台",
        "catalog": "目录版本",
        "catalog_versions": "SKU 第 {sku} 版，价格 #{price}（{since}）",
        "estimator": "估算器版本",
        "status_issued": "有效",
        "status_accepted": "已接受",
        "status_cancelled": "已取消",
        "status_expired": "已过期",
        "expired_banner": "本报价已过期，无法再接受。",
        "cancelled_banner": "本报价已取消。",
        "indicative": "参考价格",
        "plus_fabric": "+ 组网费用面议",
        "at_a_glance": "概要",
        "configuration_words": "{quantity} × {sku}（共 {gpus} 张 GPU）",
        "configuration_words_one": "{quantity} × {sku}（共 {gpus} 张 GPU）",
        "term_words_one": "{term}，{months} 个月",
        "term_words": "{term}，{months} 个月",
        "Monthly": "月付",
        "Annual": "年付",
        "job": "作业",
        "model": "模型",
        "model_words": "{name}，{size}参数",
        "customer_named": "“{name}”（客户填写的名称）",
        "task": "任务",
        "tokens": "训练 token 数",
        "tokens_words": "{n} token",
        "time": "完成时间",
        "about": "约 {time}",
        "range": "{low}至 {high}",
        "paren": "（{text}）",
        "no_time": "未估算：报价未给出训练 token 数",
        "not_estimated": "未估算：估算器无法在所报 SKU 上估算此模型",
        "billed": "计费与实际使用",
        "billed_words_one": "计费 {months} 个月（{hours} 小时）；作业约用 {used}",
        "billed_words": "计费 {months} 个月（{hours} 小时）；作业约用 {used}",
        "params_model": "{size}参数的模型",
        "pdf": "下载 PDF",
        "print": "打印",
        "accept_button": "接受报价",
        "back": "重新估算",
        "accept_online": "如需接受，请在 {date} 前打开 {url} 并选择“接受报价”。",
        "accepted_banner": "已于 {date} 接受。供应方会联系您安排租用。",
        "confirm_title": "接受报价单 {number}？",
        "confirm_text": "您将按本报价单的价格接受 {configuration}，{term}，合计 {total}。"
        "供应方会通过 {email} 与您联系安排租用。",
        "confirm_button": "确认接受",
        "back_to_quote": "返回报价单",
        "not_acceptable": "该报价已无法接受：状态为{status}。",
    },
}

# The seller block, in each language the quote prints in: a quote freezes every language of it when it is issued
# (app.quotes.service, snapshot["seller"]), and the page and the PDF print the one asked for (seller_block).
SELLER: dict[str, dict[str, str]] = {
    "en": {
        "name": "GPU server rental (gpu-sizer)",
        "address": "Shenzhen · Singapore · Los Angeles",
        "services": "Dedicated machines; CUDA 12, PyTorch, DeepSpeed and Megatron pre-installed; "
        "10-minute hardware failover",
    },
    "zh": {
        "name": "GPU 服务器租赁（gpu-sizer）",
        "address": "深圳 · 新加坡 · 洛杉矶",
        "services": "独享整机；预装 CUDA 12、PyTorch、DeepSpeed 和 Megatron；10 分钟内硬件故障切换",
    },
}


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
        job_title=serving_words.LABELS[lang]["job"] if (quote.workload or {}).get("task") == "serving" else None,
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
