"""Per-GPU memory of one plan: model states, activations, KV cache and framework overheads.

The package, by job: `states` (weights, gradients, optimizer states per stage), `activations` (saved tensors, KV
cache, `other`), `saved` (what one layer keeps for its backward, per framework), `breakdown` (the worst stage's sum
and the host RAM a node lends), `rules` (what a workload and a plan must keep: one table of plan rules), `advice`
(traps, why a plan does not fit, what would), `assumptions` (the notes an estimate states) and `estimate` (the entry
points); `context` holds what one (model, workload) pair computes once.

Everything is bytes per GPU for the worst pipeline stage (`stage_breakdown`: one named stage, to compare with a
figure read there). Sources, by term:

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
  once the activations are freed, 2 + 20/N at the cast, whose 16-bit source is a new flat copy of the partition
  (`self.flatten(...).to(...)`; ZeRO-1 likewise, after freeing the gradients outside its partition:
  `states._zero12_step`): the peak counts them where they outweigh those activations. ZeRO-3 makes the same copies
  one sub-group (sub_group_size, 1e9 elements) at a time (stage3.py `_prepare_fp32_grad_for_sub_group`,
  `states._zero3_step_temp`), in `other` beyond the freed activations.
- Pure 16-bit training (mixed_precision=False, torchtune's single-device recipes): weights, grads and
  optimizer states all in the training dtype, e.g. AdamW 2 + 2 + 4 = 8 bytes/param.
- fp32 parameters under torch.autocast with no FSDP mixed-precision policy (Plan.fp32_params): 4-byte weights and
  gradients, optimizer states with no master copy (the parameters are their own), FSDP's two gathered layers and its
  unwrapped root unit (embedding, head, final norm) in fp32 (`states.FP32_PARAM_BYTES`, `_fp32_gathered`), the LoRA
  base in fp32; the norms and residual adds in fp32, so the residual stream, the checkpointed layer inputs and the
  norms' inputs are 4 bytes, with one 16-bit cast of a norm output per trained projection, and the 16-bit weight
  copies the matmuls keep (autocast caches casts of leaf parameters only: `activations._act_coeffs`,
  `AUTOCAST_WEIGHT_COPY_BYTES`). Sources: torch.amp "Autocasting" op lists, aten autocast_mode.cpp `cached_cast`,
  torch/distributed/fsdp `_post_forward_reshard` and `_use_unsharded_flat_param`.
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
  `estimate_zero3_model_states_mem_needs`). Under CPU offload FSDP2 copies each gradient shard to the host and
  drops it; FSDP1 (Plan.fsdp1) keeps every shard on the GPU until the backward ends (`_saved_grad_shard`:
  `states._offloaded` and the comment below it, pytorch/pytorch fsdp/_runtime_utils.py at 3ade90a6).
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
  needed in the optimizer update step" (§3 "Paged Optimizers"). bitsandbytes allocates them in CUDA managed memory
  (bitsandbytes/functional.py `get_paged`: cudaMallocManaged), outside PyTorch's caching allocator, so they give
  way to anything the card needs and never make it run out: the gate's total leaves them out, for QLoRA and full
  fine-tuning alike, and reports them beside it (`MemoryBreakdown.paged_optimizer`); torch's allocated and reserved
  readings never see them, the device reading counts what the card has room to keep. torchtune's Llama 2 7B full
  fine-tune on one RTX A6000 with bitsandbytes PagedAdamW (recipes/configs/llama2/7B_full_single_device_low_memory
  .yaml, README early 2024: 15.97 GB reserved) holds 50 GiB of weights, gradients and fp32 states on a 48 GiB card.
  Only where the launch runs a bitsandbytes paged optimizer (`paged_optimizer`): unsharded, under the Trainer's
  paged_adamw_32bit / paged_adamw_8bit / paged_lion_32bit. That recipe also steps the optimizer in the backward
  (`Plan.optimizer_in_backward`, torchtune `optimizer_in_bwd`: one optimizer per parameter, stepped and zeroed from
  its post-accumulate-grad hook), so one parameter's gradient is held at a time, the largest tensor's: the README's
  15.97 GB read +91 % with the whole bf16 gradient counted, +8 % now.
- Activations, per operation (Korthikanti et al. 2022, §4.1 method, Table 2): we count every tensor autograd keeps
  for the backward pass of a Llama-style (RMSNorm, SwiGLU, GQA, no dropout) or a GPT-style (LayerNorm, GELU) block,
  instead of the GPT-with-dropout constant 34. Flash attention keeps q, k, v, the output and the log-sum-exp, no s²
  tensor (Dao et al. 2022, §3.1); without it (eager attention) the fp32 softmax output and its 16-bit copy (6·a·s²
  bytes per sequence, EAGER_SCORE_ELEMENTS) are kept as well. Tensor parallelism divides all but the norm
  inputs/outputs; sequence parallelism divides those too (Korthikanti §4.2.2). Selective recompute is torchtitan's
  op-level policy (`apply_ac`: the outputs of every other matmul, SDPA and the layer input are kept, the rest
  recomputed; see _act_coeffs); Megatron-LM's selective (`--recompute-activations`, a plan with `fp32_main_grads`)
  recomputes the core attention only and keeps the whole MLP (transformer_config.py `recompute_modules` default
  ["core_attn"]). The megatron stack's layers are Transformer Engine's (`saved`, read at Megatron-LM d98e8a64d and
  TransformerEngine d0067d0d): fused norms that keep their 16-bit input (no fp32 copy of an RMSNorm's), the attention
  output saved once (linear_proj's input is the same tensor), the fused SwiGLU's three ffn-wide tensors; under its
  core_attn recompute the checkpoint's v holds linear_qkv's whole output, so with flash attention that recompute
  keeps more than none. Full recompute keeps each layer's input plus one layer being recomputed. 1F1B: the first stage
  keeps min(p, m) micro-batches in flight; interleaving multiplies by 1 + (p-1)/(p·v) (Korthikanti §4.2.3; Megatron
  `compute_activation_memory`).
- Logits and loss, unfused: fp32 log-probs saved by log_softmax, nll_loss's fp32 gradient and the fp32 gradient of
  the logits, 12 bytes per logit at the start of the backward (transformers `ForCausalLMLoss`, PyTorch
  `log_softmax_backward`); on the megatron stack (`Plan.fp32_main_grads`) Megatron-LM's own vocab-parallel loss,
  the fp32 softmax beside the 16-bit logits, 6 (`activations.MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT`);
  chunked: the fp32 log-probs only, or, compiled chunk by chunk (torchtune `compile_loss`),
  the 16-bit chunks and one chunk's gradient (`activations.CHUNKED_COMPILED_LOSS_BYTES_PER_LOGIT`); fused (Liger):
  no logits, FUSED_LOSS_BYTES_PER_HIDDEN; on the 16-bit logits without the upcast (`Plan.no_upcast_loss`): 3
  elements of the logits' dtype. Beside the unfused fp32 loss's backward the caching allocator keeps the freed
  16-bit logits' block, too small for the fp32 gradients (CUDACachingAllocator.cpp `get_free_block`, best fit): 2
  bytes a logit in the reserved and device readings only (`activations.LOGITS_BLOCK_BYTES_PER_LOGIT`,
  `MemoryBreakdown.logits_block`). As transformers 4.48 ran it (`Plan.shift_copy_loss`), the loss's forward holds
  the 16-bit logits, the fp32 upcast, its shifted copy and the log-probs: 14 bytes a logit
  (`activations.SHIFT_COPY_LOSS_BYTES_PER_LOGIT`). A training loop that keeps the model's output through the
  backward (`Plan.kept_logits_bytes`) holds its logits beside all of it. A head with final-logit soft-capping
  (Gemma 2: divide, tanh, multiply) keeps the tanh output for the backward, one more logits-sized tensor in the
  head's dtype beside the loss's (`activations.SOFTCAP_FAMILIES`).
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
  reserved vs allocated). Under DeepSpeed ZeRO-1/2, its two 16-bit gradient buckets of reduce_bucket_size elements
  through the backward (stage_1_and_2.py `backward`; `states.DEEPSPEED_IPG_BUFFERS`, `Plan.reduce_bucket_elements`).
  The CUDA context itself is outside `capacity` (usable memory, gpus.json). Where torch's
  foreach AdamW steps (the Trainer's adamw_torch without ZeRO, and under DeepSpeed, whose ZeRO optimizer steps it on the
  fp32 partitions where the launch's ds_config names no optimizer: `states.TRAINER_TUNINGS`, one ZeRO-3 sub-group at a
  time), its step makes one more copy of the second moment
  after the activations are freed (`states.ADAMW_STEP_V_SHARE`): the part of it beyond the activations is in `other`.
  Where that step runs a plan of one micro-batch a step on one GPU or under FSDP (`Plan.fsdp_torch_adamw`), the
  gradients are made in the backward and freed after the step, so the peak is the larger of the backward's start
  (no gradients) and the step (gradients and the copy of v, no activations): `breakdown._grads_made_in_backward`.
- Batches of varied length (`Workload.varied_lengths`): one more set of the loss's per-logit buffers stays cached
  in the allocator's pool (`activations.VARIED_LENGTH_SLACK`, `MemoryBreakdown.length_slack`): in the reserved and
  device readings (`measured_bytes`, up to the card), not in the gate nor in the allocated peak. Where torch's AdamW
  steps a full fine-tune on the GPU, two more sets of the other activations too: its lazily made states are cut from
  the first batch's freed activation blocks (`activations.VARIED_LENGTH_ACTIVATION_SETS`). Neither where the loop
  empties the cache before every batch that may be longer than the one before (`Workload.cache_cleared_longest_first`).
- ColossalAI's LowLevelZero at ZeRO-2 (`Plan.low_level_zero`): its own 12 Mi-element bucket, and no gradients held
  between steps, so one micro-batch a step peaks at the larger of the backward's start and the step
  (`breakdown.LOW_LEVEL_ZERO_STEP_COPY`). LoRA whose reentrantly checkpointed layers build no graph
  (`Workload.decoder_without_graph`) keeps only the head adapter's input and the loss's buffers.

Speed: the planner calls estimate_memory for thousands of plans of one (model, workload). Everything that
no plan changes lives in a per-(model, workload) context found by object identity (hashing a 20-field
frozen ModelSpec costs more than the arithmetic); per-split results (stages per tp/pp/ep, activation
element sums, ZeRO-3 advice) are cached in that context under small int/str tuple keys. A plan's split (the fields
its activations read, `context._Split`) is looked up once per estimate; what the planner varies within it (ZeRO
stage, offload) finds its states, traps, advice and notes in the split under keys of a few fields, since hashing a
key costs in proportion to its length.
"""

from __future__ import annotations

from app.estimator.memory.activations import FRAGMENTATION, OTHER_NCCL_BYTES, kbit_upcast, varied_length_slack
from app.estimator.memory.advice import (
    host_load_params,
    host_need_params,
    host_ram_figures,
    host_ram_params,
)
from app.estimator.memory.breakdown import breakdown_gib, host_ram_reserve_gib
from app.estimator.memory.estimate import (
    MEASURED,
    MemoryEstimate,
    estimate_memory,
    measured_bytes,
    memory_breakdown,
    offloaded_activation_bytes,
    stage_breakdown,
)
from app.estimator.memory.rules import MAX_BATCH, MAX_SEQ_LEN, PLAN_RULES, check_plan, validate_plan
from app.estimator.memory.states import MASTER_BYTES, STATE_FP32_BYTES, checkpoint_bytes_per_param, paged_optimizer

__all__ = [
    "FRAGMENTATION",
    "MASTER_BYTES",
    "MAX_BATCH",
    "MAX_SEQ_LEN",
    "MEASURED",
    "MemoryEstimate",
    "OTHER_NCCL_BYTES",
    "PLAN_RULES",
    "STATE_FP32_BYTES",
    "breakdown_gib",
    "check_plan",
    "checkpoint_bytes_per_param",
    "estimate_memory",
    "host_load_params",
    "host_need_params",
    "host_ram_figures",
    "host_ram_params",
    "host_ram_reserve_gib",
    "kbit_upcast",
    "measured_bytes",
    "memory_breakdown",
    "offloaded_activation_bytes",
    "paged_optimizer",
    "stage_breakdown",
    "validate_plan",
    "varied_length_slack",
]
