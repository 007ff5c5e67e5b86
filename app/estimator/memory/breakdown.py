"""The worst pipeline stage's per-GPU sum of states, activations, KV cache and `other`, against the card's usable
memory and the host RAM a node may lend (package docstring, "Host RAM while loading")."""

from __future__ import annotations

from functools import lru_cache

from app.estimator.memory.activations import _activation_sets, _loss_bytes
from app.estimator.memory.context import _Ctx, _Sharded, _Split, _Worst
from app.estimator.memory.states import (
    DEEPSPEED_SUB_GROUP_ELEMENTS,
    MASTER_BYTES,
    _adamw_step_share,
    _deepspeed_flat_step,
    _flat_partitions,
    _ipg_buffers,
    _loaded_bytes,
    _stage_states,
    _zero3_step_temp,
    _zero12_step,
    param_bytes,
)
from app.estimator.specs import (
    GIB,
    Cluster,
    MemoryBreakdown,
    Plan,
)
from app.estimator.vocabulary import FULL_TRAINING_TASKS, TRAINER_TUNINGS

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

# STEP_BLOCKS: DeepSpeed ZeRO-3's step temporaries in torch's caching allocator (MemoryBreakdown.step_block). The
# step's tensors are one sub-group wide (states._zero3_step_temp: deepspeed/runtime/zero/stage3.py
# `_prepare_fp32_grad_for_sub_group` at edaa7221 flattens the sub-group's gradients into one new tensor and casts it
# into another, up to sub_group_size 1e9 elements, and the Trainer's torch AdamW makes its copy of v over the same flat
# partition), made after the backward has freed its activations. `total` cuts them from those freed bytes, as the
# allocated peak (torch.cuda. max_memory_allocated) does. The reserved pool cannot: c10/cuda/CUDACachingAllocator.cpp
# serves a request from one cached block at least its size (`get_free_block`, best fit), merges free blocks only inside
# the segment that holds them (`try_merge_blocks`), and gives a request of 10 MB or more a segment of its own rounded
# size, so the backward's layer-sized blocks (a checkpoint, a layer's working set: tokens x ffn x 2 bytes at most)
# cannot hold a sub-group's gigabytes and the step's tensors take new segments beside them. The standard loss's fp32
# logit-sized tensors (its upcast, log-probs and gradient, tokens x vocab x 4 bytes each) are blocks large enough where
# they outsize the step's largest tensor, and the step reuses them; a fused (Liger), chunked or compiled loss leaves
# none. Nor does DeepSpeed make the step's tensors before the activations: stage3.py `initialize_optimizer_states` at
# edaa7221 (as at v0.14.0, v0.16.3, v0.17.0 and v0.18.0) allocates one fp32 buffer of the largest sub-group and frees
# it again (`group.grad = None` without offload) and steps nothing; torch's AdamW makes its moments at the first step.
# That freed buffer is the one block of a sub-group's size the step finds, where the 16-bit gradient partition buffer
# made next (`_setup_for_real_optimizer`) was too large to be cut from it (`_uncut_step`). The pool as torch configures
# it by default (no expandable segments: ms-swift's `swift sft` scripts set none, the planner's launches neither).
# In the reserved and device readings only, up to the card (a cudaMalloc that fails frees the cached blocks and
# retries: `release_cached_blocks`), like the blocks kept for varied lengths.

# ColossalAI's LowLevelZero at stage 2 (Plan.low_level_zero), read at hpcaitech/ColossalAI d888c378 (ColossalChat's
# benchmark commit), colossalai/zero/low_level/: the backward's post-accumulate hook puts each parameter's 16-bit
# `.grad` in a bucket, which bookkeeping/bucket_store.py `build_grad_in_bucket` clones into per-rank slices and frees
# (`param.grad = None`); low_level_optim.py `_run_reduction` reduce-scatters the bucket and keeps the rank's slices in
# the gradient store: the 16-bit gradient partition, made in the backward. `step` casts each into the fp32 master's
# gradient (`grad.to(master_param.dtype)`, `master_param.grad = grad`, all kept in grad_partition_groups through
# `self.optim.step()`, then `release_param_grad`), beside the 16-bit partition still in the store; `zero_grad` empties
# the store (`zero_grad_stores` -> `reset_all_gradients`), and ColossalChat's trainers call it after every step
# (applications/ColossalChat/coati/trainer/sft.py `_train`: step, zero_grad). No gradient is held while the next
# forward's activations peak, and none persists in a flat buffer (DeepSpeed's contiguous gradients, states
# `_zero12_step`). The step: the fp32 partition (the states' gradient term) and one 16-bit partition beside it, 0.5
# of the fp32 bytes with 16-bit parameters; HybridAdam steps the GPU states in place (colossalai/nn/optimizer/
# hybrid_adam.py, fused multi_tensor_adam): no copy of v. Offloaded (cpu_offload) plans are not read so. The same at
# v0.4.0, the release ColossalChat's requirements.txt pins, where `step` empties the store itself right after the cast
# (`reset_grads_by_group_id`): the 16-bit and fp32 partitions still meet at the end of the cast.
LOW_LEVEL_ZERO_STEP_COPY = 1.0


def _breakdown(
    ctx: _Ctx, split: _Split, plan: Plan, cluster: Cluster, sharding: tuple[int, int, str], stage: int | None = None
) -> MemoryBreakdown:
    """The worst stage's breakdown of the plan of `split` (activations._split_of); `sharding` is (dp, zero_stage,
    offload), separate from the plan so the ZeRO-3 advice can vary them without a new Plan; `stage`: that pipeline
    stage's instead (an index into the stages, -1 the last; not cached: estimate.stage_breakdown)."""
    dp, zero, offload = sharding
    # hybrid sharding shards the states over the shard group only (Plan.dp_shard); the ZeRO-3 advice (dp other
    # than the plan's) shards over all of its dp
    shard = plan.dp_shard if plan.dp_shard and dp == plan.dp else dp
    sharded = _sharded(ctx, split, plan, shard * plan.cp, zero, offload)
    adamw_share = sharded[3]
    made_in_backward = (adamw_share > 0.0 or plan.low_level_zero) and _grads_made_in_backward(ctx, plan, dp, zero)
    worst = sharded[4].get(made_in_backward) if stage is None else None
    zero_n = (zero, shard * plan.cp)
    if stage is not None:
        worst = _worst_stage(ctx, split, plan, sharded, zero_n, made_in_backward, stage % len(split.working))
    elif worst is None:  # the stages read the split, the sharded states' key and this flag only
        worst = sharded[4][made_in_backward] = _worst_stage(ctx, split, plan, sharded, zero_n, made_in_backward)
    total, parts, host_per_gpu, pageable, step, is_last, unheld, uncut = worst
    weights, grads, optim, activations, kv, other = parts
    gpus_on_node = dp * plan.tp * plan.pp * plan.cp
    if gpus_on_node > cluster.gpus_per_node:
        gpus_on_node = cluster.gpus_per_node
    capacity = cluster.gpu.usable_memory_gib * GIB
    limit = capacity * (1.0 - cluster.memory_headroom)
    ram = cluster.host_ram_gib
    host_limit = None if ram is None else _host_limit(ram, cluster.gpus_per_node)
    copies = 0 if plan.host_load == "none" else gpus_on_node if plan.host_load == "every_rank" else 1
    # the step's temporary is cut from the blocks the freed activations and the varied lengths left cached, then from
    # the logits' block (the loss's blocks exist on the last stage only)
    length_slack = split.length_slack
    # AdamW's states made in its first step (activations VARIED_LENGTH_ACTIVATION_SETS): torch's optimizer on one GPU
    # or under FSDP; not under DeepSpeed (the Trainer's, TRAINER_TUNINGS), whose optimizers step once with zero
    # gradients when built, "allocating optimizer state at the beginning of training instead of after activations
    # have been allocated" (deepspeed/runtime/bf16_optimizer.py, stage_1_and_2.py `initialize_optimizer_states`;
    # stage3.py `_initialize_optimizer_states`)
    if (
        adamw_share
        and is_last
        and ctx.workload.varied_lengths
        and (plan.fsdp_torch_adamw or (zero == 0 and plan.tuning not in TRAINER_TUNINGS))
    ):
        length_slack += _activation_sets(ctx, plan, activations)
    logits_block = split.logits_block if is_last else 0.0
    # positional (not *parts: a call with unpacked arguments costs a fifth of the breakdown's construction): total,
    # weights, gradients, optimizer, activations, kv_cache, other, capacity, host_ram, limit, host limit, host load,
    # its copies, the allocator's slack for varied lengths, paged states, the logits' block
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
        max(0.0, length_slack - step),
        pageable,
        max(0.0, logits_block - max(0.0, step - length_slack)),
        unheld,
        uncut,
    )


def _uncut_step(ctx: _Ctx, plan: Plan, sizes: tuple[float, float, float], flat_step: int) -> float:
    """Bytes of DeepSpeed ZeRO-3's step temporaries that `total` cuts from the backward's freed blocks and the caching
    allocator cannot (STEP_BLOCKS above; MemoryBreakdown.step_block); `sizes` is (the gradient partition, the step's
    temporaries, the backward's freed bytes). 0 but for DeepSpeed's own ZeRO-3 step (`flat_step` 3) where the plan
    names DeepSpeed under the Hugging Face Trainer (TRAINER_TUNINGS: the planner's deepspeed stack, ms-swift's
    `swift sft`); a plan that names no stack may be FSDP's, whose step makes no sub-group tensors."""
    grads, step, backward = sizes
    if flat_step != 3 or plan.tuning not in TRAINER_TUNINGS:
        return 0.0
    largest = min(grads / param_bytes(ctx, plan), DEEPSPEED_SUB_GROUP_ELEMENTS) * MASTER_BYTES  # the fp32 cast
    full_fp32 = not (plan.chunked_loss or plan.fused_loss or plan.compiled_loss or plan.no_upcast_loss)
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    reusable = _loss_bytes(ctx, plan) if full_fp32 and tokens * ctx.model.vocab / plan.tp * 4.0 >= largest else 0.0
    # the freed buffer of `initialize_optimizer_states`, one largest sub-group in fp32, stays a free block of that
    # size where the gradient partition buffer made after it (stage3.py `_setup_for_real_optimizer`:
    # grad_partitions_flat_buffer, the whole partition in 16 bits) is the larger and took a segment of its own
    if grads > largest:
        reusable += largest
    return min(step, backward) - min(step, backward, reusable)


def _worst_stage(
    ctx: _Ctx,
    split: _Split,
    plan: Plan,
    sharded: _Sharded,
    zero_n: tuple[int, int],
    made_in_backward: bool,
    only: int = -1,
) -> _Worst:
    """The stage with the largest total (`_Worst`): each stage's states (`sharded`, read from the plan under its key:
    fsdp_torch_adamw) beside its working set (`split`); `zero_n` is the ZeRO stage and the ranks it shards over;
    `only` (an index >= 0): that stage alone."""
    states, paged, flat_step, adamw_share, _ = sharded
    zero, n = zero_n
    # DeepSpeed ZeRO-1/2's gradient buckets, beside the activations through the backward, freed before the step
    ipg = _ipg_buffers(ctx, plan, zero)
    worst: _Worst | None = None
    last = len(split.working) - 1
    for index, ((weights, grads, optim, host), (activations, kv, other, host_activations)) in enumerate(
        zip(states, split.working, strict=True)
    ):
        if only >= 0 and index != only:
            continue
        pageable = 0.0
        if paged:
            pageable, optim = optim, 0.0
        backward = activations + ipg  # what the backward holds beside the states and is freed before the step
        other += ipg
        if flat_step in (1, 2):  # DeepSpeed ZeRO-1/2's gradient copies at the step (states._zero12_step)
            grads += _zero12_step(ctx, plan, (flat_step, n, adamw_share > 0.0), grads, backward)
        elif made_in_backward and zero == 2 and _mixed(ctx, plan):  # LowLevelZero's step: the 16-bit partition too
            grads += grads * LOW_LEVEL_ZERO_STEP_COPY * param_bytes(ctx, plan) / MASTER_BYTES
        # torch AdamW's step temporary, beside the states once the activations are freed (states.ADAMW_STEP_V_SHARE)
        step = step_block = 0.0
        # the allocated reading's backward holds less on the last stage (_Split.recompute_overlap): what the peak
        # beside the step loses of it
        overlap = split.recompute_overlap if index == last else 0.0
        unheld = overlap
        if made_in_backward:  # the larger of the backward's start (no gradients) and the step (no activations)
            tail = max(activations, grads + adamw_share * optim)
            unheld = tail - max(activations - overlap, grads + adamw_share * optim)
            grads = max(0.0, min(grads, tail - activations))
            step = tail - activations - grads
            other += step
        elif adamw_share or flat_step == 3:
            step = adamw_share * optim
            if zero == 3 and not plan.fsdp_torch_adamw:  # DeepSpeed's ZeRO-3 steps one sub-group at a time
                step = _zero3_step_temp(ctx, plan, grads, step, flat_step == 3)
            unheld = max(backward, step) - max(backward - overlap, step)
            step_block = _uncut_step(ctx, plan, (grads, step, backward), flat_step)
            step = max(0.0, step - backward)
            other += step
        total = weights + grads + optim + activations + kv + other
        if worst is None or total > worst[0]:
            parts = (weights, grads, optim, activations, kv, other)
            worst = (
                total,
                parts,
                host + host_activations,
                pageable,
                step,
                index == last,
                unheld,
                step_block,
            )
    assert worst is not None  # every plan has a stage
    return worst


def _mixed(ctx: _Ctx, plan: Plan) -> bool:
    """Whether an fp32 master stands beside 16-bit parameters (its gradient the states' gradient term)."""
    workload = ctx.workload
    return workload.mixed_precision and workload.precision != "fp32" and not plan.fp32_params


def _grads_made_in_backward(ctx: _Ctx, plan: Plan, dp: int, zero: int) -> bool:
    """Whether a step of the plan holds no gradients while its activations peak, where torch's foreach AdamW steps it
    (`states._adamw_step_share`): full training of one micro-batch a step on one GPU, or under FSDP stepping the
    Trainer's AdamW (`Plan.fsdp_torch_adamw`). The gradients are made in the backward, after the loss: autograd
    allocates each `.grad` as it reaches its parameter on one GPU, FSDP each sharded gradient at its reduce-scatter
    (torch/distributed/fsdp/_runtime_utils.py `_reduce_grad`: `_get_reduce_scatter_tensors` makes it with
    torch.empty_like, `_accumulate_sharded_grad` keeps it as `_saved_grad_shard`), and the Trainer frees them
    after every step (transformers Trainer `model.zero_grad()`, set_to_none=True since PyTorch 2.0). So the peak is
    the larger of the backward's start (states without gradients, every activation and the loss's buffers) and the
    optimizer step (states with gradients and the step's temporary copy of v, activations freed), not their sum.
    Liger-Kernel PR #199 (examples/huggingface/results at 1dce7fd4) isolates it: Mistral 7B over FSDP 4 peaks at
    34,547.9 MiB allocated with the Trainer's fp32 logits and with Liger's fused loss alike, the step's figure; so do
    fms-acceleration's one-GPU Mistral 7B runs at batch 4 and 8 (72.43 GB). Not with gradient accumulation (the first
    micro-batches' gradients are held through the next ones' activations), nor where gradients live in a persistent
    buffer: DDP's buckets, Megatron-LM's main-grad buffer (`Plan.fp32_main_grads`), DeepSpeed ZeRO-3's
    grad_partitions_flat_buffer (deepspeed/runtime/zero/stage3.py), ZeRO-1/2's contiguous gradients."""
    workload = ctx.workload
    if workload.task not in FULL_TRAINING_TASKS or plan.pp > 1 or plan.fp32_main_grads:
        return False
    if workload.global_batch is not None and workload.global_batch > dp * plan.micro_batch:
        return False
    if zero == 2 and plan.low_level_zero:  # ColossalAI's LowLevelZero (LOW_LEVEL_ZERO_STEP_COPY)
        return plan.offload == "none"
    return (zero == 0 and dp * plan.tp * plan.cp == 1) or (zero == 3 and plan.fsdp_torch_adamw)


def _sharded(ctx: _Ctx, split: _Split, plan: Plan, shard: int, zero: int, offload: str) -> _Sharded:
    """(model states per stage (states._stage_states), paged states, the ZeRO stage of DeepSpeed's step gradient
    copies (ZeRO-1/2's partition, ZeRO-3's sub-groups; 0: none), torch AdamW's step share, the worst stages found so
    far: `_Sharded`) of a plan of `split` sharded over `shard` ranks at ZeRO stage `zero` with `offload`. Cached in the
    split under the fields its key leaves out (context._Split): ZeRO and offload, which the planner varies at one
    split, FP8 parameters, the optimizer in the backward, the Trainer's AdamW under FSDP and FSDP1."""
    key = (
        shard,
        zero,
        offload,
        plan.fp8_params,
        plan.optimizer_in_backward,
        plan.fsdp_torch_adamw,
        plan.tuning,  # DeepSpeed under the Trainer steps torch's AdamW (states._adamw_step_share, TRAINER_TUNINGS)
        plan.reduce_bucket_elements,  # DeepSpeed ZeRO-1/2's gradient buckets (states._ipg_buffers)
        plan.fsdp1,  # FSDP1's CPU offload keeps the gradient shards on the GPU (states._offloaded)
        plan.low_level_zero,  # ColossalAI's ZeRO-2: no DeepSpeed step copies (LOW_LEVEL_ZERO_STEP_COPY)
    )
    found = split.sharded.get(key)
    if found is None:
        # paged states live in CUDA managed memory outside torch's pool and give way to whatever the card needs
        # (module docstring, "Paged optimizer"): not in the gate's total, reported beside it
        # (MemoryBreakdown.paged_optimizer)
        paged = offload == "none" and ctx.paged[_flat_partitions(zero)]
        # DeepSpeed's gradient copies for the step: ZeRO-1/2's partition (states._zero12_step), ZeRO-3's sub-groups
        # (states._zero3_step_temp)
        flat_step = 0
        if (
            zero == 2
            and plan.pp == 1
            and offload == "none"
            and ctx.workload.task in FULL_TRAINING_TASKS
            and not plan.low_level_zero
        ):
            flat_step = 2
        elif _deepspeed_flat_step(ctx, plan, zero, offload):
            flat_step = zero
        adamw_share = _adamw_step_share(ctx, plan, (zero, offload, paged))  # torch AdamW's step temporary (states)
        states = _stage_states(ctx, plan, shard, zero, offload)
        found = split.sharded[key] = (states, paged, flat_step, adamw_share, {})
    return found


@lru_cache(maxsize=1024)
def _host_limit(host_ram_gib: float, gpus_per_node: int) -> float:
    return max(0.0, host_ram_gib - host_ram_reserve_gib(host_ram_gib, gpus_per_node)) * GIB


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
