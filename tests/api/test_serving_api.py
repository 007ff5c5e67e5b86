"""task "serving" over HTTP: POST /estimate and POST /recommend on the seeded catalog (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.text import messages

H100_NODE = {"gpu": "h100-80g-sxm", "gpus_per_node": 8}


def _post(client: TestClient, path: str, **body) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _error(client: TestClient, path: str, **body) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    return response.json()


def test_estimate_serving_on_a_node_of_replicas(client: TestClient) -> None:
    result = _post(
        client,
        "/estimate",
        model={"preset": "llama-3.1-8b"},
        task="serving",
        hardware=H100_NODE,
        plan={"tp": 2, "dp": 4},
        serving={"input_tokens": 1024, "output_tokens": 256, "concurrency": 32, "slo": {"tpot_ms": 50}},
    )
    serving = result["serving"]
    assert serving["replicas"] == 4 and serving["gpus_per_replica"] == 2
    assert serving["concurrency"] == 32 and serving["max_concurrency"] >= 32
    assert serving["output_tokens_per_s"] == pytest.approx(serving["output_tokens_per_s_per_gpu"] * 8)
    assert serving["e2e_latency_ms"] == pytest.approx(serving["ttft_ms"] + 255 * serving["tpot_ms"])
    assert serving["meets_slo"] is True and serving["kv_cache_tokens"] > 100_000
    memory = serving["memory_per_gpu_gib"]
    assert memory["total"] == pytest.approx(memory["capacity"], abs=0.05)
    assert result["memory"]["per_gpu_gib"]["kv_cache"] == memory["kv_cache"]
    assert result["plan"]["dp"] == 4 and result["plan"]["tp"] == 2
    assert any("InfiniBand" in line for line in result["assumptions"])


def test_estimate_serving_offered_load_and_default_split(client: TestClient) -> None:
    """Llama 3.1 70B int4 (37.0 GiB of weights at TP 1) on 8 x H100 at 2 requests/s of 2,000 + 500
    tokens: 2 replicas of TP 4, not 4 of TP 2 or 8 of TP 1. All carry the load; the default split takes the one that
    carries the most (`_default_split`). TP 1 holds few sequences (the weights leave 32.2 GiB of KV cache, 105,408
    tokens at 320 KiB a token) and cannot hold one sequence of the model's 131,072-token context (40 GiB of KV), so it
    starts only with --max-model-len capped at its cache. TP 2 and TP 4 are close: before Marlin's A100-class curve
    (app/estimator/serving/step.py MARLIN_LAYER_OVERHEAD_PARAMS) 4 x TP 2 carried 10.41 requests/s against 2 x TP 4's
    10.35; with it a TP 2 shard (428 M weights a block) streams its int4 weights at 0.75 of the ideal rate and carries
    10.23, while TP 4's replicas, whose capacity does not move with the weight stream, keep 10.35. Earlier still (before
    the mixed-chunk step and the closed loop's prefill queue) TP 1 read 1.62 requests/s a replica and won."""
    result = _post(
        client,
        "/estimate",
        model={"preset": "llama-3.1-70b"},
        task="serving",
        precision="bf16",
        weights="int4",
        hardware=H100_NODE,
        serving={"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 2.0},
    )
    serving = result["serving"]
    assert serving["gpus_per_replica"] == 4 and serving["replicas"] == 2
    assert serving["requests_per_s"] == pytest.approx(2.0, rel=1e-3)
    assert serving["memory_per_gpu_gib"]["weights"] < 10  # 37.0 GiB of int4 weights over 4 GPUs


def test_estimate_serving_default_split_carries_the_most(client: TestClient) -> None:
    """Llama-3-70B bf16 at 64 sequences per replica on 8 x H100: 2 x TP 4, not 4 x TP 2 (whose KV cache holds
    ~12 sequences a replica), and more tokens/s than either forced alternative."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "serving",
        "hardware": H100_NODE,
        "serving": {"input_tokens": 1024, "output_tokens": 256, "concurrency": 64},
    }
    chosen = _post(client, "/estimate", **body)["serving"]
    assert (chosen["gpus_per_replica"], chosen["replicas"]) == (4, 2)
    for tp, dp in ((2, 4), (8, 1)):
        forced = _post(client, "/estimate", **body, plan={"tp": tp, "dp": dp})["serving"]
        assert forced["output_tokens_per_s"] < chosen["output_tokens_per_s"]


@pytest.mark.parametrize(
    ("preset", "serving", "field", "limit"),
    [
        ("llama-3-8b", {"input_tokens": 120_000, "output_tokens": 1_000}, "serving.input_tokens", "8,192"),
        ("llama-3.1-8b", {"input_tokens": 1_000_000, "output_tokens": 500}, "serving.input_tokens", "131,072"),
        ("llama-3.1-8b", {"input_tokens": 1_000, "max_model_len": 200_000}, "serving.max_model_len", "131,072"),
    ],
)
@pytest.mark.parametrize("path", ["/estimate", "/recommend"])
def test_lengths_beyond_the_models_context_are_refused(
    client: TestClient, path: str, preset: str, serving: dict, field: str, limit: str
) -> None:
    """config.json max_position_embeddings: Llama 3 8B 8,192, Llama 3.1 8B 131,072 (vLLM refuses longer)."""
    body = {"model": {"preset": preset}, "task": "serving", "serving": {**serving, "concurrency": 1}}
    body["hardware" if path == "/estimate" else "constraints"] = H100_NODE if path == "/estimate" else {}
    problem = _error(client, path, **body)
    assert problem["errors"][0]["field"] == field and limit in problem["detail"]


def test_a_pasted_config_with_yarn_scaling_extends_the_context(client: TestClient) -> None:
    """vLLM derives original_max_position_embeddings x factor for YaRN (Qwen2.5's 32k x 4 = 128k recipe)."""
    config = {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
        "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    }  # fmt: skip
    body = {"model": {"hf_config": config}, "task": "serving", "hardware": H100_NODE}
    ok = _post(client, "/estimate", **body, serving={"input_tokens": 100_000, "output_tokens": 1_000, "concurrency": 1})
    assert ok["serving"]["max_concurrency"] >= 1
    problem = _error(client, "/estimate", **body, serving={"input_tokens": 131_000, "output_tokens": 1_000})
    assert problem["errors"][0]["field"] == "serving.input_tokens" and "131,072" in problem["detail"]


def test_a_sequence_longer_than_the_kv_cache_names_the_capacity(client: TestClient) -> None:
    """Llama-3.1-70B int4 on one H100 holds ~106k tokens of KV cache: a 120k prompt is refused with both numbers."""
    problem = _error(
        client, "/estimate", model={"preset": "llama-3.1-70b"}, task="serving", weights="int4",
        hardware={"gpu": "h100-80g-sxm", "gpus_per_node": 1},
        serving={"input_tokens": 120_000, "output_tokens": 1_000, "concurrency": 1},
    )  # fmt: skip
    assert problem["errors"][0]["field"] == "serving.input_tokens"
    assert "one sequence of 121,000 tokens does not fit" in problem["detail"]


def test_estimate_serving_pipelines_a_model_no_server_holds(client: TestClient) -> None:
    """Llama-3.1-405B bf16 on 2 servers of 8 x H100: TP 8 per server, 2 pipeline stages, as the forced plan."""
    body = {
        "model": {"preset": "llama-3.1-405b"},
        "task": "serving",
        "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8, "nodes": 2},
        "serving": {"input_tokens": 1024, "output_tokens": 256, "concurrency": 32},
    }
    chosen = _post(client, "/estimate", **body)
    assert (chosen["plan"]["tp"], chosen["plan"]["pp"], chosen["plan"]["dp"]) == (8, 2, 1)
    forced = _post(client, "/estimate", **body, plan={"tp": 8, "pp": 2, "dp": 1})
    assert chosen["serving"] == forced["serving"] and chosen["serving"]["max_concurrency"] >= 32


def test_estimate_serving_without_slo_gives_null_meets_slo(client: TestClient) -> None:
    result = _post(
        client, "/estimate", model={"preset": "qwen2.5-7b"}, task="serving", hardware={"gpu": "l40s-48g"},
        serving={"concurrency": 4},
    )  # fmt: skip
    assert result["serving"]["meets_slo"] is None and result["serving"]["ttft_ms"] > 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"weights": "int4", "hardware": {"gpu": "v100-32g-sxm"}}, "weights"),
        ({"precision": "fp8", "hardware": {"gpu": "a100-80g-sxm"}}, "precision"),
        ({"precision": "fp32", "hardware": {"gpu": "a100-80g-sxm"}}, "precision"),
        ({"plan": {"tp": 3}, "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 3}}, "plan.tp"),
        ({"plan": {"tp": 2, "dp": 2}, "hardware": H100_NODE}, "plan"),
        ({"serving": {"concurrency": 4, "requests_per_s": 1}, "hardware": H100_NODE}, "serving"),
        ({"serving": {"input_tokens": 0}, "hardware": H100_NODE}, "serving.input_tokens"),
        ({"serving": {"engine": "tgi"}, "hardware": H100_NODE}, "serving.engine"),
        ({"serving": {"max_model_len": 100}, "hardware": H100_NODE}, "serving.max_model_len"),
        ({"weights": "nf4", "hardware": H100_NODE}, "weights"),
        ({"task": "lora", "weights": "int4", "hardware": H100_NODE}, "body"),
    ],
)
def test_bad_serving_input_is_422_naming_the_field(client: TestClient, body: dict, field: str) -> None:
    problem = _error(client, "/estimate", **({"model": {"preset": "llama-3.1-8b"}, "task": "serving"} | body))
    fields = [e.get("field") or ".".join(str(p) for p in e.get("loc", [])) for e in problem.get("errors", [])]
    assert any(f == field or f.endswith(field) for f in fields), problem


def test_a_model_too_large_for_the_hardware_is_a_clear_422(client: TestClient) -> None:
    problem = _error(
        client, "/estimate", model={"preset": "llama-3.1-405b"}, task="serving", hardware={"gpu": "l40s-48g"}
    )
    assert "no room for a KV cache" in problem["detail"]


def test_recommend_serving_returns_cheapest_deployments_with_launch_and_cost(client: TestClient) -> None:
    result = _post(
        client,
        "/recommend",
        model={"preset": "llama-3.1-8b"},
        task="serving",
        serving={"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "slo": {"tpot_ms": 60}},
    )
    assert result["options"], result
    top = result["options"][0]
    assert top["rank"] == 1 and top["serving"]["meets_slo"] is True
    assert top["serving"]["headroom"] >= 1.0
    assert float(top["cost"]["per_million_output_tokens"]) > 0
    assert float(top["cost"]["monthly_effective"]) > 0
    assert top["launch"]["command"].startswith("vllm serve meta-llama/")
    assert "--max-num-seqs" in top["launch"]["command"] and top["launch"]["needs_infiniband"] is False
    costs = [float(o["cost"]["monthly_effective"]) for o in result["options"]]
    assert costs == sorted(costs)


def test_recommend_serving_slo_nothing_meets_gives_near_misses(client: TestClient) -> None:
    result = _post(
        client,
        "/recommend",
        model={"preset": "llama-3.1-70b"},
        task="serving",
        serving={"requests_per_s": 1, "slo": {"tpot_ms": 0.5}},
    )
    assert result["options"] == []
    assert result["near_misses"] and all(m["miss_reason"] for m in result["near_misses"])
    for miss in result["near_misses"]:
        (reason,) = miss["misses"]  # the latency target as a code with the figures reached
        assert reason["code"] in ("slo_one_request", "slo_peak") and reason["params"]["slo_tpot_ms"] == 0.5
        assert miss["miss_reason"] == messages.misses([(reason["code"], reason["params"])])
        assert f"TPOT {reason['params']['tpot_ms']:.1f} ms" in miss["miss_reason"]


def test_a_serving_option_is_quoted_like_any_other(client: TestClient) -> None:
    result = _post(
        client,
        "/recommend",
        model={"preset": "llama-3.1-8b"},
        task="serving",
        serving={"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "slo": {"tpot_ms": 60}},
    )
    top = result["options"][0]
    response = client.post(
        "/quotes",
        json={
            "sku_id": top["sku"]["id"],
            "quantity": top["cost"]["units"],
            "term": "monthly",
            "workload": {
                "model": {"preset": "llama-3.1-8b"},
                "task": "serving",
                "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "slo": {"tpot_ms": 60}},
            },
            "plan": top["plan"],
            "customer": {"name": "Li Wei", "email": "li.wei@example.com"},
        },
    )
    assert response.status_code == 201, response.text
    quote = response.json()
    assert quote["total"] == top["cost"]["monthly_effective"]
    assert quote["workload"]["task"] == "serving" and quote["workload"]["serving"]["requests_per_s"] == 10
    # like a training option, the option carries that POST /quotes body, and its quote bills cost.job_total
    # (one term of the deployment)
    ready = top["quote"] | {"customer": {"name": "Li Wei", "email": "li.wei@example.com"}}
    response = client.post("/quotes", json=ready)
    assert response.status_code == 201, response.text
    assert response.json()["total"] == top["cost"]["job_total"] == top["cost"]["monthly_effective"]


def _quote(client: TestClient, workload: dict, plan: dict) -> str:
    """POST /quotes for one A100 40 GB card; the 422 text."""
    customer = {"name": "Li Wei", "email": "li.wei@example.com"}
    body = {"sku_id": "a100-40g-pcie-card", "quantity": 1, "term": "monthly", "customer": customer}
    response = client.post("/quotes", json=body | {"workload": workload, "plan": plan})
    assert response.status_code == 422, response.text
    return response.text


def test_a_serving_quote_whose_plan_does_not_fit_the_sku_is_refused(client: TestClient) -> None:
    """Llama 3.1 405B in bf16 is ~756 GiB of weights: one A100 40 GB card holds no KV cache, so the quote is a
    422 naming the weights per GPU and the card's memory (not a 201 for a deployment that cannot start)."""
    text = _quote(client, {"model": {"preset": "llama-3.1-405b"}, "task": "serving"}, {"dp": 1, "tp": 1})
    assert "hardware" in text and "GiB per GPU" in text and "40 GiB" in text


def test_a_serving_quote_without_kernels_for_its_formats_is_refused(client: TestClient) -> None:
    """FP8 math on an A100 (no FP8 tensor cores): the quote is refused on `precision`, as /estimate is."""
    workload = {"model": {"preset": "llama-3.1-8b"}, "task": "serving", "precision": "fp8"}
    text = _quote(client, workload, {"dp": 1, "tp": 1})
    assert "precision" in text and "FP8" in text


def test_estimate_with_a_plan_that_leaves_no_kv_room_is_a_422_on_hardware(client: TestClient) -> None:
    """docs/serving.md: a model that leaves no room for a KV cache is a 422 on `hardware`, with a plan too."""
    body = _error(
        client,
        "/estimate",
        model={"preset": "llama-3.1-70b"},
        task="serving",
        hardware={"gpu": "h100-80g-sxm", "gpus_per_node": 1},
        plan={"tp": 1, "dp": 1},
    )
    assert "hardware" in str(body) and "GiB per GPU" in str(body)


def test_serving_objective_fastest_ranks_by_request_latency(client: TestClient) -> None:
    """constraints.objective "fastest": options in order of end-to-end latency at the offered load; the
    default ranks by cost per token, so the two orders differ on this catalog."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 5},
        "constraints": {"limit": 10},
    }
    fastest = _post(client, "/recommend", **(body | {"constraints": {"limit": 10, "objective": "fastest"}}))
    latencies = [o["serving"]["e2e_latency_ms"] for o in fastest["options"]]
    assert len(latencies) > 2
    assert latencies == sorted(latencies, key=lambda x: float(f"{x:.3g}"))
    cheapest = _post(client, "/recommend", **body)
    assert [o["sku"]["id"] for o in cheapest["options"]] != [o["sku"]["id"] for o in fastest["options"]]


def test_a_pipeline_across_servers_names_the_fabric_add_on_its_price_leaves_out(client: TestClient) -> None:
    """Llama 3.1 405B in bf16 needs two 8 x H100 servers per replica joined by InfiniBand: the SKU's
    InfiniBand add-on is priced on consultation (app/catalog/seed_data.py ADDONS), so, as for a multi-node
    training option, the option warns that the cost leaves it out and the launch notes say to rent it."""
    result = _post(
        client,
        "/recommend",
        model={"preset": "llama-3.1-405b"},
        task="serving",
        serving={"input_tokens": 1024, "output_tokens": 256, "concurrency": 8},
    )
    piped = [o for o in result["options"] + result["near_misses"] if o["launch"]["needs_infiniband"]]
    assert piped
    for option in piped:
        assert "fabric_priced_on_request" in [w["code"] for w in option["warnings"]]
        assert any("add-on" in note for note in option["launch"]["notes"])
    single = [o for o in result["options"] if not o["launch"]["needs_infiniband"]]
    assert all("fabric_priced_on_request" not in [w["code"] for w in o["warnings"]] for o in single)


def test_serving_defaults_are_listed_when_no_serving_block_is_given(client: TestClient) -> None:
    """Without a serving block the lengths are the defaults (1024 in, 256 out): the answer says so."""
    result = _post(client, "/estimate", model={"preset": "llama-3.1-8b"}, task="serving", hardware=H100_NODE)
    assert any("no serving block" in a and "1024" in a and "256" in a for a in result["assumptions"])
    given = _post(
        client, "/estimate", model={"preset": "llama-3.1-8b"}, task="serving", hardware=H100_NODE,
        serving={"input_tokens": 1024},
    )  # fmt: skip
    assert not any("no serving block" in a for a in given["assumptions"])


@pytest.mark.parametrize("lever", [{"ep": 2}, {"zero_stage": 3}, {"cp": 2}])
def test_a_training_lever_in_a_serving_plan_is_a_422_not_silently_ignored(client: TestClient, lever: dict) -> None:
    """Serving sizes tp × pp per replica and dp replicas; an expert/context-parallel degree or a ZeRO stage
    would be silently ignored, so it is a 422 naming the field."""
    plan = {"tp": 1, "dp": 8} | lever
    body = _error(client, "/estimate", model={"preset": "llama-3.1-8b"}, task="serving", hardware=H100_NODE, plan=plan)
    assert f"plan.{next(iter(lever))}" in str(body)


def test_fine_grained_moe_at_low_concurrency_says_it_is_not_validated(client: TestClient) -> None:
    """DeepSeek-V3 decoding one sequence: outside the validated range (tests/estimator/test_serving_moe_regime.py
    cites the published measurements), so the answer carries the code; a dense model at the same load does not."""
    body = {
        "task": "serving", "precision": "fp8", "weights": "fp8",
        "serving": {"input_tokens": 16, "output_tokens": 200, "concurrency": 1, "engine": "sglang"},
        "hardware": {"gpu": "h200-141g-sxm", "nodes": 1}, "plan": {"tp": 8, "dp": 1},
    }  # fmt: skip
    moe = _post(client, "/estimate", model={"preset": "deepseek-v3"}, **body)
    codes = {w["code"]: w["message"] for w in moe["warnings"]}
    assert "not validated" in codes["moe_low_concurrency_unvalidated"]
    dense = _post(client, "/estimate", model={"preset": "llama-3.1-70b"}, **body)
    assert "moe_low_concurrency_unvalidated" not in {w["code"] for w in dense["warnings"]}


def test_recommended_fine_grained_moe_options_at_light_load_carry_the_warning(client: TestClient) -> None:
    """Each option is judged at its own operating point: a light load keeps a few sequences in flight."""
    result = _post(
        client,
        "/recommend",
        model={"preset": "qwen3-30b-a3b"},
        task="serving",
        serving={"input_tokens": 512, "output_tokens": 256, "requests_per_s": 0.2},
    )
    assert result["options"], result
    for option in result["options"]:
        assert option["serving"]["concurrency"] <= 64
        assert "moe_low_concurrency_unvalidated" in {w["code"] for w in option["warnings"]}


def test_serving_rejections_carry_their_code_and_parameters(client: TestClient) -> None:
    """TensorRT-LLM's FP8 KV cache needs FP8 tensor cores (SM89+): GPUs without them are rejected with code
    `kernels`, the gap and its names as parameters, and the English reason rendered from them."""
    result = _post(
        client,
        "/recommend",
        model={"preset": "llama-3.1-8b"},
        task="serving",
        kv_cache_precision="fp8",
        serving={"requests_per_s": 1, "engine": "trt-llm"},
    )
    kernels = [r for r in result["rejected"] if r["code"] == "kernels"]
    assert kernels, result["rejected"]
    for rejected in kernels:
        assert rejected["params"]["gap"] == "trt_fp8_kv" and rejected["params"]["engine"] == "trt-llm"
        assert rejected["reason"] == (
            f"trt-llm's FP8 KV cache needs FP8 tensor cores (SM89+); {rejected['params']['gpu']} has none"
        )


def test_serving_warnings_carry_the_figures_their_text_names(client: TestClient) -> None:
    """/estimate of a deployment that misses its TPOT target: the `slo_missed` warning keeps its English
    `message` and carries the figures in `params`, from which the catalog words it in English and Chinese."""
    result = _post(
        client, "/estimate", model={"preset": "llama-3.1-70b"}, task="serving", hardware=H100_NODE,
        plan={"tp": 8, "dp": 1}, serving={"concurrency": 64, "slo": {"tpot_ms": 1}},
    )  # fmt: skip
    (slo,) = [w for w in result["warnings"] if w["code"] == "slo_missed"]
    assert "TPOT" in slo["message"] and slo["params"]["slo_tpot_ms"] == 1
    assert slo["params"]["tpot_ms"] > 1 and slo["params"]["concurrency"] == result["serving"]["concurrency"]
    assert f"TPOT {slo['params']['tpot_ms']:.1f} ms, missing TPOT ≤ 1 ms" in messages.warning(
        "slo_missed", slo["params"]
    )
    assert "达不到 TPOT ≤ 1 毫秒" in messages.warning("slo_missed", slo["params"], "zh")
