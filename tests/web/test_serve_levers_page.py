"""The serve page's levers (prefix cache, speculative decoding): their fields, their launch and their errors, in
both languages."""

from __future__ import annotations

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
