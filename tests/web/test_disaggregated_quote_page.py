"""A disaggregated deployment quoted from the serving wizard: the printed page and its PDF state the two pools
(replicas × TP of each, the GPUs and the servers rented), in English and Chinese, and the quote froze the pools and
the mode chosen."""

from __future__ import annotations

import html
import io
import re

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader

from tests.web.test_serve_quote import HTML, text_of

QUERY = (
    "preset=llama-3.1-70b&weights=fp8&engine=sglang&disaggregated=yes&requests_per_s=10&peak_factor=1.5"
    "&input_tokens=4000&output_tokens=300&ttft_ms=1500&tpot_ms=40"
)


def issue(client: TestClient, lang: str) -> str:
    page = client.get(f"/serve/results?{QUERY}&lang={lang}", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, page.text[:3000]
    form = client.get(html.unescape(link.group(1)), headers=HTML)
    assert " prefill + " in text_of(form.text) or " prefill 副本 + " in text_of(form.text), text_of(form.text)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    addons = re.findall(r'name="addons" value="([^"]+)" id="[^"]+" checked', form.text)
    posted = client.post(
        "/serve/quote",
        data={
            **hidden,
            "addons": addons,
            "name": "Li Wei",
            "company": "",
            "email": "li.wei@example.com",
            "months": "1",
        },
        headers=HTML,
        follow_redirects=False,
    )
    assert posted.status_code == 303, text_of(posted.text)[:3000]
    return posted.headers["location"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_printed_quote_states_the_pools(client: TestClient, lang: str) -> None:
    location = issue(client, lang)
    quote = client.get(f"/quotes/{location.split('/')[2]}").json()
    pools = quote["plan"]["pools"]
    assert quote["workload"]["serving"]["disaggregated"] is True
    pre, dec = pools["prefill"], pools["decode"]
    gpus = pre["gpus"] + dec["gpus"]
    expected = {
        "en": f"{pre['replicas']} × TP{pre['tp']} prefill + {dec['replicas']} × TP{dec['tp']} decode = {gpus} GPUs "
        f"on {quote['quantity']} servers",
        "zh": f"{pre['replicas']} 个 TP{pre['tp']} prefill 副本 + {dec['replicas']} 个 TP{dec['tp']} decode 副本 = "
        f"{gpus} 张 GPU，共 {quote['quantity']} 台服务器",
    }[lang]
    printed = client.get(location, headers=HTML)
    text = text_of(printed.text)
    assert expected in text, text
    assert "1 replicas" not in text and "1 个副本" not in text
    pdf_link = re.search(r'href="([^"]+\.pdf[^"]*)"', printed.text)
    assert pdf_link
    pdf = client.get(html.unescape(pdf_link.group(1)))
    pdf_text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
    assert expected.replace(" ", "") in re.sub(r"\s+", "", pdf_text), pdf_text
