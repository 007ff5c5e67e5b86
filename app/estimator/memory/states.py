"""Model states per GPU: weights, gradients and optimizer states under ZeRO, offload and LoRA / QLoRA, per pipeline
stage (sources in the package docstring, "Model states", "Pure 16-bit", "8-bit Adam", "ZeRO-3", "LoRA")."""

from __future__ import annotations

import math
from functools import lru_cache

from app.estimator.memory.context import _Ctx, _Facts, _Stage
from app.estimator.params import count_params, linear_shapes
from app.estimator.specs import LoraSpec, ModelSpec, Plan, Workload
from app.estimator.vocabulary import (
    BYTES_PER_ELEMENT,
    FULL_TRAINING_TASKS,
    LORA_TARGETS,
    LORA_TASKS,
    NON_DEEPSPEED_TUNINGS,
    TRAINER_TUNINGS,
)

MASTER_BYTES = 4.0  # fp32 master copy under mixed precision (ZeRO §3.1)
# fp32 parameters under torch.autocast (Plan.fp32_params): the weights stay fp32 (4 bytes) and autocast casts them per
# op to the 16-bit dtype (torch.amp docs, "Autocasting": ops on the lower-precision list, matmul and linear among them,
# run in float16/bfloat16 on cast copies of their fp32 inputs; the model's own parameters keep their dtype). With no
# FSDP MixedPrecision policy, FSDP all-gathers the fp32 flat parameter and reduce-scatters fp32 gradients (torch/
# distributed/fsdp/api.py MixedPrecision: "param_dtype ... If None, the parameter's original dtype"; reduce_dtype
# likewise), and the optimizer steps the fp32 parameters themselves: they are the master copy, none is kept beside
FP32_PARAM_BYTES = 4.0
FP8_BYTES = 1.0  # an FP8 (e4m3 / e5m2) element (Plan.fp8_params)
# Transformer Engine's cached FP8 weights (`te_fp8_weight_cache`): per linear weight, the FP8 copy (1 byte) and, on
# Hopper, its transpose (1 byte). Read at NVIDIA/TransformerEngine d0067d0d: pytorch/module/linear.py `Linear.forward`
# (likewise layernorm_linear.py, layernorm_mlp.py fc1 and fc2, grouped_linear.py per GEMM) keeps the quantized weight
# in `self._fp8_workspaces["weight"]` whenever is_first_microbatch is not None and the weight is no FP8 parameter
# (base.py `quantize_weight`: a QuantizedTensor weight is used as is, no workspace), refreshed in place on the first
# micro-batch of each step and cleared only when the recipe changes; in training it asks for columnwise usage too
# (linear.py `_linear_forward_impl`: columnwise_usage = is_grad_enabled and inp.requires_grad), and
# csrc/quantizer.cpp (Float8Quantizer and Float8CurrentScalingQuantizer `create_tensor`) then allocates the transpose
# where the GPU has no non-TN FP8 GEMM (utils.py `is_non_tn_fp8_gemm_supported`: Blackwell, sm 10.x, has one and keeps
# 1 byte; its MXFP8 keeps row- and column-wise data, 2 bytes and 1/32 of scales). Megatron passes the flag
# (NVIDIA/Megatron-LM d98e8a64 megatron/core/extensions/transformer_engine.py `TELinear.forward`: is_first_microbatch
# unless config.disable_parameter_transpose_cache, default False in transformer_config.py; schedules.py
# `forward_step` -> module.py `set_is_first_microbatch` under fp8). Counted at Hopper's 2 bytes on every GPU (an
# upper bound on Blackwell's per-tensor recipes). torchao's Float8Linear keeps none: it saves the 16-bit weight and
# casts it in forward and backward (pytorch/ao 36027d82 torchao/float8/float8_linear.py
# `matmul_with_hp_or_float8_args`).
TE_FP8_WEIGHT_CACHE_BYTES = 2.0
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


def _layer_params(facts: _Facts, tp: int, ep: int, moe: bool, etp: int = 0) -> float:
    """One layer's parameters on a GPU: attention and the rest over tp, routed experts over ep × etp (the experts'
    own tensor parallel degree, Plan.etp; 0: tp)."""
    if moe and etp and etp != tp:
        return (facts.attn + facts.moe_other) / tp + facts.routed_experts / (ep * etp) + facts.norms
    mlp = (facts.routed_experts / ep + facts.moe_other) if moe else facts.dense_mlp
    return (facts.attn + mlp) / tp + facts.norms


def _stage(facts: _Facts, tp: int, pp: int, ep: int, etp: int, *, first: bool, last: bool) -> _Stage:
    layers = math.ceil(facts.layers / pp)
    moe = min(layers, facts.moe_layers)  # worst case: a stage made of MoE layers when there are enough
    dense_layer, moe_layer = _layer_params(facts, tp, 1, False), _layer_params(facts, tp, ep, True, etp)
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
        expert_params=moe * facts.routed_experts / (ep * etp),
        linear_params=body - norms,
        largest_unit=max(largest_layer, embedding, head / tp if last else 0.0),
        layer_params=largest_layer,
        layer_linear_params=largest_layer - facts.norms,
        other_unit=max(embedding, head / tp if last else 0.0),
        root_params=embedding + output,
        head_params=head / tp if last else 0.0,
        is_first=first,
        is_last=last,
    )


def _stages(facts: _Facts, tp: int, pp: int, ep: int, etp: int) -> tuple[_Stage, ...]:
    """The first and the last pipeline stage (one stage without pipelining)."""
    if pp == 1:
        return (_stage(facts, tp, pp, ep, etp, first=True, last=True),)
    return (
        _stage(facts, tp, pp, ep, etp, first=True, last=False),
        _stage(facts, tp, pp, ep, etp, first=False, last=True),
    )


def _stages_of(ctx: _Ctx, plan: Plan) -> tuple[_Stage, ...]:
    key = (plan.tp, plan.pp, plan.ep, plan.expert_tp or plan.tp)
    stages = ctx.stages.get(key)
    if stages is None:
        stages = ctx.stages[key] = _stages(ctx.facts, *key)
    return stages


def param_bytes(ctx: _Ctx, plan: Plan) -> float:
    """Bytes of a stored, gathered or trained weight and of its gradient: fp32 under autocast (Plan.fp32_params), the
    training dtype otherwise."""
    return FP32_PARAM_BYTES if plan.fp32_params else ctx.dtype


def _optimizer_per_param(ctx: _Ctx, plan: Plan, flat: bool) -> float:
    """Optimizer bytes per trained parameter of the plan: the context's, less the fp32 master copy where the
    parameters are fp32 themselves (Plan.fp32_params: FP32_PARAM_BYTES)."""
    per_param = ctx.flat_optimizer_per_param if flat else ctx.optimizer_per_param
    if plan.fp32_params and ctx.workload.mixed_precision:
        return per_param - MASTER_BYTES
    return per_param


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
    # fp8 training (Transformer Engine, torchao float8) keeps bf16 weights and casts per matmul (TE also keeps the
    # casts: TE_FP8_WEIGHT_CACHE_BYTES, counted beside them in `_full_states`)
    return 4.0 if workload.precision == "fp32" else 2.0


def _lora_figures(model: ModelSpec, workload: Workload, flat: bool = False) -> tuple[float, float, float]:
    """(adapter params, adapter weight/grad bytes, adapter optimizer bytes) for LoRA tasks; `flat`: the optimizer
    bytes on ZeRO's flat partitions (`_flat_partitions`)."""
    if workload.task not in LORA_TASKS:
        return 0.0, 0.0, 0.0
    lora = workload.lora or LoraSpec()
    targets = _lora_targets(lora)
    states = FLAT_STATE_FP32_BYTES if flat else STATE_FP32_BYTES
    if not workload.mixed_precision:
        dtype, optim = _train_dtype_bytes(workload), _optimizer_bytes_per_param(workload, flat)
    elif workload.task == "qlora" and flat:
        # DeepSpeed casts the module to the 16-bit dtype (runtime/engine.py `_configure_distributed_model`:
        # `self.module.half()` / `.bfloat16()`; NF4 storage is uint8 and stays) and its ZeRO optimizer steps an fp32
        # master partition of the trainable parameters (stage_1_and_2.py `single_partition_of_fp32_groups`,
        # stage3.py `fp32_partitioned_groups_flat`), even on one GPU: 16-bit adapters and gradients, fp32 master
        # and states. The QLoRA recipe's "no master copy" (eq. 5) holds for the Trainer without ZeRO, not here.
        dtype, optim = _train_dtype_bytes(workload), MASTER_BYTES + states[workload.optimizer]
    elif workload.task == "qlora":  # QLoRA eq. 5: BF16 adapters, 32-bit optimizer states, no master copy
        dtype, optim = _train_dtype_bytes(workload), states[workload.optimizer]
    else:  # PEFT keeps adapters in fp32 over a 16-bit base: fp32 weights, gradients and states
        dtype, optim = 4.0, states[workload.optimizer]
    return _adapter_params(model, lora.rank, targets), dtype, optim


def paged_optimizer(workload: Workload, plan: Plan | None = None) -> bool:
    """Whether the optimizer states are paged: as asked, else on for QLoRA (its recipe's `paged_adamw_32bit`) where the
    launch runs a bitsandbytes paged optimizer: one with a paged variant (PAGED_OPTIMIZERS) and no ZeRO sharding, as
    the Trainer runs it on one GPU or replicated (app/planner/launch/trainer.py names it). Under ZeRO 1-3 DeepSpeed
    hands the optimizer its own flat partitions (`_flat_partitions`; a bitsandbytes optimizer there is an untested
    client optimizer, `zero_allow_untested_optimizer`), and under FSDP bitsandbytes' optimizers do not run on sharded
    parameters (bitsandbytes-foundation/bitsandbytes#89; pytorch/ao#1213: paged AdamW "doesn't work with FSDP"), so
    the launch runs plain states there, resident beside the activations, and they are sized so (torchtune's QLoRA
    recipe runs torch.optim.AdamW too: recipes/configs/llama2/7B_qlora.yaml)."""
    return _pages(workload, flat=plan is not None and _flat_partitions(plan.zero_stage))


def _pages(workload: Workload, *, flat: bool) -> bool:
    """`paged_optimizer` for a plan whose optimizer steps ZeRO's flat partitions (`flat`) or the parameters."""
    if workload.paged_optimizer is not None:
        return workload.paged_optimizer
    return workload.task == "qlora" and workload.optimizer in PAGED_OPTIMIZERS and not flat


def _shard(value: float, stage: int, needed: int, n: int) -> float:
    return value / n if stage >= needed else value


def _gathered(ctx: _Ctx, stage: _Stage, plan: Plan) -> float:
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
    if plan.fp32_params:
        return _fp32_gathered(stage)
    return 2.0 * stage.largest_unit * ctx.dtype


def _fp32_gathered(stage: _Stage) -> float:
    """FSDP's working set under autocast with fp32 parameters (Plan.fp32_params), as the Trainer's accelerate FSDP and
    atorch wrap a model: each decoder layer a unit (transformer_layer_cls_to_wrap, atorch_wrap_cls), two of them
    gathered at once in fp32 (the current one and the prefetched next: limit_all_gathers allows two in flight), and the
    root unit, which holds what no layer does (the embedding, the head, the final norm), gathered through the forward
    and the backward: FSDP does not free the root's parameters after its forward (torch/distributed/fsdp/
    _runtime_utils.py `_post_forward_reshard`: `free_unsharded_flat_param = not state._is_root and ...`)."""
    return FP32_PARAM_BYTES * (2.0 * stage.layer_params + stage.root_params)


def fp32_grad_buffer(plan: Plan) -> bool:
    """Whether the megatron stack keeps its gradient buffer in fp32 (Plan.fp32_main_grads). Not with FP8 parameters:
    NeMo's and Megatron-Bridge's FP8-parameter recipes reduce gradients in bf16 (Megatron-Bridge perf_recipes/_common.py
    `_perf_precision` and `_benchmark_common`: grad_reduce_in_fp32 False beside fp8_param_gather True,
    training/mixed_precision.py `bf16_with_fp8_current_scaling_mixed`), and the launch asks for it (Megatron-LM
    --grad-reduce-in-bf16, app/planner/launch/megatron_lm.py): the DDP buffer takes the parameters' 16-bit dtype
    (megatron/core/distributed: grad_dtype is fp32 only with grad_reduce_in_fp32). Measured: Megatron-Bridge's Llama 3
    70B FP8 SFT on 32 H100 (skills/nemo-mbridge-perf-memory-tuning/SKILL.md) reads 54.8 GiB allocated at TP 4 x PP 4;
    fp32 buffers alone would put 17 GiB of gradients on each GPU."""
    return plan.fp32_main_grads and not plan.fp8_params


def te_fp8_weight_cache(workload: Workload, plan: Plan) -> bool:
    """Whether Transformer Engine keeps FP8 copies of the 16-bit linear weights between micro-batches and steps
    (TE_FP8_WEIGHT_CACHE_BYTES): the megatron stack (Plan.fp32_main_grads, as activations.te_fp8) at fp8 without FP8
    parameters (Plan.fp8_params: Megatron-LM --fp8-param-gather, Megatron-Bridge's fp8_param_gather recipes)."""
    return workload.precision == "fp8" and plan.fp32_main_grads and not plan.fp8_params


def _unit_bytes(ctx: _Ctx, stage: _Stage, fp8_params: bool) -> float:
    """One unit ZeRO-3 gathers at once, in bytes. With fp8_params a layer's linear weights are all-gathered in FP8
    (torchao `Float8LinearConfig.enable_fsdp_float8_all_gather`: the cast to float8 runs before the all-gather, so
    the unsharded weight is float8; Megatron-LM `--fp8-param-gather`); its norms, the embedding and the head stay
    16-bit, and the shard itself keeps its dtype (the cast happens per gather)."""
    if not fp8_params:
        return stage.largest_unit * ctx.dtype
    norms = stage.layer_params - stage.layer_linear_params
    layer = stage.layer_linear_params * FP8_BYTES + norms * ctx.dtype
    return max(layer, stage.other_unit * ctx.dtype)


def _zero3_weights(full_bytes: float, n: int, gathered: float) -> float:
    # a shard plus the gathered units, never more than the unsharded weights (n = 1 shards nothing)
    return min(full_bytes, full_bytes / n + gathered)


def _full_states(
    ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str
) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, host bytes) per GPU for pretraining / full fine-tuning.

    ZeRO shards over n = dp × cp, but a routed expert's states only over its expert-data-parallel group:
    the ranks holding the same experts, world / (ep × expert tp × pp) = n × tp / (ep × expert tp) (Megatron-LM
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
    # a GPU's shard of the parameters: dense ones over n, routed experts over their expert-data-parallel group,
    # n × tp / (ep × expert tp) (at least one rank)
    expert_dp = max(1.0, n * plan.tp / (plan.ep * (plan.expert_tp or plan.tp)))
    shard = params if zero == 0 else (params - stage.expert_params) / n + stage.expert_params / expert_dp
    mixed = ctx.workload.mixed_precision and ctx.workload.precision != "fp32"
    # fp32 parameters under autocast (Plan.fp32_params): fp32 weights and gradients (FP32_PARAM_BYTES)
    dtype = param_bytes(ctx, plan)
    grad_bytes = MASTER_BYTES if fp32_grad_buffer(plan) and mixed else dtype
    weights = params * dtype
    if plan.fp8_params:  # the linear weights' working copy in FP8; embeddings, head and norms stay 16-bit
        weights -= stage.linear_params * (ctx.dtype - FP8_BYTES)
    elif te_fp8_weight_cache(ctx.workload, plan) and zero < 3:  # beside the 16-bit linears: their cached FP8 copies
        weights += stage.linear_params * TE_FP8_WEIGHT_CACHE_BYTES
    grads = params * grad_bytes
    optim = (shard if zero else params) * _optimizer_per_param(ctx, plan, _flat_partitions(zero))
    if zero >= 2:
        if plan.pp > 1 and n > 1:  # deferred reduce-scatter: whole gradients in the fp32 reduce dtype
            grads = params * (FSDP_REDUCE_BYTES if ctx.workload.mixed_precision else dtype)
        elif zero == 2 and mixed and offload == "none":  # fp32 gradient shards (module docstring)
            grads = shard * FSDP_REDUCE_BYTES
        else:  # ZeRO-3: 16-bit shards, the 16/N of FSDP2's fp32 params + grads + m, v and of DeepSpeed's states
            grads = shard * grad_bytes
        if zero == 3 and plan.pp == 1:
            gathered = _fp32_gathered(stage) if plan.fp32_params else 2.0 * _unit_bytes(ctx, stage, plan.fp8_params)
            weights = min(weights, shard * dtype + gathered)
    if plan.optimizer_in_backward:  # one parameter's gradient at a time: the largest tensor (rules: no ZeRO, one GPU)
        facts = ctx.facts
        grads = max(facts.embedding, facts.lm_head, facts.largest_linear) / plan.tp * grad_bytes
    if offload == "none":
        return weights, grads, optim, 0.0
    if _deepspeed_offload(ctx, plan, zero) and (offload == "optimizer" or plan.tuning in TRAINER_TUNINGS):
        on_gpu, on_host = _offloaded_grads(ctx, plan, (zero, n), shard)
        host = optim + shard * 4.0 + on_host
        if offload == "optimizer":
            return weights, on_gpu, 0.0, host
        # offload_param (ZeRO-3 only, rules): the 16-bit partition in pinned host memory, the GPU the gathered units
        # (the comment above `_deepspeed_offload`)
        return _gathered(ctx, stage, plan), on_gpu, 0.0, host + shard * param_bytes(ctx, plan)
    return _offloaded(ctx, stage, plan, (weights, grads, optim), (shard, offload))


def _offloaded(
    ctx: _Ctx, stage: _Stage, plan: Plan, states: tuple[float, float, float], split: tuple[float, str]
) -> tuple[float, float, float, float]:
    """ZeRO-Offload keeps fp32 master, states and fp32 gradients on the host (Ren et al. 2021, §4.1);
    `split` is (the parameters this GPU owns, all of them without ZeRO; the offload). DeepSpeed's offload of the
    optimizer (`_deepspeed_offload`), and of the optimizer and the parameters where the plan names the Trainer, is
    counted apart, by `_offloaded_grads`: what is left here is FSDP's CPU offload (the comment above
    `_deepspeed_offload`), a parameter offload that names no stack, and plans no stack offloads."""
    weights, grads, optim = states
    shard, offload = split
    host = optim + shard * 4.0
    if offload == "optimizer":
        return weights, grads, 0.0, host
    dtype = param_bytes(ctx, plan)
    host += shard * dtype  # FSDP CPUOffload / ZeRO-3 offload_param: the 16-bit (fp32 under autocast) shard too
    grads = stage.layer_params * dtype  # one unit's unsharded gradient before its reduce-scatter
    if plan.fsdp1:  # and FSDP1's gradient shards, kept on the GPU through the backward (the comment below)
        mixed = ctx.workload.mixed_precision and ctx.workload.precision != "fp32"
        grads += shard * (MASTER_BYTES if mixed and not plan.fp32_params else dtype)
    return _gathered(ctx, stage, plan), grads, 0.0, host


# FSDP1's CPU offload keeps every unit's gradient shard on the GPU until the backward ends: read at pytorch/pytorch
# 3ade90a6 torch/distributed/fsdp/_runtime_utils.py `_post_backward_hook` (the same in `_accumulate_sharded_grad` and
# `_offload_grad` of later versions): the reduce-scatter writes `new_sharded_grad` (`torch.empty_like(chunks[0])`,
# allocated on the post-backward stream), `_cast_grad_to_param_dtype` casts it to the sharded FlatParameter's dtype
# (the parameters' own: 16-bit for a model loaded in bf16, fp32 under a MixedPrecision policy on fp32 parameters), it
# is kept as `flat_param._saved_grad_shard` and only *copied* to the pinned `_cpu_grad` (`copy_(..., non_blocking=
# True)`, "synchronized in the post-backward callback"). Nothing frees it there: `_post_backward_final_callback` ->
# `_finalize_params` -> `FlatParamHandle.prepare_gradient_for_optim` (_flat_param.py at fe03cf69) points `.grad` at
# `_cpu_grad` and only then `delattr(flat_param, "_saved_grad_shard")`. So at the end of the backward the GPU holds
# the rank's whole gradient shard, P / N in the parameters' dtype, beside the host's copy; cut on the post-backward
# stream, whose cached blocks the compute stream's activations never reuse (c10/cuda/CUDACachingAllocator.cpp
# `get_free_block` matches the block's stream), so the reserved pool holds both. FSDP2 differs (the comment above
# `_deepspeed_offload`: `foreach_reduce` copies each reduce-scatter output to the CPU and drops it), and so does
# DeepSpeed's offload (`_offloaded_grads`); the allocated peak can be lower where the activations freed in the
# backward outweigh the shards (an upper bound there: no allocated figure of an FSDP1 offload run is checked).
# Checked on universal-llm-trainer's full fine-tunes over 2 GPUs with CPUOffload (tests/estimator/
# test_memory_fsdp1_offload.py): Llama 2 13B -47.8 % -> -5.8 %, Gemma 7B -20.9 % -> -3.1 %.


# DeepSpeed's optimizer offload (offload_optimizer {"device": "cpu"}, the planner's ds_config: app/planner/launch/
# deepspeed.py) keeps the gradients it steps on the host, not on the GPU. Read at DeepSpeed edaa7221 (2026-08-22), the
# same lines at v0.18.0 (79caae1c) unless said:
# - ZeRO-3 (stage3.py): `self.device` is the CPU under offload_optimizer, and `grad_partitions_flat_buffer`, the
#   rank's whole gradient partition in grad_accum_dtype (the model's 16-bit dtype by default: engine.py
#   `get_data_types`), is allocated there (pinned with pin_memory), beside each sub-group's fp32 `.grad` (also
#   `self.device`, `initialize_optimizer_states`) that CPU Adam steps. `partition_grads` copies each reduced
#   partition into the host buffer, takes it back to the GPU (`grad_buffer.to(grad_partition.device)`) and casts that
#   to the master's dtype on the GPU before copying it into the fp32 `.grad` (`_offload_grad_partition_at_boundary`;
#   v0.18.0 `grad_buffer.float()`; v0.14.0 copied the 16-bit buffer straight into the fp32 host one, converting on
#   the host): one parameter's partition, 16-bit and fp32, on the GPU at a time. The step leaves the GPU alone:
#   `_prepare_sub_group` and `_release_sub_group` skip the gradient copies under offload, and the fp32 partition is
#   copied back into the 16-bit one by a blocking `copy_` (`_reassign_or_swap_out_partitioned_parameters`), which
#   PyTorch converts on the CPU "to avoid allocating extra GPU memory" (aten/src/ATen/native/cuda/Copy.cu
#   `copy_kernel_cuda`).
# - ZeRO-1/2 (stage_1_and_2.py, also at v0.14.0, ce78a632): `self.device` is 'cpu' with cpu_offload, so the fp32
#   master's `.grad` partition is on the host (`initialize_optimizer_states`); contiguous gradients are forced on
#   (`contiguous_gradients or self.cpu_offload`), each gradient goes through the buckets (counted in `other`:
#   `_ipg_buffers`) and `copy_grads_in_partition` sends the rank's slice of it to the host, cast to fp32 on the GPU
#   (`async_inplace_copy_grad_to_fp32_buffer_from_gpu`), then frees it; no partition buffer is made on the GPU
#   (`grads_in_partition` is the non-offload branch). Kept on the GPU: `temp_grad_buffer_for_gpu_offload`, the
#   largest parameter's numel in the 16-bit dtype; on the host its twin `temp_grad_buffer_for_cpu_offload`, the
#   16-bit copy of the partition CPU Adam's result goes through (`param_buffer_of_bit16_for_cpu_offload_groups`,
#   copied to the GPU in the same dtype by `step`) and, with gradient accumulation, `accumulated_grads_in_cpu`: each
#   of the rank's parameters whole in the 16-bit dtype (counted as the partition). ZeRO-1 reduces only at the
#   accumulation boundary (engine.py `allreduce_gradients`), so with more than one micro-batch a step its 16-bit
#   gradients stay whole on the GPU between them, as without offload.
# - ZeRO-3 with offload_param as well ("optimizer_and_params"; the planner's ds_config sets both, pin_memory on): the
#   gradients go as above, `partition_grads` reading nothing of offload_param. The rank's 16-bit parameter partition
#   lives in host memory: partition_parameters.py `_partition_param` makes each `ds_tensor` on `remote_device` (the
#   CPU, from offload_param.device) and stage3.py `_create_fp16_partitions_with_defragmentation` then moves every
#   partition into `param_groups_fp16_flat_cpu_memory` (pinned, `_create_param_groups_fp16_flat_cpu_memory`) instead
#   of a GPU buffer (`if not self.offload_param`: "partitioned params remain in GPU during training"): one 16-bit copy
#   of the partition on the host, which the step refreshes from the fp32 master there. The all-gather brings each
#   partition to the GPU for the gather (`_allgather_params_coalesced`: `ds_tensor.to(<device>)`), so the GPU keeps the
#   gathered units only (`_gathered`). Host: fp32 master, moments and gradients, the 16-bit gradient buffer and the
#   16-bit parameters, 20 bytes a parameter of the partition with Adam in bf16; GPU gradients: one parameter's
#   partition, 16-bit and fp32 (Llama 3.1 70B over 8 H100: 0.73 GiB, and 1,314.2 GiB of host RAM a node).
# FSDP's CPU offload (the fsdp stack's torchtitan, FSDP2 `CPUOffloadPolicy`; the Trainer's FSDP,
# `Plan.fsdp_torch_adamw`) is left to `_offloaded`: pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_param.py
# at 010ae4a8 `_init_sharded_param` moves the padded sharded parameter to the CPU (pinned with pin_memory) and
# _fsdp_collectives.py `foreach_reduce` reduce-scatters each unit's unsharded gradients on the GPU and copies the
# sharded gradient to the CPU, so the GPU holds one unit's gradients at a time there (`stage.layer_params`). FSDP1
# (Plan.fsdp1) keeps the sharded gradients on the GPU as well (the comment below `_offloaded`).
# Which stack offloads the parameters: both the deepspeed and the fsdp stack run ZeRO-3 "optimizer_and_params"
# (app/planner/data/stacks.json `offload`), and the planner names the one that runs a plan in `Plan.tuning`
# (app/planner/stacks.py `speed_point`: "trainer" for the deepspeed stack, "torchtitan" for the fsdp one), also for a
# plan /estimate is given without one (`as_run`: DeepSpeed, the stack PREFERENCE puts first for data parallel, where
# it runs the optimizer: Adam or Lion). So DeepSpeed's account is the Trainer's (TRAINER_TUNINGS); a plan that names
# no stack (the estimator called without the planner) or another keeps FSDP's, as the published runs of parameter
# offload the estimator is checked on ran (torchtune's and universal-llm-trainer's FSDP: tests/estimator). Optimizer
# offload alone is DeepSpeed's wherever `_deepspeed_offload` holds: no FSDP stack offloads only the optimizer.


def _deepspeed_offload(ctx: _Ctx, plan: Plan, zero: int) -> bool:
    """Whether a full-training plan offloads its optimizer through DeepSpeed's ZeRO (the comment above; with the
    parameters too only where the plan names the Trainer): not Megatron-LM's CPU optimizer (`Plan.fp32_main_grads`:
    its gradient buffer stays on the GPU), FSDP, torchtitan or model parallelism (as `_ipg_buffers` reads DeepSpeed),
    nor ZeRO-1 with gradient accumulation."""
    return (
        zero in (1, 2, 3)
        and not (zero == 1 and _accumulates(ctx, plan))
        and not plan.fp32_main_grads
        and not plan.fsdp_torch_adamw
        and not plan.optimizer_in_backward
        and plan.tuning not in NON_DEEPSPEED_TUNINGS
        and plan.tp * plan.pp * plan.cp * plan.ep == 1
    )


def _accumulates(ctx: _Ctx, plan: Plan) -> bool:
    """Whether a step runs more than one micro-batch a rank (gradient accumulation)."""
    batch = ctx.workload.global_batch
    return batch is not None and batch > plan.dp * plan.micro_batch


def _offloaded_grads(ctx: _Ctx, plan: Plan, zero_n: tuple[int, int], shard: float) -> tuple[float, float]:
    """(gradient bytes on the GPU, gradient and staging bytes on the host beyond the fp32 gradient partition) of
    DeepSpeed's optimizer offload (`_deepspeed_offload`, the comment above); `zero_n` is the ZeRO stage and the ranks it
    shards over, `shard` the parameters the rank owns."""
    zero, n = zero_n
    facts = ctx.facts
    largest = max(facts.embedding, facts.lm_head, facts.largest_linear)
    dtype = param_bytes(ctx, plan)
    mixed = ctx.workload.mixed_precision and ctx.workload.precision != "fp32" and not plan.fp32_params
    cast = MASTER_BYTES if mixed else 0.0  # `.to(<master dtype>)` returns the tensor itself without an fp32 master
    if zero == 3:  # one parameter's partition back on the GPU and its cast; the 16-bit partition buffer on the host
        return math.ceil(largest / n) * (dtype + cast), shard * dtype
    host = (shard + largest + (shard if _accumulates(ctx, plan) else 0.0)) * dtype
    return largest * dtype + min(largest, shard) * cast, host


def _base_weight_bytes(ctx: _Ctx, stage: _Stage, plan: Plan) -> float:
    """The frozen base as stored: NF4 linears and the 16-bit rest (QLoRA), fp32 under autocast (Plan.fp32_params: a
    model loaded without torch_dtype, which PEFT wraps as it is), the training dtype otherwise."""
    if ctx.workload.task == "qlora":
        return (stage.params - stage.linear_params) * 2.0 + stage.linear_params * ctx.nf4_bytes
    return stage.params * param_bytes(ctx, plan)


def _lora_states(
    ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str
) -> tuple[float, float, float, float]:
    adapters = ctx.adapters * stage.layers / ctx.facts.layers / plan.tp
    full = _base_weight_bytes(ctx, stage, plan) + adapters * ctx.adapter_dtype
    weights = _zero3_weights(full, n, _gathered(ctx, stage, plan)) if zero == 3 else full
    grads = _shard(adapters * ctx.adapter_dtype, zero, 2, n)
    optim = _shard(
        adapters * (ctx.flat_adapter_optimizer if _flat_partitions(zero) else ctx.adapter_optimizer), zero, 1, n
    )
    if offload == "none":
        return weights, grads, optim, 0.0
    # ZeRO-Offload's fp32 gradients on the host are this rank's partition, as under full fine-tuning (`_offloaded`:
    # shard × 4): DeepSpeed copies each reduced gradient into the CPU partition it steps (stage_1_and_2.py
    # `single_partition_of_fp32_groups`, stage3.py `fp32_partitioned_groups_flat`); before, every rank counted every
    # adapter's (DeepSeek-V3 LoRA on 8 H100: 1,522 GiB of host RAM where 1,349 are used)
    host = optim + _shard(adapters * 4.0, zero, 1, n)
    if offload == "optimizer_and_params":
        # FSDP CPUOffload(offload_params=True) / ZeRO-3 offload_param: the sharded base and adapters wait in host RAM
        # and each unit comes to the GPU for its all-gather, as under full fine-tuning (`_offloaded`)
        return _gathered(ctx, stage, plan), grads, 0.0, host + full / n
    return weights, grads, 0.0, host


def _states(ctx: _Ctx, stage: _Stage, plan: Plan, n: int, zero: int, offload: str) -> tuple[float, ...]:
    task = ctx.workload.task
    if task == "inference":
        return stage.params * BYTES_PER_ELEMENT[ctx.workload.precision], 0.0, 0.0, 0.0
    if task in LORA_TASKS:
        return _lora_states(ctx, stage, plan, n, zero, offload)
    return _full_states(ctx, stage, plan, n, zero, offload)


def _stage_states(ctx: _Ctx, plan: Plan, shard: int, zero: int, offload: str) -> tuple[tuple[float, ...], ...]:
    """(weights, gradients, optimizer, host) of each stage (`_stages`). Model states do not depend on micro-batch,
    recompute or attention: cached for the plans that vary those, every stage under one key."""
    key = (
        plan.tp,
        plan.pp,
        plan.ep,
        plan.expert_tp,
        shard,
        zero,
        offload,
        plan.fp32_main_grads,
        plan.fp8_params,
        plan.optimizer_in_backward,
        plan.fp32_params,
        # DeepSpeed's optimizer offload (`_deepspeed_offload`, `_offloaded_grads`)
        plan.cp,
        plan.tuning,
        plan.fsdp_torch_adamw,
        offload == "optimizer" and _accumulates(ctx, plan),
        plan.fsdp1,  # FSDP1's CPU offload keeps the gradient shards on the GPU (`_offloaded`)
    )
    states = ctx.states.get(key)
    if states is None:
        stages = _stages_of(ctx, plan)
        states = ctx.states[key] = tuple(_states(ctx, stage, plan, shard, zero, offload) for stage in stages)
    return states


def _zero12_step(ctx: _Ctx, plan: Plan, split: tuple[int, int, bool], grads: float, backward: float) -> float:
    """What DeepSpeed ZeRO-1/2's step holds of gradients beyond `grads` (the breakdown's: ZeRO-2's master-dtype
    partition, ZeRO-1's whole 16-bit gradients, `_full_states`), less what the backward held and freed by then
    (`backward`). `split` is (ZeRO stage, ranks it shards over, whether torch's AdamW steps: `_adamw_step_share`).
    stage_1_and_2.py `step` (the same lines at v0.14.0, v0.16.3, v0.18.0 and edaa7221) first frees the gradients of the
    parameters outside the rank's partition (`free_grad_in_param_list(self.params_not_in_partition[i])`), then
    `flat_grad_partition = self.flatten(self.averaged_gradients[i])`, a new 16-bit copy of the partition's gradients
    (views of ZeRO-2's contiguous partition, of ZeRO-1's `.grad`s), and `.to(single_partition_of_fp32_groups[i].dtype)`
    casts it into the fp32 master's gradient, kept through the optimizer's step; `del flat_grad_partition` after the
    cast. So at the cast: the 16-bit partition, its copy and the fp32 gradient, 2 + 2 + 4 bytes an element of the whole
    partition (no sub-groups here); where torch's AdamW then makes its copy of v (4 bytes, counted apart) the copy is
    gone first. Where the master has the gradients' dtype (no mixed precision, fp32) `.to` returns the copy: the
    partition and its copy, 2 elements' bytes."""
    zero, n, adamw = split
    dtype = param_bytes(ctx, plan)
    mixed = ctx.workload.mixed_precision and ctx.workload.precision != "fp32" and not plan.fp32_params
    if zero == 2:  # grads: the master's gradient partition
        partition = grads * dtype / FSDP_REDUCE_BYTES if mixed else grads
        master = grads
    else:  # grads: every 16-bit gradient, until the step frees those outside the partition
        partition = grads / n
        master = partition * FSDP_REDUCE_BYTES / dtype if mixed else partition
    copy = partition if mixed and not adamw else 0.0  # beside the cast, freed before AdamW's copy of v
    return max(0.0, partition + copy + master - grads - backward)


# torch.optim.AdamW steps every parameter of a device and dtype at once on CUDA (foreach, the default when all
# parameters are CUDA tensors): torch/optim/adamw.py `_multi_tensor_adamw` (torch 2.1 to 2.5) updates m and v in place,
# then makes `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`, a new tensor per parameter the size of v,
# divides and adds eps in place and `_foreach_addcdiv_`s it into the parameters: at the step one more copy of the
# second moment beside all the states, in the states' dtype (fp32 under mixed precision, the training dtype when the
# states are 16-bit). The activations are freed by then, so the step's peak passes the backward's only where v
# outweighs them (full fine-tuning at short sequences; LoRA adapters' v is tiny). The Hugging Face Trainer's default
# `optim` adamw_torch is torch.optim.AdamW (app/planner/launch/trainer.py TRAINER_OPTIM), and so is ms-swift's
# (swift/llm/utils/argument.py at 4312aeb28: optim 'adamw_torch'). Not where another implementation steps: Megatron's
# and DeepSpeed's fused Adam where a ds_config names it (in-place multi-tensor kernels), bitsandbytes' paged and 8-bit
# optimizers, the optimizer in the backward (one parameter at a time), offloaded states (CPU Adam), not under ZeRO /
# FSDP, where torchtitan steps the fused AdamW (its default implementation) and the plan names neither the Trainer's
# FSDP nor its DeepSpeed (TRAINER_TUNINGS), and not on a
# model-parallel plan (tensor, pipeline, context or expert parallel): the Trainer runs data parallel only, so such a
# plan is Megatron-LM's (with or without its fp32 gradient buffer) or torchtitan's. Under FSDP where the plan names
# the Trainer's foreach AdamW (`Plan.fsdp_torch_adamw`): FSDP hands the optimizer its sharded flat parameters and the
# same foreach step runs on them (fms-acceleration's Mistral 7B full fine-tune over 2 A100, bf16 states: 33.74 GiB
# allocated at batch 2 and 4 alike, 8 bytes a parameter of states over 2 GPUs plus one 2-byte copy of v).
ADAMW_STEP_V_SHARE = 0.5  # v of AdamW's two moments (m, v)
# DeepSpeed under the Hugging Face Trainer (the planner's deepspeed stack, `Plan.tuning` "trainer" / "trainer_peft"):
# without offload the launch's ds_config names no optimizer (app/planner/launch/deepspeed.py `_deepspeed_optimizer`), so
# the Trainer builds its `optim` adamw_torch (transformers integrations/deepspeed.py `deepspeed_optim_sched`:
# trainer.create_optimizer(), zero_allow_untested_optimizer) and DeepSpeed's ZeRO optimizer steps it on its fp32
# partitions (deepspeed/runtime/zero/stage_1_and_2.py `_optimizer_step`: `self.optimizer.step()` per param group;
# stage3.py `_optimizer_step` per sub-group, one group of up to sub_group_size 1e9 elements, the planner's ds_config
# leaving it at that default): torch's foreach step, with its copy of v. Offloaded states step in DeepSpeedCPUAdam.
# ZeRO-3 steps one sub-group at a time (stage3.py `step`: `_optimizer_step(sub_group_id)` per group of at most
# `stage3_sub_group_size` elements of the partition, 1e9 by default, `_create_fp16_sub_groups`): the copy of v is one
# sub-group's, fp32
DEEPSPEED_SUB_GROUP_ELEMENTS = 1e9  # deepspeed/runtime/zero/config.py `sub_group_size: int = Field(pp_int(1e9))`
DEEPSPEED_SUB_GROUP_STEP_BYTES = DEEPSPEED_SUB_GROUP_ELEMENTS * 4.0
# Whatever optimizer steps it, DeepSpeed's ZeRO-3 builds each sub-group's gradient for the step anew:
# deepspeed/runtime/zero/stage3.py `_prepare_fp32_grad_for_sub_group`, the same line at v0.14.0 (ce78a632,
# 2024-03-07), v0.16.3 (c17dc33c, 2025-01-21), v0.18.0 (79caae1c, 2025-10-07) and edaa7221 (2026-08-22):
# `self.flatten(self.averaged_gradients[sub_group_id]).to(self.fp32_partitioned_groups_flat[sub_group_id].dtype)`.
# torch's _flatten_dense_tensors concatenates the sub-group's views of grad_partitions_flat_buffer (the gradient
# partition the backward filled, in the engine's grad_accum_dtype, the model's 16-bit dtype by default: engine.py
# `get_data_types`) into a new tensor of that dtype, and `.to` casts it into a new one in the master's dtype (fp32
# under mixed precision): 2 + 4 bytes an element of the sub-group at once, beside the partition buffer, which stays.
# The cast is kept as the master's `.grad` through the optimizer's step (`unscale_and_clip_grads` scales it in place)
# and dropped after it (`_release_sub_group`). Where the master is in the gradients' dtype (fp32 training, or no fp32
# master) `.to` returns the concatenation: one copy, kept. DeepSpeed's FusedAdam steps in place (multi_tensor_adam),
# so that is its step's transient; torch's foreach AdamW (the Trainer's, `_adamw_step_share`) adds its copy of v
# beside the kept gradient. The step runs after the backward, its activations freed (`step` calls
# `_partition_all_parameters` first), so it sets the peak only where it outweighs them. Not with offloaded states:
# the backward copies each gradient partition into the host's fp32 buffers (the buffer itself is on the host,
# `self.device`), where CPU Adam steps it.

# DeepSpeed ZeRO-1/2 with contiguous gradients (its default) cuts every gradient of the backward into a 16-bit buffer of
# reduce_bucket_size elements, two with overlap_comm: deepspeed/runtime/zero/stage_1_and_2.py at 38327e0 `backward`
# allocates `buf_0 = torch.empty(int(self.reduce_bucket_size), dtype=self.dtype)` and, "to avoid data access conflict
# when overlap_comm is enabled", `buf_1`, at the start of each backward, whatever the trainable parameters' size, and
# frees both in `independent_gradient_partition_epilogue` (`_release_ipg_buffers`), before the step. The planner's
# launch turns overlap_comm and contiguous_gradients on and leaves the bucket at DeepSpeed's default
# (deepspeed/runtime/zero/config.py `reduce_bucket_size: int = Field(pp_int(5e8))`); QwenLM/Qwen's
# finetune/ds_config_zero2.json sets 2e8 with overlap_comm (Plan.reduce_bucket_elements). Not under Megatron-LM
# (`Plan.fp32_main_grads`), a pipeline (DeepSpeed's pipeline engine turns overlap_comm off and ZeRO-2 under a
# pipeline runs as FSDP2 here: `_full_states`), model parallelism (Megatron-LM or torchtitan) or torchtitan's FSDP
# (`Plan.tuning` "torchtitan").
DEEPSPEED_REDUCE_BUCKET_ELEMENTS = 5e8
DEEPSPEED_IPG_BUFFERS = 2.0
# ColossalAI's LowLevelZero (Plan.low_level_zero) at d888c378: LowLevelZeroPlugin's `reduce_bucket_size_in_m: int = 12`
# (colossalai/booster/plugin/low_level_zero_plugin.py, "Defaults to 12", times 1024 * 1024 elements); at a reduction
# the bucket's gradients are cloned into per-rank slices (bookkeeping/bucket_store.py `build_grad_in_bucket`) and
# flattened into one more bucket-sized tensor (`get_flatten_grad`): counted as DEEPSPEED_IPG_BUFFERS buckets
LOW_LEVEL_ZERO_REDUCE_BUCKET_ELEMENTS = 12 * 1024 * 1024


def _adamw_step_share(ctx: _Ctx, plan: Plan, split: tuple[int, str, bool]) -> float:
    """torch.optim.AdamW's foreach step temporary as a share of the optimizer bytes on the GPU (`ADAMW_STEP_V_SHARE`
    of the moments), for a plan it steps; 0 where it steps none. `split` is (ZeRO stage, offload, paged); the share is
    the same for every pipeline stage, so the breakdown finds it once per plan."""
    zero, offload, paged = split
    workload = ctx.workload
    if (
        workload.optimizer != "adamw"
        or (zero and not plan.fsdp_torch_adamw and plan.tuning not in TRAINER_TUNINGS)
        or offload != "none"
        or paged
        or plan.fp32_main_grads
        or plan.optimizer_in_backward
        or plan.tp * plan.pp * plan.cp * plan.ep > 1  # model parallel: Megatron-LM or torchtitan, fused Adam
    ):
        return 0.0
    # the moments are the optimizer bytes less the fp32 master of a mixed-precision full fine-tune (LoRA adapters
    # keep none: _lora_figures)
    master = (
        workload.mixed_precision and not plan.fp32_params
    )  # fp32 parameters are their own master (_optimizer_per_param)
    if master and workload.precision != "fp32" and workload.task not in LORA_TASKS:
        return ADAMW_STEP_V_SHARE * STATE_FP32_BYTES["adamw"] / (MASTER_BYTES + STATE_FP32_BYTES["adamw"])
    return ADAMW_STEP_V_SHARE


def _deepspeed_flat_step(ctx: _Ctx, plan: Plan, zero: int, offload: str) -> bool:
    """Whether DeepSpeed's ZeRO-1 or ZeRO-3 steps the plan's full training on the GPU, building the gradients it steps
    anew (`_zero12_step`; ZeRO-3 per sub-group, `DEEPSPEED_SUB_GROUP_ELEMENTS`): not under FSDP (the Trainer's,
    `Plan.fsdp_torch_adamw`, or torchtitan's), a pipeline or model parallelism (ZeRO-3 then runs as FSDP2:
    `_full_states`), Megatron-LM (its distributed optimizer is its ZeRO-1) or offloaded states."""
    return (
        zero in (1, 3)
        and offload == "none"
        and ctx.workload.task in FULL_TRAINING_TASKS
        and not plan.fsdp_torch_adamw
        and not plan.fp32_main_grads
        and plan.tuning not in NON_DEEPSPEED_TUNINGS
        and plan.tp * plan.pp * plan.cp * plan.ep == 1
    )


def _zero3_step_temp(ctx: _Ctx, plan: Plan, grads: float, v_copy: float, flat: bool) -> float:
    """Bytes DeepSpeed's ZeRO-3 step makes for its largest sub-group beside the states: torch AdamW's copy of v
    (`v_copy`, the whole partition's) cut to one sub-group, and where `flat` (`_deepspeed_flat_step`) the sub-group's
    new gradient copies (DEEPSPEED_SUB_GROUP_ELEMENTS); `grads` is the stage's gradient partition, in the parameters'
    dtype (`_full_states`)."""
    v_copy = min(v_copy, DEEPSPEED_SUB_GROUP_STEP_BYTES)
    if not flat:
        return v_copy
    grad = param_bytes(ctx, plan)
    elements = min(grads / grad, DEEPSPEED_SUB_GROUP_ELEMENTS)
    workload = ctx.workload
    if workload.mixed_precision and workload.precision != "fp32" and not plan.fp32_params:  # an fp32 master
        # the concatenation beside its cast, then the cast beside AdamW's copy of v
        return max(elements * (grad + MASTER_BYTES), elements * MASTER_BYTES + v_copy)
    return elements * grad + v_copy  # the concatenation is the master's gradient


def _ipg_buffers(ctx: _Ctx, plan: Plan, zero: int) -> float:
    """Bytes of DeepSpeed ZeRO-1/2's gradient buckets during the backward (DEEPSPEED_IPG_BUFFERS; ColossalAI's
    LowLevelZero's where the plan names it); 0 elsewhere."""
    if (
        zero not in (1, 2)
        or ctx.workload.task == "inference"
        or plan.fp32_main_grads
        or plan.tuning in NON_DEEPSPEED_TUNINGS
        or plan.tp * plan.pp * plan.cp * plan.ep > 1
    ):
        return 0.0
    bucket = DEEPSPEED_REDUCE_BUCKET_ELEMENTS if plan.reduce_bucket_elements is None else plan.reduce_bucket_elements
    if plan.low_level_zero and plan.reduce_bucket_elements is None:
        bucket = LOW_LEVEL_ZERO_REDUCE_BUCKET_ELEMENTS
    return DEEPSPEED_IPG_BUFFERS * bucket * ctx.dtype


_WHOLE_MODEL = Plan()  # one stage holding every parameter (tp = pp = ep = 1): the model as a loader reads it


def _loaded_bytes(ctx: _Ctx) -> float:
    """The whole model as loaded, before any sharding (Plan.host_load): QLoRA's NF4 linears with their constants and
    the 16-bit rest (embeddings, norms, head), the base in its dtype otherwise; adapters come after the load (PEFT
    wraps the loaded model)."""
    return _base_weight_bytes(ctx, _stages_of(ctx, _WHOLE_MODEL)[0], _WHOLE_MODEL)
