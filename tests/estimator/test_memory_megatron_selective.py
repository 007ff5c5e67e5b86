"""Megatron-LM's selective recompute (`--recompute-activations`) recomputes the core attention only.

Megatron-LM core_v0.15.3 megatron/core/transformer/transformer_config.py: `recompute_modules` defaults to
["core_attn"] ("core_attn: recompute the core attention part of the transformer layer"; "mlp" is a separate module,
off by default), and `--recompute-activations` sets `recompute_granularity="selective"` (megatron/training/
arguments.py). So the MLP keeps what it keeps without recompute: the fc1 output (gate and up, 2 × ffn, the input of
the fused `bias_swiglu`) and the SwiGLU output (ffn, the input of fc2, linear_fc2 saves it for its weight and LoRA
gradients). torch's op-level selective AC (torchtitan `apply_ac`) keeps the matmul outputs only (2 × ffn). A plan
the megatron stack runs says so with `fp32_main_grads` (app/planner/stacks.py sets it).
"""

from __future__ import annotations

from dataclasses import replace

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, Plan, Workload


def _activations(plan: Plan) -> float:
    model = get_preset("qwen2.5-72b").model
    workload = Workload(task="lora", seq_len=4096, global_batch=64, lora=LoraSpec(rank=16, targets=("all-linear",)))
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
    return estimate_memory(model, workload, plan, cluster).breakdown.activations


def test_megatron_selective_keeps_the_swiglu_output() -> None:
    """Qwen2.5-72B LoRA at tp 2 × pp 2: the first stage's 40 layers hold 2 micro-batches. Megatron's selective keeps
    the whole MLP (fc1's gate and up outputs and the SwiGLU output, 3 × ffn / tp elements per token, bf16) where
    torchtitan's op-level policy keeps w1's output alone (1 × ffn / tp). On the attention side (Transformer Engine's
    layers, app/estimator/memory/saved.py, read at NVIDIA/Megatron-LM d98e8a64d and NVIDIA/TransformerEngine
    d0067d0d) the checkpoint keeps the roped q and k and v, a view that holds linear_qkv's whole output (q + k + v;
    megatron/core/tensor_parallel/random.py CheckpointFunction saves its inputs), and linear_proj its input (LoRA
    trains o): 3 q + 3 kv, where torchtitan keeps wq's and SDPA's outputs and v (2 q + kv). The fused norms
    (layernorm_linear.py saves the input and ln_out) keep 4 h / tp where torchtitan keeps the layer input and w2's
    output (2 h / tp)."""
    torch_plan = Plan(dp=2, tp=2, pp=2, recompute="selective", sequence_parallel=True, micro_batch=1)
    megatron_plan = replace(torch_plan, fp32_main_grads=True)
    # 2 ffn / tp; two more k or v per rank (one kv head of 8 per rank at tp 2: 1,024 / 2 each); one more q / tp;
    # the norms' 2 h / tp more
    per_token = 2 * 29568 / 2 + 2 * 1024 / 2 + 8192 / 2 + 2 * 8192 / 2
    extra = _activations(megatron_plan) - _activations(torch_plan)
    assert extra == 4096 * 2.0 * 40 * 2 * per_token  # tokens × bytes × layers × in flight × elements


def test_megatron_selective_with_flash_attention_keeps_linear_qkv_output() -> None:
    """With flash attention Megatron's core_attn recompute saves nothing and keeps more than no recompute: without it
    TE's attention keeps q, k, a contiguous copy of v and its output (attention/dot_product_attention/utils.py
    `get_qkv_layout` copies v, whose strides differ from k's, and linear_qkv's output is freed), with it the
    checkpoint keeps the roped q and k and v, the view behind which linear_qkv's whole output (q + k + v) stays
    (megatron/core/tensor_parallel/random.py CheckpointFunction `ctx.save_for_backward(*args)`; NVIDIA/Megatron-LM
    d98e8a64d, NVIDIA/TransformerEngine d0067d0d): one q (8,192 / tp) and one kv (1,024 / tp) more a token a layer,
    everything else alike. Exact."""
    plan = Plan(dp=2, tp=2, pp=2, recompute="selective", sequence_parallel=True, micro_batch=1, fp32_main_grads=True)
    more = _activations(plan) - _activations(replace(plan, recompute="none"))
    assert more == 4096 * 2.0 * 40 * 2 * (8192 / 2 + 1024 / 2)  # tokens × bytes × layers × in flight × elements
