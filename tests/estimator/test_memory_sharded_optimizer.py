"""Optimizer and gradient memory where sharding changes what the optimizer holds, against the frameworks' source.

- ZeRO-2 gradients under mixed precision are fp32 shards. FSDP2 casts the reduce-scatter output back to the
  parameter's own dtype (pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py `foreach_reduce`:
  `grad_output = _to_dtype_if_needed(reduce_output, target_dtype)`, target_dtype = orig_dtype), fp32 in torchtitan,
  which builds the model in fp32: 2 (unsharded 16-bit params) + 16/N. DeepSpeed ZeRO-2 keeps a 16-bit gradient
  partition through the backward and, at the step, builds its fp32 copy (deepspeed/runtime/zero/stage_1_and_2.py
  `step`: `single_partition_of_fp32_groups[i].grad = single_grad_partition`), 2 + 18/N by its own
  `estimate_zero2_model_states_mem_needs` ("2_grads_16bit + 4_grads_32bit + 4_params_32bit + 8_optimizer_states").
- Adafactor factors its second moment only for a parameter of two or more dimensions (transformers
  src/transformers/optimization.py `Adafactor._get_options`: `factored = len(param_shape) >= 2`). DeepSpeed ZeRO 1/2/3
  hand the optimizer flat 1-D fp32 partitions (stage_1_and_2.py `param_group['params'] =
  [self.single_partition_of_fp32_groups[i]]`; stage3.py `fp32_partitioned_groups_flat`), so there the second moment
  is a full fp32 tensor: fp32 master 4 + v 4 = 8 bytes/param over N. Without ZeRO DeepSpeed wraps a non-fused
  optimizer in FP16_UnfusedOptimizer, which keeps a per-parameter fp32 copy of each shape (deepspeed/runtime/engine.py
  `_configure_fp16_optimizer`, runtime/fp16/unfused_optimizer.py), so the factored state stays.
- Paged optimizer states (QLoRA §3) only where the launch runs a bitsandbytes paged optimizer: the Trainer's
  paged_adamw_32bit / paged_adamw_8bit / paged_lion_32bit without ZeRO sharding; sharded (DeepSpeed ZeRO over more
  than one GPU, FSDP: bitsandbytes-foundation/bitsandbytes#89, pytorch/ao#1213 "doesn't work with FSDP") the states
  are plain and resident.

Tolerance: byte-count identities, exact up to float rounding (relative 1e-9).
"""

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import STATE_FP32_BYTES, estimate_memory, paged_optimizer
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, Plan, Workload

EXACT = 1e-9
LLAMA2_7B = get_preset("llama-2-7b").model
LLAMA31_8B = get_preset("llama-3.1-8b").model


def _breakdown(workload: Workload, plan: Plan, model=LLAMA2_7B):
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=-(-plan.gpus // 8))
    return estimate_memory(model, workload, plan, cluster).breakdown


# --- ZeRO-2 gradients ---------------------------------------------------------------------------


def test_zero2_gradients_are_fp32_shards() -> None:
    # long sequences: the activations freed before the step outweigh DeepSpeed's 16-bit partition, so the
    # FSDP2 accounting (2 + 16/N) is the peak of both stacks
    params = count_params(LLAMA2_7B).total
    b = _breakdown(Workload(seq_len=4096), Plan(dp=4, zero_stage=2, micro_batch=4))
    assert b.activations > 2.0 * params / 4
    assert b.gradients == pytest.approx(4.0 * params / 4, rel=EXACT)
    assert b.weights + b.gradients + b.optimizer == pytest.approx((2.0 + 16.0 / 4) * params, rel=EXACT)


def test_zero2_step_holds_deepspeeds_two_gradient_partitions() -> None:
    # short sequences under full recompute: at the step DeepSpeed holds its 16-bit and fp32 gradient partitions
    # while the activations are gone: the states alone reach 2 + 18/N (estimate_zero2_model_states_mem_needs), and
    # 2 + 20/N at the cast, where the 16-bit copy it casts is beside both (stage_1_and_2.py `step` at edaa7221:
    # `self.flatten(self.averaged_gradients[i])`, then `.to(...)`; states._zero12_step)
    params = count_params(LLAMA2_7B).total
    # (without DeepSpeed's gradient buckets, which the backward holds and frees before the step: states._ipg_buffers)
    plan = Plan(dp=8, zero_stage=2, recompute="full", chunked_loss=True, reduce_bucket_elements=0)
    b = _breakdown(Workload(seq_len=128), plan)
    assert b.activations < 2.0 * params / 8
    assert b.weights + b.gradients + b.optimizer + b.activations == pytest.approx((2.0 + 20.0 / 8) * params, rel=EXACT)


def test_zero3_stays_16_bytes_over_n() -> None:
    # FSDP2: fp32 sharded params 4/N + fp32 grads 4/N + m, v 8/N; DeepSpeed: 16-bit params and grads + fp32 master,
    # m, v: 16/N either way, plus the gathered units
    params = count_params(LLAMA2_7B).total
    b = _breakdown(Workload(seq_len=4096), Plan(dp=8, zero_stage=3))
    assert b.gradients + b.optimizer == pytest.approx(14.0 * params / 8, rel=EXACT)
    assert b.weights > 2.0 * params / 8


def test_zero2_under_a_pipeline_keeps_whole_fp32_gradients() -> None:
    b = _breakdown(Workload(seq_len=4096), Plan(dp=2, pp=2, zero_stage=2))
    stage_params = b.weights / 2.0  # whole 16-bit weights of the stage
    assert b.gradients == pytest.approx(4.0 * stage_params, rel=EXACT)


# --- Adafactor ----------------------------------------------------------------------------------


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_adafactor_under_zero_holds_an_unfactored_second_moment(zero: int) -> None:
    params = count_params(LLAMA2_7B).total
    b = _breakdown(Workload(optimizer="adafactor"), Plan(dp=4, zero_stage=zero))
    assert b.optimizer == pytest.approx((4.0 + 4.0) * params / 4, rel=EXACT)  # fp32 master + full v


def test_adafactor_without_zero_stays_factored() -> None:
    params = count_params(LLAMA2_7B).total
    b = _breakdown(Workload(optimizer="adafactor"), Plan(dp=4, zero_stage=0))
    assert b.optimizer == pytest.approx((4.0 + STATE_FP32_BYTES["adafactor"]) * params, rel=EXACT)


def test_adafactor_lora_adapters_unfactored_under_zero() -> None:
    workload = Workload(task="lora", optimizer="adafactor", lora=LoraSpec())
    sharded = _breakdown(workload, Plan(dp=2, zero_stage=2)).optimizer
    adam = _breakdown(replace(workload, optimizer="adamw"), Plan(dp=2, zero_stage=2)).optimizer
    assert sharded == pytest.approx(adam / 2.0, rel=EXACT)  # fp32 v (4 B) against Adam's m + v (8 B)


# --- paged optimizer states ---------------------------------------------------------------------


def test_qlora_pages_its_states_only_unsharded() -> None:
    qlora = Workload(task="qlora", lora=LoraSpec())
    assert paged_optimizer(qlora, Plan())
    assert paged_optimizer(qlora, Plan(dp=4, zero_stage=0))
    assert not paged_optimizer(qlora, Plan(dp=2, zero_stage=3))
    assert not paged_optimizer(qlora, Plan(dp=2, zero_stage=2))
    assert paged_optimizer(replace(qlora, paged_optimizer=True), Plan(dp=2, zero_stage=3))  # as asked


@pytest.mark.parametrize("optimizer", ["sgd", "adafactor"])
def test_no_paged_variant_no_paging(optimizer: str) -> None:
    # bitsandbytes has paged AdamW (32/8-bit) and Lion, which the Trainer names; no paged SGD or Adafactor
    assert not paged_optimizer(Workload(task="qlora", optimizer=optimizer, lora=LoraSpec()), Plan())


def test_sharded_qlora_states_stay_on_the_card() -> None:
    workload = Workload(task="qlora", lora=LoraSpec())
    plan = Plan(dp=2, zero_stage=3)
    default = _breakdown(workload, plan, LLAMA31_8B)
    unpaged = _breakdown(replace(workload, paged_optimizer=False), plan, LLAMA31_8B)
    assert default.optimizer > 0.0
    assert default.total == pytest.approx(unpaged.total, rel=EXACT)
