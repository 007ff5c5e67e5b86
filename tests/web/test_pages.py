"""The web pages through the app factory (SQLite and PostgreSQL): what each route answers, the
inline errors, languages, error pages, CSV and launch-config downloads, and the quote post."""

from __future__ import annotations

import csv
import io
import json
import re

from fastapi import APIRouter
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.delivery.error_pages import WebRoute

HTML = {"accept": "text/html,application/xhtml+xml"}
LORA_7B = "preset=llama-2-7b&task=lora"


def test_wizard_lists_every_preset_with_labels(client: TestClient) -> None:
    from app.estimator.presets import list_presets

    page = client.get("/", headers=HTML)
    assert page.status_code == 200
    values = re.findall(r'<option value="([^"]+)" data-search=', page.text)
    assert values == [p.id for p in list_presets()]
    ids = set(re.findall(r'<(?:input|select|textarea) id="([^"]+)"', page.text))
    labelled = set(re.findall(r'<label for="([^"]+)"', page.text))
    assert ids <= labelled
    default = '<option value="llama-2-7b" data-search="llama-2-7b llama 2 7b" selected>Llama 2 7B — 6.7B</option>'
    assert default in page.text


def test_no_inline_script_or_style(client: TestClient) -> None:
    for url in ("/", f"/results?{LORA_7B}", f"/quote?{LORA_7B}&option=1", "/nowhere"):
        text = client.get(url, headers=HTML).text
        assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", text) == [], url
        assert " style=" not in text and "<style" not in text, url


def test_results_show_the_top_option_and_the_script(client: TestClient) -> None:
    page = client.get(f"/results?{LORA_7B}&lang=en", headers=HTML)
    assert page.status_code == 200
    first = page.text.index('class="option"')
    assert re.search(r'data-sku="a100-40g-pcie-card" data-gpus="1"', page.text[first : first + 300])
    assert '<dd class="money monthly">¥2,800.00</dd>' in page.text
    body = json.loads(
        re.search(r'<pre id="body-json"[^>]*><code>(.*?)</code>', page.text, re.S)
        .group(1)
        .replace("&#34;", '"')
        .replace("&quot;", '"')
    )
    assert body == {"model": {"preset": "llama-2-7b"}, "task": "lora"}  # what the API would default is left out
    assert client.post("/recommend", json=body).json()["options"][0]["sku"]["id"] == "a100-40g-pcie-card"
    assert "curl -sS -X POST &#39;http://testserver/recommend&#39;" in page.text


def test_language_from_accept_language_and_the_query(client: TestClient) -> None:
    zh = client.get(f"/results?{LORA_7B}", headers={**HTML, "accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert '<html lang="zh-CN">' in zh.text and "<h1>推荐配置</h1>" in zh.text
    assert 'href="/results?preset=llama-2-7b&amp;task=lora&amp;lang=en"' in zh.text
    en = client.get(f"/results?{LORA_7B}&lang=en", headers={**HTML, "accept-language": "zh-CN"})
    assert "<h1>Recommended configurations</h1>" in en.text
    low_q = client.get("/", headers={**HTML, "accept-language": "zh;q=0.1, en;q=0.9"})
    assert '<html lang="en">' in low_q.text


def test_planner_errors_come_back_next_to_the_field(client: TestClient) -> None:
    page = client.get("/results?preset=llama-9-1b&task=lora", headers=HTML)
    assert page.status_code == 422
    assert re.search(
        r'<p class="field-error" id="err-preset">Unknown model preset &#39;llama-9-1b&#39;; closest: ', page.text
    )
    assert 'aria-describedby="err-preset" aria-invalid="true"' in page.text
    budget = client.get("/results?preset=llama-2-7b&task=lora&budget=0&lang=zh", headers=HTML)
    assert budget.status_code == 422
    assert '<p class="field-error" id="err-budget">必须大于 0。</p>' in budget.text
    assert 'name="budget" type="text" value="0"' in budget.text  # what was typed is shown again


def test_csv_export(client: TestClient) -> None:
    response = client.get(f"/results.csv?{LORA_7B}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(response.text)))
    api = client.post("/recommend", json={"model": {"preset": "llama-2-7b"}, "task": "lora"}).json()
    assert [r["sku"] for r in rows] == [o["sku"]["id"] for o in api["options"]]
    assert (rows[0]["total_gpus"], rows[0]["monthly_effective"], rows[0]["annual"]) == ("1", "2800.00", "26880.00")


def test_launch_config_download(client: TestClient) -> None:
    response = client.get(f"/results/launch.json?{LORA_7B}&option=1")
    assert response.status_code == 200
    config = response.json()
    gpus = config["nodes"] * config["gpus_per_node"]
    disposition = f'attachment; filename="llama-2-7b-lora-option1-a100-40g-pcie-card-{gpus}gpu.json"'
    assert response.headers["content-disposition"] == disposition
    assert config["sku"] == "a100-40g-pcie-card"
    stack = config["stack"]
    assert set(config) - {"model", "task", "tokens", "sku", "nodes", "gpus_per_node", "plan", "stack"} == {stack}
    assert config[stack]["world_size"] == config["nodes"] * config["gpus_per_node"]
    missing = client.get(f"/results/launch.json?{LORA_7B}&option=99", headers=HTML)
    assert missing.status_code == 404 and "That option is no longer in the results" in missing.text


def test_quote_post_redirects_to_the_printable_page(client: TestClient) -> None:
    form = {
        "preset": "llama-2-7b",
        "task": "lora",
        "lang": "zh",
        "option": "1",
        "name": "Li Wei",
        "company": "深圳算力科技",
        "email": "li.wei@example.com",
        "months": "3",
    }
    response = client.post("/quote", data=form, follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert re.fullmatch(r"/quotes/[A-Za-z0-9_-]{32}/print\?lang=zh", location)
    quote = client.get(location.split("/print")[0]).json()
    assert (quote["sku"]["id"], quote["quantity"], quote["months"], quote["total"]) == (
        "a100-40g-pcie-card",
        1,
        3,
        "8400.00",
    )
    assert quote["workload"] == {"model": {"preset": "llama-2-7b"}, "task": "lora"}


def test_quote_post_errors_are_inline(client: TestClient) -> None:
    form = {
        "preset": "llama-2-7b",
        "task": "lora",
        "lang": "en",
        "option": "1",
        "name": "",
        "email": "nope",
        "months": "x",
    }
    response = client.post("/quote", data=form, follow_redirects=False)
    assert response.status_code == 422
    assert '<p class="field-error" id="err-months">Enter a whole number.</p>' in response.text
    form["months"] = "1"
    response = client.post("/quote", data=form, follow_redirects=False)
    assert response.status_code == 422
    assert re.search(r'<p class="field-error" id="err-name">[^<]+</p>', response.text)
    assert '<p class="field-error" id="err-email">Enter a valid email address.</p>' in response.text


def test_friendly_404_for_browsers_problem_json_for_the_api(client: TestClient) -> None:
    page = client.get("/no/such/page", headers={**HTML, "accept-language": "zh"})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>页面不存在</h1>" in page.text
    api = client.get("/no/such/page")
    assert (api.status_code, api.headers["content-type"]) == (404, "application/problem+json")
    quote = client.get("/quotes/nope", headers=HTML)
    assert quote.headers["content-type"] == "application/problem+json"


def test_friendly_500_for_an_unexpected_error_in_a_page(client: TestClient) -> None:
    broken = APIRouter(route_class=WebRoute)

    @broken.get("/broken-page")
    def _boom() -> None:
        raise RuntimeError("boom")

    client.app.include_router(broken)
    page = client.get("/broken-page", headers={**HTML, "x-request-id": "req-123"})
    assert page.status_code == 500
    assert "<h1>Something went wrong</h1>" in page.text and "Request id: req-123" in page.text
    assert "boom" not in page.text


def test_a_multi_server_plan_quotes_the_fabric_add_on(client: TestClient) -> None:
    query = "preset=llama-2-70b&task=full_finetune&tokens_b=1&lang=en"
    api = client.post(
        "/recommend", json={"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9}
    ).json()
    option = next(
        o
        for o in api["options"]
        if o["nodes"] > 1 and any(w["code"] == "fabric_priced_on_request" for w in o["warnings"])
    )
    page = client.get(f"/quote?{query}&option={option['rank']}", headers=HTML)
    assert page.status_code == 200
    assert re.search(
        r'<input type="checkbox" name="addons" value="infiniband-400g" id="f-addons-infiniband-400g"'
        r" checked>",
        page.text,
    )
    form = [
        ("preset", "llama-2-70b"),
        ("task", "full_finetune"),
        ("tokens_b", "1"),
        ("lang", "en"),
        ("option", str(option["rank"])),
        ("name", "Li Wei"),
        ("email", "li@example.com"),
        ("months", "1"),
        ("addons", "infiniband-400g"),
    ]
    response = client.post("/quote", data=dict(form), follow_redirects=False)
    assert response.status_code == 303
    quote = client.get(response.headers["location"].split("/print")[0]).json()
    assert (quote["sku"]["id"], quote["quantity"]) == (option["sku"]["id"], option["nodes"])
    assert [(line["kind"], line["code"], line["amount"]) for line in quote["lines"]][1:] == [
        ("addon", "infiniband-400g", None)
    ]
    assert quote["total"] == option["cost"]["job_total"]


def test_a_priced_fabric_add_on_is_ticked_as_the_option_quotes_it(client: TestClient, db: Session) -> None:
    """Before: the form ticked the add-on only beside the "priced on consultation" warning, so a priced add-on
    (in the option's cost) was left unticked and the web quote came to less than the option's total."""
    from app.catalog.repository import get_addon, get_sku_by_slug

    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    addon = get_addon(db, sku.id, "infiniband-400g") if sku is not None else None
    assert addon is not None
    addon.amount_minor = 500_000
    db.flush()
    body = {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9}
    option = next(o for o in client.post("/recommend", json=body).json()["options"] if o["nodes"] > 1)
    assert option["quote"]["addons"] == ["infiniband-400g"] and option["cost"]["fabric_monthly"]
    page = client.get(f"/quote?preset=llama-2-70b&task=full_finetune&tokens_b=1&lang=en&option={option['rank']}")
    assert re.search(r'value="infiniband-400g" id="f-addons-infiniband-400g" checked>', page.text)


def test_a_pasted_config_or_a_parameter_count_describes_the_model(client: TestClient) -> None:
    from urllib.parse import urlencode

    config = (
        '{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, '
        '"num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}'
    )
    pasted = client.get(
        "/results?" + urlencode({"source": "config", "hf_config": config, "task": "lora"}), headers=HTML
    )
    assert pasted.status_code == 200
    assert "· LoRA · 6.7B parameters</p>" in pasted.text  # the same architecture as the llama-2-7b preset
    assert 'data-sku="a100-40g-pcie-card" data-gpus="1"' in pasted.text
    counted = client.get("/results?source=params&params_b=7&task=lora&lang=zh", headers=HTML)
    assert counted.status_code == 200
    assert '<li data-code="estimate_uncertain">架构由参数量推算：显存和速度为近似值。</li>' in counted.text


def test_an_unknown_region_is_worded_in_chinese(client: TestClient) -> None:
    page = client.get(f"/results?{LORA_7B}&regions=mars&lang=zh", headers=HTML)
    assert page.status_code == 422
    assert "没有 SKU 在 mars 提供；可选地域：" in page.text
    english = client.get(f"/results?{LORA_7B}&regions=mars", headers=HTML)
    assert "no SKU is offered in mars; regions: " in english.text


def test_near_misses_and_rejections_in_chinese(client: TestClient) -> None:
    query = "preset=llama-2-70b&task=full_finetune&tokens_b=1&deadline_days=1&budget=150000&lang=zh"
    page = client.get(f"/results?{query}", headers=HTML)
    assert page.status_code == 200
    api = client.post(
        "/recommend",
        json={
            "model": {"preset": "llama-2-70b"},
            "task": "full_finetune",
            "tokens": 1e9,
            "constraints": {"deadline_days": 1, "max_monthly_budget": "150000"},
        },
    ).json()
    assert api["near_misses"], "the constraints leave near misses"
    reasons = re.findall(r'<p class="miss-reason">([^<]+)</p>', page.text)
    assert len(reasons) == len(api["near_misses"])
    assert all(r.startswith("放得下，但") for r in reasons)
    rejected = dict(re.findall(r'<li><strong>([^<]+)</strong>: <span class="reason">([^<]+)</span></li>', page.text))
    assert rejected["a100-40g-pcie-card"].startswith("放不下：4 × NVIDIA A100 40GB PCIe 上最省显存的方案仍需每卡 ")


def test_a_submitted_wizard_redirects_to_the_short_url(client: TestClient) -> None:
    response = client.get(
        "/results?lang=en&source=preset&preset=llama-2-7b&params_b=&hf_config=&task=lora"
        "&tokens_b=&regions=&objective=balanced",
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == (
        "/results?source=preset&preset=llama-2-7b&task=lora&seq_len=2048&precision=bf16&optimizer=adamw"
        "&term=monthly&objective=balanced&lang=en"
    )


def test_results_show_the_time_and_gpu_hours_ranges(client: TestClient) -> None:
    """The card gives the range (tuned to typical stack) and the goodput, not only the point estimate."""
    en = client.get(f"/results?{LORA_7B}&tokens_b=1&lang=en", headers=HTML).text
    first = en[en.index('class="option"') :]
    ranged = re.search(r'<dd class="small time-range">(.+?) \(tuned stack\) to (.+?) \(typical stack\)</dd>', first)
    assert ranged, first[:3000]
    hours = re.search(r'<dd class="small gpu-hours-range">([\d,]+)–([\d,]+) GPU-hours, goodput (\d+)%</dd>', first)
    assert hours
    low, high = (float(x.replace(",", "")) for x in hours.group(1, 2))
    assert low < high and 50 <= int(hours.group(3)) <= 100
    zh = client.get(f"/results?{LORA_7B}&tokens_b=1&lang=zh", headers=HTML).text
    assert "（调优框架）至" in zh and "GPU 小时，有效率" in zh
