"""The serving quote, on its printable page and in its PDF (text extracted with pypdf): it states the traffic
(rate, peak factor, lengths), the latency targets and the simulated percentiles, the replicas and servers,
and none of the training words a serving plan's fields would otherwise print."""

from __future__ import annotations

import html
import io
import re

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader

HTML = {"accept": "text/html,application/xhtml+xml"}
QUERY = (
    "preset=llama-3.1-8b&requests_per_s=10&peak_factor=1.5&input_tokens=1000&output_tokens=300&ttft_ms=2000&tpot_ms=60"
)
TRAINING_WORDS = {
    "en": ("micro-batch", "Time to finish", "not estimated", "Training tokens", "Parallel plan"),
    "zh": ("微批", "完成时间", "未估算", "训练 token", "并行方案"),
}
EXPECTED = {
    "en": (
        "10 requests/s on average, peak 1.5× = 15 requests/s",
        "1,000 input and 300 output tokens per request (means)",
        "time to first token ≤ 2,000 ms, time per output token ≤ 60 ms, for 90% of requests at peak",
        "Latency at peak",
        "TTFT p50 ",
        "vLLM",
    ),
    "zh": (
        "平均每秒 10 个请求，峰值为 1.5 倍，即每秒 15 个请求",
        "每个请求平均输入 1,000 个 token、输出 300 个 token",
        "峰值时对 90% 的请求成立",
        "峰值负载下的延迟",
        "首 token p50 ",
    ),
}


def issue(client: TestClient, lang: str) -> tuple[str, dict[str, str]]:
    """A serving deployment quoted from its card, as a customer does: the printable page's address."""
    page = client.get(f"/serve/results?{QUERY}&lang={lang}", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, page.text[:2000]
    form = client.get(html.unescape(link.group(1)), headers=HTML)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    posted = client.post(
        "/serve/quote",
        data={**hidden, "name": "Li Wei", "company": "", "email": "li.wei@example.com", "months": "1"},
        headers=HTML,
        follow_redirects=False,
    )
    assert posted.status_code == 303, posted.text[:1000]
    return posted.headers["location"], hidden


def text_of(page_html: str) -> str:
    page_html = re.sub(r"<(script|style)\b.*?</\1>", "", page_html, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page_html)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_serving_quote_states_traffic_latency_replicas_and_servers(client: TestClient, lang: str) -> None:
    location, _ = issue(client, lang)
    printed = client.get(location, headers=HTML)
    assert printed.status_code == 200
    text = text_of(printed.text)
    for expected in EXPECTED[lang]:
        assert expected in text, (expected, text)
    quote = client.get(f"/quotes/{location.split('/')[2]}").json()
    replicas, gpus = quote["plan"]["dp"], quote["plan"]["dp"] * quote["plan"]["tp"]
    peak = quote["plan"]["serving"]["latency"]["peak"]
    assert f"p99 {round(peak['ttft_ms']['p99']):,}" in text
    unit = {"en": {"card": "rented card", "node": "server"}, "zh": {"card": "张租用的卡", "node": "台服务器"}}
    deployment = {
        "en": f"{replicas} replicas × {quote['plan']['tp']} GPUs each = {gpus} GPUs on {quote['quantity']} ",
        "zh": f"{replicas} 个副本 × 每个 {quote['plan']['tp']} 张 GPU = {gpus} 张 GPU，共 {quote['quantity']} ",
    }[lang]
    assert deployment + unit[lang][quote["unit"]] in text, text
    for word in TRAINING_WORDS[lang]:
        assert word not in text, word
    pdf_link = re.search(r'href="([^"]+\.pdf[^"]*)"', printed.text)
    assert pdf_link
    pdf = client.get(html.unescape(pdf_link.group(1)))
    assert pdf.status_code == 200 and pdf.headers["content-type"].startswith("application/pdf")
    pdf_text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages))
    squeezed = pdf_text.replace(" ", "")
    for expected in EXPECTED[lang]:
        assert expected.replace(" ", "") in squeezed, (expected, pdf_text)
    for word in TRAINING_WORDS[lang]:
        assert word.replace(" ", "") not in squeezed, word
