"""A serving near miss whose replica cannot hold one request (its KV cache shorter than one sequence) shows no
latency, throughput, unit price, headroom or launch: it says it cannot hold one request (review R2 R4: Llama 3.1
70B with 8,000-token prompts on four A100 40 GB cards read ¥0.00 per million tokens, "TTFT 0 ms · TPOT 0 ms", "0×
the peak load" and a launch with --max-model-len 1888 --max-num-seqs 1)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import recommend

RAG_70B = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5,
                "slo": {"ttft_ms": 1500, "tpot_ms": 40}},
}  # fmt: skip
QUERY = "preset=llama-3.1-70b&requests_per_s=5&input_tokens=8000&output_tokens=300&ttft_ms=1500&tpot_ms=40"


def _too_short(answer: dict[str, Any]) -> dict[str, Any]:
    (miss,) = [m for m in answer["near_misses"] if m["sku"]["id"] == "a100-40g-pcie-card"]
    assert [m["code"] for m in miss["misses"]] == ["sequence_too_long"]
    return miss


def test_a_shape_that_holds_no_request_shows_no_figures_nor_launch(client: TestClient) -> None:
    miss = _too_short(recommend(client, RAG_70B))
    assert miss["cost"]["per_million_output_tokens"] is None
    assert miss["launch"] is None
    serving = miss["serving"]
    assert serving["ttft_ms"] is None and serving["tpot_ms"] is None and serving["headroom"] is None
    assert "cannot hold one request" in miss["explanation"]
    assert "TTFT" not in miss["explanation"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_serve_page_says_it_cannot_hold_one_request(client: TestClient, lang: str) -> None:
    page = client.get(f"/serve/results?{QUERY}&lang={lang}", headers={"accept": "text/html"})
    assert page.status_code == 200, page.text[:2000]
    card = page.text[page.text.index('data-sku="a100-40g-pcie-card"') :]
    card = card[: card.index("</article>")]
    assert "--max-model-len" not in card and 'class="launch"' not in card
    assert not re.search(r"[¥￥]\s*0\.00", card)
    assert ("cannot hold one request" if lang == "en" else "放不下一个此长度的请求") in card
