"""What one transformer layer saves for its backward, elements per token (`_act_coeffs`): eager PyTorch (transformers,
torchtitan, torchtune), under torch.compile, under autocast with fp32 parameters, and Transformer Engine's layers as
Megatron-LM builds them (`te`); multi-latent attention's share (`_mla_elements`)."""

from __future__ import annotations

from functools import lru_cache

from app.estimator.memory.context import _ActCoeffs
from app.estimator.specs import ModelSpec

# Transformer Engine's layers as Megatron-LM's TE spec builds them (the megatron stack: a plan with
# Plan.fp32_main_grads, set by app/planner/stacks.py), bf16, read at NVIDIA/Megatron-LM d98e8a64d and
# NVIDIA/TransformerEngine d0067d0d:
# - the norms are fused into the next linear (TELayerNormColumnParallelLinear; layernorm_linear.py `_forward`:
#   `prepare_for_saving(inputmat, ..., ln_out, mu, rsigma)`): the 16-bit input and the 16-bit norm output, each the
#   sequence-parallel shard where SP is on (ln_out is gathered again in the backward, `ctx.ln_out_needs_gather`), and
#   fp32 mean / rstd per token; no fp32 copy of the input, LayerNorm or RMSNorm alike (TE_NORM_INPUT_ELEMENTS);
# - the core attention (attention/dot_product_attention/backends.py FusedAttnFunc.forward,
#   `f16_tensors = (q, k, v, out_f16)` with the softmax statistics) returns `output.view(...)`, and linear_proj
#   (module/linear.py `_linear_forward`: `saved_inputmat = inputmat`, the input cast only if its dtype differs) saves
#   that same tensor as its input: one q-width tensor where transformers' `.transpose().contiguous()` makes two. In FP8
#   linear_proj quantizes its input into its own copy (`own_quantized_input`), 1 byte beside the 16-bit output;
# - q and k are new tensors after the rotary embedding (megatron/core/models/common/embeddings/rope_utils.py: the
#   product by cos/sin keeps cos/sin, not its input); v is a view of linear_qkv's output (attention.py
#   `get_query_key_value_tensors`, torch.split), whose strides differ from k's, so TE copies it contiguous before the
#   kernel (attention/dot_product_attention/utils.py `get_qkv_layout`: "not_supported" -> `x.contiguous()`): the
#   kernel keeps q, k, v, out and linear_qkv's output is freed;
# - under Megatron's selective recompute (core_attn) the checkpoint keeps its inputs instead
#   (megatron/core/tensor_parallel/random.py CheckpointFunction `ctx.save_for_backward(*args)`; attention.py
#   `_checkpointed_attention_forward` passes query, key, value): the roped q and k, and v, the view that holds
#   linear_qkv's whole output (q + k + v); linear_proj keeps the checkpoint's output (16-bit, or its FP8 copy alone);
# - the fused SwiGLU (megatron/core/fusions/fused_bias_swiglu.py BiasSwiGLUFunction / WeightedSwiGLUFunction
#   `ctx.save_for_backward(input_for_backward, ...)`; on by default, arguments.py `--no-bias-swiglu-fusion`, in the
#   MLP and the grouped experts, mlp.py / moe/experts.py) keeps its input, the fc1 output (2 x ffn), and linear_fc2 its
#   output (ffn): 3 x ffn where eager SwiGLU keeps 4.
TE_NORM_INPUT_ELEMENTS = 1


@lru_cache(maxsize=4096)
def _act_coeffs(
    model: ModelSpec, trainable: frozenset[str], compiled: bool = False, autocast: bool = False, te: bool = False
) -> _ActCoeffs:
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

    `autocast` (fp32 parameters under torch.autocast, Plan.fp32_params): the ops autocast leaves in fp32 (norms,
    residual adds: torch.amp docs, "CUDA Ops that can autocast to float32" lists layer_norm, and ops on no list run in
    their inputs' widest dtype, so an RMSNorm with an fp32 weight returns fp32) keep the residual stream in fp32: the
    layer's input (what full recompute keeps) and every norm's input are 4 bytes, 2 elements of the 16-bit count. The
    matmuls run in 16 bits on their own casts of the fp32 norm output: autocast caches only casts of leaf parameters
    (`cached_cast`, AUTOCAST_WEIGHT_COPY_BYTES), so q, k and v (gate and up) each cast it and keep their 16-bit copy,
    one element per trained projection where one shared 16-bit norm output is counted otherwise. What the matmuls make
    (q, k, v, attention, the MLP's intermediates) is 16-bit as before.

    `te` (Transformer Engine's layers, the megatron stack; the comment above TE_NORM_INPUT_ELEMENTS): no fp32 copy of a
    norm's input, the attention output counted once (it is linear_proj's input), the fused SwiGLU's three ffn-wide
    tensors; under Megatron's selective recompute, linear_qkv's output that the checkpoint's v holds and the roped q
    and k, beside the norms' tensors as without recompute.
    """
    h, d = model.hidden, model.d_head
    q, kv = model.heads * d, model.kv_heads * d
    swiglu = model.mlp == "swiglu"
    norm_in = 2 * h if (model.norm == "rmsnorm" and not compiled and not te) or autocast else h
    norm1_out = h if trainable & {"q", "k", "v"} else 0
    norm2_out = h if trainable & {"gate", "up"} else 0
    if autocast:  # one 16-bit cast of the fp32 norm output per trained projection
        norm1_out = h * len(trainable & {"q", "k", "v"})
        norm2_out = h * min(len(trainable & {"gate", "up"}), 2 if swiglu else 1)
    o_in = q if "o" in trainable else 0
    down_in = 1 if "down" in trainable else 0
    # SwiGLU: gate output (SiLU input), SiLU output and up output (mul operands), product (down input)
    per_width = (3 + down_in) if swiglu else (1 + down_in)  # GELU: fc1 output (GELU input), GELU output
    if te and swiglu:  # the fused SwiGLU keeps the fc1 output (gate and up), linear_fc2 the product
        per_width = 2 + down_in
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
    # Megatron's selective (core_attn): q and the attention output as above, plus the checkpoint's q and k and
    # linear_qkv's output behind its v (TE only; the other stacks' Megatron-style selective keeps the same as without
    # recompute)
    mega_q, mega_kv = q_side, kv_side
    replicated = 2 * norm_in + norm1_out + norm2_out
    if te:
        q_side = 2 * q  # q and the attention output, which linear_proj saves as its input
        mega_q, mega_kv = q + q + o_in, kv + 2 * kv  # linear_qkv's output and the roped q and k; the kept output
    mega_replicated = replicated if te else (2 if autocast else 1) * h + (h if swiglu else 0)
    if model.mla is not None:
        q_side, low_rank = _mla_elements(model, trainable, compiled)
        kv_side = 0  # MLA's keys and values are per head after the up-projection: counted with the queries
    return _ActCoeffs(
        replicated=float(replicated + low_rank),
        q_side=float(q_side),
        kv_side=float(kv_side),
        mlp=float(per_width * model.ffn),
        moe_mlp=float(moe_mlp),
        # the layer's input (fp32 under autocast: 2 elements) and the w2 output (SwiGLU)
        selective_replicated=float((2 if autocast else 1) * h + (h if swiglu else 0)),
        selective_q=float(2 * q),
        selective_kv=float(kv),
        selective_mlp=float(sel_width * model.ffn),
        selective_moe_mlp=float(sel_moe),
        megatron_selective_mlp=float(mega_width * model.ffn),
        megatron_selective_moe_mlp=float(mega_moe),
        megatron_selective_replicated=float(mega_replicated + (low_rank if te else 0)),
        megatron_selective_q=float(mega_q if model.mla is None else q_side),
        megatron_selective_kv=float(mega_kv if model.mla is None else kv_side),
        attn_heads=float(model.heads),
        kv_heads=model.kv_heads,
        per_layer_input=float(2 * h if autocast else h),  # fp32 under autocast
        fp8_replicated=float(norm1_out + norm2_out),
        # TE without recompute: linear_proj's FP8 copy beside the attention's 16-bit output (a negative saving)
        fp8_q=float(-o_in if te else o_in),
        fp8_mlp=float(down_in * model.ffn),
        fp8_moe_mlp=float((model.experts_per_token + model.shared_experts) * down_in * width_e)
        if model.is_moe
        else 0.0,
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
