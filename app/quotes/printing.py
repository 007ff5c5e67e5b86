"""The printable quote: one HTML document, shown in the browser (with print CSS) and rendered to
PDF by WeasyPrint. It is drawn only from the quote's own frozen figures, never from the catalog.

WeasyPrint needs Pango and, for Chinese, a CJK font (`make system-deps` installs both on Debian).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from app.errors import ServiceUnavailable
from app.quotes.schemas import QuoteOut
from app.web.templating import templates

PRINT_CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "print.css"
LANGUAGES = ("en", "zh")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "quote": "Quote",
        "number": "Quote number",
        "issued": "Issued",
        "valid_until": "Valid until",
        "status": "Status",
        "seller": "Seller",
        "customer": "Customer",
        "configuration": "Configuration",
        "plan": "Plan summary",
        "workload": "Workload",
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
        "estimator": "Estimator version",
        "accept": "Accept this quote at",
        "status_issued": "issued",
        "status_accepted": "accepted",
        "status_cancelled": "cancelled",
        "status_expired": "EXPIRED",
        "expired_banner": "This quote has expired and can no longer be accepted.",
        "cancelled_banner": "This quote was cancelled.",
        "indicative": "Indicative price",
    },
    "zh": {
        "quote": "报价单",
        "number": "报价单号",
        "issued": "开具日期",
        "valid_until": "有效期至",
        "status": "状态",
        "seller": "供应方",
        "customer": "客户",
        "configuration": "配置",
        "plan": "并行方案",
        "workload": "工作负载",
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
        "estimator": "估算器版本",
        "accept": "在线确认报价",
        "status_issued": "有效",
        "status_accepted": "已接受",
        "status_cancelled": "已取消",
        "status_expired": "已过期",
        "expired_banner": "本报价已过期，无法再接受。",
        "cancelled_banner": "本报价已取消。",
        "indicative": "参考价格",
    },
}


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _grouped(amount: str | None) -> str:
    """'2040000.00' → '2,040,000.00' for people; exact (Decimal formatting, no float)."""
    return "" if amount is None else f"{Decimal(amount):,}"


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 2e9 tokens print as 2000000000, not 2000000000.0
    return str(value)


def _flat(mapping: dict[str, Any] | None) -> list[tuple[str, str]]:
    """A workload or plan object as label/value rows (nested values as compact text).

    The labels are the schema's own field names (QuoteCreate refuses any other key) and each value is
    cut to 300 characters, so the block's size is bounded whatever was sent.
    """
    rows = []
    for key, value in (mapping or {}).items():
        text = ", ".join(f"{k}={_text(v)}" for k, v in value.items()) if isinstance(value, dict) else _text(value)
        rows.append((str(key), text[:300]))
    return rows


def render_html(quote: QuoteOut, seller: dict[str, str], *, lang: str = "en", inline_css: bool = False) -> str:
    template = templates.get_template("quotes/print.html")
    return template.render(
        q=quote,
        seller=seller,
        t=LABELS.get(lang, LABELS["en"]),
        lang=lang if lang in LANGUAGES else "en",
        when=_when,
        fmt=_grouped,
        workload_rows=_flat(quote.workload),
        plan_rows=_flat(quote.plan),
        css=PRINT_CSS.read_text(encoding="utf-8") if inline_css else None,
    )


def render_pdf(quote: QuoteOut, seller: dict[str, str], *, lang: str = "en") -> bytes:
    try:
        from weasyprint import HTML  # heavy import, only when a PDF is asked for
    except OSError as exc:  # Pango missing: say so instead of a bare 500
        raise ServiceUnavailable(
            f"PDF rendering is unavailable on this server ({exc}); run `make system-deps`, or use the printable page"
        ) from exc

    html = render_html(quote, seller, lang=lang, inline_css=True)
    return HTML(string=html, base_url=str(PRINT_CSS.parent)).write_pdf()
