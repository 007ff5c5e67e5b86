"""Serving estimator: memory formats, KV capacity, step physics, batching, load and SLO handling."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import (
    REQUEST_OVERHEAD_S,
    ServingConfig,
    estimate_serving,
    expected_experts_touched,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    kv_cache_tokens,
    serving_memory,
    weight_bytes_per_param,
    weights_bytes,
)
from app.estimator.specs import GIB, Cluster, EstimatorError

H100 = get_gpu("h100-80g-sxm")
A100 = get_gpu("a100-80g-sxm")
V100 = get_gpu("v100-32g-sxm")
L40S = get_gpu("l40s-48g")
LLAMA3_8B = get_preset("llama-3.1-8b").model
LLAMA3_70B = get_preset("llama-3.1-70b").model
MIXTRAL = get_preset("mixtral-8x7b").model
NODE = Cluster(gpu=H100, gpus_per_node=8)


def serve(model=LLAMA3_8B, cluster=NODE, tp=1, replicas=1, simulate=True, **kw):
    kw.setdefault("input_tokens", 512)
    kw.setdefault("output_tokens", 256)
    return estimate_serving(model, ServingConfig(**kw), cluster, tp=tp, replicas=replicas, simulate=simulate)


def test_int4_weights_count_their_group_scales() -> None:
    """4 bits + a 16-bit scale and a 4-bit zero per 128 weights = 0.5195 bytes; embedding and head stay 16-bit."""
    assert weight_bytes_per_param("int4") == pytest.approx(0.5 + 2.5 / 128)
    assert weight_bytes_per_param("int4", 32) == pytest.approx(0.5 + 2.5 / 32)
    bf16, int4 = weights_bytes(LLAMA3_8B, "bf16"), weights_bytes(LLAMA3_8B, "int4")
    assert bf16 / GIB == pytest.approx(14.96, rel=0.01)  # vLLM: "Loading model weights took 14.9888 GB" (GiB)
    assert 0.25 * bf16 < int4 < 0.4 * bf16  # 2 × 0.53 GB of 16-bit embedding and head remain


def test_kv_cache_per_token_gqa_and_mla() -> None:
    """Llama 3 8B: 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 128 KiB; DeepSeek-V3 MLA caches 512 + 64 values."""
    assert kv_bytes_per_token(LLAMA3_8B, "bf16") == 131072
    assert kv_bytes_per_token(LLAMA3_8B, "fp8") == 65536
    deepseek = get_preset("deepseek-v3").model
    assert kv_bytes_per_token(deepseek, "bf16", mla_cache_values=576) == 61 * 576 * 2
    # TP splits KV heads; with more ranks than KV heads each rank keeps one head
    assert kv_bytes_per_token_per_gpu(LLAMA3_70B, "bf16", 8, 1) == 80 * 2 * 1 * 128 * 2
    assert kv_bytes_per_token_per_gpu(LLAMA3_70B, "bf16", 16, 1) == kv_bytes_per_token_per_gpu(LLAMA3_70B, "bf16", 8, 1)


def test_paged_capacity_follows_the_memory_budget() -> None:
    """More utilisation, FP8 KV and more TP ranks all enlarge the cache; the block size rounds it."""
    base = ServingConfig(input_tokens=512, output_tokens=256)
    tokens = kv_cache_tokens(LLAMA3_8B, base, H100, 1, 1)
    assert tokens % 16 == 0
    assert kv_cache_tokens(LLAMA3_8B, replace(base, gpu_memory_utilization=0.95), H100, 1, 1) > tokens
    assert kv_cache_tokens(LLAMA3_8B, replace(base, kv_cache_precision="fp8"), H100, 1, 1) > 1.9 * tokens
    # 80 GB x 0.9 minus 15 GiB of weights and ~2 GiB of workspace: ~55 GiB / 128 KiB ≈ 450k tokens
    assert 400_000 < tokens < 500_000


def test_decode_at_batch_one_is_bandwidth_bound_and_batching_amortises_the_weights() -> None:
    one = serve(concurrency=1)
    many = serve(concurrency=64)
    roofline_ms = weights_bytes(LLAMA3_8B, "bf16") / H100.hbm_bytes_per_s * 1e3
    assert roofline_ms < one.tpot_ms < 1.6 * roofline_ms + 3
    assert one.bound == "memory"
    assert many.output_tokens_per_s > 20 * one.output_tokens_per_s
    assert many.tpot_ms > one.tpot_ms


def test_prefill_pays_the_quadratic_attention() -> None:
    short, long_ = serve(concurrency=1, input_tokens=2048), serve(concurrency=1, input_tokens=32768)
    assert long_.ttft_ms > 16 * short.ttft_ms  # 16x the tokens, plus the s^2 attention term


def test_tensor_parallel_all_reduce_latency_does_not_shrink() -> None:
    tp2 = serve(LLAMA3_70B, tp=2, concurrency=1).tpot_ms
    tp8 = serve(LLAMA3_70B, tp=8, concurrency=1).tpot_ms
    assert 0.25 * tp2 < tp8 < 0.5 * tp2


def test_moe_decode_reads_the_experts_the_batch_touches() -> None:
    assert expected_experts_touched(8, 2, 1) == pytest.approx(2)
    assert expected_experts_touched(8, 2, 64) == pytest.approx(8, rel=1e-6)
    assert 2 < expected_experts_touched(128, 8, 4) < 32
    one, batch = serve(MIXTRAL, tp=2, concurrency=1), serve(MIXTRAL, tp=2, concurrency=32)
    assert batch.tpot_ms > 1.5 * one.tpot_ms  # batch 1 reads 2 of 8 experts, batch 32 all 8


def test_static_batching_is_slower_than_continuous_for_long_mixed_work() -> None:
    continuous = serve(concurrency=64, input_tokens=2048, output_tokens=512)
    static = serve(concurrency=64, input_tokens=2048, output_tokens=512, batching="static")
    assert static.ttft_ms > continuous.ttft_ms


def test_littles_law_and_deployment_totals() -> None:
    est = serve(concurrency=32, replicas=3, tp=2)
    assert est.requests_per_s == pytest.approx(3 * 32 / (est.e2e_latency_ms / 1e3))
    assert est.output_tokens_per_s == pytest.approx(est.requests_per_s * 256)
    assert est.output_tokens_per_s_per_gpu == pytest.approx(est.output_tokens_per_s / 6)
    assert est.e2e_latency_ms == pytest.approx(est.ttft_ms + 255 * est.tpot_ms)


def test_offered_load_finds_the_operating_point_and_the_replicas() -> None:
    light = serve(requests_per_s=2.0, simulate=False)  # the steady state: Little's law
    assert light.requests_per_s == pytest.approx(2.0, rel=1e-3)
    # in the engine: the server's fixed cost per request (REQUEST_OVERHEAD_S) is latency that holds no sequence slot
    in_engine_s = light.e2e_latency_ms / 1e3 - REQUEST_OVERHEAD_S["vllm"]
    assert light.concurrency == pytest.approx(2.0 * in_engine_s, rel=1e-3)
    heavy = serve(requests_per_s=500.0, slo_tpot_ms=40)
    assert heavy.replicas_needed is not None and heavy.replicas_needed > 1
    assert heavy.requests_per_s < 500
    assert any("carry at most" in note.text for note in heavy.notes)
    enough = serve(requests_per_s=500.0, slo_tpot_ms=40, replicas=heavy.replicas_needed)
    assert enough.requests_per_s == pytest.approx(500, rel=1e-3) and enough.meets_slo


def test_slo_is_judged_and_absent_without_targets() -> None:
    assert serve(concurrency=8).meets_slo is None
    assert serve(concurrency=8, slo_tpot_ms=1000, slo_ttft_ms=5000).meets_slo is True
    assert serve(concurrency=256, slo_tpot_ms=1).meets_slo is False


def test_concurrency_beyond_the_cache_queues_for_a_slot_with_a_note() -> None:
    """M slots run at once; the other N − M wait: by Little's law in a closed loop (throughput M ÷ E2E) each request
    spends N ÷ M × E2E in the system, the wait before its prefill (N ÷ M − 1) × E2E of the running requests. A waiting
    request is queued, past the engine's server, when a slot frees, so it does not wait, as a client's replacement at M
    in flight does, for the rest of the step under way (vLLM: half a step, the replacement reaching the engine 51 ms
    after its predecessor's last step, anywhere in a step; serving.py `_replaced`), and the server's fixed cost per
    request (REQUEST_OVERHEAD_S) holds no slot."""
    est = serve(LLAMA3_70B, cluster=Cluster(gpu=H100, gpus_per_node=2), tp=2, concurrency=100_000)
    running = serve(LLAMA3_70B, cluster=Cluster(gpu=H100, gpus_per_node=2), tp=2, concurrency=est.max_concurrency)
    assert est.concurrency == est.max_concurrency < 100_000
    served_ms = REQUEST_OVERHEAD_S["vllm"] * 1e3
    assert served_ms > running.tpot_ms / 2  # the replacement's rest of a step is half a step
    cycle_ms = running.e2e_latency_ms - running.tpot_ms / 2 - served_ms  # a slot's cycle with its next request queued
    assert est.requests_per_s == pytest.approx(est.max_concurrency / cycle_ms * 1e3, rel=1e-9)
    wait_ms = (100_000 / est.max_concurrency - 1) * cycle_ms
    assert est.ttft_ms == pytest.approx(running.ttft_ms - running.tpot_ms / 2 + wait_ms, rel=1e-9)
    assert est.e2e_latency_ms == pytest.approx(cycle_ms * 100_000 / est.max_concurrency + served_ms, rel=1e-9)
    assert any("wait for a slot" in note.text for note in est.notes)


def test_a_model_that_leaves_no_cache_says_so() -> None:
    est = serve(LLAMA3_70B, cluster=Cluster(gpu=H100, gpus_per_node=1), concurrency=1)
    assert est.max_concurrency == 0 and est.output_tokens_per_s == 0
    assert math.isinf(est.tpot_ms)
    assert any("no room" in note.text for note in est.notes)


def test_max_model_len_beyond_the_cache_is_reported() -> None:
    est = serve(concurrency=1, max_model_len=10_000_000, input_tokens=512, output_tokens=256)
    assert any("max_model_len" in note.text for note in est.notes)


@pytest.mark.parametrize(
    ("cluster", "kw", "field"),
    [
        (Cluster(gpu=V100), {"weights": "int4"}, "weights"),
        (Cluster(gpu=A100), {"precision": "fp8"}, "precision"),
        (Cluster(gpu=V100), {"kv_cache_precision": "fp8", "precision": "fp16"}, "kv_cache_precision"),
        (NODE, {"input_tokens": 0}, "serving.input_tokens"),
        (NODE, {"concurrency": 0}, "serving.concurrency"),
        (NODE, {"requests_per_s": -1.0}, "serving.requests_per_s"),
        (NODE, {"gpu_memory_utilization": 1.5}, "serving.gpu_memory_utilization"),
        (NODE, {"max_model_len": 100}, "serving.max_model_len"),
        (NODE, {"engine": "tgi"}, "serving.engine"),
        (NODE, {"release": "vllm-0.0"}, "serving.release"),
    ],
)
def test_bad_input_names_the_field(cluster: Cluster, kw: dict, field: str) -> None:
    with pytest.raises(EstimatorError) as info:
        serve(cluster=cluster, concurrency=kw.pop("concurrency", 1), **kw)
    assert info.value.field == field


def test_bf16_on_a_gpu_without_it_runs_as_fp16() -> None:
    """vLLM's dtype "auto" serves a bf16 checkpoint in fp16 on a V100 (compute capability 7.0)."""
    est = serve(cluster=Cluster(gpu=V100), concurrency=4)
    assert est.max_concurrency >= 4 and est.tpot_ms > 0


def test_fp8_weights_on_ampere_run_weight_only_in_vllm_and_sglang() -> None:
    """vLLM (marlin_utils_fp8.py, SM80+) and SGLang (can_auto_enable_marlin_fp8: 80 <= sm < 89) run FP8 weights on an
    A100 weight-only through Marlin: 1-byte weights, the same as vLLM; TensorRT-LLM's FP8 needs SM89+. Before, SGLang
    was refused (`fp8_weights`) on an A100."""
    est = serve(cluster=Cluster(gpu=A100), concurrency=4, weights="fp8")
    assert est.memory.weights < 0.6 * serve(cluster=Cluster(gpu=A100), concurrency=4).memory.weights
    sglang = serve(cluster=Cluster(gpu=A100), concurrency=4, weights="fp8", engine="sglang")
    assert sglang.memory.weights == pytest.approx(est.memory.weights)
    with pytest.raises(EstimatorError):
        serve(cluster=Cluster(gpu=A100), concurrency=4, weights="fp8", engine="trt-llm")


def test_memory_breakdown_adds_up_to_the_card() -> None:
    est = serve(concurrency=8, cluster=Cluster(gpu=L40S))
    mem = est.memory
    assert mem.total == pytest.approx(mem.capacity)
    assert mem.kv_cache > 0 and mem.activations > 0 and mem.engine_reserve > 0


def test_vllm_0_2_profile_keeps_every_all_reduce_input_at_tp_above_one() -> None:
    """vllm-project/vllm#2150: in the 0.2 line the profile forward reused none of its all-reduce inputs, so
    the workspace grows by (2 layers + embedding) x tokens x hidden x 2 bytes; nothing changes at TP 1."""
    llama2_70b, llama2_7b = get_preset("llama-2-70b").model, get_preset("llama-2-7b").model
    cfg = ServingConfig(input_tokens=2048, output_tokens=2048, max_num_batched_tokens=4096)
    old = replace(cfg, release="vllm-0.2")
    held = (
        serving_memory(llama2_70b, old, A100, 4, 1).activations
        - serving_memory(llama2_70b, cfg, A100, 4, 1).activations
    )
    assert held == (2 * 80 + 1) * 4096 * 8192 * 2
    assert serving_memory(llama2_7b, old, A100, 1, 1) == serving_memory(llama2_7b, cfg, A100, 1, 1)


def test_turbomind_0_1_reads_grouped_kv_twice_and_all_reduces_through_nccl() -> None:
    """LMDeploy v0.1: 4 query heads per CTA (a group of 8 reads each KV head twice) and NCCL all-reduce:
    a slower decode step for Llama-2-70B at TP 4; an MHA model at TP 1 is unchanged."""
    llama2_70b, llama2_7b = get_preset("llama-2-70b").model, get_preset("llama-2-7b").model
    node = Cluster(gpu=A100, gpus_per_node=8)
    kw = {"input_tokens": 128, "output_tokens": 2048, "concurrency": 64, "batching": "static", "engine": "trt-llm"}
    now = estimate_serving(llama2_70b, ServingConfig(**kw), node, tp=4)
    old = estimate_serving(llama2_70b, ServingConfig(**kw, release="turbomind-0.1"), node, tp=4)
    assert old.tpot_ms > now.tpot_ms + 3.0
    same = estimate_serving(llama2_7b, ServingConfig(**kw, release="turbomind-0.1"), node, tp=1)
    assert same.tpot_ms == estimate_serving(llama2_7b, ServingConfig(**kw), node, tp=1).tpot_ms


QWEN3_MOE = get_preset("qwen3-30b-a3b").model
FOUR_H100 = Cluster(gpu=H100, gpus_per_node=4)


def test_pipeline_stages_never_make_one_sequence_faster() -> None:
    """Every token of a lone sequence crosses all pp stages in turn: pp stages of 1/pp of the layers take at
    least the time of one stage holding all of them (plus the hops); pipelining raises throughput only once
    there are micro-batches in flight. Physics bound, no tolerance needed."""
    cfg = ServingConfig(input_tokens=8000, output_tokens=500, concurrency=1)
    one = estimate_serving(QWEN3_MOE, cfg, FOUR_H100, tp=1, pp=1)
    four = estimate_serving(QWEN3_MOE, cfg, FOUR_H100, tp=1, pp=4)
    assert four.tpot_ms >= one.tpot_ms
    # with one micro-batch per stage (concurrency = pp) the per-token time is still no lower
    cfg4 = replace(cfg, concurrency=4)
    assert estimate_serving(QWEN3_MOE, cfg4, FOUR_H100, tp=1, pp=4).tpot_ms >= one.tpot_ms


def test_a_lone_request_is_not_charged_its_own_prompt_in_its_decode_steps() -> None:
    """At concurrency 1 the prompt is prefilled before the first token (TTFT); the decode steps after it carry
    no other request's prefill, so the time per output token barely depends on the prompt: only the attention
    over a longer KV cache (8k x 48 layers x 4 KV heads x 128 x 2 x 2 B ≈ 0.8 GB more per step, < 1 ms at
    H100 bandwidth) and no extra experts touched by prompt tokens."""
    short = estimate_serving(QWEN3_MOE, ServingConfig(input_tokens=16, output_tokens=500, concurrency=1), FOUR_H100)
    long = estimate_serving(QWEN3_MOE, ServingConfig(input_tokens=8000, output_tokens=500, concurrency=1), FOUR_H100)
    assert long.tpot_ms < short.tpot_ms * 1.5
    served_ms = REQUEST_OVERHEAD_S["vllm"] * 1e3  # the server's fixed cost, the same for both
    assert long.ttft_ms - served_ms > 10 * (short.ttft_ms - served_ms)  # the prompt is charged once, in the TTFT


def test_the_concurrency_cap_is_vllms_default_for_the_gpu() -> None:
    """vllm/engine/arg_utils.py get_batch_defaults: the OpenAI server's max_num_seqs is 1024 on a GPU of
    ≥ 70 GiB other than the A100 (H100), 256 elsewhere (A100, L40S). 64-token requests: the KV cache is not
    the limit, so the cap is the default, and the note says which."""
    short = {"input_tokens": 32, "output_tokens": 32, "concurrency": 5000}
    h100 = serve(**short)
    assert h100.max_concurrency == 1024 and "max_num_seqs default of 1024" in h100.notes[0].text
    a100 = serve(cluster=Cluster(gpu=A100, gpus_per_node=8), **short)
    assert a100.max_concurrency == 256 and "max_num_seqs default of 256" in a100.notes[0].text


def test_a_tiny_offered_load_still_needs_one_replica() -> None:
    """requests_per_s is only bounded below by 0: any positive load needs at least one replica."""
    assert serve(requests_per_s=1e-300).replicas_needed == 1


def test_vllm_int4_streams_through_marlin_and_gpt_fast_through_tinygemm() -> None:
    """vLLM runs AWQ/GPTQ int4 through Marlin, which on an A100 reaches 2.22x FP16 on Llama7B-shaped blocks at batch 16
    (IST-DASLab/marlin README models.png; ideal 3.87x; tests/estimator/test_serving_marlin.py). With vLLM's per-step
    overhead and the 16-bit head and KV reads the end-to-end ratio can only be lower: Llama 3.1 8B int4 on an A100 must
    decode 1.4-2.22x faster than bf16 at batch 1 and 16 (vllm-project/vllm#23197 measured 1.53x end to end at batch 1
    on an H100). gpt-fast's compiled loop keeps its tinygemm rate (fitted, README)."""
    a100 = Cluster(gpu=A100, gpus_per_node=8)
    for batch in (1, 16):
        bf16 = serve(cluster=a100, input_tokens=128, concurrency=batch)
        int4 = serve(cluster=a100, input_tokens=128, concurrency=batch, weights="int4")
        assert 1.4 <= bf16.tpot_ms / int4.tpot_ms <= 2.22
    compiled = {"input_tokens": 128, "concurrency": 1, "engine_overhead": "none", "cluster": a100}
    assert serve(**compiled).tpot_ms / serve(weights="int4", **compiled).tpot_ms < 2.0  # tinygemm streams slower
