"""Helpers for the quote tests: request bodies and the shape checks every response must pass."""

from __future__ import annotations

import json
import re
from typing import Any

MONEY_RE = re.compile(r"^\d+\.\d{2}$")
NUMBER_RE = re.compile(r"^Q-\d{4}-\d{6}$")
PUBLIC_ID_RE = re.compile(r"^[A-Za-z0-9_-]{32}$")
MONEY_FIELDS = ("unit_list_price", "unit_effective_price", "subtotal", "discount_total", "total")
LINE_MONEY_FIELDS = ("unit_price", "discount", "amount")


def h100_body(**changes: Any) -> dict[str, Any]:
    body = {
        "sku_id": "h100-80g-sxm-8x",
        "quantity": 2,
        "term": "annual",
        "months": 12,
        "addons": ["infiniband-400g"],
        "workload": {
            "model": {"preset": "llama-3-70b"},
            "task": "full_finetune",
            "tokens": 2_000_000_000,
            "seq_len": 1024,
            "precision": "fp16",  # Megatron --fp16 (no fp32 gradient buffer): tp 8 × pp 2 fits on 16 H100
        },
        "plan": {"tp": 8, "pp": 2, "dp": 1, "zero_stage": 1},
        "customer": {"name": "Li Wei", "company": "深圳算力科技", "email": "li.wei@example.com"},
    }
    body.update(changes)
    return body


def a100_body(**changes: Any) -> dict[str, Any]:
    body = {
        "sku_id": "a100-40g-pcie-card",
        "quantity": 2,
        "term": "monthly",
        "months": 3,
        "customer": {"name": "Ada", "company": "", "email": "ada@example.org"},
    }
    body.update(changes)
    return body


def _no_float(text: str) -> None:
    raise AssertionError(f"a float in a quote response: {text}")


def check_money_shapes(raw: bytes) -> dict[str, Any]:
    """Parse a quote response refusing any JSON float, and check every money field is a decimal string."""
    quote = json.loads(raw, parse_float=_no_float)
    for field in MONEY_FIELDS:
        assert isinstance(quote[field], str) and MONEY_RE.fullmatch(quote[field]), (field, quote[field])
    for line in quote["lines"]:
        for field in LINE_MONEY_FIELDS:
            value = line[field]
            assert value is None or (isinstance(value, str) and MONEY_RE.fullmatch(value)), (field, value)
    assert NUMBER_RE.fullmatch(quote["number"])
    assert PUBLIC_ID_RE.fullmatch(quote["id"])
    return quote
