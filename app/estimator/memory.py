"""Per-GPU memory of one plan: model states, activations, KV cache and framework overheads.

Everything is bytes per GPU for the worst pipeline stage. Sources, by term:

- Model states, mixed-precision Adam: 2Ψ 16-bit weights + 2Ψ 16-bit gradients + 12Ψ fp32 master,
  m and v = 16Ψ (Rajbhandari et al. 2020, "ZeRO", §3.1 and Fig. 1, K = 12). ZeRO-1/2/3 divide the
  optimizer / + gradients / + weights by N = dp × cp (§5); routed experts' states only over their
  expert-data-parallel group, N / ep (Megatron-LM `compute_weight_and_optimizer_memory`,
  expert_data_parallel_size = world / (expert tp × ep × pp)). FSDP (fp32 sharded params + fp32 grads +
  m, v = 16, PyTorch `MixedPrecisionPolicy`) and DeepSpeed bf16/fp16 ZeRO (16-bit grads) hold 16 bytes;
  Megatron-LM keeps an fp32 main-gradient buffer (`Plan.fp32_main_grads`): 18 bytes, 6 + 12/d with its
  distributed optimizer (`num_bytes_per_parameter` in megatron/training/theoretical_memory_usage.py).
  With pipeline parallel, ZeRO-2/3 gradients stay whole in fp32 until the last micro-batch (`_full_states`).
  ZeRO-2 gradients are fp32 shards, 4/N: FSDP2 casts the reduce-scatter output back to the parameter's dtype, fp32
  in torchtitan (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py `foreach_reduce`: `_to_dtype_if_needed(
  reduce_output, orig_dtype)`), 2 + 16/N in all; DeepSpeed keeps a 16-bit partition through the backward and
  builds its fp32 copy for the step (deepspeed/runtime/zero/stage_1_and_2.py `step`:
  `single_partition_of_fp32_groups[i].grad`), 2 + 18/N with both (its `estimate_zero2_model_states_mem_needs`)
  once the activations are freed: the peak counts the 16-bit partition where it outweighs those activations.
- Pure 16-bit training (mixed_precision=False, torchtune's single-device recipes): weights, grads and
  optimizer states all in the training dtype, e.g. AdamW 2 + 2 + 4 = 8 bytes/param.
- 8-bit Adam: 2 bytes of state per parameter (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
  Quantization", §2; block-wise constants ~0.06 B/param ignored). Lion: one momentum (Chen et al. 2023,
  Alg. 1). SGD: one momentum buffer (torch.optim.SGD, momentum > 0). Adafactor: factored second
  moment, rows + columns per matrix (Shazeer & Stern 2018, §3), no first moment (HF default beta1=None); only
  for parameters of two or more dimensions (transformers `Adafactor._get_options`: `len(param_shape) >= 2`), so
  under DeepSpeed ZeRO 1-3, which hands the optimizer flat 1-D fp32 partitions (stage_1_and_2.py
  `single_partition_of_fp32_groups`, stage3.py `fp32_partitioned_groups_flat`), v is a full fp32 tensor
  (`_flat_partitions`).
- ZeRO-3/FSDP gathered working buffers: two layers' 16-bit weights (the current one and the
  prefetched next one) plus one layer's unsharded gradient before reduce-scatter; DeepSpeed's
  estimator charges 4 × largest_layer_params bytes (deepspeed/runtime/zero/stage3.py,
  `estimate_zero3_model_states_mem_needs`).
- LoRA: r·(d_in + d_out) trainable parameters per adapted matrix (Hu et al. 2021, §4.1), frozen base
  in 16-bit; under mixed precision the adapters are fp32 with fp32 states (PEFT `autocast_adapter_dtype`).
  QLoRA: NF4 base at 4 bits plus block-wise absmax constants; with double quantisation
  8-bit absmax per 64 weights + fp32 per 256 blocks = 8/64 + 32/(64·256) = 0.127 bit/param, without it
  one fp32 absmax per 64 weights = 0.5 bit (Dettmers et al. 2023, "QLoRA", §3 "Double Quantization");
  embeddings, norms and lm_head stay 16-bit (bitsandbytes/transformers keep `lm_head` unquantised:
  `get_keys_to_not_convert`). The QLoRA recipe's own accounting (§3, eq. 5: adapters L1, L2 in BF16;
  artidoro/qlora `qlora.py` casts LoRA layers to bf16 and trains with `paged_adamw_32bit`): 16-bit adapters
  and gradients, fp32 optimizer states and no master copy; paged optimizer states are "automatically
  evicted to CPU RAM when the GPU runs out-of-memory and paged back into GPU memory when the memory is
  needed in the optimizer update step" (§3 "Paged Optimizers"), so they and the activations never need
  the card at the same time: the peak holds max(activations, states), not their sum. Only where the launch runs a
  bitsandbytes paged optimizer (`paged_optimizer`): unsharded, under the Trainer's paged_adamw_32bit /
  paged_adamw_8bit / paged_lion_32bit.
- Activations, per operation (Korthikanti et al. 2022, §4.1 method, Table 2): we count every tensor autograd keeps
  for the backward pass of a Llama-style (RMSNorm, SwiGLU, GQA, no dropout) or a GPT-style (LayerNorm, GELU) block,
  instead of the GPT-with-dropout constant 34. Flash attention keeps q, k, v, the output and the log-sum-exp, no s²
  tensor (Dao et al. 2022, §3.1); without it (eager attention) the fp32 softmax output and its 16-bit copy (6·a·s²
  bytes per sequence, EAGER_SCORE_ELEMENTS) are kept as well. Tensor parallelism divides all but the norm
  inputs/outputs; sequence parallelism divides those too (Korthikanti §4.2.2). Selective recompute is torchtitan's
  op-level policy (`apply_ac`: the outputs of every other matmul, SDPA and the layer input are kept, the rest
  recomputed; see _act_coeffs); Megatron-LM's selective (`--recompute-activations`, a plan with `fp32_main_grads`)
  recomputes the core attention only and keeps the whole MLP (transformer_config.py `recompute_modules` default
  ["core_attn"]). Full recompute keeps each layer's input plus one layer being recomputed. 1F1B: the first stage
  keeps min(p, m) micro-batches in flight; interleaving multiplies by 1 + (p-1)/(p·v) (Korthikanti §4.2.3; Megatron
  `compute_activation_memory`).
- Logits and loss, unfused: fp32 log-probs saved by log_softmax, nll_loss's fp32 gradient and the fp32 gradient of
  the logits, 12 bytes per logit at the start of the backward (transformers `ForCausalLMLoss`, PyTorch
  `log_softmax_backward`); chunked: the fp32 log-probs only; fused (Liger): no logits, FUSED_LOSS_BYTES_PER_HIDDEN.
- Host RAM while loading (`Plan.host_load`, set by the planner for the stacks that load so): copies of the whole
  model as loaded (QLoRA: NF4 linears and the 16-bit rest), one per rank on the node or one per node, held before
  ZeRO-3 shards them; the host gate counts the larger of that and the offloaded states (`MemoryBreakdown.host_peak`).
  Sources in app/planner/stacks.py `host_load` (transformers' bitsandbytes loader under DeepSpeed ZeRO-3).
- Inference: weights + KV cache 2·layers·kv_heads·head_dim·context·batch·bytes + one layer's prefill
  working set + last-token logits.
- `other`: cuBLAS/cuDNN workspaces in the caching allocator (~0.25 GiB: 2 × `CUBLAS_WORKSPACE_CONFIG`
  :4096:8 = 32 MiB per handle, several streams/handles, PyTorch docs "Reproducibility"), NCCL buffers
  when more than one GPU (NCCL_BUFFSIZE 4 MiB per channel and peer, NCCL environment docs; ~0.5 GiB),
  and allocator fragmentation, 5 % of activations (PyTorch "CUDA semantics: memory management",
  reserved vs allocated). The CUDA context itself is outside `capacity` (usable memory, gpus.json).

Speed: the planner calls estimate_memory for thousands of plans of one (model, workload). Everything that
no plan changes lives in a per-(model, workload) context found by object identity (hashing a 20-field
frozen ModelSpec costs more than the arithmetic); per-split results (stages per tp/pp/ep, activation
element sums, ZeRO-3 advice) are cached in that context under small int/str tuple keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from app.estimator.compute import nf4_bytes_per_param
from app.estimator.hardware import load_gpus
from app.estimator.interconnects import host_pcie_bytes_per_s
from app.estimator.params import count_params, linear_shapes
from app.estimator.specs import (
    GIB,
    Cluster,
    EstimatorError,
    LoraSpec,
    MemoryBreakdown,
    ModelSpec,
    Plan,
    Warning_,
    Workload,
    require_choice,
)
from app.estimator.vocabulary import (
    BYTES_PER_ELEMENT,
    FULL_TRAINING_TASKS,
    HOST_LOADS,
    LORA_TARGETS,
    LORA_TASKS,
    OFFLOADS,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTES,
    TASKS,
)

# --- constants (each cited) --------------------------------------------------------------------

MASTER_BYTES = 4.0  # fp32 master copy under mixed precision (ZeRO §3.1)
# FSDP2 MixedPrecisionPolicy(reduce_dtype=float32), torchtitan's default, and the sharded gradient FSDP2 keeps in the
# parameter's dtype (fp32 in torchtitan: `foreach_reduce`); DeepSpeed ZeRO-2's fp32 gradient partition at the step
FSDP_REDUCE_BYTES = 4.0
# optimizer state bytes per parameter in fp32 (mixed precision) and as a multiple of the dtype (pure)
STATE_FP32_BYTES = {"adamw": 8.0, "adamw_8bit": 2.0, "lion": 4.0, "sgd": 4.0, "adafactor": 0.02}
STATE_DTYPE_COPIES = {"adamw": 2.0, "adamw_8bit": 0.0, "lion": 1.0, "sgd": 1.0, "adafactor": 0.01}
STATE_FIXED_BYTES = {"adamw_8bit": 2.0}  # 8-bit states do not follow the training dtype
# ...on DeepSpeed ZeRO's flat 1-D partitions (`_flat_partitions`): Adafactor's second moment cannot be factored there
# (transformers `Adafactor._get_options`: factored only when len(param_shape) >= 2): one full v per parameter
FLAT_STATE_FP32_BYTES = {**STATE_FP32_BYTES, "adafactor": 4.0}
FLAT_STATE_DTYPE_COPIES = {**STATE_DTYPE_COPIES, "adafactor": 1.0}
# bitsandbytes paged optimizers the Trainer names (transformers training_args.py OptimizerNames paged_adamw_32bit,
# paged_adamw_8bit, paged_lion_32bit); bitsandbytes has no paged SGD or Adafactor
PAGED_OPTIMIZERS = frozenset({"adamw", "adamw_8bit", "lion"})
# Unfused cross-entropy on fp32-upcast logits (transformers `ForCausalLMLoss`, src/transformers/loss/loss_utils.py:
# `logits.float()` then `nn.functional.cross_entropy`; torchtitan `cross_entropy_loss` likewise): log_softmax saves its
# fp32 output; at the start of the backward, when every saved activation is still held, nll_loss's dense fp32 gradient
# and log_softmax's fp32 gradient of the logits exist beside it. The 16-bit logits are dropped before the backward
# (transformers Trainer.compute_loss returns the loss only; torchtitan's train step `del pred`).
LOSS_BYTES_PER_LOGIT = 4.0 + 4.0 + 4.0
# chunked/fused loss (torchtune CEWithChunkedOutputLoss, litgpt chunked_cross_entropy, Megatron fused vocab-parallel
# CE): only the log-probs (fp32, or 16-bit logits + 16-bit log-probs) stay for the backward pass; chunks are transient
CHUNKED_LOSS_BYTES_PER_LOGIT = 4.0
# fused head + loss (Liger-Kernel ops/fused_linear_cross_entropy.py `fused_linear_cross_entropy_forward`): the logits
# exist one chunk of about BT·H/V tokens at a time (chunk_size = next_power_of_2(cdiv(BT, cdiv(V, H)))) and the
# gradient of the hidden states (`grad_input`) is made in the forward and kept for the backward: nothing per logit, a
# few bytes per hidden element of the tokens. Measured: Liger's A100 benchmark (benchmark/data/all_benchmark_data.csv,
# fused_linear_cross_entropy, liger, full, H 4096, V 128256, bf16) grows 4,910 -> 5,795 MB from 16,384 to 32,768
# tokens, 13.8 bytes per hidden element, of which 2 are the input (the hidden states, counted with the activations).
FUSED_LOSS_BYTES_PER_HIDDEN = 12.0
FP8_BYTES = 1.0  # an FP8 (e4m3 / e5m2) element
OTHER_WORKSPACE_BYTES = 0.25 * GIB  # cuBLAS/cuDNN workspaces (module docstring)
OTHER_NCCL_BYTES = 0.5 * GIB  # NCCL channel buffers when > 1 GPU (module docstring)
# Host RAM an offloading plan may not count on, per node (host_ram_reserve_gib):
# - the operating system and node agents, by the tiered rule Google Kubernetes Engine reserves on every
#   node: 25 % of the first 4 GiB, 20 % of the next 4, 10 % of the next 8, 6 % of the next 112, 2 % above
#   128 GiB (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, "memory reservations");
# - per GPU, its training process outside the offloaded states (CUDA/PyTorch runtime, pinned staging
#   buffers for the host copies) and its DataLoader workers: "typically there are at least 2x 8 DL workers
#   running on each node" (Bekman, ml-engineering, compute/cpu-memory). Assumed 2 GiB for the process and
#   2 GiB for each of 2 workers: 6 GiB per GPU.
OS_RESERVE_TIERS = ((4.0, 0.25), (4.0, 0.20), (8.0, 0.10), (112.0, 0.06), (float("inf"), 0.02))
HOST_RESERVE_PER_GPU_GIB = 6.0
FRAGMENTATION = 0.05  # caching-allocator slack on activations (module docstring)
# Eager attention in training (plan.attention "eager"; Plan.flash_attention False), per score element (b·a·s² per
# layer): transformers `eager_attention_forward` (models/llama/modeling_llama.py) takes the softmax in fp32 and casts it
# back, `softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)`: softmax's backward keeps its fp32 output
# (4 bytes) and the matmul with v keeps the 16-bit copy (2 bytes); dropout at p = 0 returns its input (ATen
# Dropout.cpp `_dropout`), so 6 bytes = 3 elements of 2 bytes. Measured: ms-swift's Qwen-7B LoRA at 1 x 2048 without
# checkpointing reads 19.97 GiB more without flash attention (docs/source_en/LLM/Benchmark.md: 57.67 against 37.70);
# 3 elements give 24.0 GiB. Inference keeps one element (the prefill's scores, not saved for a backward).
EAGER_SCORE_ELEMENTS = 3.0
# Activation offloading keeps two layers' saved tensors on the GPU: the one in use and the one in flight over PCIe
# (torchtune `OffloadActivations` copies on a side stream and syncs one layer ahead)
ACTIVATION_OFFLOAD_LAYERS = 2.0
MEGATRON_SELECTIVE = (
    "selective_megatron"  # activation-count key for Megatron-LM's selective recompute (_recompute_kind)
)
MAX_SEQ_LEN = 10_000_000
MAX_BATCH = 1_000_000


@dataclass(slots=True)  # an output, built on every estimate (not frozen: see MemoryBreakdown)
class MemoryEstimate:
    breakdown: MemoryBreakdown  # bytes per GPU, worst pipeline stage
    warnings: list[Warning_]
    assumptions: tuple[str, ...]  # shared by the plans that state the same (immutable)


# --- per-model quantities (cached on the frozen ModelSpec) ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Facts:
    attn: float  # tensor-parallel part of one layer's attention
    dense_mlp: float
    routed_experts: float  # all routed experts of one MoE layer (ep- and tp-shardable)
    moe_other: float  # router + shared experts of one MoE layer
    norms: float  # per layer, replicated
    embedding: float
    lm_head: float  # 0 when tied
    final_norm: float
    moe_layers: int
    layers: int
    block_linear: float  # weights of all block linears (what NF4 quantises)
    largest_linear: float  # one matrix, for the QLoRA dequantisation buffer


@lru_cache(maxsize=4096)
def _facts(model: ModelSpec) -> _Facts:
    counts = count_params(model)
    routed = 0.0
    moe_other = 0.0
    if model.is_moe:
        shapes = linear_shapes(model)
        expert_one = sum(d_in * d_out for key, (d_in, d_out, _) in shapes.items() if key.endswith("_experts"))
        routed = expert_one * model.experts
        moe_other = counts.moe_mlp_per_layer - routed
    linear = sum(d_in * d_out * copies for d_in, d_out, copies in linear_shapes(model).values())
    largest = max(d_in * d_out for d_in, d_out, _ in linear_shapes(model).values())
    return _Facts(
        attn=float(counts.attention_per_layer),
        dense_mlp=float(counts.dense_mlp_per_layer),
        routed_experts=float(routed),
        moe_other=float(moe_other),
        norms=float(counts.norms_per_layer),
        embedding=float(counts.embedding),
        lm_head=float(counts.lm_head),
        final_norm=float(counts.final_norm),
        moe_layers=model.moe_layers if model.is_moe else 0,
        layers=model.layers,
        block_linear=float(linear),
        largest_linear=float(largest),
    )


def _lora_targets(lora: LoraSpec) -> frozenset[str]:
    return frozenset(LORA_TARGETS if "all-linear" in lora.targets else lora.targets)


@lru_cache(maxsize=4096)
def _adapter_params(model: ModelSpec, rank: int, targets: frozenset[str]) -> float:
    """r·(d_in + d_out) per adapted matrix (Hu et al. 2021, §4.1); MoE experts adapted one by one."""
    total = 0
    for key, (d_in, d_out, copies) in linear_shapes(model).items():
        if key.removesuffix("_experts") in targets:
            total += rank * (d_in + d_out) * copies
    return float(total)


@dataclass(frozen=True, slots=True)
class _ActCoeffs:
    """Elements kept per token for one layer's backward, split by how tensor parallelism divides them."""

    replicated: float  # norm inputs/outputs: divided by tp only with sequence parallelism
    q_side: float  # q and attention output: heads split by tp
    kv_side: float  # k and v: kv heads split by tp (replicated when kv_heads < tp)
    mlp: float  # MLP intermediates (dense layer), split by tp
    moe_mlp: float  # MoE layer MLP intermediates incl. dispatched copies, split by tp
    selective_replicated: float
    selective_q: float  # torchtitan's op-level selective recompute: wq and attention outputs (heads split by tp)
    selective_kv: float  # ... and wv's output (kv heads split by tp)
    selective_mlp: float
    selective_moe_mlp: float
    megatron_selective_mlp: float  # Megatron's selective recompute: the MLP is not recomputed (see _act_coeffs)
    megatron_selective_moe_mlp: float
    attn_heads: float  # a: softmax rows per token per query position (non-flash s² term)
    kv_heads: int  # whole kv heads are replicated across tp ranks when kv_heads < tp
    per_layer_input: float  # hidden: what full recompute keeps per layer


@lru_cache(maxsize=4096)
def _act_coeffs(model: ModelSpec, trainable: frozenset[str], compiled: bool = False) -> _ActCoeffs:
    """Per-operation saved tensors (elements per token); `trainable` lists linears whose input is kept.

    A frozen linear needs no saved input (autograd keeps x only for the weight gradient), which is why
    LoRA on q and v keeps less than a full fine-tune (PyTorch autograd `mm` backward formula). Eager RMSNorm
    (HF `LlamaRMSNorm`, torchtune and litgpt `RMSNorm`) upcasts its input and keeps that fp32 copy: 2 elements.
    The attention output is kept twice: by flash attention and, after `.transpose().contiguous()`, as the
    o_proj input (HF `LlamaAttention`, torchtitan `Attention`).

    `compiled` (torch.compile): Inductor's training graphs go through the min-cut partitioner
    (torch/_functorch/partitioners.py `min_cut_rematerialization_partition`), which saves matmul outputs and
    recomputes the fusible pointwise ops in the backward: an RMSNorm keeps its 16-bit input (and a per-token rstd),
    not an fp32 copy; a SwiGLU MLP keeps the gate and up outputs and recomputes SiLU and the product that feeds down;
    a GELU MLP keeps the fc1 output.
    """
    h, d = model.hidden, model.d_head
    q, kv = model.heads * d, model.kv_heads * d
    swiglu = model.mlp == "swiglu"
    norm_in = 2 * h if model.norm == "rmsnorm" and not compiled else h
    norm1_out = h if trainable & {"q", "k", "v"} else 0
    norm2_out = h if trainable & {"gate", "up"} else 0
    o_in = q if "o" in trainable else 0
    down_in = 1 if "down" in trainable else 0
    # SwiGLU: gate output (SiLU input), SiLU output and up output (mul operands), product (down input)
    per_width = (3 + down_in) if swiglu else (1 + down_in)  # GELU: fc1 output (GELU input), GELU output
    if compiled:
        per_width = 2 if swiglu else 1
    width_e = model.expert_ffn or model.ffn
    moe_mlp = 0.0
    if model.is_moe:
        k = model.experts_per_token
        dispatched = k * h if trainable & {"gate", "up"} else 0  # permuted token copies feed the experts
        moe_mlp = dispatched + (k + model.shared_experts) * per_width * width_e + model.experts
    # selective (torchtitan `apply_ac` op-level policy, torchtitan/distributed/activation_checkpoint.py
    # `_get_custom_policy`): every op of the save list is kept except every second mm, counted per layer and on across
    # steps, so a Llama layer's seven mms (wq, wk, wv, wo, w1, w3, w2) keep wq, wv, w1, w2 on one step and wk, wo, w3
    # on the next; the peak is the first: q, the SDPA output and its log-sum-exp, v, the w1 output and the w2 output,
    # beside the layer's input. A GELU MLP's two mms (fc1, fc2) are the 5th and 6th: fc1 kept, fc2 recomputed.
    sel_width = 1  # the w1 (gate) / fc1 output
    sel_moe = (model.experts_per_token + model.shared_experts) * sel_width * width_e if model.is_moe else 0.0
    # Megatron-LM's selective recompute (--recompute-activations) recomputes the core attention only
    # (megatron/core/transformer/transformer_config.py, core_v0.15.3: recompute_modules defaults to ["core_attn"];
    # "mlp" and "moe_act" are modules of their own, off by default): the MLP keeps the fc1 output (gate and up,
    # the fused bias_swiglu's input, 2 × ffn) and the SwiGLU output that linear_fc2 saves (ffn); GELU: fc1 output and
    # GELU output
    mega_width = (2 + down_in) if swiglu else (1 + down_in)
    mega_moe = (model.experts_per_token + model.shared_experts) * mega_width * width_e if model.is_moe else 0.0
    q_side, kv_side, low_rank = 2 * q + o_in, 2 * kv, 0
    if model.mla is not None:
        q_side, low_rank = _mla_elements(model, trainable, compiled)
        kv_side = 0  # MLA's keys and values are per head after the up-projection: counted with the queries
    return _ActCoeffs(
        replicated=float(2 * norm_in + norm1_out + norm2_out + low_rank),
        q_side=float(q_side),
        kv_side=float(kv_side),
        mlp=float(per_width * model.ffn),
        moe_mlp=float(moe_mlp),
        selective_replicated=float(2 * h if swiglu else h),  # the layer's input and the w2 output (SwiGLU)
        selective_q=float(2 * q),
        selective_kv=float(kv),
        selective_mlp=float(sel_width * model.ffn),
        selective_moe_mlp=float(sel_moe),
        megatron_selective_mlp=float(mega_width * model.ffn),
        megatron_selective_moe_mlp=float(mega_moe),
        attn_heads=float(model.heads),
        kv_heads=model.kv_heads,
        per_layer_input=float(h),
    )


def _mla_elements(model: ModelSpec, trainable: frozenset[str], compiled: bool) -> tuple[int, int]:
    """(per-head elements, low-rank elements) one multi-latent-attention layer keeps per token (DeepSeek-V2/V3).

    The GQA-equivalent shape that stands in for MLA's parameters (models._mla_equivalent_heads) does not say what
    its attention keeps: after the up-projections every head has its own query and key (nope + rope dims) and value
    (transformers DeepseekV3Attention.forward; Megatron-Core MultiLatentAttention), and the attention keeps q, k, v
    and its output, o_proj its input, as in `_act_coeffs`. The rotary multiply keeps cos/sin, not its input. The
    low-rank side: q_a_layernorm and kv_a_layernorm keep their input (fp32 when eager, as any RMSNorm here), and
    q_b_proj / kv_b_proj keep their normed input when trained; q_lora_rank 0 (V2-Lite) has no query compression.
    Those low-rank projections are not split by tensor parallel (Megatron-Core duplicates the down-projections)."""
    assert model.mla is not None
    q_rank, kv_rank, nope, rope, v_dim = model.mla
    heads = model.heads
    per_head = heads * (2 * (nope + rope) + 2 * v_dim) + (heads * v_dim if "o" in trainable else 0)
    norm_in = 1 if compiled else 2
    low_rank = norm_in * (q_rank + kv_rank)
    low_rank += (q_rank if "q" in trainable else 0) + (kv_rank if trainable & {"k", "v"} else 0)
    return per_head, low_rank


_FULL_TRAINABLE = frozenset(LORA_TARGETS)


@lru_cache(maxsize=4096)
def _lora_dropout_elements(model: ModelSpec, targets: frozenset[str]) -> float:
    """Elements per token per layer kept by LoRA dropout: each adapted input's dropped-out 16-bit copy plus its
    1-byte mask (half an element), one per adapted module as in PEFT `LoraLayer.lora_dropout` (nn.Dropout saves
    the mask; lora_A saves its input)."""
    d_in = {
        "q": model.hidden,
        "k": model.hidden,
        "v": model.hidden,
        "o": model.heads * model.d_head,
        "gate": model.hidden,
        "up": model.hidden,
        "down": model.expert_ffn or model.ffn,
    }
    if model.is_moe and not model.ffn:
        d_in["down"] = model.expert_ffn or 0
    return 1.5 * sum(d_in[t] for t in targets if t in d_in)


def _trainable_linears(workload: Workload) -> frozenset[str]:
    if workload.task in LORA_TASKS:
        return _lora_targets(workload.lora or LoraSpec())
    return _FULL_TRAINABLE


# --- pipeline stages ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Stage:
    """Parameters held by one GPU of one pipeline stage (after tp/ep division, before ZeRO)."""

    layers: int
    moe_layers: int
    params: float  # all parameters on this GPU
    expert_params: float  # of which routed experts (sharded by ZeRO over the expert-data-parallel group)
    linear_params: float  # of which block linears (NF4-quantised under QLoRA)
    largest_unit: float  # largest module gathered at once under ZeRO-3 (layer, embedding or head)
    layer_params: float  # one transformer layer on this GPU
    is_first: bool
    is_last: bool


def _layer_params(facts: _Facts, tp: int, ep: int, moe: bool) -> float:
    mlp = (facts.routed_experts / ep + facts.moe_other) if moe else facts.dense_mlp
    return (facts.attn + mlp) / tp + facts.norms


def _stage(facts: _Facts, tp: int, pp: int, ep: int, *, first: bool, last: bool) -> _Stage:
    layers = math.ceil(facts.layers / pp)
    moe = min(layers, facts.moe_layers)  # worst case: a stage made of MoE layers when there are enough
    dense_layer, moe_layer = _layer_params(facts, tp, 1, False), _layer_params(facts, tp, ep, True)
    body = (layers - moe) * dense_layer + moe * moe_layer
    head = facts.lm_head or (facts.embedding if pp > 1 else 0.0)  # tied head is a copy on the last stage
    embedding = facts.embedding / tp if first else 0.0
    output = (head / tp + facts.final_norm) if last else 0.0
    norms = layers * facts.norms
    largest_layer = moe_layer if moe else dense_layer
    return _Stage(
        layers=layers,
        moe_layers=moe,
        params=body + embedding + output,
        expert_params=moe * facts.routed_experts / (ep * tp),
        linear_params=body - norms,
        largest_unit=max(largest_layer, embedding, head / tp if last else 0.0),
        layer_params=largest_layer,
        is_first=first,
        is_last=last,
    )


def _stages(facts: _Facts, tp: int, pp: int, ep: int) -> tuple[_Stage, ...]:
    """The first and the last pipeline stage (one stage without pipelining)."""
    if pp == 1:
        return (_stage(facts, tp, pp, ep, first=True, last=True),)
    return (_stage(facts, tp, pp, ep, first=True, last=False), _stage(facts, tp, pp, ep, first=False, last=True))


def _optimizer_bytes_per_param(workload: Workload, flat: bool = False) -> float:
    """Optimizer-owned bytes per trainable parameter: fp32 master + states (mixed) or states only; `flat`: on
    DeepSpeed ZeRO's 1-D partitions (`_flat_partitions`), where Adafactor's second moment is not factored."""
    if workload.mixed_precision and workload.precision != "fp32":
        return MASTER_BYTES + (FLAT_STATE_FP32_BYTES if flat else STATE_FP32_BYTES)[workload.optimizer]
    fixed = STATE_FIXED_BYTES.get(workload.optimizer)
    if fixed is not None:
        return fixed
    return (FLAT_STATE_DTYPE_COPIES if flat else STATE_DTYPE_COPIES)[workload.optimizer] * _train_dtype_bytes(workload)


def _flat_partitions(zero: int) -> bool:
    """Whether the optimizer steps flat 1-D partitions rather than the parameters' own shapes: under ZeRO 1-3
    DeepSpeed swaps each param group's parameters for one flat fp32 partition (deepspeed/runtime/zero/stage_1_and_2.py
    `param_group['params'] = [self.single_partition_of_fp32_groups[i]]`, stage3.py `fp32_partitioned_groups_flat`),
    even on one GPU. Without ZeRO it wraps a non-fused optimizer in FP16_UnfusedOptimizer, which keeps one fp32 copy
    per parameter, shape and all (deepspeed/runtime/engine.py `_configure_fp16_optimizer`, runtime/fp16/
    unfused_optimizer.py). FSDP2 shards per parameter and keeps shapes, but no FSDP stack here runs Adafactor
    (torchtitan: Adam/AdamW only; data/stacks.json)."""
    return zero >= 1


def checkpoint_bytes_per_param(workload: Workload) -> float:
    """Bytes a checkpoint stores per trainable parameter: the training weight plus the optimizer's state
    (14 for bf16 mixed-precision Adam: 2 + fp32 master 4 + m 4 + v 4, as Megatron-LM's distributed
    checkpoints and DeepSpeed's ZeRO checkpoints hold them)."""
    return _train_dtype_bytes(workload) + _optimizer_bytes_per_param(workload)


def _train_dtype_bytes(workload: Workload) -> float:
    # fp8 training (Transformer Engine, torchao float8) keeps bf16 weights and casts per matmul
    return 4.0 if workload.precision == "fp32" else 2.0


# --- per (model, workload) context: what no plan changes, computed once ---------------------------


@dataclass(slots=True)
class _Ctx:
    """Quantities of one (model, workload) pair; the dicts cache per-split results under small int keys,
    which hash far faster than the 20-field ModelSpec (the planner varies only the plan)."""

    model: ModelSpec
    workload: Workload
    facts: _Facts
    coeffs: _ActCoeffs
    compiled_coeffs: _ActCoeffs  # under torch.compile (Plan.compiled)
    dtype: float  # bytes of a training weight / gradient
    optimizer_per_param: float
    flat_optimizer_per_param: float  # the same on ZeRO's flat partitions (`_flat_partitions`)
    act_bytes: float
    adapters: float  # LoRA parameters in the whole model (0 for other tasks)
    adapter_dtype: float
    adapter_optimizer: float
    flat_adapter_optimizer: float
    paged: tuple[bool, bool]  # (replicated, on ZeRO's flat partitions): `paged_optimizer` by `_flat_partitions`
    dropout_elements: float  # LoRA dropout copies, elements per token per layer
    nf4_bytes: float  # bytes per NF4-stored base weight (QLoRA)
    stages: dict[tuple[int, int, int], tuple[_Stage, ...]] = field(default_factory=dict)
    elements: dict[tuple[object, ...], tuple[float, float]] = field(default_factory=dict)
    working: dict[tuple[object, ...], tuple[tuple[float, float, float, float], ...]] = field(default_factory=dict)
    states: dict[tuple[object, ...], tuple[tuple[float, ...], ...]] = field(default_factory=dict)
    advice: dict[tuple[object, ...], Warning_] = field(default_factory=dict)
    traps: dict[tuple[object, ...], tuple[Warning_, ...]] = field(default_factory=dict)
    assumptions: dict[tuple[object, ...], tuple[str, ...]] = field(default_factory=dict)


def _lora_figures(model: ModelSpec, workload: Workload, flat: bool = False) -> tuple[float, float, float, float]:
    """(adapter params, adapter weight/grad bytes, adapter optimizer bytes, dropout elements) for LoRA tasks;
    `flat`: the optimizer bytes on ZeRO's flat partitions (`_flat_partitions`)."""
    if workload.task not in LORA_TASKS:
        return 0.0, 0.0, 0.0, 0.0
    lora = workload.lora or LoraSpec()
    targets = _lora_targets(lora)
    states = FLAT_STATE_FP32_BYTES if flat else STATE_FP32_BYTES
    if not workload.mixed_precision:
        dtype, optim = _train_dtype_bytes(workload), _optimizer_bytes_per_param(workload, flat)
    elif workload.task == "qlora":  # QLoRA eq. 5: BF16 adapters, 32-bit optimizer states, no master copy
        dtype, optim = _train_dtype_bytes(workload), states[workload.optimizer]
    else:  # PEFT keeps adapters in fp32 over a 16-bit base: fp32 weights, gradients and states
        dtype, optim = 4.0, states[workload.optimizer]
    dropout = _lora_dropout_elements(model, targets) if lora.dropout > 0 else 0.0
    return _adapter_params(model, lora.rank, targets), dtype, optim, dropout


@lru_cache(maxsize=1024)
def _build_context(model: ModelSpec, workload: Workload) -> _Ctx:
    _validate_workload(model, workload)  # raises before anything is cached
    adapters, adapter_dtype, adapter_optim, dropout = _lora_figures(model, workload)
    trainable = frozenset() if workload.task == "inference" else _trainable_linears(workload)
    return _Ctx(
        model=model,
        workload=workload,
        facts=_facts(model),
        coeffs=_act_coeffs(model, trainable),
        compiled_coeffs=_act_coeffs(model, trainable, compiled=True),
        dtype=_train_dtype_bytes(workload),
        optimizer_per_param=_optimizer_bytes_per_param(workload),
        flat_optimizer_per_param=_optimizer_bytes_per_param(workload, flat=True),
        act_bytes=4.0 if workload.precision == "fp32" else 2.0,
        adapters=adapters,
        adapter_dtype=adapter_dtype,
        adapter_optimizer=adapter_optim,
        flat_adapter_optimizer=_lora_figures(model, workload, flat=True)[2],
        paged=(_pages(workload, flat=False), _pages(workload, flat=True)),
        dropout_elements=dropout,
        nf4_bytes=nf4_bytes_per_param(workload),
    )


def kbit_upcast(workload: Workload, plan: Plan | None = None) -> bool:
    """Whether PEFT's `prepare_model_for_kbit_training` runs: as asked, else on for QLoRA unless its 4-bit weights are
    sharded by ZeRO-3 / FSDP over more than one GPU (TRL's SFTTrainer calls it for a 4-bit model, but not for
    `is_sharded_qlora`, trl/trainer/sft_trainer.py 2024-2025; artidoro/qlora qlora.py calls it too).

    It casts every parameter that is not 4-bit to fp32 (peft/utils/other.py); with bf16 both trainers cast the
    embedding and head back (TRL `peft_module_casting_to_bf16`, qlora.py) but keep the norms fp32. transformers'
    LlamaRMSNorm returns `self.weight * hidden_states.to(input_dtype)`, fp32 with an fp32 weight; bitsandbytes
    `Linear4bit.forward` casts its output back to its input's dtype, and the residual add promotes: from the first
    layer on the residual stream, the norm outputs and the projections run in fp32, and so do the tensors saved for
    the backward (the flash-attention path warns that its inputs were "silently casted in float32" and casts q, k, v
    back for the kernel). Weights stay as counted: NF4 linears, 16-bit embedding and head."""
    if workload.task != "qlora":
        return False
    if workload.kbit_upcast is not None:
        return workload.kbit_upcast
    return plan is None or not (plan.zero_stage == 3 and plan.dp * plan.cp > 1)


def _act_bytes(ctx: _Ctx, plan: Plan) -> float:
    """Bytes per saved activation element: the training dtype, or fp32 under PEFT's k-bit preparation."""
    return 4.0 if ctx.act_bytes == 4.0 or kbit_upcast(ctx.workload, plan) else ctx.act_bytes


def paged_optimizer(workload: Workload, plan: Plan | None = None) -> bool:
    """Whether the optimizer states are paged: as asked, else on for QLoRA (its recipe's `paged_adamw_32bit`) where the
    launch runs a bitsandbytes paged optimizer: one with a paged variant (PAGED_OPTIMIZERS) and no ZeRO sharding, as
    the Trainer runs it on one GPU or replicated (app/planner/launch.py names it). Under ZeRO 1-3 DeepSpeed hands the
    optimizer its own flat partitions (`_flat_partitions`; a bitsandbytes optimizer there is an untested client
    optimizer, `zero_allow_untested_optimizer`), and under FSDP bitsandbytes' optimizers do not run on sharded
    parameters (bitsandbytes-foundation/bitsandbytes#89; pytorch/ao#1213: paged AdamW "doesn't work with FSDP"), so
    the launch runs plain states there, resident beside the activations, and they are sized so (torchtune's QLoRA
    recipe runs torch.optim.AdamW too: recipes/configs/llama2/7B_qlora.yaml)."""
    return _pages(workload, flat=plan is not None and _flat_partitions(plan.zero_stage))


def _pages(workload: Workload, *, flat: bool) -> bool:
    """`paged_optimizer` for a plan whose optimizer steps ZeRO's flat partitions (`flat`) or the parameters."""
    if workload.paged_optimizer is not None:
        return workload.paged_optimizer
    return workload.task == "qlora" and workload.optimizer in PAGED_OPTIMIZERS and not flat


_CONTEXTS: dict[tuple[int, int], _Ctx] = {}
_MAX_CONTEXTS = 256


def _context(model: ModelSpec, workload: Workload) -> _Ctx:
    """Identity-keyed fast path: hashing a 20-field ModelSpec costs more than the rest of a lookup.

    The context holds references to both objects, so their ids cannot be reused while the entry lives.
    """
    ctx = _CONTEXTS.get((id(model), id(workload)))
    if ctx is not None and ctx.model is model and ctx.workload is workload:
        return ctx
    ctx = _build_context(model, workload)
    if len(_CONTEXTS) >= _MAX_CONTEXTS:
        _CONTEXTS.clear()
    _CONTEXTS[(id(model), id(workload))] = ctx
    return ctx


def _stages_of(ctx: _Ctx, plan: Plan) -> tuple[_Stage, ...]:
    key = (plan.tp, plan.pp, plan.ep)
    stages = ctx.stages.get(key)
    if stages is None:
        stages = ctx.stages[key] = _stages(ctx.facts, *key)
    return stages


# --- model states ------------------------------------------------------------------------------


def _shard(value: float, stage: int, needed: int, n: int) -> float:
    return value / n if stage >= needed else value


def _gathered(ctx: _Ctx, stage: _Stage) -> float:
    """ZeRO-3 working set: two gathered units in 16-bit, the current one and the prefetched next one.

    The unsharded gradient of one layer before its reduce-scatter exists under ZeRO-2 as well (a bucket),
    so it is charged to neither. Under QLoRA a layer is gathered as stored, NF4-packed (FSDP shards and all-gathers
    the `bnb_4bit_quant_storage` tensors; bitsandbytes dequantises one matrix at a time in forward, counted in
    `other`); the embedding and head stay 16-bit.
    """
    if ctx.workload.task == "qlora":
        layer = stage.layer_params * ctx.nf4_bytes
        other = stage.largest_unit * 2.0 if stage.largest_unit > stage.layer_params else 0.0
        return 2.0 * max(layer, other)
    return 2.0 * stage.largest_unit * ctx.dtype


def _zero3_weights(full_bytes: float, n: int, gathered: float) -> float:
    # a shard plus the gathered units, never more than the unsharded weights (n = 1 shards nothing)
    return min(full_bytes, full_bytes / n + gathered)


def _full_states(
    ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str
) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, host bytes) per GPU for pretraining / full fine-tuning.

    ZeRO shards over n = dp × cp, but a routed expert's states only over its expert-data-parallel group:
    the ranks holding the same experts, world / (ep × expert tp × pp) = n / ep here (Megatron-LM
    `compute_weight_and_optimizer_memory` charges expert params at expert_data_parallel_size; torchtitan
    shards experts over the dp_shard_mod_ep mesh).

    With pipeline stages, ZeRO-2 and ZeRO-3 run as FSDP2 under a pipeline schedule, as torchtitan runs them
    (DeepSpeed's pipeline engine refuses both): gradient sync waits for the last micro-batch
    (torch.distributed.pipelining `PipelineStage.backward_maybe_with_nosync` turns requires_gradient_sync
    off for every backward but the last), so the stage's unsharded gradients, accumulated in the fp32
    reduce dtype (FSDP2 `FSDPParam.to_accumulated_grad_if_needed`), stay resident for the whole step; under
    ZeRO-3 the parameters are not resharded after forward either ("to avoid per-microbatch all-gathers",
    torchtitan `apply_fsdp`, reshard_after_forward = False when PP is on). Only the optimizer state and
    master weights are sharded then.
    """
    params = stage.params
    # a GPU's shard of the parameters: dense ones over n, routed experts over n / ep (at least one rank)
    shard = params if zero == 0 else (params - stage.expert_params) / n + stage.expert_params / max(1.0, n / plan.ep)
    mixed = ctx.workload.mixed_precision and ctx.workload.precision != "fp32"
    grad_bytes = MASTER_BYTES if plan.fp32_main_grads and mixed else ctx.dtype
    weights = params * ctx.dtype
    if plan.fp8_params:  # the linear weights' working copy in FP8; embeddings, head and norms stay 16-bit
        weights -= stage.linear_params * (ctx.dtype - FP8_BYTES)
    grads = params * grad_bytes
    per_param = ctx.flat_optimizer_per_param if _flat_partitions(zero) else ctx.optimizer_per_param
    optim = (shard if zero else params) * per_param
    if zero >= 2:
        if plan.pp > 1 and n > 1:  # deferred reduce-scatter: whole gradients in the fp32 reduce dtype
            grads = params * (FSDP_REDUCE_BYTES if ctx.workload.mixed_precision else ctx.dtype)
        elif zero == 2 and mixed and offload == "none":  # fp32 gradient shards (module docstring)
            grads = shard * FSDP_REDUCE_BYTES
        else:  # ZeRO-3: 16-bit shards, the 16/N of FSDP2's fp32 params + grads + m, v and of DeepSpeed's states
            grads = shard * grad_bytes
        if zero == 3 and plan.pp == 1:
            weights = min(weights, shard * ctx.dtype + 2.0 * stage.largest_unit * ctx.dtype)
    if offload == "none":
        return weights, grads, optim, 0.0
    return _offloaded(ctx, stage, (weights, grads, optim), shard, offload)


def _offloaded(
    ctx: _Ctx, stage: _Stage, states: tuple[float, float, float], shard: float, offload: str
) -> tuple[float, float, float, float]:
    """ZeRO-Offload keeps fp32 master, states and fp32 gradients on the host (Ren et al. 2021, §4.1);
    `shard` is the parameters this GPU owns (all of them without ZeRO)."""
    weights, grads, optim = states
    host = optim + shard * 4.0
    if offload == "optimizer":
        return weights, grads, 0.0, host
    host += shard * ctx.dtype  # FSDP CPUOffload / ZeRO-3 offload_param: the 16-bit shard too
    return _gathered(ctx, stage), stage.layer_params * ctx.dtype, 0.0, host


def _base_weight_bytes(ctx: _Ctx, stage: _Stage) -> float:
    if ctx.workload.task == "qlora":
        return (stage.params - stage.linear_params) * 2.0 + stage.linear_params * ctx.nf4_bytes
    return stage.params * ctx.dtype


def _lora_states(
    ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str
) -> tuple[float, float, float, float]:
    adapters = ctx.adapters * stage.layers / ctx.facts.layers / plan.tp
    full = _base_weight_bytes(ctx, stage) + adapters * ctx.adapter_dtype
    weights = _zero3_weights(full, n, _gathered(ctx, stage)) if zero == 3 else full
    grads = _shard(adapters * ctx.adapter_dtype, zero, 2, n)
    optim = _shard(
        adapters * (ctx.flat_adapter_optimizer if _flat_partitions(zero) else ctx.adapter_optimizer), zero, 1, n
    )
    if offload == "none":
        return weights, grads, optim, 0.0
    host = optim + adapters * 4.0
    if offload == "optimizer_and_params":
        # FSDP CPUOffload(offload_params=True) / ZeRO-3 offload_param: the sharded base and adapters wait in host RAM
        # and each unit comes to the GPU for its all-gather, as under full fine-tuning (`_offloaded`)
        return _gathered(ctx, stage), grads, 0.0, host + full / n
    return weights, grads, 0.0, host


def _states(ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str) -> tuple[float, ...]:
    task = ctx.workload.task
    if task == "inference":
        return stage.params * BYTES_PER_ELEMENT[ctx.workload.precision], 0.0, 0.0, 0.0
    if task in LORA_TASKS:
        return _lora_states(ctx, stage, plan, n, zero, offload)
    return _full_states(ctx, stage, plan, n, zero, offload)


# --- activations -------------------------------------------------------------------------------


def _kv_share(c: _ActCoeffs, tp: int) -> float:
    """Share of k/v one tp rank holds: 1/tp, but at least one whole head (Megatron replicates kv heads)."""
    return 1.0 / min(tp, c.kv_heads)


def _layer_elements(
    c: _ActCoeffs, tp: int, sp: bool, seq_local: float, flash: bool, moe: bool, scores: float = 1.0
) -> float:
    """Elements per token one layer keeps with no recompute; `scores`: elements per attention score kept without
    flash attention (EAGER_SCORE_ELEMENTS in training)."""
    replicated = c.replicated / tp if sp else c.replicated
    mlp = c.moe_mlp if moe else c.mlp
    core = 2.0 * c.attn_heads / tp  # flash attention's fp32 log-sum-exp: a values per token (2 elements each)
    if not flash:
        core += scores * c.attn_heads * seq_local / tp  # the scores, a·s per token (Korthikanti Table 2)
    return replicated + c.q_side / tp + c.kv_side * _kv_share(c, tp) + mlp / tp + core


def _selective_elements(c: _ActCoeffs, tp: int, sp: bool, moe: bool, megatron: bool = False) -> float:
    """Matmul outputs kept, attention core and pointwise ops recomputed (Korthikanti §5); `megatron`: Megatron-LM's
    selective recompute, which recomputes the core attention only and keeps the whole MLP."""
    replicated = c.selective_replicated / tp if sp else c.selective_replicated
    if megatron:
        mlp = c.megatron_selective_moe_mlp if moe else c.megatron_selective_mlp
        attn = c.q_side / tp + c.kv_side * _kv_share(c, tp)
    else:
        mlp = c.selective_moe_mlp if moe else c.selective_mlp
        attn = c.selective_q / tp + c.selective_kv * _kv_share(c, tp)
    return replicated + attn + mlp / tp + 2.0 * c.attn_heads / tp


def _stage_elements(c: _ActCoeffs, key: tuple[int, bool, str, bool, float, int, int, bool]) -> tuple[float, float]:
    """(elements per token kept by a stage's layers for one micro-batch, one layer's extra working set).

    `key` is (tp, sequence_parallel, recompute, flash_attention, local seq length or 0 with flash, layers, moe,
    compiled); `c` already holds the compiled or eager coefficients.
    """
    tp, sp, recompute, flash, seq_local, layers, moe, _ = key
    worst_layer = _layer_elements(c, tp, sp, seq_local, flash, moe > 0, EAGER_SCORE_ELEMENTS)
    if recompute == "full":
        kept = c.per_layer_input / (tp if sp else 1)
        # the layer being recomputed holds its full working set; its input is the checkpoint already counted
        return layers * kept, max(0.0, worst_layer - kept)
    if recompute in ("selective", MEGATRON_SELECTIVE):
        mega = recompute == MEGATRON_SELECTIVE
        dense = (layers - moe) * _selective_elements(c, tp, sp, False, mega)
        return dense + moe * _selective_elements(c, tp, sp, True, mega), 0.0
    dense = (layers - moe) * _layer_elements(c, tp, sp, seq_local, flash, False, EAGER_SCORE_ELEMENTS)
    return dense + moe * worst_layer, 0.0


def _elements_of(ctx: _Ctx, plan: Plan, stage: _Stage, seq_local: float) -> tuple[float, float]:
    flash = plan.flash_attention
    key = (
        plan.tp,
        plan.sequence_parallel,
        _recompute_kind(plan),
        flash,
        0.0 if flash else seq_local,
        stage.layers,
        stage.moe_layers,
        plan.compiled,
    )
    found = ctx.elements.get(key)
    if found is None:
        found = ctx.elements[key] = _stage_elements(ctx.compiled_coeffs if plan.compiled else ctx.coeffs, key)
    return found


def _recompute_kind(plan: Plan) -> str:
    """The plan's recompute, with Megatron-LM's selective told apart: a plan with the fp32 main-gradient buffer is one
    the megatron stack runs (Plan.fp32_main_grads, set by app/planner/stacks.py)."""
    if plan.recompute == "selective" and plan.fp32_main_grads:
        return MEGATRON_SELECTIVE
    return plan.recompute


def _microbatches(workload: Workload, plan: Plan, dp: int) -> int:
    """Micro-batches per optimizer step and pipeline; unknown global batch: assume the pipeline is full."""
    if workload.global_batch is None:
        return plan.pp
    return max(1, workload.global_batch // (dp * plan.micro_batch))


def _in_flight(workload: Workload, plan: Plan, stage: _Stage, dp: int) -> float:
    """Micro-batches whose activations a stage holds: 1F1B first stage min(p, m); interleaving adds (p-1)/(p·v)."""
    if plan.pp == 1 or not stage.is_first:
        return 1.0
    count = float(min(plan.pp, _microbatches(workload, plan, dp)))
    if plan.virtual_stages > 1:
        count *= 1.0 + (plan.pp - 1) / (plan.pp * plan.virtual_stages)
    return count


def _training_activations(ctx: _Ctx, plan: Plan, stage: _Stage, dp: int) -> tuple[float, float]:
    """(bytes on the GPU, bytes offloaded to host RAM) of one stage's activations for one GPU."""
    workload = ctx.workload
    seq_local = workload.seq_len / plan.cp
    tokens = plan.micro_batch * seq_local
    kept, working = _elements_of(ctx, plan, stage, seq_local)
    if ctx.dropout_elements and plan.recompute != "full":
        kept += stage.layers * ctx.dropout_elements / plan.tp
    in_flight = _in_flight(workload, plan, stage, dp) if plan.pp > 1 else 1.0
    act_bytes = _act_bytes(ctx, plan)
    saved = tokens * act_bytes * kept * in_flight
    host = 0.0
    if plan.activation_offload:
        # the saved tensors go to host RAM as they are made and come back layer by layer for the backward: the GPU
        # holds the layer in use and the one being copied (torchtune OffloadActivations, double-buffered streams)
        host = saved
        saved = saved * min(1.0, ACTIVATION_OFFLOAD_LAYERS / (stage.layers * in_flight))
    total = saved + tokens * act_bytes * working
    if stage.is_last and plan.fused_loss:
        total += tokens * ctx.model.hidden * FUSED_LOSS_BYTES_PER_HIDDEN
    elif stage.is_last:
        per_logit = CHUNKED_LOSS_BYTES_PER_LOGIT if plan.chunked_loss else LOSS_BYTES_PER_LOGIT
        total += tokens * ctx.model.vocab / plan.tp * per_logit
    return total, host


def offloaded_activation_bytes(model: ModelSpec, workload: Workload, plan: Plan) -> float:
    """Bytes one GPU copies to host RAM per micro-batch under `activation_offload` (and back for the backward)."""
    if not plan.activation_offload or workload.task == "inference":
        return 0.0
    ctx = _context(model, workload)
    stage = _stages_of(ctx, plan)[0]
    seq_local = workload.seq_len / plan.cp
    kept = _elements_of(ctx, plan, stage, seq_local)[0]
    if ctx.dropout_elements and plan.recompute != "full":
        kept += stage.layers * ctx.dropout_elements / plan.tp
    return plan.micro_batch * seq_local * _act_bytes(ctx, plan) * kept


def _inference_activations(ctx: _Ctx, plan: Plan, stage: _Stage) -> float:
    """One layer's prefill working set for the whole batch plus fp32 last-token logits."""
    seq_local = ctx.workload.seq_len / plan.cp
    tokens = plan.micro_batch * seq_local
    moe = stage.moe_layers > 0
    layer = _layer_elements(ctx.coeffs, plan.tp, plan.sequence_parallel, seq_local, plan.flash_attention, moe)
    logits = plan.micro_batch * ctx.model.vocab / plan.tp * 4.0 if stage.is_last else 0.0
    return tokens * ctx.act_bytes * layer + logits


def _kv_cache(ctx: _Ctx, plan: Plan, stage: _Stage) -> float:
    """2 · layers · kv_heads · head_dim · context · batch · bytes (K and V), per tp rank and stage."""
    workload, model = ctx.workload, ctx.model
    if workload.task != "inference":
        return 0.0
    dtype = BYTES_PER_ELEMENT[workload.kv_cache_precision or workload.precision]
    kv_heads_local = model.kv_heads / min(plan.tp, model.kv_heads)
    context = workload.seq_len / plan.cp
    return 2.0 * stage.layers * kv_heads_local * model.d_head * context * plan.micro_batch * dtype


def _other(ctx: _Ctx, plan: Plan, activations: float) -> float:
    other = OTHER_WORKSPACE_BYTES + FRAGMENTATION * activations
    if plan.dp * plan.tp * plan.pp * plan.cp > 1:
        other += OTHER_NCCL_BYTES
    if ctx.workload.task == "qlora":
        other += ctx.facts.largest_linear / plan.tp * 2.0  # one dequantised NF4 matrix in 16-bit
    return other


# --- validation ----------------------------------------------------------------------------------


def _positive_int(value: object, field: str, allowed: str = "a positive integer") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise EstimatorError(f"{field.split('.')[-1]} must be {allowed}, got {value!r}.", field=field)


def _validate_workload(model: ModelSpec, workload: Workload) -> None:
    _validate_choices(workload)
    _positive_int(workload.seq_len, "seq_len", f"an integer in 1..{MAX_SEQ_LEN}")
    if workload.seq_len > MAX_SEQ_LEN:
        raise EstimatorError(f"seq_len must be at most {MAX_SEQ_LEN}.", field="seq_len")
    if workload.global_batch is not None:
        _positive_int(workload.global_batch, "global_batch")
    if workload.task in LORA_TASKS:
        _validate_lora(model, workload.lora or LoraSpec())
    if workload.kbit_upcast and workload.task != "qlora":
        raise EstimatorError("kbit_upcast applies to task qlora only.", field="kbit_upcast")


def _validate_choices(workload: Workload) -> None:
    require_choice(workload.task, TASKS, "task")
    require_choice(workload.precision, PRECISIONS, "precision")
    require_choice(workload.optimizer, OPTIMIZERS, "optimizer")


def _validate_lora(model: ModelSpec, lora: LoraSpec) -> None:
    _positive_int(lora.rank, "lora.rank", f"an integer in 1..hidden ({model.hidden})")
    if lora.rank > model.hidden:
        raise EstimatorError(
            f"lora.rank ({lora.rank}) must not exceed the hidden size ({model.hidden}).", field="lora.rank"
        )
    if not 0.0 <= lora.dropout < 1.0:
        raise EstimatorError(f"lora.dropout must be in [0, 1), got {lora.dropout!r}.", field="lora.dropout")
    unknown = [t for t in lora.targets if t not in LORA_TARGETS and t != "all-linear"]
    if unknown or not lora.targets:
        raise EstimatorError(
            f"lora.targets must be a non-empty list of {', '.join(LORA_TARGETS)} or 'all-linear'; got {unknown}.",
            field="lora.targets",
        )


_DEGREES = ("dp", "tp", "pp", "cp", "ep", "micro_batch", "virtual_stages")


def _degrees_are_positive_ints(plan: Plan) -> bool:
    # fast path for the planner: one pass, no exception machinery
    values = (plan.dp, plan.tp, plan.pp, plan.cp, plan.ep, plan.micro_batch, plan.virtual_stages)
    return all(type(value) is int and value > 0 for value in values)


def _validate_degrees(model: ModelSpec, plan: Plan) -> None:
    if not _degrees_are_positive_ints(plan):
        for name in _DEGREES:
            _positive_int(getattr(plan, name), f"plan.{name}")
    if plan.micro_batch > MAX_BATCH:
        raise EstimatorError(f"micro_batch must be at most {MAX_BATCH}.", field="plan.micro_batch")
    if plan.zero_stage not in (0, 1, 2, 3):
        raise EstimatorError("zero_stage must be 0, 1, 2 or 3.", field="plan.zero_stage")
    if model.heads % plan.tp:
        divisors = [d for d in range(1, min(model.heads, 64) + 1) if model.heads % d == 0]
        raise EstimatorError(
            f"tp={plan.tp} does not divide the {model.heads} attention heads; allowed tp: {divisors}.",
            field="plan.tp",
        )
    if plan.pp > model.layers:
        raise EstimatorError(f"pp={plan.pp} exceeds the {model.layers} layers.", field="plan.pp")
    if plan.virtual_stages > 1 and plan.pp * plan.virtual_stages > model.layers:
        raise EstimatorError("pp × virtual_stages exceeds the number of layers.", field="plan.virtual_stages")


def _validate_moe_and_offload(model: ModelSpec, plan: Plan) -> None:
    if plan.ep > 1 and not model.is_moe:
        raise EstimatorError("ep > 1 needs a mixture-of-experts model.", field="plan.ep")
    if plan.ep > 1 and (model.experts % plan.ep or plan.ep > plan.dp * plan.tp):
        raise EstimatorError(
            f"ep={plan.ep} must divide the {model.experts} experts and fit inside dp × tp.", field="plan.ep"
        )
    if plan.offload not in OFFLOADS:
        raise EstimatorError(f"offload must be {_either(OFFLOADS)}.", field="plan.offload")
    if plan.offload == "optimizer_and_params" and plan.zero_stage != 3:
        raise EstimatorError("offloading parameters needs zero_stage 3 (FSDP FULL_SHARD).", field="plan.offload")
    if plan.recompute not in RECOMPUTES:
        raise EstimatorError(f"recompute must be {_either(RECOMPUTES)}.", field="plan.recompute")
    if plan.host_load not in HOST_LOADS:
        raise EstimatorError(f"host_load must be {_either(HOST_LOADS)}.", field="plan.host_load")
    _validate_shard_group(plan)


def _validate_shard_group(plan: Plan) -> None:
    shard = plan.dp_shard
    if shard is None:
        return
    if type(shard) is not int or shard < 1 or plan.dp % shard:
        allowed = [d for d in range(1, plan.dp + 1) if plan.dp % d == 0]
        raise EstimatorError(
            f"dp_shard={shard} must divide dp={plan.dp}; allowed dp_shard: {allowed}.", field="plan.dp_shard"
        )
    if shard < plan.dp and plan.zero_stage != 3:
        raise EstimatorError(
            f"dp_shard={shard} < dp={plan.dp} (hybrid sharding) needs zero_stage 3 (FSDP HYBRID_SHARD).",
            field="plan.dp_shard",
        )


def _either(choices: tuple[str, ...]) -> str:
    return f"{', '.join(choices[:-1])} or {choices[-1]}"


_ZERO_STAGES = (0, 1, 2, 3)


def _plan_is_clean(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> bool:
    """One boolean pass over every plan rule (the planner's hot path); False sends the plan to validate_plan,
    which names the broken rule. Must accept exactly what validate_plan accepts."""
    dp, tp, pp, cp, ep, mb, vs = plan.dp, plan.tp, plan.pp, plan.cp, plan.ep, plan.micro_batch, plan.virtual_stages
    return (
        type(dp) is int
        and type(tp) is int
        and type(pp) is int
        and type(cp) is int
        and type(ep) is int
        and type(mb) is int
        and type(vs) is int
        and dp > 0
        and tp > 0
        and pp > 0
        and cp > 0
        and ep > 0
        and 0 < mb <= MAX_BATCH
        and vs > 0
        and plan.zero_stage in _ZERO_STAGES
        and plan.offload in OFFLOADS
        and plan.recompute in RECOMPUTES
        and plan.host_load in HOST_LOADS
        and model.heads % tp == 0
        and pp <= model.layers
        and (vs == 1 or pp * vs <= model.layers)
        and (ep == 1 or (model.is_moe and model.experts % ep == 0 and ep <= dp * tp))
        and (plan.offload != "optimizer_and_params" or plan.zero_stage == 3)
        and (plan.dp_shard is None or _shard_group_is_clean(plan))
        and (cp == 1 or workload.seq_len % cp == 0)
        and dp * tp * pp * cp <= cluster.gpus_per_node * cluster.nodes
    )


def _shard_group_is_clean(plan: Plan) -> bool:
    shard = plan.dp_shard
    return type(shard) is int and shard > 0 and plan.dp % shard == 0 and (shard == plan.dp or plan.zero_stage == 3)


def validate_plan(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None = None) -> None:
    """Raise EstimatorError (field like "plan.tp") for plans that cannot run; traps are warnings instead."""
    _validate_workload(model, workload)
    _validate_degrees(model, plan)
    _validate_moe_and_offload(model, plan)
    if plan.cp > 1 and workload.seq_len % plan.cp:
        raise EstimatorError(f"cp={plan.cp} must divide seq_len ({workload.seq_len}).", field="plan.cp")
    if plan.fp8_params and (workload.precision != "fp8" or workload.task not in ("pretrain", "full_finetune")):
        raise EstimatorError(
            "fp8_params stores the trained weights in FP8: it needs precision fp8 and a pretrain or full_finetune "
            f"task; got precision {workload.precision}, task {workload.task}.",
            field="plan.fp8_params",
        )
    if cluster is not None and plan.gpus > cluster.gpus:
        raise EstimatorError(
            f"The plan needs dp×tp×pp×cp = {plan.gpus} GPUs; the cluster has {cluster.gpus}.", field="plan"
        )


# --- warnings ------------------------------------------------------------------------------------


def _plan_warnings(ctx: _Ctx, plan: Plan, cluster: Cluster) -> list[Warning_]:
    """The plan's traps, found per context by the plan and cluster fields they read (the model's and the task's are
    the context's own)."""
    micro = _microbatches(ctx.workload, plan, plan.dp) if plan.pp > 1 else 0
    key = (plan.tp, plan.pp, plan.offload, micro, cluster.gpus_per_node, cluster.gpu.pcie_gen)
    found = ctx.traps.get(key)
    if found is None:
        model, trains = ctx.model, ctx.workload.task != "inference"
        found = ctx.traps[key] = _trap_warnings(
            model.kv_heads, model.layers, model.approximate, *key[:3], trains, *key[3:]
        )
    return list(found)


@lru_cache(maxsize=4096)
def _trap_warnings(
    kv_heads: int,
    layers: int,
    approximate: bool,
    tp: int,
    pp: int,
    offload: str,
    trains: bool,
    micro: int,
    gpus_per_node: int,
    pcie_gen: int,
) -> tuple[Warning_, ...]:
    """The named traps of a plan, from the few numbers they depend on (cached: plans repeat them)."""
    out: list[Warning_] = []
    if tp > 1 and kv_heads % tp:
        out.append(
            Warning_(
                "kv_heads_replicated",
                f"kv_heads={kv_heads} is not divisible by tp={tp}: each rank keeps a copy of "
                f"{max(1, kv_heads // tp)} kv head(s), so K/V weights and cache are replicated.",
                {"kv_heads": kv_heads, "tp": tp},
            )
        )
    if layers % pp:
        out.append(
            Warning_(
                "pp_uneven_layers",
                f"{layers} layers do not split evenly into pp={pp} stages; the largest stage "
                f"({math.ceil(layers / pp)} layers) sets memory and speed.",
                {"layers": layers, "pp": pp, "stage_layers": math.ceil(layers / pp)},
            )
        )
    if tp > gpus_per_node:
        out.append(
            Warning_(
                "tp_across_nodes",
                f"tp={tp} spans more than one {gpus_per_node}-GPU node: its per-layer all-reduces "
                "would cross the network, usually slower than one GPU. Keep tp within a node.",
                {"tp": tp, "gpus_per_node": gpus_per_node},
            )
        )
    if offload != "none" and trains:
        pcie_gbs = host_pcie_bytes_per_s(pcie_gen) / 1e9  # data/interconnects.json pcie_host, with its source
        out.append(
            Warning_(
                "offload_over_pcie",
                f"Offloading ({offload}) moves optimizer traffic over PCIe gen {pcie_gen} (~{pcie_gbs:.0f} GB/s "
                "achieved per GPU): expect the step to slow down by tens of percent.",
                {"offload": offload, "pcie_gen": pcie_gen, "pcie_gbs": pcie_gbs},
            )
        )
    if pp > 1 and trains and micro < 4 * pp:
        bubble = (pp - 1) / (micro + pp - 1)
        out.append(
            Warning_(
                "pipeline_few_microbatches",
                f"{micro} micro-batches for pp={pp}: the 1F1B bubble (p-1)/(m+p-1) idles {bubble:.0%} "
                "of each step; use at least 4×pp micro-batches (larger global batch or smaller micro-batch).",
                {"micro_batches": micro, "pp": pp, "bubble": bubble},
            )
        )
    if approximate:
        out.append(
            Warning_("approximate_model", "The architecture was derived from a parameter count; memory is approximate.")
        )
    return tuple(out)


def _fit_warnings(
    ctx: _Ctx, plan: Plan, cluster: Cluster, breakdown: MemoryBreakdown, gpu_fits: bool
) -> list[Warning_]:
    out: list[Warning_] = []
    ram = cluster.host_ram_gib
    if not breakdown.host_fits:
        if breakdown.load_binds:
            out.append(_load_warning(breakdown, ram))
        elif ram is not None and breakdown.host_ram_limit is not None:
            params = host_ram_params(breakdown, ram)
            out.append(Warning_("host_ram_exceeded", host_ram_message(breakdown, ram), params))
        else:
            offload_gib = breakdown.host_ram / GIB
            text = host_ram_unknown_message(breakdown)
            out.append(Warning_("host_ram_unknown", text, {"offload_gib": offload_gib}))
    if not gpu_fits and ctx.workload.task != "inference":
        out.append(_zero3_advice(ctx, plan, cluster))
    return out


def _load_warning(breakdown: MemoryBreakdown, host_ram_gib: float | None) -> Warning_:
    """The whole-model load (Plan.host_load) sets a host peak the node cannot hold, or one on a node of unknown RAM."""
    if host_ram_gib is None:
        return Warning_("host_load_unknown", host_ram_unknown_message(breakdown), host_load_params(breakdown))
    figures = host_load_params(breakdown) | host_ram_figures(breakdown, host_ram_gib)
    return Warning_("host_load_exceeded", host_ram_message(breakdown, host_ram_gib), figures)


def _host_need(breakdown: MemoryBreakdown) -> str:
    """What sets the host peak, in words: the offload, or the whole-model copies the loader holds (Plan.host_load)."""
    if not breakdown.load_binds:
        return f"Offload needs {breakdown.host_ram / GIB:,.0f} GiB of host RAM per node"
    load = host_load_params(breakdown)
    ranks = f"each of {load['copies']} ranks" if load["copies"] > 1 else "one rank"
    return (
        f"Loading the model needs {load['load_gib']:,.0f} GiB of host RAM per node ({ranks} on the node holds the "
        f"whole {load['model_gib']:,.0f} GiB model before ZeRO-3 shards it)"
    )


def host_ram_unknown_message(breakdown: MemoryBreakdown) -> str:
    return (
        f"{_host_need(breakdown)}, and the node's host RAM is not known: give hardware.host_ram_gib, or a server "
        "whose host RAM the catalog lists."
    )


def host_ram_message(breakdown: MemoryBreakdown, host_ram_gib: float) -> str:
    available = (breakdown.host_ram_limit or 0.0) / GIB
    return (
        f"{_host_need(breakdown)}; the node has {host_ram_gib:,.0f} GiB, {available:,.0f} GiB after "
        f"{host_ram_gib - available:,.0f} GiB kept for the OS, the training processes and their data loaders."
    )


def host_ram_params(breakdown: MemoryBreakdown, host_ram_gib: float) -> dict[str, Any]:
    """The figures of host_ram_message for an offload, by name (GiB per node)."""
    return {"offload_gib": breakdown.host_ram / GIB} | host_ram_figures(breakdown, host_ram_gib)


def host_ram_figures(breakdown: MemoryBreakdown, host_ram_gib: float) -> dict[str, Any]:
    """The node's RAM and what a plan may use of it after the reserve (GiB per node)."""
    return {"host_ram_gib": host_ram_gib, "host_ram_limit_gib": (breakdown.host_ram_limit or 0.0) / GIB}


def host_load_params(breakdown: MemoryBreakdown) -> dict[str, Any]:
    """The load's figures (Plan.host_load): its GiB per node, the whole-model copies and one copy's GiB."""
    copies = breakdown.host_load_copies
    return {
        "load_gib": breakdown.host_load / GIB,
        "copies": copies,
        "model_gib": breakdown.host_load / max(1, copies) / GIB,
    }


def gpu_memory_message(breakdown: MemoryBreakdown) -> str:
    limit = breakdown.capacity if breakdown.limit is None else breakdown.limit
    return (
        f"Needs {breakdown.total / GIB:.1f} GiB per GPU; the card has {breakdown.capacity / GIB:.1f} GiB usable, "
        f"{limit / GIB:.1f} GiB after the {1 - limit / breakdown.capacity:.0%} headroom."
    )


def _zero3_advice(ctx: _Ctx, plan: Plan, cluster: Cluster) -> Warning_:
    """When a plan does not fit: would ZeRO-3 over every GPU fit, and if not, what would.

    Cached per context: plans that differ only in dp, ZeRO stage or offload get the same advice.
    """
    model_parallel = plan.tp * plan.pp * plan.cp
    dp = max(plan.dp, cluster.gpus_per_node * cluster.nodes // model_parallel)
    key = (
        plan.tp,
        plan.pp,
        plan.cp,
        plan.ep,
        plan.micro_batch,
        _recompute_kind(plan),
        plan.sequence_parallel,
        plan.flash_attention,
        plan.chunked_loss,
        plan.fused_loss,
        plan.fp8_params,
        plan.activation_offload,
        plan.compiled,
        plan.virtual_stages,
        dp,
        plan.fp32_main_grads,
        plan.host_load,  # a whole-model load on the host can keep ZeRO-3 from fitting too
        cluster.gpus_per_node,
        cluster.gpu.usable_memory_gib,
        cluster.memory_headroom,  # the advice says whether ZeRO-3 fits inside the headroom
        cluster.host_ram_gib,  # and the host RAM, where activations are offloaded
    )
    advice = ctx.advice.get(key)
    if advice is None:
        advice = ctx.advice[key] = _advise(ctx, plan, cluster, dp, model_parallel)
    return advice


def _advise(ctx: _Ctx, plan: Plan, cluster: Cluster, dp: int, model_parallel: int) -> Warning_:
    # ZeRO-3 over every data-parallel rank, not over a hybrid plan's shard group (which `_breakdown` keeps at its dp)
    zero3 = _breakdown(ctx, replace(plan, dp_shard=None) if plan.dp_shard else plan, cluster, (dp, 3, "none"))
    if zero3.fits:
        return Warning_(
            "no_fit",
            f"Needs {breakdown_gib(zero3.total):.1f} GiB per GPU with ZeRO-3 over dp={dp}, which fits; "
            "this plan does not.",
            {"zero3_gib": breakdown_gib(zero3.total), "dp": dp},
        )
    limit = zero3.capacity if zero3.limit is None else zero3.limit
    needed = {"gpus": dp * model_parallel, "needed_gib": breakdown_gib(zero3.total), "limit_gib": breakdown_gib(limit)}
    return Warning_("no_fit_zero3", _what_would_fit(dp * model_parallel, model_parallel, zero3, dp), needed)


def _what_would_fit(gpus_now: int, model_parallel: int, zero3: MemoryBreakdown, dp: int) -> str:
    limit = zero3.capacity if zero3.limit is None else zero3.limit
    budget = limit - (zero3.activations + zero3.kv_cache + zero3.other)
    head = (
        f"Does not fit even with ZeRO-3 over all {gpus_now} GPUs: {breakdown_gib(zero3.total):.1f} GiB per GPU "
        f"needed, {breakdown_gib(limit):.1f} GiB usable after the headroom."
    )
    if budget <= 0:
        return head + " Activations alone exceed the card: use full recompute, a smaller micro-batch, or tp/cp."
    # sharded states scale as 1/dp: their total over the dp group divided by what one GPU can spare
    states = (zero3.weights + zero3.gradients + zero3.optimizer) * dp
    gpus = max(gpus_now + 1, math.ceil(states / budget) * model_parallel)
    cards = _cards_that_fit(zero3.total)
    card_text = f"; or a card with more memory: {', '.join(cards)}" if cards else ""
    return head + f" About {gpus} GPUs of this type would hold the sharded model states{card_text}."


def _cards_that_fit(total_bytes: float) -> list[str]:
    fitting = [gpu for gpu in load_gpus().values() if gpu.usable_memory_gib * GIB >= total_bytes]
    return [gpu.id for gpu in sorted(fitting, key=lambda g: g.usable_memory_gib)[:3]]


def host_ram_reserve_gib(host_ram_gib: float, gpus_on_node: int) -> float:
    """Host RAM per node kept for the OS, the training processes and their data loaders (see the
    constants): 1,024 GiB with 8 GPUs keeps 27.2 + 48 = 75.2 GiB."""
    left, reserve = host_ram_gib, 0.0
    for size, share in OS_RESERVE_TIERS:
        take = min(left, size)
        reserve += take * share
        left -= take
        if left <= 0:
            break
    return reserve + HOST_RESERVE_PER_GPU_GIB * gpus_on_node


def breakdown_gib(value: float) -> float:
    return value / GIB


# --- assumptions ---------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _assumptions(
    workload_key: tuple[str, str, bool, str, bool, float, bool],
    plan_key: tuple[int, str, str, bool, bool, bool, bool, str, bool, bool],
) -> tuple[str, ...]:
    task, precision, mixed, optimizer, paged, nf4_bytes, upcast = workload_key
    zero, offload, recompute, flash, pipelined, activation_offload, fp32_grads, host_load, _, _ = plan_key
    out = ["Bytes per GPU for the worst pipeline stage; capacity is the card's usable memory (CUDA context excluded)."]
    if task == "inference":
        out.append(
            "Inference: weights + KV cache (K and V per layer, kv heads × head_dim) + one layer's prefill "
            "working set and fp32 last-token logits."
        )
    elif task in LORA_TASKS:
        constants = f"{nf4_bytes * 8 - 4:.3g} bit/param of {'double-' if nf4_bytes < 0.55 else ''}quantised constants"
        base = f"NF4 + {constants} (QLoRA §3)" if task == "qlora" else "16-bit"
        adapters = "16-bit adapters and grads with fp32 states (QLoRA eq. 5)" if task == "qlora" and mixed else ""
        out.append(
            f"{task}: frozen base in {base}; adapters r·(d_in+d_out) train with their own grads and states"
            + (f": {adapters}." if adapters else ".")
        )
        if upcast:
            out.append(
                "PEFT prepare_model_for_kbit_training (TRL SFTTrainer, the QLoRA recipe): fp32 norms put the residual "
                "stream and the saved activations in fp32 (kbit_upcast=false: torchtune, litgpt, Unsloth; off by "
                "default for QLoRA sharded by ZeRO-3 / FSDP)."
            )
    elif mixed and precision != "fp32" and fp32_grads:
        owned = MASTER_BYTES + STATE_FP32_BYTES[optimizer]  # what the distributed optimizer shards
        out.append(
            f"Mixed precision {optimizer}, as Megatron-LM runs it: 16-bit weights + an fp32 main-gradient buffer + "
            f"fp32 master and {optimizer} states ({2 + 4 + owned:g} B/param; 6 + {owned:g}/d with the distributed "
            "optimizer, Megatron-LM dist_optimizer docs)."
        )
    elif mixed and precision != "fp32":
        state = STATE_FP32_BYTES[optimizer]
        out.append(
            f"Mixed precision {optimizer}: 16-bit weights + 16-bit grads + fp32 master + {state:g} B of {optimizer} "
            f"states ({2 + 2 + MASTER_BYTES + state:g} B/param; ZeRO §3.1 counts 16 for Adam)."
        )
    else:
        out.append(f"Pure {precision} training: weights, grads and {optimizer} states in the training dtype.")
    if paged and task != "inference":
        out.append(
            "Paged optimizer (QLoRA §3): its states are evicted to host RAM while activations need the card and "
            "paged back for the step, so the peak counts the larger of the two, not both."
        )
    if task != "inference":
        out.append(
            f"Activations counted per saved tensor (Korthikanti et al. 2022 method), recompute={recompute}, "
            f"flash_attention={flash}; unfused loss: fp32 log-probs + two fp32 gradients per logit."
        )
        if zero:
            out.append(
                f"ZeRO stage {zero} shards over dp × cp (with hybrid sharding, dp_shard × cp), routed experts over "
                f"dp × cp / ep; offload={offload}."
            )
        else:
            out.append(
                "ZeRO stage 0: every data-parallel rank holds the whole weights, gradients and optimizer states of "
                f"its tp × pp part (routed experts split over ep); offload={offload}."
            )
        if zero == 2 and not pipelined and mixed and precision != "fp32" and task not in LORA_TASKS:
            out.append(
                "ZeRO-2 gradients are fp32 shards (FSDP2 keeps them in the fp32 parameter dtype); DeepSpeed's 16-bit "
                "partition beside its fp32 copy at the step is counted where it outweighs the freed activations."
            )
        if optimizer == "adafactor" and zero >= 1:
            out.append(
                "Adafactor on ZeRO's flat 1-D partitions cannot factor its second moment (transformers "
                "Adafactor._get_options): a full fp32 v per parameter."
            )
        if zero >= 2 and pipelined:
            out.append(
                "Pipeline with sharded gradients: the reduce-scatter waits for the last micro-batch, so the stage's "
                "gradients stay whole in fp32 through the step (torch.distributed.pipelining, torchtitan)."
            )
        if activation_offload:
            out.append(
                "Activation offload: saved activations wait in host RAM (counted in host_ram); the GPU holds two "
                "layers' worth, the one in use and the one in flight over PCIe."
            )
        if host_load != "none":
            ranks = "every rank on the node" if host_load == "every_rank" else "local rank 0 of each node"
            out.append(
                f"Loading: {ranks} holds the whole model as loaded in host RAM before ZeRO-3 shards it "
                "(host_load_gib); the host RAM gate counts the larger of that and the offloaded states."
            )
    if pipelined:
        out.append("1F1B: the first stage holds min(pp, micro-batches) in flight; the last stage holds the logits.")
    out.append(
        "other = cuBLAS workspaces 0.25 GiB + NCCL buffers 0.5 GiB (multi-GPU) + 5% allocator fragmentation "
        "of activations."
    )
    return tuple(out)


# --- the estimate --------------------------------------------------------------------------------


def _stage_states(ctx: _Ctx, plan: Plan, shard: int, zero: int, offload: str) -> tuple[tuple[float, ...], ...]:
    """(weights, gradients, optimizer, host) of each stage (`_stages`). Model states do not depend on micro-batch,
    recompute or attention: cached for the plans that vary those, every stage under one key."""
    key = (plan.tp, plan.pp, plan.ep, shard, zero, offload, plan.fp32_main_grads, plan.fp8_params)
    states = ctx.states.get(key)
    if states is None:
        stages = _stages_of(ctx, plan)
        states = ctx.states[key] = tuple(_states(ctx, stage, plan, shard, zero, offload) for stage in stages)
    return states


def _zero2_step_partition(ctx: _Ctx, grads: float, activations: float) -> float:
    """DeepSpeed ZeRO-2's 16-bit gradient partition beside its fp32 copy at the step (stage_1_and_2.py `step`), less
    the activations already freed by then; nothing when the fp32 shards are the 16-bit ones (no mixed precision)."""
    if not ctx.workload.mixed_precision or ctx.dtype == FSDP_REDUCE_BYTES:
        return 0.0
    return max(0.0, grads * ctx.dtype / FSDP_REDUCE_BYTES - activations)


def _working_sets(ctx: _Ctx, plan: Plan, dp: int) -> tuple[tuple[float, float, float, float], ...]:
    """(activations, KV cache, other, activations offloaded to host) of each stage: independent of ZeRO stage and
    offload, so cached per the plan fields they read (the planner tries every ZeRO stage and offload at one shape),
    every stage under one key."""
    tp, pp, cp = plan.tp, plan.pp, plan.cp
    key = (
        tp,
        pp,
        plan.ep,
        cp,
        plan.micro_batch,
        plan.recompute,
        plan.fp32_main_grads,  # with the recompute, Megatron's selective is told apart (_recompute_kind)
        plan.sequence_parallel,
        plan.flash_attention,
        plan.chunked_loss,
        plan.fused_loss,
        plan.virtual_stages,
        dp if pp > 1 else 0,  # micro-batches in flight (pipelines only)
        plan.dp * tp * pp * cp > 1,  # NCCL buffers
        plan.activation_offload,
        plan.compiled,
        plan.zero_stage == 3 and plan.dp * cp > 1,  # sharded QLoRA skips PEFT's k-bit preparation (kbit_upcast)
    )
    found = ctx.working.get(key)
    if found is None:
        found = ctx.working[key] = tuple(_working_set(ctx, plan, stage, dp) for stage in _stages_of(ctx, plan))
    return found


def _working_set(ctx: _Ctx, plan: Plan, stage: _Stage, dp: int) -> tuple[float, float, float, float]:
    if ctx.workload.task == "inference":
        activations, host = _inference_activations(ctx, plan, stage), 0.0
    else:
        activations, host = _training_activations(ctx, plan, stage, dp)
    return activations, _kv_cache(ctx, plan, stage), _other(ctx, plan, activations), host


def _breakdown(ctx: _Ctx, plan: Plan, cluster: Cluster, split: tuple[int, int, str]) -> MemoryBreakdown:
    """The worst stage's breakdown; `split` is (dp, zero_stage, offload), separate from the plan so the ZeRO-3
    advice can vary them without a new Plan."""
    dp, zero, offload = split
    # hybrid sharding shards the states over the shard group only (Plan.dp_shard); the ZeRO-3 advice (dp other
    # than the plan's) shards over all of its dp
    shard = plan.dp_shard if plan.dp_shard and dp == plan.dp else dp
    states = _stage_states(ctx, plan, shard * plan.cp, zero, offload)
    working = _working_sets(ctx, plan, dp)
    # paged states make room for the activations (module docstring)
    paged = offload == "none" and ctx.paged[_flat_partitions(zero)]
    zero2 = zero == 2 and plan.pp == 1 and offload == "none" and ctx.workload.task in FULL_TRAINING_TASKS
    worst: tuple[float, ...] = ()
    for (weights, grads, optim, host), (activations, kv, other, host_activations) in zip(states, working, strict=True):
        if paged:
            optim = max(0.0, optim - activations)
        if zero2:
            grads += _zero2_step_partition(ctx, grads, activations)
        total = weights + grads + optim + activations + kv + other
        if not worst or total > worst[0]:
            worst = (total, weights, grads, optim, activations, kv, other, host + host_activations)
    total, weights, grads, optim, activations, kv, other, host_per_gpu = worst
    gpus_on_node = dp * plan.tp * plan.pp * plan.cp
    if gpus_on_node > cluster.gpus_per_node:
        gpus_on_node = cluster.gpus_per_node
    capacity = cluster.gpu.usable_memory_gib * GIB
    limit = capacity * (1.0 - cluster.memory_headroom)
    ram = cluster.host_ram_gib
    host_limit = None if ram is None else _host_limit(ram, cluster.gpus_per_node)
    copies = 0 if plan.host_load == "none" else gpus_on_node if plan.host_load == "every_rank" else 1
    # positional: total, weights, gradients, optimizer, activations, kv_cache, other, capacity, host_ram, limit,
    # host limit, host load, its copies
    return MemoryBreakdown(
        total,
        weights,
        grads,
        optim,
        activations,
        kv,
        other,
        capacity,
        host_per_gpu * gpus_on_node,
        limit,
        host_limit,
        copies * _loaded_bytes(ctx) if copies else 0.0,
        copies,
    )


_WHOLE_MODEL = Plan()  # one stage holding every parameter (tp = pp = ep = 1): the model as a loader reads it


def _loaded_bytes(ctx: _Ctx) -> float:
    """The whole model as loaded, before any sharding (Plan.host_load): QLoRA's NF4 linears with their constants and
    the 16-bit rest (embeddings, norms, head), the base in its dtype otherwise; adapters come after the load (PEFT
    wraps the loaded model)."""
    return _base_weight_bytes(ctx, _stages_of(ctx, _WHOLE_MODEL)[0])


@lru_cache(maxsize=1024)
def _host_limit(host_ram_gib: float, gpus_per_node: int) -> float:
    return max(0.0, host_ram_gib - host_ram_reserve_gib(host_ram_gib, gpus_per_node)) * GIB


def _checked_context(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> _Ctx:
    ctx = _context(model, workload)  # validates the workload once per (model, workload)
    if not _plan_is_clean(model, workload, plan, cluster):
        validate_plan(model, workload, plan, cluster)
    return ctx


def memory_breakdown(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryBreakdown:
    """The per-GPU breakdown alone, without warnings or assumptions: the planner's hot path, which
    only needs to know whether a plan fits (it asks estimate_memory for the plans it keeps)."""
    ctx = _checked_context(model, workload, plan, cluster)
    return _breakdown(ctx, plan, cluster, (plan.dp, plan.zero_stage, plan.offload))


def estimate_memory(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryEstimate:
    """Per-GPU memory of `plan` (worst pipeline stage), with named traps and the assumptions used."""
    ctx = _checked_context(model, workload, plan, cluster)
    breakdown = _breakdown(ctx, plan, cluster, (plan.dp, plan.zero_stage, plan.offload))
    # no trap can apply to a plan without pipeline, offload or a tp that splits kv heads or crosses a node
    tp = plan.tp
    plain = (
        plan.pp == 1
        and plan.offload == "none"
        and not model.approximate
        and (tp == 1 or (model.kv_heads % tp == 0 and tp <= cluster.gpus_per_node))
    )
    warnings = [] if plain else _plan_warnings(ctx, plan, cluster)
    gpu_fits = breakdown.gpu_fits
    # host RAM is checked only when something is offloaded or loaded whole on the host
    if breakdown.host_ram or breakdown.host_load or not gpu_fits:
        warnings.extend(_fit_warnings(ctx, plan, cluster, breakdown, gpu_fits))
    zero = plan.zero_stage
    key_p = (
        zero,
        plan.offload,
        plan.recompute,
        plan.flash_attention,
        plan.pp > 1,
        plan.activation_offload,
        plan.fp32_main_grads,
        plan.host_load,
        ctx.paged[_flat_partitions(zero)],  # paged_optimizer(workload, plan), as the context holds it
        kbit_upcast(workload, plan),
    )
    assumptions = ctx.assumptions.get(key_p)
    if assumptions is None:
        key_w = (
            workload.task,
            workload.precision,
            workload.mixed_precision,
            workload.optimizer,
            key_p[-2],
            ctx.nf4_bytes,
            key_p[-1],
        )
        assumptions = ctx.assumptions[key_p] = _assumptions(key_w, key_p)
    return MemoryEstimate(breakdown, warnings, assumptions)


# --- what a published peak measured ---------------------------------------------------------------

# How a published per-GPU peak was read. The estimate's `total` is the planner's gate figure: everything the process
# needs on the card beside the CUDA context, NCCL's buffers included.
# - "reserved": torch.cuda.max_memory_reserved() (torchtitan's memory monitor, PEFT's method comparison): the caching
#   allocator's segments only. NCCL allocates its channel buffers itself (cudaMalloc / cuMem in NCCL's
#   src/allocator.cc, outside PyTorch's CUDACachingAllocator unless a tensor-register allocator hook is set), so they
#   are not in it; cuBLAS workspaces are (PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp takes them from the
#   caching allocator), and so is the allocator's slack.
# - "device": nvidia-smi / the GPU monitor, or the card a run just fits: the process's whole footprint, the CUDA
#   context included (gpus.json: memory_gib, nvidia-smi's total, less usable_memory_gib).
# - "allocated": torch.cuda.max_memory_allocated() (the Trainer's memory metrics, skip_memory_metrics=False): the live
#   tensors only, so the reserved pool less the allocator's slack (FRAGMENTATION of the activations, module
#   docstring); the cuBLAS workspaces are tensors of the caching allocator and stay in it.
MEASURED = ("total", "reserved", "device", "allocated")


def measured_bytes(breakdown: MemoryBreakdown, plan: Plan, cluster: Cluster, measured: str) -> float:
    """The estimate read the way a published figure was measured (see MEASURED); "total" is the gate figure."""
    require_choice(measured, MEASURED, "measured")
    nccl = OTHER_NCCL_BYTES if plan.dp * plan.tp * plan.pp * plan.cp > 1 else 0.0
    if measured == "reserved":
        return breakdown.total - nccl
    if measured == "allocated":
        return breakdown.total - nccl - FRAGMENTATION * breakdown.activations
    if measured == "device":
        return breakdown.total + (cluster.gpu.memory_gib - cluster.gpu.usable_memory_gib) * GIB
    return breakdown.total
