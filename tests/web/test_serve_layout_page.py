"""The serving pages state a deployment's layout as the API plans it: replicas × TP × PP where a replica spans
pipeline stages (not TP of all its GPUs), and each pool's replicas × TP for separate prefill and decode pools; the
disaggregation hint names every engine the API runs it on; the serving quote form ticks the add-ons of the option's
quote body and hints at the chosen term's months; a launch download for a rank that is not there answers a 422
problem naming `option`."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from tests.web.test_serve_quote import HTML, text_of

# DeepSeek-V3 at 5 requests/s (the review's R5 query): one replica spans two 8-GPU servers, TP 8 × PP 2 under vLLM
# (SGLang runs it with DP attention and expert parallel over both servers: `test_dp_attention_layout_is_worded`)
PIPELINED = (
    "preset=deepseek-v3&requests_per_s=5&input_tokens=2000&output_tokens=500&engine=vllm&ttft_ms=3000&tpot_ms=80"
)
POOLED = (
    "preset=llama-3.1-70b&requests_per_s=10&input_tokens=8000&output_tokens=300&engine=vllm&weights=fp8"
    "&ttft_ms=1500&tpot_ms=40&disaggregated=yes"
)
LAYOUT_PP = {
    "en": "{replicas} replicas × TP {tp} × PP {pp} = {gpus} GPUs",
    "zh": "{replicas} 个副本 × TP {tp} × PP {pp} = {gpus} 张 GPU",
}
LAYOUT_POOLS = {
    "en": "{prefill} prefill × TP {ptp} + {decode} decode × TP {dtp} = {gpus} GPUs",
    "zh": "{prefill} 个预填充副本 × TP {ptp} + {decode} 个解码副本 × TP {dtp} = {gpus} 张 GPU",
}


def _page_and_first(client: TestClient, query: str, **serving: object) -> tuple[str, dict[str, object]]:
    """The results page's text and the API's first option for the same ask."""
    page = client.get(f"/serve/results?{query}", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    return text_of(page.text), _api_first(client, **serving)


def _api_first(client: TestClient, **serving: object) -> dict[str, object]:
    body = {"model": {"preset": serving.pop("preset")}, "task": "serving", **serving.pop("top", {})}  # type: ignore[dict-item]
    answer = client.post("/recommend", json={**body, "serving": serving})
    assert answer.status_code == 200, answer.text[:2000]
    return answer.json()["options"][0]  # type: ignore[no-any-return]


LAYOUT_EP = {
    "en": "× DP attention and expert parallel {tp} = {gpus} GPUs",
    "zh": "× 数据并行注意力与专家并行 {tp} = {gpus} 张 GPU",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dp_attention_layout_is_worded(client: TestClient, lang: str) -> None:
    query = PIPELINED.replace("engine=vllm", "engine=sglang")
    text, first = _page_and_first(
        client, f"{query}&lang={lang}", preset="deepseek-v3", requests_per_s=5, input_tokens=2000,
        output_tokens=500, engine="sglang", slo={"ttft_ms": 3000, "tpot_ms": 80},
    )  # fmt: skip
    plan = first["plan"]
    assert isinstance(plan, dict) and plan["ep"] == plan["tp"] > 1, plan
    assert LAYOUT_EP[lang].format(tp=plan["tp"], gpus=first["total_gpus"]) in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_replica_over_pipeline_stages_shows_tp_and_pp(client: TestClient, lang: str) -> None:
    text, first = _page_and_first(
        client, f"{PIPELINED}&lang={lang}", preset="deepseek-v3", requests_per_s=5, input_tokens=2000,
        output_tokens=500, engine="vllm", slo={"ttft_ms": 3000, "tpot_ms": 80},
    )  # fmt: skip
    plan, served = first["plan"], first["serving"]
    assert isinstance(plan, dict) and isinstance(served, dict)
    assert plan["pp"] > 1, plan  # the case the review found: a replica over two servers
    expected = LAYOUT_PP[lang].format(
        replicas=served["replicas"], tp=plan["tp"], pp=plan["pp"], gpus=first["total_gpus"]
    )
    assert text.count(expected) >= 2, (expected, text[:3000])  # the headline and the first card
    assert f"TP {served['gpus_per_replica']} " not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_separate_pools_show_each_pool(client: TestClient, lang: str) -> None:
    text, first = _page_and_first(
        client, f"{POOLED}&lang={lang}", preset="llama-3.1-70b", requests_per_s=10, input_tokens=8000,
        output_tokens=300, engine="vllm", disaggregated=True, slo={"ttft_ms": 1500, "tpot_ms": 40},
        top={"weights": "fp8"},
    )  # fmt: skip
    pools = first["serving"]["pools"]  # type: ignore[index]
    expected = LAYOUT_POOLS[lang].format(
        prefill=pools["prefill"]["replicas"], ptp=pools["prefill"]["tp"], decode=pools["decode"]["replicas"],
        dtp=pools["decode"]["tp"], gpus=first["total_gpus"],
    )  # fmt: skip
    assert text.count(expected) >= 2, (expected, text[:3000])


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", ("SGLang", "vLLM", "TensorRT-LLM")), ("zh", ("SGLang", "vLLM", "TensorRT-LLM", "分离的资源池"))],
)
def test_the_disaggregation_hint_names_every_engine(client: TestClient, lang: str, words: tuple[str, ...]) -> None:
    hint = re.search(r'id="hint-disaggregated"[^>]*>([^<]+)<', client.get(f"/serve?lang={lang}", headers=HTML).text)
    assert hint, "no hint"
    assert all(word in hint.group(1) for word in words), hint.group(1)
    assert "need the SGLang engine" not in hint.group(1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_serving_quote_form_ticks_the_options_addons(client: TestClient, lang: str) -> None:
    page = client.get(f"/serve/results?{PIPELINED}&lang={lang}", headers=HTML)
    link = re.search(r'href="(/serve/quote\?[^"]+option=1)"', page.text)
    assert link, page.text[:2000]
    form = client.get(html.unescape(link.group(1)), headers=HTML)
    assert form.status_code == 200
    checked = re.findall(r'name="addons" value="([^"]+)" id="[^"]+" checked', form.text)
    assert checked == ["infiniband-400g"], re.findall(r'<input type="checkbox"[^>]+>', form.text)
    hint = re.search(r'id="hint-months">([^<]+)<', form.text)
    assert hint and hint.group(1) == {"en": "A monthly term takes whole months (1, 2, 3, …).",
                                      "zh": "月付租期按整月计（1、2、3……）。"}[lang]  # fmt: skip
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    posted = client.post(
        "/serve/quote",
        data={**hidden, "addons": checked, "name": "Li Wei", "email": "li.wei@example.com", "months": "1"},
        headers=HTML,
        follow_redirects=False,
    )
    assert posted.status_code == 303, text_of(posted.text)[:2000]


@pytest.mark.parametrize("rank", ["99", "-1", "abc", "0"])
def test_a_launch_download_for_a_missing_rank_is_a_problem(client: TestClient, rank: str) -> None:
    query = f"/results/launch.json?preset=llama-3-8b&task=lora&tokens_b=1&option={rank}"
    answer = client.get(query, headers={"accept": "application/json"})
    assert answer.status_code == 422, answer.text[:500]
    assert answer.headers["content-type"].startswith("application/problem+json")
    problem = answer.json()
    n = len(client.post("/recommend", json={"model": {"preset": "llama-3-8b"}, "task": "lora", "tokens": 1e9})
            .json()["options"])  # fmt: skip
    assert problem["errors"][0]["field"] == "option" and problem["errors"][0]["ctx"] == {"min": 1, "max": n}
    assert f"1 to {n}" in problem["detail"]
    browser = client.get(query, headers=HTML)  # a person following a stale link still gets the page
    assert browser.status_code == 404 and "text/html" in browser.headers["content-type"]


SPARE = {
    "en": "The load needs {needed} of the {replicas} replicas at peak; the servers hold {spare} spare",
    "zh": "峰值负载需要 {replicas} 个副本中的 {needed} 个；服务器上其余 {spare} 个为备用",
}
KV_RUNS = {"en": "it runs {seqs} requests of these lengths at once", "zh": "同时运行 {seqs} 个此长度的请求"}
LLAMA_70B_INT4 = (
    "preset=llama-3.1-70b&requests_per_s=1&input_tokens=2000&output_tokens=300&engine=vllm&weights=int4"
    "&kv_cache=fp8&ttft_ms=2000&tpot_ms=60"
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_replicas_the_load_needs_and_the_spare_are_shown_apart(client: TestClient, lang: str) -> None:
    """Review R8-3: an H100 server of Llama-3.1-70B int4 at 1 request/s holds 8 replicas, 2 of which the load needs;
    the card says both (serving.replicas, serving.replicas_needed) and the sequences a replica runs at once as its
    launch admits them (serving.max_concurrency, --max-num-seqs)."""
    page = client.get(f"/serve/results?{LLAMA_70B_INT4}&lang={lang}", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    text = text_of(page.text)
    answer = client.post("/recommend", json={
        "model": {"preset": "llama-3.1-70b"}, "task": "serving", "weights": "int4", "kv_cache_precision": "fp8",
        "serving": {"requests_per_s": 1, "input_tokens": 2000, "output_tokens": 300, "engine": "vllm",
                    "slo": {"ttft_ms": 2000, "tpot_ms": 60}}})  # fmt: skip
    options = answer.json()["options"]
    spare = [o["serving"] for o in options if o["serving"]["replicas_needed"] < o["serving"]["replicas"]]
    assert spare, [(o["serving"]["replicas"], o["serving"]["replicas_needed"]) for o in options]
    for s in spare:
        needed, replicas = s["replicas_needed"], s["replicas"]
        assert SPARE[lang].format(needed=needed, replicas=replicas, spare=replicas - needed) in text
    for option in options:
        seqs = re.search(r"--max-num-seqs (\d+)", option["launch"]["command"])
        assert seqs is not None and int(seqs.group(1)) == option["serving"]["max_concurrency"]
        assert KV_RUNS[lang].format(seqs=f"{option['serving']['max_concurrency']:,}") in text
