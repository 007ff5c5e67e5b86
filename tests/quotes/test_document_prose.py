"""The quote as a commercial document (PDF text extracted page by page with pypdf): page 1 carries
the number, customer, configuration, total and validity inside the margins, and the job reads as
prose in the reader's language, never as a dump of the request's keys."""

from __future__ import annotations

import io
from functools import cache

import pytest
from fastapi.testclient import TestClient
from fontTools.ttLib import TTFont  # WeasyPrint's own font library
from pypdf import PdfReader

from tests.quotes.helpers import a100_body, h100_body

A4_WIDTH_PT = 595.28
RIGHT_MARGIN_PT = 14 / 25.4 * 72  # print.css: @page margin 16mm 14mm
# A run's width is its characters' advances in DejaVu Sans, print.css's first font (Debian's fonts-dejavu-core, which
# `make system-deps` installs for WeasyPrint); a character it lacks (CJK, from the fallback fonts) counts one em, the
# width of a CJK glyph. (An average of 0.55 em a character flagged a line of lower-case words that fits.)
DEJAVU_SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FULL_WIDTH_EM = 1.0


@cache
def _advances() -> dict[int, float]:
    font = TTFont(DEJAVU_SANS)
    per_em = float(font["head"].unitsPerEm)
    metrics = font["hmtx"]
    return {code: metrics[glyph][0] / per_em for code, glyph in font.getBestCmap().items()}


def _width_em(text: str) -> float:
    advances = _advances()
    return sum(advances.get(ord(character), FULL_WIDTH_EM) for character in text)


# A quote as the wizard issues it: the request it sized, the chosen plan with its estimate. The quote prints
# the estimate it recomputes on the SKU (8 h 32 min on one A100 40GB PCIe with full recomputation, the Trainer's
# gradient checkpointing, as DeepSpeed + PEFT runs a LoRA job), not the 5.52 h sent.
WIZARD_WORKLOAD = {"model": {"preset": "llama-3-8b"}, "task": "lora", "tokens": 100_000_000.0}
WIZARD_PLAN = {
    "dp": 1,
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "zero_stage": 0,
    "offload": "none",
    "recompute": "full",
    "micro_batch": 2,
    "summary": "one GPU, no parallelism, full activation recomputation, micro-batch 2",
    "time_to_train_hours": 5.52,
    "time_to_train_hours_range": [4.9, 7.3],
}


def _pages(content: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(content)).pages]


def _runs_past_the_margin(content: bytes) -> list[tuple[float, str]]:
    """Text runs on page 1 whose estimated right edge passes the right page margin."""
    page = PdfReader(io.BytesIO(content)).pages[0]
    over: list[tuple[float, str]] = []

    def visit(text, cm, tm, _font, size) -> None:
        if not text.strip():
            return
        x = tm[4] * cm[0] + cm[4]
        scale = abs(tm[0] * cm[0]) or 1.0
        right = x + _width_em(text.rstrip()) * size * scale
        if right > A4_WIDTH_PT - RIGHT_MARGIN_PT + 2:
            over.append((round(right, 1), text.strip()))

    page.extract_text(visitor_text=visit)
    return over


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_one_carries_number_customer_configuration_total_and_validity(client: TestClient, lang: str) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    content = client.get(f"{quote['links']['pdf']}?lang={lang}").content
    first = _pages(content)[0]
    for fact in (quote["number"], "深圳算力科技", quote["sku"]["name"], "2,040,000.00", quote["valid_until"][:10]):
        assert fact in first, (fact, first)
    assert _runs_past_the_margin(content) == []


def test_the_job_reads_as_prose_in_english(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    text = "\n".join(_pages(client.get(quote["links"]["pdf"]).content))
    assert "Llama 3 70B" in text and "70.6 billion parameters" in text
    assert "Full fine-tune" in text and "2 billion tokens" in text
    assert "tensor parallel 8 × pipeline 2" in text
    assert "Annual, 12 months" in text
    for dump in ("model llama-3-70b", "2000000000", "zero_stage", "tp 8", "full-finetune"):
        assert dump not in text, dump


def test_the_job_reads_as_prose_in_chinese(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    text = "\n".join(_pages(client.get(f"{quote['links']['pdf']}?lang=zh").content))
    assert "Llama 3 70B" in text and "全参数微调" in text and "20亿 token" in text
    assert "张量并行 8 × 流水线 2" in text and "年付，12 个月" in text


@pytest.mark.parametrize(
    ("lang", "month", "wrong"), [("en", "Monthly, 1 month", "1 months"), ("zh", "月付，1 个月", "1 月数")]
)
def test_one_month_is_one_month(client: TestClient, lang: str, month: str, wrong: str) -> None:
    quote = client.post("/quotes", json=a100_body(months=1)).json()
    text = "\n".join(_pages(client.get(f"{quote['links']['pdf']}?lang={lang}").content))
    assert month in text and wrong not in text


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "en",
            [
                "Llama 3 8B",
                "8 billion parameters",
                "LoRA",
                "100 million tokens",
                "one GPU, no parallelism",
                "about 10 h 56 min (8 h 26 min to 14 h 43 min)",  # the Trainer + PEFT range centred on its point
                "1 month billed (720 h); the job uses about 10 h 56 min",
            ],
        ),
        (
            "zh",
            [
                "Llama 3 8B",
                "1亿 token",
                "单卡，无需并行",
                "约 10 小时 56 分钟（8 小时 26 分钟至 14 小时 43 分钟）",
                "计费 1 个月（720 小时）；作业约用 10 小时 56 分钟",
            ],
        ),
    ],
)
def test_time_to_finish_and_billed_versus_used(client: TestClient, lang: str, expected: list[str]) -> None:
    body = a100_body(quantity=1, months=1, workload=WIZARD_WORKLOAD, plan=WIZARD_PLAN)
    quote = client.post("/quotes", json=body).json()
    text = "\n".join(_pages(client.get(f"{quote['links']['pdf']}?lang={lang}").content))
    for words in expected:
        assert words in text, (words, text)
