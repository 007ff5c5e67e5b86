"""Every refusal of a quote's plan (it does not fit the SKU's cards, its host RAM, no stack runs it, a serving replica
or a disaggregated pool does not fit) carries a code of app/text/quote_check_words.py with its figures: the quote form
words it in the page's language (app/web/quote_form.py), where these were English sentences from the memory
package's helpers or the estimator's own message, Chinese page or not."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.text import messages
from tests.api.test_disaggregated_quotes import disaggregated_option
from tests.quotes.test_quote_estimate import CUSTOMER
from tests.web.test_serve_chinese import allowed_names, english_runs

SERVING_405B = {"model": {"preset": "llama-3.1-405b"}, "task": "serving"}


def _refused(client: TestClient) -> dict[str, dict[str, Any]]:
    training = client.post("/recommend", json={"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune"})
    quote = training.json()["options"][0]["quote"]
    plan = quote["plan"]
    whole = plan["global_batch"] // plan["dp"]  # the whole batch in one micro-batch, nothing recomputed
    lora = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}
    pooled = disaggregated_option(client)["quote"]
    big = pooled["workload"] | {"model": {"preset": "llama-3.1-405b"}, "precision": "bf16", "weights": "bf16"}
    bodies = {
        "gpu memory": {**quote, "plan": {**plan, "micro_batch": whole, "recompute": "none"}},
        "host ram unknown": {"sku_id": "a100-40g-pcie-card", "quantity": 1, "term": "monthly", "workload": lora,
                             "plan": {"dp": 1, "zero_stage": 3, "offload": "optimizer"}},
        "no stack": {"sku_id": "a100-80g-sxm-8x", "quantity": 1, "term": "monthly",
                     "workload": {**lora, "task": "qlora"}, "plan": {"dp": 4, "tp": 2, "micro_batch": 1}},
        "serving replica": {"sku_id": "h100-80g-sxm-8x", "quantity": 1, "term": "monthly", "workload": SERVING_405B,
                            "plan": {"tp": 8, "dp": 1}},
        "pool": {**pooled, "workload": big},
    }  # fmt: skip
    errors = {}
    for name, body in bodies.items():
        response = client.post("/quotes", json=body | {"customer": CUSTOMER})
        assert response.status_code == 422, (name, response.text)
        errors[name] = response.json()["errors"][0]
    return errors


def test_every_plan_refusal_is_a_code_worded_in_english_and_chinese(client: TestClient) -> None:
    names = [*allowed_names(client), "llama-3.1-405b", "llama-3.1-70b", "llama-3.1-8b", "qlora", "lora", "sglang"]
    names = sorted(set(names), key=len, reverse=True)
    for name, error in _refused(client).items():
        code, params = error["type"], error.get("params", {})
        assert code in messages.QUOTE_CHECKS["en"], (name, error)
        assert messages.quote_check(code, params) == error["message"], name
        zh = messages.quote_check(code, params, "zh")
        assert not english_runs(zh, names), (name, zh)


def test_the_host_ram_refusals_word_the_load_or_the_offload() -> None:
    host = {"sku": "h100-80g-sxm-8x", "host_gib": 900.0, "host_ram_gib": 512, "limit_gib": 448.0, "reserve_gib": 64.0}
    load = {"loading": True, "load_gib": 900.0, "copies": 8, "model_gib": 112.5}
    for code in ("plan_host_ram", "plan_host_ram_unknown"):
        assert "Offload needs 900 GiB" in messages.quote_check(code, host | {"loading": False, "offload_gib": 900.0})
        assert "Loading the model needs 900 GiB" in messages.quote_check(code, host | load)
        assert "加载模型每个节点需要 900 GiB" in messages.quote_check(code, host | load, "zh")
