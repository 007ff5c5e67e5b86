"""Every serving page and the serving quote, printed and as PDF, are complete in Chinese: after the catalog's own names
(SKUs, GPUs, their interconnect, host and network, the SKUs' add-ons), the models' names and repository ids, the
engines' flags and commands and the page's URLs are set aside, no run of two English words is left (the seller block
too: the quote freezes it in both languages, app/quotes/printing.py SELLER); nor in any serving option's explanation
(the API's `explanation`, worded in both languages by app/text/words.py SERVE_WORDS)."""

from __future__ import annotations

import html
import io
import re
import string
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy.orm import Session

from app.api.examples import RECOMMEND
from app.catalog.seed_data import ADDONS
from app.estimator.presets import list_presets
from app.text import words

HTML = {"accept": "text/html,application/xhtml+xml"}
SCENARIOS = {
    "8b": "preset=llama-3.1-8b&requests_per_s=10&input_tokens=1024&output_tokens=256&ttft_ms=2000&tpot_ms=60",
    # 70B at 20 req/s with a 1 s TTFT: SKUs rejected and near misses worded too (the newcomer's journey).
    "70b": "preset=llama-3.1-70b&requests_per_s=20&input_tokens=1000&output_tokens=300&ttft_ms=1000",
    # DeepSeek-V3 on two servers a replica: its launch runs a Ray cluster and names the block FP8 it ships
    "deepseek-v3": "preset=deepseek-v3&requests_per_s=5&input_tokens=2000&output_tokens=500",
}
# Proper names and identifiers that stay as they are in Chinese text, and the customer's own (test_serve_quote).
NAMES = (
    "Li Wei",
    "li.wei@example.com",
    "Hugging Face",
    "gpu-sizer",
    "TensorRT-LLM",
    "vLLM",
    "SGLang",
    "InfiniBand",
    "RoCE",
    "CUDA_VISIBLE_DEVICES",
    "PyTorch",  # software the seller block names (app/quotes/printing.py SELLER), a name in Chinese too
    "DeepSpeed",
    "ray start",  # the command a multi-server replica's servers run (vLLM's Ray cluster)
    "all-reduce",  # the collective's name, in Chinese text too (app/text/words.py EXPLAIN_WORDS tp_pcie)
)
ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[ ,;:'’()-]+[A-Za-z]{2,})+")
IDENTIFIERS = re.compile(
    r"https?://\S+|--[a-z][\w-]*|\b[\w.-]+/[\w.-]+\b|\b[a-z_]+\.[a-z_.]+\b"  # URLs, flags, repo ids, API fields
)


def allowed_names(client: TestClient) -> list[str]:
    # the quote form lists a SKU's add-ons by their catalog name (the seeded catalog's: no endpoint lists them)
    names = [*NAMES, *(p.name for p in list_presets()), *(addon["name"] for addon in ADDONS)]
    for sku in client.get("/catalog/skus").json():
        names += [sku["id"], sku["name"], sku["gpu"]["name"], sku.get("interconnect") or "", sku.get("host_cpu") or ""]
        names += [sku.get("network") or "", sku.get("description") or "", sku.get("inter_node_fabric") or ""]
    return sorted({n for n in names if n}, key=len, reverse=True)


def english_runs(page_html: str, names: list[str]) -> list[str]:
    text = re.sub(r"<(script|style|pre)\b.*?</\1>", " ", page_html, flags=re.S)
    chunks = [html.unescape(c) for c in re.split(r"<[^>]+>", text)]
    found = []
    for chunk in chunks:
        for name in names:
            chunk = chunk.replace(name, " ")
        chunk = IDENTIFIERS.sub(" ", chunk)
        found += ENGLISH_RUN.findall(chunk)
    return found


def test_the_detector_finds_english_left_in_a_chinese_page() -> None:
    page = "<p>副本之间不共享任何状态</p><p>4 independent replica(s) × TP 1</p><p>8x A100 80G SXM NVLink server</p>"
    assert english_runs(page, ["8x A100 80G SXM NVLink server"]) == ["independent replica"]
    # the browser tab's title is read too (it was set aside before, so an English title passed)
    assert english_runs("<title>Serving results · gpu-sizer</title><h1>推理选型</h1>", ["gpu-sizer"]) == [
        "Serving results"
    ]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_serving_pages_and_quote_are_chinese(client: TestClient, scenario: str) -> None:
    names = allowed_names(client)
    query = f"{SCENARIOS[scenario]}&lang=zh"
    pages = {
        "form": client.get(f"/serve?{query}", headers=HTML),
        "results": client.get(f"/serve/results?{query}", headers=HTML),
    }
    assert pages["results"].status_code == 200
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', pages["results"].text)
    if link:
        pages["quote form"] = client.get(html.unescape(link.group(1)), headers=HTML)
    left = {name: english_runs(page.text, names) for name, page in pages.items()}
    assert not any(left.values()), left


def _issue(client: TestClient, query: str) -> str:
    """The top option quoted from its card in Chinese, with the add-ons its form ticks (a multi-server replica's
    fabric), as a customer does: the printable page's address."""
    page = client.get(f"/serve/results?{query}&lang=zh", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, page.text[:2000]
    form = client.get(html.unescape(link.group(1)), headers=HTML)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    addons = re.findall(r'name="addons" value="([^"]+)"[^>]* checked>', form.text)
    customer = {"name": "Li Wei", "company": "", "email": "li.wei@example.com", "months": "1"}
    data = {**hidden, **customer, "addons": addons}
    posted = client.post("/serve/quote", data=data, headers=HTML, follow_redirects=False)
    assert posted.status_code == 303, posted.text[:2000]
    return str(posted.headers["location"])


@pytest.mark.parametrize("scenario", ["8b", "deepseek-v3"])
def test_the_serving_quote_is_chinese_printed_and_as_pdf(client: TestClient, db: Session, scenario: str) -> None:
    from tests.web.test_training_chinese import _names, pdf_runs

    names = _names(client, db)  # the training quote's names: the SKU's disks and regions, the currencies' codes
    printed = client.get(_issue(client, SCENARIOS[scenario]), headers=HTML)
    assert printed.status_code == 200
    pdf_link = re.search(r'href="([^"]+\.pdf\?lang=zh)"', printed.text)
    assert pdf_link, printed.text[:2000]
    pdf = client.get(html.unescape(pdf_link.group(1)))
    assert (pdf.status_code, pdf.headers["content-type"]) == (200, "application/pdf")
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    left = {"printed": english_runs(printed.text, names), "pdf": pdf_runs(text, names)}
    assert not any(left.values()), left


# --- the option's explanation (the API's `explanation`, app/text/words.py SERVE_WORDS): every serving option's figures
# worded in Chinese leave no English sentence, and in English read as the API's own text ------------------------

EXPLAINED = {
    **{name: example["value"] for name, example in RECOMMEND.items() if example["value"].get("task") == "serving"},
    # a multi-server deployment of a checkpoint shipped in block FP8; a near miss on its latency; a saturated shape
    "deepseek-v3": {
        "model": {"preset": "deepseek-v3"},
        "task": "serving",
        "serving": {"requests_per_s": 5, "input_tokens": 2000, "output_tokens": 500},
    },
    "70b near misses": {
        "model": {"preset": "llama-3.1-70b"},
        "task": "serving",
        "serving": {"requests_per_s": 20, "input_tokens": 1000, "output_tokens": 300, "slo": {"ttft_ms": 1000}},
    },
    "saturated": {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"requests_per_s": 1000, "input_tokens": 8000, "output_tokens": 2000, "slo": {"ttft_ms": 50}},
    },
}


@pytest.mark.parametrize("name", sorted(EXPLAINED))
def test_every_serving_explanation_reads_in_chinese(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Before: the explanation was an English f-string in the planner ("4 replicas × TP 1 on …: 10 requests/s at
    TTFT … and TPOT …; the peak of 15 requests/s with at least 1.27× headroom (simulated)"), no Chinese to show."""
    from app.planner import serving_service

    seen: list[dict[str, Any]] = []

    def spy(facts: dict[str, Any], lang: str) -> str:
        seen.append(dict(facts))
        return words.serving_explanation(facts, lang)

    monkeypatch.setattr(serving_service, "serving_explanation", spy)
    response = client.post("/recommend", json=EXPLAINED[name])
    assert response.status_code == 200, response.text[:2000]
    body = response.json()
    options = [*body["options"], *body.get("near_misses", [])]
    assert options and len(seen) >= len(options)
    english = {words.serving_explanation(facts, "en") for facts in seen}
    assert {o["explanation"] for o in options} <= english  # the API's text is the catalog's English
    names = allowed_names(client)
    left = {
        text: runs
        for facts in seen
        if (runs := english_runs(f"<p>{html.escape(text := words.serving_explanation(facts, 'zh'))}</p>", names))
    }
    assert not left, left


def test_the_serving_words_have_both_languages_and_a_chinese_summary() -> None:
    fields = string.Formatter()
    placeholders = {
        lang: {key: {name for _, name, _, _ in fields.parse(text) if name} for key, text in table.items()}
        for lang, table in words.SERVE_WORDS.items()
    }
    assert placeholders["en"] == placeholders["zh"]  # the same codes, each with the same figures
    pools = {"prefill": {"replicas": 3, "tp": 8}, "decode": {"replicas": 2, "tp": 8}}
    assert words.serving_summary(4, 1, 1, None, "en") == "4 independent replicas × TP 1"
    assert words.serving_summary(1, 8, 2, None, "en") == "1 independent replica × TP 8 × PP 2"
    summaries = [words.serving_summary(4, 1, 1, None, "zh"), words.serving_summary(0, 0, 1, pools, "zh")]
    assert summaries[0] == "4 个独立副本 × TP 1"
    assert [english_runs(f"<p>{text}</p>", []) for text in summaries] == [[], []]
    assert "3 prefill replicas × TP 8 and 2 decode replicas" in words.serving_summary(0, 0, 1, pools, "en")
