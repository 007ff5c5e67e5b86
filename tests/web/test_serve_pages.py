"""The "serve a model" pages through the app factory (SQLite and PostgreSQL): the form, the deployments
with latency, cost per million tokens, memory bars and launch commands, inline errors, both languages."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from tests.hub_server import StandInHub

HTML = {"accept": "text/html,application/xhtml+xml"}
QWEN = get_preset("qwen2.5-7b")  # served by the stand-in Hub under its hf_repo, Qwen/Qwen2.5-7B
QUERY = "preset=llama-3.1-8b&requests_per_s=10&input_tokens=1024&output_tokens=256&ttft_ms=2000&tpot_ms=60"


def test_form_labels_every_field_and_is_linked_from_the_wizard(client: TestClient) -> None:
    page = client.get("/serve", headers=HTML)
    assert page.status_code == 200
    ids = set(re.findall(r'<(?:input|select|textarea) id="([^"]+)"', page.text))
    assert {"f-preset", "f-requests_per_s", "f-tpot_ms", "f-engine", "f-weights"} <= ids
    assert ids <= set(re.findall(r'<label for="([^"]+)"', page.text))
    assert 'href="/serve?lang=en"' in client.get("/", headers=HTML).text


def test_results_match_the_api(client: TestClient) -> None:
    page = client.get(f"/serve/results?{QUERY}", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    api = client.post(
        "/recommend",
        json={
            "model": {"preset": "llama-3.1-8b"},
            "task": "serving",
            "precision": "bf16",
            "weights": "bf16",
            "kv_cache_precision": "bf16",
            "serving": {
                "input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "peak_factor": 1.5,
                "slo": {"ttft_ms": 2000, "tpot_ms": 60},
            },
        },
    ).json()  # fmt: skip
    shown = re.findall(r'class="option serve-option" data-sku="([^"]+)" data-gpus="(\d+)"', page.text)
    assert shown == [(o["sku"]["id"], str(o["total_gpus"])) for o in api["options"]]
    assert page.text.count('<svg class="memory-bar"') == len(api["options"]) + len(api["near_misses"])
    assert 'class="mem-kv_cache"' in page.text
    assert "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size" in page.text  # the chat model
    assert "Per million output tokens" in page.text


def test_chinese_page(client: TestClient) -> None:
    page = client.get(f"/serve/results?{QUERY}&lang=zh", headers=HTML)
    assert page.status_code == 200
    assert "每百万输出 token" in page.text and "部署方案" in page.text


def test_bad_input_is_shown_next_to_the_field(client: TestClient) -> None:
    page = client.get("/serve/results?preset=llama-3.1-8b&requests_per_s=abc&output_tokens=0", headers=HTML)
    assert page.status_code == 422
    assert 'id="err-requests_per_s"' in page.text
    page = client.get("/serve/results?preset=llama-3.1-8b&requests_per_s=5&output_tokens=0", headers=HTML)
    assert page.status_code == 422 and 'id="err-output_tokens"' in page.text


def test_an_slo_nothing_meets_lists_near_misses_with_reasons(client: TestClient) -> None:
    page = client.get("/serve/results?preset=llama-3.1-70b&requests_per_s=1&tpot_ms=0.5", headers=HTML)
    assert page.status_code == 200
    assert 'class="option serve-option near-miss"' in page.text and 'class="miss-reason"' in page.text


def test_a_near_miss_reads_in_chinese_on_the_chinese_page(client: TestClient) -> None:
    page = client.get("/serve/results?preset=llama-3.1-70b&requests_per_s=1&tpot_ms=0.5&lang=zh", headers=HTML)
    reasons = re.findall(r'<p class="miss-reason">([^<]+)</p>', page.text)
    # the binding target alone (TTFT is met), in Chinese units: 达不到 TPOT ≤ 0.5 毫秒
    assert reasons and all("达不到 TPOT ≤ 0.5 毫秒：TTFT" in r and "missing" not in r for r in reasons), reasons


def test_no_inline_script_or_style(client: TestClient) -> None:
    for url in ("/serve", f"/serve/results?{QUERY}"):
        text = client.get(url, headers=HTML).text
        assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", text) == [], url
        assert " style=" not in text and "<style" not in text, url


def test_a_deployment_is_quoted_from_its_card(client: TestClient) -> None:
    page = client.get(f"/serve/results?{QUERY}", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, "no quote link on the first deployment"
    form = client.get(link.group(1).replace("&amp;", "&"), headers=HTML)
    assert form.status_code == 200 and 'action="/serve/quote"' in form.text
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    assert hidden["option"] == "1" and hidden["requests_per_s"] == "10"
    posted = client.post(
        "/serve/quote",
        data={**hidden, "name": "Li Wei", "company": "", "email": "li.wei@example.com", "months": "1"},
        headers=HTML,
        follow_redirects=False,
    )
    assert posted.status_code == 303, posted.text[:1000]
    printed = client.get(posted.headers["location"], headers=HTML)
    assert printed.status_code == 200 and "Li Wei" in printed.text


def test_a_quote_with_a_bad_email_comes_back_with_the_error(client: TestClient) -> None:
    page = client.get(f"/serve/results?{QUERY}", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text).group(1).replace("&amp;", "&")
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', client.get(link).text))
    posted = client.post("/serve/quote", data={**hidden, "name": "Li Wei", "email": "nope"}, headers=HTML)
    assert posted.status_code == 422 and 'id="err-email"' in posted.text


def test_a_prompt_beyond_the_models_context_is_shown_next_to_the_field(client: TestClient) -> None:
    """Llama 3.1 8B's config.json allows 131,072 tokens: a million-token prompt is refused on the form."""
    page = client.get("/serve/results?preset=llama-3.1-8b&requests_per_s=1&input_tokens=1000000", headers=HTML)
    assert page.status_code == 422
    assert 'id="err-input_tokens"' in page.text and "131,072" in page.text


def test_a_bad_kv_cache_format_offers_only_the_formats_serving_has(client: TestClient) -> None:
    """Serving keeps the KV cache in fp16, bf16 or fp8; the error must not offer fp32."""
    page = client.get("/serve/results?preset=llama-3.1-8b&requests_per_s=1&kv_cache=fp4", headers=HTML)
    assert page.status_code == 422 and 'id="err-kv_cache"' in page.text
    assert "fp32" not in page.text and "bf16, fp16, fp8" in page.text


def test_a_fine_grained_moe_at_light_load_is_flagged_in_the_pages_language(client: TestClient) -> None:
    query = "preset=qwen3-30b-a3b&requests_per_s=0.2&input_tokens=512&output_tokens=256"
    english = client.get(f"/serve/results?{query}", headers=HTML)
    assert english.status_code == 200, english.text[:2000]
    assert "decode is not validated" in english.text  # the one text, the API's and the page's
    chinese = client.get(f"/serve/results?{query}&lang=zh", headers=HTML)
    assert "解码未经验证" in chinese.text


def test_a_model_is_named_by_its_hugging_face_id_in_both_languages(client: TestClient, hub: StandInHub) -> None:
    form = client.get("/serve?lang=zh", headers=HTML)
    assert 'id="f-hf_id"' in form.text and 'name="source" value="hub"' in form.text
    assert "Hugging Face 模型 ID" in form.text
    traffic = "requests_per_s=5&input_tokens=1024&output_tokens=256"
    page = client.get(f"/serve/results?source=hub&hf_id={QWEN.hf_repo}&{traffic}", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    assert hub.hits == [f"/{QWEN.hf_repo}/resolve/main/config.json"]
    assert f"vllm serve {QWEN.hf_repo} " in page.text  # the engine loads the model the id names
    quote_link = re.search(r'href="/serve/quote\?([^"]+)"', page.text)
    assert quote_link and "hf_id=" in quote_link.group(1)  # the quote page keeps the id
    assert client.get(f"/serve/quote?{quote_link.group(1).replace('&amp;', '&')}", headers=HTML).status_code == 200
    assert len(hub.hits) == 1  # the quote page read the kept config

    missing = client.get(f"/serve/results?source=hub&hf_id=&{traffic}&lang=zh", headers=HTML)
    assert missing.status_code == 422 and 'id="err-hf_id"' in missing.text and "此字段为必填项" in missing.text
    unknown = client.get(f"/serve/results?source=hub&hf_id=nobody/no-such-model&{traffic}&lang=zh", headers=HTML)
    assert unknown.status_code == 422 and 'id="err-hf_id"' in unknown.text
    assert "Hugging Face Hub 上没有模型 nobody/no-such-model" in unknown.text


def test_a_sku_without_kernels_for_the_formats_is_rejected_in_the_pages_language(client: TestClient) -> None:
    """The `kernels` rejection is worded from its code and parameters: Chinese on the Chinese page."""
    query = "preset=llama-3.1-8b&requests_per_s=1&engine=trt-llm&kv_cache=fp8"
    english = client.get(f"/serve/results?{query}", headers=HTML)
    assert english.status_code == 200, english.text[:2000]
    assert re.search(r'data-code="kernels">.*?trt-llm&#39;s FP8 KV cache needs FP8 tensor cores', english.text)
    chinese = client.get(f"/serve/results?{query}&lang=zh", headers=HTML).text
    rejected = re.findall(r'<li data-code="kernels">(.*?)</li>', chinese)
    assert rejected and all("trt-llm 的 FP8 KV 缓存需要 FP8 张量核心" in item for item in rejected), rejected
    assert all('lang="en"' not in item for item in rejected)


def test_the_wizards_inference_leads_to_serving_sizing(client: TestClient) -> None:
    """ "Inference" on the home wizard answers with the same deployments as "Serve a model" for that model,
    not a single request on cards that /serve refuses for it."""
    query = "source=preset&preset=llama-3.1-70b&task=inference&term=monthly&lang=en&tokens=&seq_len=4096"
    wizard = client.get(f"/results?{query}", headers=HTML, follow_redirects=False)
    assert wizard.status_code == 303
    assert wizard.headers["location"].startswith("/serve/results?")
    followed = client.get(wizard.headers["location"], headers=HTML)
    served = client.get("/serve/results?preset=llama-3.1-70b&lang=en", headers=HTML)
    assert followed.status_code == 200 and served.status_code == 200
    skus = re.findall(r'class="option serve-option" data-sku="([^"]+)" data-gpus="(\d+)"', followed.text)
    assert skus and skus == re.findall(r'class="option serve-option" data-sku="([^"]+)" data-gpus="(\d+)"', served.text)
    # A Hub model keeps its id; the single-request estimate stays on the API (task "inference").
    hub = client.get("/results?source=hub&hf_id=Qwen/Qwen2.5-7B&task=inference&lang=zh", headers=HTML,
                     follow_redirects=False)  # fmt: skip
    assert hub.status_code == 303 and "hf_id=Qwen%2FQwen2.5-7B" in hub.headers["location"]
    assert "source=hub" in hub.headers["location"] and "lang=zh" in hub.headers["location"]


def test_each_deployment_names_the_target_nearest_its_limit_at_peak(client: TestClient) -> None:
    """70B at 20 req/s, TTFT ≤ 1 s and the pre-filled TPOT ≤ 50 ms: each card says which of TTFT, TPOT (p90 at
    the peak ÷ target) or throughput (utilization at the peak) is nearest its limit, as the API's figures give."""
    query = "preset=llama-3.1-70b&requests_per_s=20&input_tokens=1000&output_tokens=300&ttft_ms=1000&tpot_ms=50"
    page = client.get(f"/serve/results?{query}&lang=en", headers=HTML)
    assert page.status_code == 200
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "serving",
        "serving": {"input_tokens": 1000, "output_tokens": 300, "requests_per_s": 20, "peak_factor": 1.5,
                    "slo": {"ttft_ms": 1000, "tpot_ms": 50}},
    }  # fmt: skip
    options = client.post("/recommend", json=body).json()["options"]
    shown_options = page.text.split('<ol class="serve-options near">')[0]  # the near misses name theirs as well
    shown = re.findall(r'<p class="binds"><strong>Binding target:</strong> ([^:<]+):', shown_options)
    assert options and len(shown) == len(options)
    for option, named in zip(options, shown, strict=True):
        s = option["serving"]
        shares = {
            "TTFT": s["latency"]["peak"]["ttft_ms"]["p90"] / 1000,
            "TPOT": s["latency"]["peak"]["tpot_ms"]["p90"] / 50,
            "Throughput": s["utilization"]["peak"],
        }
        if named != "Memory":
            assert named == max(shares, key=shares.__getitem__), (named, shares)
        # the page words the API's own `serving.binding` (decided once, in the planner's mapper)
        heading = {"ttft": "TTFT", "tpot": "TPOT", "memory": "Memory"}.get(s["binding"]["target"], "Throughput")
        assert named == heading, (named, s["binding"])
    nodes = options[0]["nodes"]
    answer = re.search(r'<p class="serve-answer lead">([^<]+)</p>', page.text)
    assert answer and answer.group(1).startswith(f"{nodes} server{'s' if nodes > 1 else ''} of "), answer
    assert "sized for 30 requests/s at peak (20 requests/s × 1.5)" in answer.group(1)
