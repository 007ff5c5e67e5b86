"""DeepSpeed's optimizer step builds the gradients it steps anew (states._zero3_step_temp, states._zero12_step):
ZeRO-3 one sub-group at a time (deepspeed/runtime/zero/stage3.py `_prepare_fp32_grad_for_sub_group`:
`self.flatten(self.averaged_gradients[sub_group_id]).to(<master dtype>)`, at most sub_group_size 1e9 elements),
ZeRO-1/2 the whole partition (stage_1_and_2.py `step`), whatever optimizer steps: the same lines at DeepSpeed v0.14.0
(ce78a632, 2024-03-07), v0.16.3 (c17dc33c, 2025-01-21), v0.18.0 (79caae1c, 2025-10-07) and edaa7221 (2026-08-22).

The published figure: deepspeedai/DeepSpeedExamples training/bf16_master_weight/README.md at a43031e5, ZeRO-3 on
4 H100 with DeepSpeed's FusedAdam ("optimizer": {"type": "AdamW"} in configs/baseline.json), Peak Memory =
torch.cuda.max_memory_allocated (tests/estimator/memory_first_contact.py [deepspeed-examples]). Those rows were
recorded at first contact (-14.3 % and -24.7 %) before this change and motivated it: they are fitted rows now."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, Plan, Workload
from tests.estimator.memory_first_contact import FirstContactCase, _deepspeed_examples

H100 = get_gpu("h100-80g-sxm")
LLAMA2_7B = get_preset("llama-2-7b").model


def _case(label: str) -> FirstContactCase:
    return next(case for case in _deepspeed_examples() if case.label.startswith(label))


def _reading_gib(case: FirstContactCase) -> float:
    breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    return measured_bytes(breakdown, case.plan, case.cluster, case.measured) / GIB


def test_bf16_master_weight_baseline_peaks_at_the_sub_groups_gradient_copies() -> None:
    """Baseline (fp32 master): 31.38 GiB allocated. The step flattens the first sub-group (1e9 of the 1.7e9 elements a
    GPU owns) into bf16 and casts it to fp32, 6 bytes an element beside the 16 bytes of states: the estimate read
    26.9 GiB (-14.3 %) without them and 32.2 (+2.5 %) with. Within 5 %: what remains is the two gathered layers
    (0.75 GiB), which the estimate keeps at the step where stage3.py `step` releases them first
    (`_partition_all_parameters`), left as it is."""
    case = _case("DeepSpeedExamples bf16_master_weight Baseline")
    assert case.published_gib == 31.38
    assert _reading_gib(case) == pytest.approx(case.published_gib, rel=0.05)


def test_bf16_master_weight_low_precision_counts_the_bf16_copy() -> None:
    """BF16 master weights and optimizer states: 18.93 GiB allocated. `.to(bf16)` of the bf16 concatenation returns
    it, so the step keeps one bf16 copy of the sub-group (1.9 GiB): -24.7 % at first contact, -17.3 % now. Within
    20 % (the README's other miss is not found: benchmarks/validation.py, deepspeed-examples)."""
    case = _case("DeepSpeedExamples bf16_master_weight BF16 low-precision")
    assert case.published_gib == 18.93
    error = _reading_gib(case) / case.published_gib - 1.0
    assert -0.20 < error < -0.15


@pytest.mark.parametrize(("mixed", "per_element"), [(True, 6.0), (False, 2.0)])
def test_zero3_step_adds_one_sub_groups_copies(mixed: bool, per_element: float) -> None:
    """Llama 2 7B over 2 GPUs at 1 x 128 with full recompute: 3.37e9 elements a GPU, so the step copies one sub-group of
    1e9: bf16 + fp32 (6 bytes) under mixed precision, the bf16 concatenation alone (2 bytes) where the master is bf16.
    `other` holds it beyond the activations it reuses; offloaded states step on the host and copy nothing here."""
    plan = Plan(dp=2, zero_stage=3, micro_batch=1, recompute="full", chunked_loss=True)
    workload = Workload(task="full_finetune", seq_len=128, mixed_precision=mixed, global_batch=2)
    cluster = Cluster(gpu=H100, gpus_per_node=2)
    on_gpu = estimate_memory(LLAMA2_7B, workload, plan, cluster).breakdown
    offloaded = Plan(dp=2, zero_stage=3, micro_batch=1, recompute="full", chunked_loss=True, offload="optimizer")
    host = estimate_memory(LLAMA2_7B, workload, offloaded, cluster).breakdown
    step = on_gpu.other - host.other
    assert step == pytest.approx(per_element * 1e9 - on_gpu.activations, rel=1e-9)


def test_zero1_step_holds_its_partition_three_ways() -> None:
    """ZeRO-1 over 2 GPUs: the backward holds every 16-bit gradient (2 bytes a parameter); the step frees those outside
    the rank's partition, then holds the partition's 16-bit gradients, their copy and its fp32 cast, (2 + 2 + 4) / 2 =
    4 bytes a parameter, while the activations are gone: 2 + 4 + 12 / 2 = 12 bytes a parameter in all (without
    DeepSpeed's gradient buckets, which the backward frees before the step)."""
    params = 6_738_415_616  # Llama 2 7B
    plan = Plan(dp=2, zero_stage=1, micro_batch=1, recompute="full", chunked_loss=True, reduce_bucket_elements=0)
    workload = Workload(task="full_finetune", seq_len=128, global_batch=2)
    b = estimate_memory(LLAMA2_7B, workload, plan, Cluster(gpu=H100, gpus_per_node=2)).breakdown
    assert b.activations < 2.0 * params
    assert b.weights + b.gradients + b.optimizer + b.activations == pytest.approx(12.0 * params, rel=1e-9)
