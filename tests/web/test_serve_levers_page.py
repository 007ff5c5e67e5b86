"""The serve page's levers (prefix cache, speculative decoding): their fields, their launch and their errors, in
both languages."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HTML = {"accept": "text/html,application/xhtml+xml"}
QUERY = "preset=llama-3.1-8b&requests_per_s=10&input_tokens=1024&output_tokens=256&ttft_ms=2000&tpot_ms=60"


def test_the_levers_reach_the_launch(client: TestClient) -> None:
    levers = "&prefix_cache=0.6&spec_method=eagle3&spec_tokens=3&spec_acceptance=0.7"
    page = client.get(f"/serve/results?{QUERY}{levers}", headers=HTML)
    assert page.status_code == 200, page.text
    assert "--enable-prefix-caching" in page.text and "--speculative-config" in page.text
    assert "60% of prompt tokens" in page.text
    zh = client.get(f"/serve/results?{QUERY}{levers}&lang=zh", headers=HTML)
    assert "投机解码" in zh.text and "前缀缓存命中率" in zh.text


def test_bad_levers_are_shown_next_to_their_fields(client: TestClient) -> None:
    page = client.get(f"/serve/results?{QUERY}&prefix_cache=2&spec_method=eagle3&spec_acceptance=1.5", headers=HTML)
    assert page.status_code == 422
    assert 'id="err-prefix_cache"' in page.text and 'id="err-spec_acceptance"' in page.text
    mtp = client.get(f"/serve/results?{QUERY}&spec_method=mtp", headers=HTML)
    assert mtp.status_code == 422 and 'id="err-spec_method"' in mtp.text


PD = (
    "preset=llama-3.1-70b&weights=fp8&requests_per_s=5&input_tokens=8000&output_tokens=300&ttft_ms=2000&tpot_ms=50"
    "&engine=sglang&disaggregated=yes"
)


def test_separate_pools_are_shown_launched_and_quoted(client: TestClient) -> None:
    page = client.get(f"/serve/results?{PD}", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    assert "--disaggregation-mode prefill" in page.text and "sglang_router.launch_router" in page.text
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, "no quote link on the first deployment"
    form = client.get(link.group(1).replace("&amp;", "&"), headers=HTML)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    assert hidden["disaggregated"] == "yes"
    # the pools' servers join over the fabric: its add-on is ticked, and a browser posts what is ticked
    ticked = re.findall(r'name="addons" value="([^"]+)" id="[^"]+" checked', form.text)
    assert ticked, form.text[-3000:]
    posted = client.post(
        "/serve/quote",
        data={
            **hidden,
            "addons": ticked,
            "name": "Li Wei",
            "company": "",
            "email": "li.wei@example.com",
            "months": "1",
        },
        headers=HTML,
        follow_redirects=False,
    )
    assert posted.status_code == 303, re.findall(r"class=\"error[^>]*>([^<]+)", posted.text) or posted.text[-3000:]


def test_separate_pools_on_vllm_are_sized_like_sglangs(client: TestClient) -> None:
    page = client.get(f"/serve/results?{PD.replace('engine=sglang', 'engine=vllm')}", headers=HTML)
    assert page.status_code == 200 and 'id="err-disaggregated"' not in page.text
