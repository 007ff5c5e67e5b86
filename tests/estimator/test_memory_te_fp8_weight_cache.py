"""Transformer Engine's cached FP8 weights (memory.states TE_FP8_WEIGHT_CACHE_BYTES, `te_fp8_weight_cache`): with 16-bit
parameters a TE Linear / LayerNormLinear / LayerNormMLP under Megatron keeps each weight's FP8 copy and, on Hopper, its
transpose in `_fp8_workspaces` across micro-batches and steps (NVIDIA/TransformerEngine d0067d0d pytorch/module/
linear.py, base.py `quantize_weight`, csrc/quantizer.cpp; NVIDIA/Megatron-LM d98e8a64 megatron/core/extensions/
transformer_engine.py passes is_first_microbatch unless disable_parameter_transpose_cache). No FP8 parameter plan
(Plan.fp8_params: the weight is the FP8 tensor itself) and no torchao float8 plan (it keeps no FP8 copy) holds one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.memory.states import TE_FP8_WEIGHT_CACHE_BYTES, te_fp8_weight_cache
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, Plan, Workload

LLAMA31_8B = get_preset("llama-3.1-8b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
FP8 = Workload(task="full_finetune", precision="fp8", seq_len=8192, global_batch=8)
# the megatron stack's plan (Plan.fp32_main_grads, app/planner/stacks.py) with Megatron's distributed optimizer
MEGATRON = Plan(dp=8, zero_stage=1, recompute="selective", micro_batch=1, tuning="nemo", fp32_main_grads=True)
# Llama 3.1 8B's block linears: 32 layers x (4096 x (4096 + 2 x 1024) + 4096 x 4096 + 3 x 4096 x 14336) = 6.98e9
BLOCK_LINEARS = 32 * (4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336)


def _weights_gib(workload: Workload, plan: Plan) -> float:
    return estimate_memory(LLAMA31_8B, workload, plan, H100).breakdown.weights / GIB


def test_megatron_fp8_keeps_the_fp8_weights_and_their_transposes() -> None:
    # 2 bytes per block linear weight beside the bf16 ones: 6.98e9 x 2 B = 13.0 GiB on each GPU at TP 1 (the bf16
    # weights, embedding and head included, are 14.96 GiB; before, FP8 read the same 14.96)
    assert TE_FP8_WEIGHT_CACHE_BYTES == 2.0
    assert te_fp8_weight_cache(FP8, MEGATRON)
    bf16 = _weights_gib(replace(FP8, precision="bf16"), MEGATRON)
    fp8 = _weights_gib(FP8, MEGATRON)
    assert bf16 == pytest.approx(14.96, abs=0.01)
    assert fp8 - bf16 == pytest.approx(BLOCK_LINEARS * 2 / GIB, rel=1e-6)
    assert fp8 - bf16 == pytest.approx(13.0, abs=0.05)


def test_split_by_tensor_and_pipeline_parallelism() -> None:
    # each rank caches only its own shards: at TP 2 x PP 2, a quarter of the block linears
    plan = replace(MEGATRON, tp=2, pp=2, dp=2)
    added = _weights_gib(FP8, plan) - _weights_gib(replace(FP8, precision="bf16"), plan)
    assert added == pytest.approx(BLOCK_LINEARS / 4 * 2 / GIB, rel=1e-6)


def test_no_cache_with_fp8_parameters_or_without_transformer_engine() -> None:
    # FP8 parameters (--fp8-param-gather) are quantized tensors TE uses as they are: FP8 linears, 16-bit rest
    fp8_params = replace(MEGATRON, fp8_params=True)
    assert not te_fp8_weight_cache(FP8, fp8_params)
    assert _weights_gib(FP8, fp8_params) == pytest.approx(14.96 - BLOCK_LINEARS / GIB, abs=0.01)
    # torchao's Float8Linear (torchtitan, no fp32 main-gradient buffer) casts the bf16 weight per matmul and keeps none
    torchao = replace(MEGATRON, tuning=None, fp32_main_grads=False)
    assert not te_fp8_weight_cache(FP8, torchao)
    assert _weights_gib(FP8, torchao) == pytest.approx(_weights_gib(replace(FP8, precision="bf16"), torchao))
