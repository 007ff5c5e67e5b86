"""A launch's --max-num-seqs may admit what the KV cache holds by the engine's rule (review R9-2): vLLM V1 allocates
blocks as tokens come and preempts the last admitted when they run out (vllm-project/vllm@b4622cf9
vllm/v1/core/sched/scheduler.py), so a replica runs more sequences than fit at whole length, and the simulation that
sized the replica admitted them (`held_sequences`). Before, the launch capped --max-num-seqs at the whole-length count
(Qwen2.5-14B TP 2 on A100 40G PCIe, 1,000 / 4,000 tokens: 42) while the simulated replica ran up to 70."""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, ServingEstimate, estimate_serving
from app.estimator.specs import Cluster
from app.planner.serving_launch import replica_max_seqs

QWEN_14B = get_preset("qwen2.5-14b").model
A100_PAIR = Cluster(gpu=get_gpu("a100-40g-pcie"), gpus_per_node=2, nodes=1, intra_node_link="pcie4")


def _estimate(engine: str) -> ServingEstimate:
    cfg = ServingConfig(input_tokens=1000, output_tokens=4000, requests_per_s=0.3, slo_tpot_ms=50, engine=engine)
    return estimate_serving(QWEN_14B, cfg, A100_PAIR, tp=2)


def test_vllm_launch_admits_the_sequences_its_cache_grows_to() -> None:
    estimate = _estimate("vllm")
    assert (estimate.max_concurrency, estimate.held_sequences) == (42, 70)
    assert replica_max_seqs(estimate, 60.0) == 60
    assert replica_max_seqs(estimate, 90.0) == 70


def test_trt_llm_launch_stays_at_whole_lengths() -> None:
    estimate = _estimate("trt-llm")
    assert estimate.held_sequences == estimate.max_concurrency
    assert replica_max_seqs(estimate, 90.0) == estimate.max_concurrency
