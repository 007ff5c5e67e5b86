"""A serving quote freezes what qualifies its latency (review R5-4): the option's caveat warnings on the estimate
(`moe_low_concurrency_unvalidated`: DeepSeek-V3's 256 small experts at ~35 sequences in flight, where the time per
token is optimistic) become its notes, worded as the option words them, and the speculative decoding (method, tokens
drafted, acceptance) and prefix-cache hit rate it assumed are stated beside the latency — on the printable page and in
the PDF, English and Chinese. SQLite and PostgreSQL."""

from __future__ import annotations

import html
import io
from typing import Any

from fastapi.testclient import TestClient
from pypdf import PdfReader

from app.text import messages
from tests.factories import recommend

# The review's request: DeepSeek-V3 on SGLang with MTP (3 tokens, 80 % acceptance), 10 requests/s.
REVIEWED: dict[str, Any] = {
    "model": {"preset": "deepseek-v3"},
    "task": "serving",
    "serving": {
        "engine": "sglang",
        "input_tokens": 2000,
        "output_tokens": 800,
        "requests_per_s": 10,
        "slo": {"ttft_ms": 2000, "tpot_ms": 50},
        "speculative": {"method": "mtp", "num_speculative_tokens": 3, "acceptance_rate": 0.8},
        "prefix_cache_hit_rate": 0.25,
    },
    "constraints": {"max_nodes": 8},
}
CUSTOMER = {"name": "Ada", "company": "Acme", "email": "ada@example.org"}
ASSUMED = {
    "en": (
        "Speculative decoding (assumed)",
        "MTP (the checkpoint's multi-token-prediction layers), 3 tokens drafted a step, each accepted with "
        "probability 80%",
        "25% of prompt tokens found cached",
    ),
    "zh": ("投机解码（假设）", "每步草拟 3 个 token，每个草拟 token 的接受率为 80%", "25% 的提示 token 命中缓存"),
}


def _flat(text: str) -> str:
    return "".join(text.split())


def _pdf_text(client: TestClient, quote: dict[str, Any], lang: str) -> str:
    pdf = client.get(quote["links"]["pdf"], params={"lang": lang})
    assert pdf.status_code == 200, pdf.text[:500]
    return _flat("".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages))


def test_a_serving_quote_freezes_its_latency_caveats_and_assumptions(client: TestClient) -> None:
    option = recommend(client, REVIEWED)["options"][0]
    warned = {w["code"]: w for w in option["warnings"]}
    assert "moe_low_concurrency_unvalidated" in warned
    response = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
    assert response.status_code == 201, response.text
    quote = response.json()
    codes = {n["code"]: n["params"] for n in quote["note_codes"]}
    frozen = codes["moe_low_concurrency_unvalidated"]
    option_params = warned["moe_low_concurrency_unvalidated"]["params"]
    assert (frozen["model"], frozen["experts"], frozen["validated"]) == ("deepseek-v3", 256, 64)
    # recomputed on the SKU and quantity quoted: the option's concurrency, kept as a decimal string (no float)
    assert abs(float(frozen["concurrency"]) - option_params["concurrency"]) < 1e-3
    english = messages.quote_note("moe_low_concurrency_unvalidated", frozen)
    assert english == warned["moe_low_concurrency_unvalidated"]["message"] and english in quote["notes"]
    assert "caveats" not in quote["plan"]  # frozen as notes, not as figures of the plan
    for lang in ("en", "zh"):
        page = html.unescape(client.get(quote["links"]["print"], params={"lang": lang}).text)
        caveat = messages.quote_note("moe_low_concurrency_unvalidated", frozen, lang)
        assert caveat in page, lang
        pdf = _pdf_text(client, quote, lang)
        assert _flat(caveat)[:60] in pdf, lang
        for words in ASSUMED[lang]:
            assert words in page, (lang, words)
            assert _flat(words) in pdf, (lang, words)
