"""The wizard's job budget and both terms on the results page, in English and Chinese (SQLite and PostgreSQL)."""

from __future__ import annotations

from fastapi.testclient import TestClient

HTML = {"accept": "text/html,application/xhtml+xml"}
# 7B LoRA on 0.1B tokens: one A100 40G card for hours; the annual term bills 12 × 2,240.00, the monthly one 2,800.00
ANNUAL_LORA = "preset=llama-2-7b&task=lora&tokens_b=0.1&term=annual&objective=cheapest"


def test_an_option_on_the_annual_term_shows_the_monthly_total_and_warns(client: TestClient) -> None:
    en = client.get(f"/results?{ANNUAL_LORA}&lang=en", headers=HTML)
    assert en.status_code == 200, en.text
    assert "On the monthly term: ¥2,800.00 (1 month billed)" in en.text
    assert "The monthly term costs this job less" in en.text
    zh = client.get(f"/results?{ANNUAL_LORA}&lang=zh", headers=HTML)
    assert "月付租期：¥2,800.00（计费 1 个月）" in zh.text
    assert "月付租期对这个任务更便宜" in zh.text


def test_the_job_budget_is_a_wizard_field_sent_to_the_api(client: TestClient) -> None:
    page = client.get("/?lang=zh", headers=HTML)
    assert 'name="total_budget"' in page.text and "任务预算" in page.text
    # a job budget below one annual term: every option becomes a near miss worded with the job total
    query = f"{ANNUAL_LORA}&total_budget=10000&lang=en"
    result = client.get(f"/results?{query}", headers=HTML)
    assert result.status_code == 200, result.text
    assert "fits, but the whole job costs ¥26,880.00 (billed months: 12; job budget ¥10,000.00)" in result.text
    bad = client.get(f"/results?{ANNUAL_LORA}&total_budget=0&lang=en", headers=HTML)
    assert bad.status_code == 422
    assert 'id="err-total_budget"' in bad.text
