"""The KV cache each engine's scheduler reserves on admission (`Scheduler.reserve`, data/engines.json
kv_reserve_share), and vLLM V1's preemption when a step cannot get its tokens' blocks.

- vLLM V1 (vllm-project/vllm@b4622cf9 vllm/v1/core/sched/scheduler.py `schedule`): a waiting request is admitted
  when `kv_cache_manager.allocate_slots` finds blocks for its prompt; a running request asks for its next token's
  blocks each step, and when none are free the last admitted running request is preempted (`self.running.pop()`,
  `_preempt_request`: blocks freed, num_computed_tokens reset, prepended to the waiting queue): reserve 0.
- SGLang (sgl-project/sglang@21ff4b08 python/sglang/srt/environ.py SGLANG_INIT_NEW_TOKEN_RATIO 0.7; schedule_policy.py
  PrefillAdder): the prompt and new_token_ratio of the output still owed: reserve 0.7.
- TensorRT-LLM (NVIDIA/TensorRT-LLM@fcd3f316 tensorrt_llm/llmapi/llm_args.py SchedulerConfig default
  GUARANTEED_NO_EVICT): the whole length, never evicted: reserve 1.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, held_sequences, max_concurrency
from app.estimator.serving.engines import ENGINE_DEFAULTS
from app.estimator.serving.memo import _hardware
from app.estimator.serving.simulation import _load, peak_latency
from app.estimator.serving_run import Scheduler
from app.estimator.serving_sim import Lengths, simulate
from app.estimator.specs import Cluster


def _step(decodes: int, kv: float, prefill: int, span: float) -> float:
    """A step linear in its KV tokens and prompt tokens: 10 ms, 20 ns a KV token read, 50 us a prompt token."""
    return 0.01 + 2e-8 * kv + 5e-5 * prefill


CACHE = Scheduler(token_budget=8192, max_seqs=256, kv_tokens=100_000, block=16)
PROMPTS, OUTPUTS = Lengths(1000), Lengths(4000, 8000)  # long outputs, lognormal about 4,000 tokens


def test_engines_reserve_by_their_sources() -> None:
    shares = {engine: row.kv_reserve_share for engine, row in ENGINE_DEFAULTS.items()}
    assert shares == {"vllm": 0.0, "sglang": 0.7, "trt-llm": 1.0}


def test_growing_allocation_runs_more_sequences_than_whole_reservation() -> None:
    """At 0.5 requests/s (about 0.5 × 4,000 × 11 ms ≈ 22 sequences decoding at once) a cache of 100,000 tokens holds
    20 requests of 5,000 tokens reserved whole: the queue grows. Allocated as tokens come (vLLM), a request holds
    about 1,000 + 4,000 / 2 on average and the replica keeps up, a few requests preempted near the peaks."""
    whole = simulate(_step, CACHE, 0.5, PROMPTS, OUTPUTS)
    sglang = simulate(_step, replace(CACHE, reserve=0.7), 0.5, PROMPTS, OUTPUTS)
    vllm = simulate(_step, replace(CACHE, reserve=0.0), 0.5, PROMPTS, OUTPUTS)
    assert whole.saturated and whole.preemptions == 0
    assert vllm.running > sglang.running > whole.running
    assert round(whole.running, 1) == 15.3 and round(vllm.running, 1) == 23.7
    assert not vllm.saturated and vllm.ttft.p90 < 5 < whole.ttft.p90


def test_whole_reservation_is_the_default_and_unchanged() -> None:
    """reserve 1 (the Scheduler default, TensorRT-LLM's rule) admits on the whole length and never preempts."""
    assert CACHE.reserve == 1.0
    run = simulate(_step, CACHE, 0.2, PROMPTS, OUTPUTS)
    assert run.preemptions == 0 and run.recomputed_tokens == 0


def test_an_over_committed_cache_preempts_and_recomputes() -> None:
    """Past what the cache carries (1 request/s of ~5,000 tokens held ~45 s each in 100,000 tokens) the decodes run
    out of blocks: the last admitted is preempted, its prompt and output so far prefilled again, which the run
    counts; every request still completes with all its tokens (its TPOT the slower for the recompute)."""
    calm = simulate(_step, replace(CACHE, reserve=0.0, kv_tokens=1_000_000), 1.0, PROMPTS, OUTPUTS)
    tight = simulate(_step, replace(CACHE, reserve=0.0), 1.0, PROMPTS, OUTPUTS)
    assert calm.preemptions == 0
    assert tight.preemptions > 100
    assert tight.recomputed_tokens > tight.preemptions * 1000  # at least each one's prompt computed again
    assert tight.tpot.p90 > calm.tpot.p90
    assert tight.requests == calm.requests


def test_preemption_keeps_the_run_deterministic() -> None:
    one = simulate(_step, replace(CACHE, reserve=0.0), 1.0, PROMPTS, OUTPUTS)
    two = simulate(_step, replace(CACHE, reserve=0.0), 1.0, PROMPTS, OUTPUTS)
    assert one == two


QWEN_14B = get_preset("qwen2.5-14b").model


@pytest.mark.parametrize(("engine", "expected"), [("vllm", 70), ("sglang", 46), ("trt-llm", 42)])
def test_held_sequences_follow_the_engine_rule(engine: str, expected: int) -> None:
    """Qwen2.5-14B, TP 2 on A100 40G PCIe, 1,000 in / 4,000 out: 42 sequences of 5,000 tokens (max_concurrency, the
    figure reported, as vLLM logs it); under vLLM's rule a sequence holds 1,000 + 4,000 / 2 on average (70), under
    SGLang's 1,000 + 1.7 × 4,000 / 2 (46: its own mem_fraction_static leaves a cache of its own size)."""
    gpu = get_gpu("a100-40g-pcie")
    cfg = ServingConfig(input_tokens=1000, output_tokens=4000, engine=engine)
    assert held_sequences(QWEN_14B, cfg, gpu, 2, 1) == expected
    assert max_concurrency(QWEN_14B, cfg, gpu, 2, 1) <= expected


def test_the_long_output_replica_is_bound_by_bandwidth_once_the_cache_grows() -> None:
    """Review R9-2's case (Qwen2.5-14B, 1,000 in / 4,000 out, 0.75 requests/s at the peak, TPOT 50 ms), TP 2 on A100
    40G PCIe under vLLM: one replica completes at most 0.340 requests/s (it read 0.264 when each request reserved its
    whole length: 2 replicas carried 0.528), so 2 replicas saturate at the peak and 3 meet its TPOT."""
    gpu = get_gpu("a100-40g-pcie")
    cfg = ServingConfig(input_tokens=1000, output_tokens=4000, requests_per_s=0.5, slo_tpot_ms=50)
    cluster = Cluster(gpu=gpu, gpus_per_node=2, nodes=1, intra_node_link="pcie4")
    hw = _hardware(QWEN_14B, cfg, cluster, 2, 1)
    assert round(_load(QWEN_14B, cfg, hw, held_sequences(QWEN_14B, cfg, gpu, 2, 1)).top_rps, 3) == 0.340
    two, three = (peak_latency(QWEN_14B, cfg, cluster, tp=2, replicas=n) for n in (2, 3))
    assert two is not None and three is not None
    assert two.saturated and not three.saturated
    assert three.tpot.p99 * 1e3 < 50 and three.preemptions == 0
