"""Transformer Engine's layers as Megatron-LM builds them (the megatron stack: a plan with `fp32_main_grads`), what
each saves for the backward, read at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553 and
NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b (app/estimator/memory/saved.py):

- the fused norms (transformer_engine/pytorch/module/layernorm_linear.py `_forward`: `prepare_for_saving(inputmat,
  ..., ln_out, mu, rsigma)`) keep the 16-bit input and output and fp32 per-token statistics: no fp32 copy of an
  RMSNorm's input, which eager RMSNorm (transformers `LlamaRMSNorm`) keeps;
- the core attention (attention/dot_product_attention/backends.py FusedAttnFunc: `(q, k, v, out_f16)`) returns a
  view of its output and linear_proj (module/linear.py: `saved_inputmat = inputmat`) saves that tensor: the
  attention output once, where transformers' `.transpose().contiguous()` makes o_proj's input a second tensor; in
  FP8 linear_proj keeps its own 1-byte copy beside it;
- the fused SwiGLU (megatron/core/fusions/fused_bias_swiglu.py, on by default: `--no-bias-swiglu-fusion`) keeps the
  fc1 output, linear_fc2 the product: 3 x ffn where eager SwiGLU keeps 4.

The published figure these move: Megatron-LM's gpt3_15b_8t release run (tests/functional_tests/test_cases/gpt/
gpt3_15b_8t_release golden values at d98e8a64d, 26.23 GiB max allocated on H100, the last rank), +2.9 % before,
which TE's attention output counted twice made (0.75 GiB of q-width tensors).
"""

from __future__ import annotations

from dataclasses import replace

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.memory.activations import _act_coeffs
from app.estimator.presets import get_preset
from app.estimator.specs import GIB
from app.estimator.vocabulary import LORA_TARGETS
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT

FULL = frozenset(LORA_TARGETS)
LLAMA = get_preset("llama-3-8b").model  # RMSNorm, SwiGLU, h 4,096, 32 heads of 128, 8 kv heads, ffn 14,336
GPT_15B = [c for c in MEMORY_FIRST_CONTACT if c.source == "megatron-release" and "gpt3_15b" in c.label]


def test_te_norms_keep_no_fp32_copy() -> None:
    eager, te = _act_coeffs(LLAMA, FULL), _act_coeffs(LLAMA, FULL, te=True)
    h = LLAMA.hidden
    # two norms: input (fp32 copy: 2 elements eager, 1 under TE) and output (1)
    assert eager.replicated == 2 * 2 * h + 2 * h
    assert te.replicated == 2 * h + 2 * h


def test_te_attention_output_is_linear_proj_input() -> None:
    eager, te = _act_coeffs(LLAMA, FULL), _act_coeffs(LLAMA, FULL, te=True)
    q = LLAMA.heads * LLAMA.d_head
    assert eager.q_side == 3 * q  # q, the attention output and o_proj's contiguous copy
    assert te.q_side == 2 * q  # q and the attention output, which linear_proj saves as its input
    assert te.kv_side == eager.kv_side == 2 * LLAMA.kv_heads * LLAMA.d_head  # k and v's contiguous copy
    # FP8: linear_proj's own 1-byte copy beside the 16-bit output (a negative saving of the o_proj input)
    assert te.fp8_q == -q and eager.fp8_q == q


def test_te_fused_swiglu_keeps_three_ffn_widths() -> None:
    eager, te = _act_coeffs(LLAMA, FULL), _act_coeffs(LLAMA, FULL, te=True)
    assert eager.mlp == 4 * LLAMA.ffn
    assert te.mlp == 3 * LLAMA.ffn == te.megatron_selective_mlp


def test_megatron_selective_keeps_the_norms_and_linear_qkv_output() -> None:
    te = _act_coeffs(LLAMA, FULL, te=True)
    q, kv = LLAMA.heads * LLAMA.d_head, LLAMA.kv_heads * LLAMA.d_head
    assert te.megatron_selective_replicated == te.replicated  # the fused norms are not recomputed
    assert te.megatron_selective_q == 3 * q  # linear_qkv's q part, the roped q, linear_proj's input
    assert te.megatron_selective_kv == 3 * kv  # linear_qkv's k and v parts, the roped k


def test_gpt_15b_release_attention_output_once() -> None:
    """The gpt3_15b_8t release run (TP 8 with sequence parallelism, 4 x 4,096 tokens, 32 layers, q width 6,144, no
    recompute) on the megatron stack keeps 6,144 / 8 elements a token a layer less than the same plan on eager
    layers (LayerNorm and the squared-ReLU MLP save alike): 0.75 GiB. The row reads within 3 % of its published
    26.23 GiB (max allocated, the last rank = the only stage; +2.9 % before); the data-parallel size (16) is inferred,
    not published (module docstring of memory_first_contact.py), hence not tighter."""
    case = GPT_15B[0]
    te = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    eager = estimate_memory(case.model, case.workload, replace(case.plan, fp32_main_grads=False), case.cluster)
    attention_output = 2.0 * 4 * 4096 * 32 * 6144 / 8
    # the eager plan also counts atorch's loss (2 bytes a logit more) and no fp32 main-gradient buffer: compare the
    # layers' share through the activations less the loss difference
    loss = 2.0 * 4 * 4096 * 256000 / 8
    assert eager.breakdown.activations - te.activations == attention_output + loss
    assert attention_output / GIB == 0.75
    read = measured_bytes(te, case.plan, case.cluster, case.measured) / GIB
    assert abs(read / case.published_gib - 1) < 0.03
