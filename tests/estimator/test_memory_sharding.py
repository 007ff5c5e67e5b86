"""Model states under each framework's sharding, against the framework's own accounting.

- Megatron-LM keeps an fp32 main-gradient buffer for bf16 runs: 18 bytes/param without the distributed
  optimizer, 6 + 12/d with it (NVIDIA/Megatron-LM docs/user-guide/features/dist_optimizer.md, the table;
  `num_bytes_per_parameter` in megatron/training/theoretical_memory_usage.py).
- Routed experts' optimizer states are sharded over the expert-data-parallel group only:
  expert_data_parallel_size = world / (expert tp × ep × pp) (same file, `compute_weight_and_optimizer_memory`).
- ZeRO-2 / FSDP under pipeline parallel: gradient sync waits for the last micro-batch
  (torch.distributed.pipelining `PipelineStage.backward_maybe_with_nosync`), so the stage's gradients stay
  whole, accumulated in the fp32 reduce dtype (FSDP2 `FSDPParam.to_accumulated_grad_if_needed`; torchtitan's
  default MixedPrecisionPolicy reduce_dtype float32).

Tolerance: these are byte-count identities, not fits, so the comparisons are exact up to float rounding
(relative 1e-9).
"""

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload

EXACT = 1e-9
LLAMA2_7B = get_preset("llama-2-7b").model
MIXTRAL_8X22B = get_preset("mixtral-8x22b").model
LLAMA31_70B = get_preset("llama-3.1-70b").model


def _cluster(gpus: int) -> Cluster:
    return Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=-(-gpus // 8))


def _states(model, workload: Workload, plan: Plan) -> tuple[float, float, float]:
    b = estimate_memory(model, workload, plan, _cluster(plan.gpus)).breakdown
    return b.weights, b.gradients, b.optimizer


@pytest.mark.parametrize(
    ("dp", "zero", "bytes_per_param"),
    [(1, 0, 18.0), (8, 0, 18.0), (8, 1, 6.0 + 12.0 / 8)],  # dist_optimizer.md: bf16 params, fp32 gradients
)
def test_megatron_fp32_main_grads_hold_its_bytes_per_param(dp: int, zero: int, bytes_per_param: float) -> None:
    plan = Plan(dp=dp, zero_stage=zero, fp32_main_grads=True)
    weights, grads, optim = _states(LLAMA2_7B, Workload(), plan)
    params = count_params(LLAMA2_7B).total
    assert weights + grads + optim == pytest.approx(bytes_per_param * params, rel=EXACT)
    assert grads == pytest.approx(4.0 * params, rel=EXACT)  # the buffer stays whole under the distributed optimizer


def test_without_the_buffer_mixed_precision_adam_stays_16_bytes() -> None:
    weights, grads, optim = _states(LLAMA2_7B, Workload(), Plan())
    assert weights + grads + optim == pytest.approx(16.0 * count_params(LLAMA2_7B).total, rel=EXACT)


def test_megatron_buffer_needs_mixed_precision_and_16_bit_weights() -> None:
    # fp32 training already keeps fp32 gradients: the buffer adds nothing
    fp32 = Workload(precision="fp32", mixed_precision=False)
    assert _states(LLAMA2_7B, fp32, Plan(fp32_main_grads=True)) == _states(LLAMA2_7B, fp32, Plan())


def _mixtral_first_stage(pp: int, ep: int) -> tuple[float, float]:
    """(dense, routed-expert) parameters on one GPU of the first of `pp` stages, tp = expert tp = 1, from the
    published config (hidden 6144, 48 heads / 8 kv heads of 128, expert ffn 16384, 8 experts, vocab 32000),
    split as Megatron-LM's `compute_weight_and_optimizer_memory` splits them."""
    m = MIXTRAL_8X22B
    d_head = m.hidden // m.heads
    attention = m.hidden * (m.heads * d_head + 2 * m.kv_heads * d_head) + m.heads * d_head * m.hidden
    router, norms = m.hidden * m.experts, 2 * m.hidden
    experts = m.experts * 3 * m.hidden * m.expert_ffn  # SwiGLU gate, up, down per expert
    layers = m.layers // pp
    dense = layers * (attention + router + norms) + m.vocab * m.hidden  # the first stage holds the embedding
    return dense, layers * experts / ep


@pytest.mark.parametrize(("fp32_grads", "bytes_per_param"), [(True, (6.0, 12.0)), (False, (4.0, 12.0))])
def test_routed_experts_shard_optimizer_states_over_expert_data_parallel_only(
    fp32_grads: bool, bytes_per_param: tuple[float, float]
) -> None:
    """Mixtral-8x22B on 16 GPUs, ep 8 × pp 2 × dp 8, ZeRO-1 (Megatron's distributed optimizer): the dense
    parameters shard their 12 optimizer bytes over dp = 8, the experts over 16 / (1 × 8 × 2) = 1 rank."""
    # Megatron's fused vocab-parallel cross-entropy (chunked_loss) keeps the first stage the worst one
    plan = Plan(dp=8, pp=2, ep=8, zero_stage=1, recompute="full", chunked_loss=True)
    plan = replace(plan, fp32_main_grads=True) if fp32_grads else plan
    weights, grads, optim = _states(MIXTRAL_8X22B, Workload(global_batch=64), plan)
    dense, experts = _mixtral_first_stage(pp=2, ep=8)
    whole, sharded = bytes_per_param
    expert_dp = plan.gpus // (1 * plan.ep * plan.pp)
    assert expert_dp == 1
    assert optim == pytest.approx(sharded * (dense / plan.dp + experts / expert_dp), rel=EXACT)
    assert weights + grads + optim == pytest.approx(
        whole * (dense + experts) + sharded * (dense / plan.dp + experts / expert_dp), rel=EXACT
    )


def test_experts_shard_like_dense_weights_without_expert_parallel() -> None:
    plan = Plan(dp=8, pp=2, zero_stage=1, recompute="full", chunked_loss=True)  # the first stage stays the worst
    dense, experts = _mixtral_first_stage(pp=2, ep=1)
    optim = _states(MIXTRAL_8X22B, Workload(global_batch=64), plan)[2]
    assert optim == pytest.approx(12.0 * (dense + experts) / plan.dp, rel=EXACT)


@pytest.mark.parametrize("zero", [2, 3])
def test_sharded_gradients_stay_whole_in_fp32_under_a_pipeline(zero: int) -> None:
    """Llama-3.1-70B pretraining, tp 4 × pp 4 × dp 2: ZeRO-2 and ZeRO-3 (FSDP2 under torchtitan's pipeline
    schedule) hold the stage's whole gradients in fp32, 4 bytes for each of its parameters."""
    workload = Workload(task="pretrain", global_batch=64)
    plan = Plan(dp=2, tp=4, pp=4, zero_stage=zero, sequence_parallel=True, recompute="full")
    grads = _states(LLAMA31_70B, workload, plan)[1]
    stage_params = _states(LLAMA31_70B, workload, replace(plan, zero_stage=0))[0] / 2.0  # whole 16-bit weights
    assert grads == pytest.approx(4.0 * stage_params, rel=EXACT)


def test_zero2_without_a_pipeline_still_shards_gradients() -> None:
    # fp32 shards (FSDP2 `foreach_reduce`; DeepSpeed's fp32 partition: tests/estimator/test_memory_sharded_optimizer.py)
    plan = Plan(dp=8, zero_stage=2)
    _, grads, _ = _states(LLAMA2_7B, Workload(seq_len=4096), plan)
    assert grads == pytest.approx(4.0 * count_params(LLAMA2_7B).total / 8, rel=EXACT)
