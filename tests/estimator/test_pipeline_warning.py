"""The warning of a pipeline short of micro-batches counts the interleaved schedule's bubble, as the step time does
(app.estimator.performance `bubble_share`): (p − 1)/v idle micro-batch slots of m + (p − 1)/v (Narayanan et al.
2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", §2.2.2). Review R5-7: Llama
3.1 405B at tp 8 × pp 16 × 4 virtual stages with 16 micro-batches a data-parallel rank (the layout and batch of The
Llama 3 Herd of Models §3.3.2) was told its pipeline idled 48 % of each step, 1F1B's (p − 1)/(m + p − 1), while the
same answer's step counted a bubble of about 19 %."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.performance import estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload

LLAMA_405B = get_preset("llama-3.1-405b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=256, inter_node_gbps=400.0)  # 2,048 GPUs


def _warning(virtual_stages: int) -> tuple[dict | None, float]:
    plan = Plan(tp=8, pp=16, dp=16, micro_batch=1, virtual_stages=virtual_stages, recompute="full")
    workload = Workload(task="pretrain", seq_len=8192, global_batch=256)  # 16 micro-batches a dp rank
    estimate = estimate_performance(LLAMA_405B, workload, plan, H100)
    found = next((w.params for w in estimate.warnings if w.code == "pipeline_few_microbatches"), None)
    breakdown = estimate.performance.breakdown_s or {}
    return found, breakdown["bubble"] / estimate.performance.step_time_s


def test_interleaving_enough_is_not_short_of_micro_batches() -> None:
    found, share = _warning(4)  # m × v = 64 ≥ 4 × pp
    assert found is None  # was a warning of 48 % idle
    assert share < 0.2  # the step's own bubble: 3.75 slots of 19.75, less what overlaps


@pytest.mark.parametrize("virtual_stages", [1, 2])
def test_the_warning_names_the_schedules_bubble(virtual_stages: int) -> None:
    found, share = _warning(virtual_stages)
    assert found is not None
    slots = 15 / virtual_stages
    assert found["bubble"] == pytest.approx(slots / (16 + slots))  # 48 % at v 1, 32 % at v 2
    assert found["wanted"] == 64 // virtual_stages
    assert found["bubble"] == pytest.approx(share, rel=0.25)  # the same schedule the step time counts
