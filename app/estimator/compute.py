"""FLOPs and memory traffic per token: training, LoRA/QLoRA, inference prefill and decode.

Conventions (stated because published MFU figures differ on them):
- *Model* FLOPs (the MFU numerator) follow Korthikanti et al. 2022 §5 / Megatron-LM
  `num_floating_point_operations` / PaLM App. B: 6 FLOPs per GEMM weight per trained token
  (2 forward, 4 backward) plus the attention core 12·L·h_attn·s per token counted over the *full*
  s×s score matrix (no causal halving). For GPT-3 shapes this is exactly
  72·B·s·L·h²·(1 + s/6h + V/12Lh) per iteration. Embedding lookups are not GEMMs and cost nothing;
  the output projection (V·h) always runs, tied or not.
- *Hardware* FLOPs are what the GPU executes: recompute adds a forward (full: every GEMM but the
  LM head, Narayanan et al. 2021 App. giving 96·B·s·L·h²·(1 + s/6h + V/16Lh); selective: the
  attention core only, Korthikanti et al. 2022 §5), and FlashAttention skips the masked half of a
  causal score matrix (Dao et al. 2022, block-sparse causal tiles).
- MoE: FLOPs follow the active parameters (routed top-k + shared experts; Fedus et al. 2021 §2).
- LoRA/QLoRA (Hu et al. 2021; Dettmers et al. 2023): the frozen base runs its forward (2Ψ) and the
  activation-gradient GEMMs of the backward (2Ψ), but not the weight-gradient GEMMs (2Ψ); adapters
  cost 6 FLOPs per adapter weight. QLoRA additionally dequantises every NF4 weight to bf16 before
  each use (Dettmers et al. 2023 §3, "we dequantize the storage data type to the computation data
  type"): memory traffic, not FLOPs, charged in `dequant_bytes_per_pass`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from app.estimator.params import count_params, linear_shapes
from app.estimator.specs import LoraSpec, ModelSpec, Workload
from app.estimator.vocabulary import BYTES_PER_ELEMENT, LORA_TASKS

# NF4 storage (Dettmers et al. 2023, "QLoRA", §3): 4-bit codes plus one absmax constant per block of 64 weights,
# fp32 without double quantisation (32/64 = 0.5 bit per weight) or, with it, 8-bit constants and one fp32 constant
# per 256 blocks (8/64 + 32/(64·256) = 0.127 bit, the paper's figure). bitsandbytes `bnb_4bit_use_double_quant`,
# litgpt `bnb.nf4` / `bnb.nf4-dq`; torchao's NF4Tensor (torchtune) double-quantises its scalers the same way.
NF4_BYTES_PER_PARAM = (4 + 0.127) / 8
NF4_PLAIN_BYTES_PER_PARAM = (4 + 32 / 64) / 8


def nf4_bytes_per_param(workload: Workload) -> float:
    """Bytes per NF4-stored weight of a QLoRA workload: double quantisation unless its LoRA spec turns it off."""
    lora = workload.lora
    return NF4_BYTES_PER_PARAM if lora is None or lora.double_quant else NF4_PLAIN_BYTES_PER_PARAM


@dataclass(frozen=True, slots=True)
class TrainingFlops:
    """FLOPs per trained token."""

    model: float  # MFU numerator
    matmul_hw: float  # GEMMs executed, recompute included
    attention_hw: float  # attention core executed (score and value products)
    elementwise_bytes: float  # HBM traffic of memory-bound kernels (norms, activations, loss)
    trainable_shared: float = 0.0  # parameters with gradients outside routed experts (adapters for LoRA)
    trainable_experts: float = 0.0  # routed-expert parameters with gradients (split over ep)
    # the attention core in `model` (forward and backward over the full s×s matrix): half of it is masked in a causal
    # model, which the causal MFU convention does not count (Performance.mfu)
    attention_model: float = 0.0

    @property
    def hardware(self) -> float:
        return self.matmul_hw + self.attention_hw


def attention_width(model: ModelSpec) -> int:
    """Width of the query/output projections: heads × head_dim (≠ hidden in Gemma/Qwen3)."""
    return model.heads * model.d_head


@lru_cache(maxsize=4096)
def matmul_params(model: ModelSpec) -> int:
    """Weights that take part in a GEMM per token: active params less the embedding lookup, plus the LM head."""
    counts = count_params(model)
    return counts.active - counts.embedding - counts.lm_head + model.vocab * model.hidden


def attention_fwd_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """QKᵀ and A·V forward over the full s×s matrix: 2 GEMMs × 2 FLOPs × s × h_attn per layer."""
    return 4.0 * model.layers * attention_width(model) * seq_len


@lru_cache(maxsize=4096)
def lora_params(model: ModelSpec, lora: LoraSpec) -> int:
    """Trainable adapter weights r·(d_in + d_out) per adapted matrix (Hu et al. 2021 §4)."""
    total = 0
    for name, (d_in, d_out, copies) in linear_shapes(model).items():
        if name.removesuffix("_experts") in lora.targets:
            total += lora.rank * (d_in + d_out) * copies
    return total


def _elementwise_elements_fwd(model: ModelSpec) -> float:
    """Elements read+written per token per layer by memory-bound forward kernels.

    Two norms (read h, write h), two residual adds (2 reads, 1 write), rotary on q and k, and the
    MLP activation (SwiGLU reads gate and up, writes their product; GELU reads and writes f).
    """
    h, kv = model.hidden, model.kv_heads * model.d_head
    rotary = 0 if model.learned_positions else 2 * (attention_width(model) + kv)
    width = float(model.ffn)
    if model.is_moe:  # layer average: dense layers run one MLP, MoE layers top-k + shared experts
        expert_width = (model.expert_ffn or model.ffn) * (model.experts_per_token + model.shared_experts)
        width = (model.ffn * (model.layers - model.moe_layers) + expert_width * model.moe_layers) / model.layers
    activation = (3 if model.mlp == "swiglu" else 2) * width
    return 4 * h + 6 * h + rotary + activation + _dispatch_elements(model)


def _dispatch_elements(model: ModelSpec) -> float:
    """MoE token dispatch, per token averaged over layers: the permutation copies each token once per chosen
    expert (read h, write k·h) and the un-permutation reads the k expert outputs back and writes their
    weighted sum (read k·h, write h) - Megatron-Core `moe_utils.permute` / `unpermute`; the router's
    logits (E per token) are read and written once."""
    if not model.is_moe:
        return 0.0
    k, h = model.experts_per_token, model.hidden
    return (2 * h + 2 * k * h + 2 * model.experts) * model.moe_layers / model.layers


@lru_cache(maxsize=1024)
def routed_expert_share(model: ModelSpec) -> float:
    """Fraction of the per-token GEMM weights that sit in routed experts (run as grouped GEMMs)."""
    if not model.is_moe:
        return 0.0
    per_expert = (3 if model.mlp == "swiglu" else 2) * model.hidden * (model.expert_ffn or model.ffn)
    return model.moe_layers * model.experts_per_token * per_expert / matmul_params(model)


def _loss_bytes_per_token(model: ModelSpec) -> float:
    """Cross-entropy on V logits: bf16 write, fp32 upcast, softmax and its gradient (~20 B per logit)."""
    return 20.0 * model.vocab


@lru_cache(maxsize=8192)
def _training_flops(
    model: ModelSpec, seq_len: int, task: str, recompute: str, flash: bool, lora: LoraSpec | None
) -> TrainingFlops:
    mm = matmul_params(model)
    attn_fwd = attention_fwd_flops_per_token(model, seq_len)
    adapters = lora_params(model, lora or LoraSpec()) if task in LORA_TASKS else 0
    base_factor = 4.0 if task in LORA_TASKS else 6.0  # frozen base: no weight-gradient GEMMs
    model_flops = base_factor * mm + 6.0 * adapters + 3.0 * attn_fwd
    recomputed_mm = 2.0 * (mm - model.vocab * model.hidden) if recompute == "full" else 0.0
    causal = 0.5 if flash else 1.0  # FlashAttention skips masked tiles; eager attention computes them
    attn_passes = 3.0 + (1.0 if recompute != "none" else 0.0)  # both modes recompute the attention core
    elem_passes = 3.0 + (1.0 if recompute == "full" else 0.0)  # backward ≈ 2 forwards of traffic
    elementwise = elem_passes * _elementwise_elements_fwd(model) * model.layers * 2.0 + _loss_bytes_per_token(model)
    shared, experts = trainable_split(model, task, lora)
    return TrainingFlops(
        model=model_flops,
        matmul_hw=base_factor * mm + 6.0 * adapters + recomputed_mm,
        attention_hw=attn_passes * attn_fwd * causal,
        elementwise_bytes=elementwise,
        trainable_shared=shared,
        trainable_experts=experts,
        attention_model=3.0 * attn_fwd,
    )


@lru_cache(maxsize=4096)
def trainable_split(model: ModelSpec, task: str, lora: LoraSpec | None) -> tuple[float, float]:
    """(shared, routed-expert) parameters with gradients: only the adapters for LoRA/QLoRA."""
    if task in LORA_TASKS:
        return float(lora_params(model, lora or LoraSpec())), 0.0
    counts = count_params(model)
    experts = counts.total - counts.active if model.is_moe else 0
    return float(counts.total - experts), float(experts)


def training_flops(model: ModelSpec, workload: Workload, recompute: str = "none", flash: bool = True) -> TrainingFlops:
    return _training_flops(model, workload.seq_len, workload.task, recompute, flash, workload.lora)


def megatron_flops_per_iteration(
    batch: int, seq_len: int, layers: int, hidden: int, vocab: int, *, full_recompute: bool
) -> float:
    """Narayanan et al. 2021 / Korthikanti et al. 2022 closed forms, for GPT-3-style models (MHA, 4h MLP)."""
    if full_recompute:
        return (
            96.0 * batch * seq_len * layers * hidden**2 * (1 + seq_len / (6 * hidden) + vocab / (16 * layers * hidden))
        )
    return 72.0 * batch * seq_len * layers * hidden**2 * (1 + seq_len / (6 * hidden) + vocab / (12 * layers * hidden))


def dequant_bytes_per_pass(model: ModelSpec) -> float:
    """QLoRA: read NF4 weights, write a bf16 copy, and the GEMM reads it back (per forward or backward)."""
    return matmul_params(model) * (NF4_BYTES_PER_PARAM + 2.0 + 2.0)


# --- inference -------------------------------------------------------------------------------


def prefill_flops_per_token(model: ModelSpec, context: int) -> float:
    """Forward only: 2 FLOPs per GEMM weight, causal attention over on average context/2 keys."""
    return 2.0 * matmul_params(model) + attention_fwd_flops_per_token(model, context) * 0.5


def kv_cache_bytes(model: ModelSpec, context: int, batch: int, kv_precision: str) -> float:
    """2 (K and V) · layers · kv_heads · head_dim · tokens · batch · bytes: K and V of every layer's KV heads."""
    per_token = 2 * model.layers * model.kv_heads * model.d_head * BYTES_PER_ELEMENT[kv_precision]
    return per_token * context * batch


def decode_weight_bytes(model: ModelSpec, batch: int, precision: str) -> float:
    """Weights read per decode step; an MoE batch touches at most every expert once."""
    counts = count_params(model)
    touched = min(counts.total, counts.active * batch) if model.is_moe else counts.total
    return (
        touched - counts.embedding + model.vocab * model.hidden * (1 if model.tied_embeddings else 0)
    ) * BYTES_PER_ELEMENT[precision]


def decode_flops_per_step(model: ModelSpec, context: int, batch: int) -> float:
    """One new token per sequence: 2 FLOPs per active GEMM weight plus attention over the whole cache."""
    return batch * (2.0 * matmul_params(model) + attention_fwd_flops_per_token(model, context))
