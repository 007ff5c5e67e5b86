"""The memory estimate: the per-(model, workload) context, the breakdown with its warnings and assumptions, and the
estimate read the way a published peak was measured."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from app.estimator.compute import nf4_bytes_per_param
from app.estimator.memory.activations import (
    FRAGMENTATION,
    OTHER_NCCL_BYTES,
    _act_coeffs,
    _dropout_elements,
    _offloaded_activations,
    _split_of,
    _trainable_linears,
    kbit_upcast,
)
from app.estimator.memory.advice import _fit_warnings, _plan_warnings
from app.estimator.memory.assumptions import _assumptions, with_step_notes
from app.estimator.memory.breakdown import _breakdown
from app.estimator.memory.context import _Ctx
from app.estimator.memory.rules import PLAN_RULES, _validate_workload
from app.estimator.memory.states import (
    _facts,
    _flat_partitions,
    _lora_figures,
    _optimizer_bytes_per_param,
    _pages,
    _train_dtype_bytes,
    fp32_grad_buffer,
)
from app.estimator.notes import Note
from app.estimator.specs import (
    GIB,
    Cluster,
    MemoryBreakdown,
    ModelSpec,
    Plan,
    Warning_,
    Workload,
    require_choice,
)


@dataclass(slots=True)  # an output, built on every estimate (not frozen: see MemoryBreakdown)
class MemoryEstimate:
    breakdown: MemoryBreakdown  # bytes per GPU, worst pipeline stage
    warnings: list[Warning_]
    assumptions: tuple[Note, ...]  # shared by the plans that state the same (immutable)


@lru_cache(maxsize=1024)
def _build_context(model: ModelSpec, workload: Workload) -> _Ctx:
    _validate_workload(model, workload)  # raises before anything is cached
    adapters, adapter_dtype, adapter_optim = _lora_figures(model, workload)
    trainable = frozenset() if workload.task == "inference" else _trainable_linears(workload)
    return _Ctx(
        model=model,
        workload=workload,
        facts=_facts(model),
        coeffs=_act_coeffs(model, trainable),
        compiled_coeffs=_act_coeffs(model, trainable, compiled=True),
        autocast_coeffs=_act_coeffs(model, trainable, autocast=True),
        autocast_compiled_coeffs=_act_coeffs(model, trainable, compiled=True, autocast=True),
        te_coeffs=_act_coeffs(model, trainable, te=True),
        dtype=_train_dtype_bytes(workload),
        optimizer_per_param=_optimizer_bytes_per_param(workload),
        flat_optimizer_per_param=_optimizer_bytes_per_param(workload, flat=True),
        act_bytes=4.0 if workload.precision == "fp32" else 2.0,
        adapters=adapters,
        adapter_dtype=adapter_dtype,
        adapter_optimizer=adapter_optim,
        flat_adapter_optimizer=_lora_figures(model, workload, flat=True)[2],
        paged=(_pages(workload, flat=False), _pages(workload, flat=True)),
        dropout_elements=_dropout_elements(model, workload),
        nf4_bytes=nf4_bytes_per_param(workload),
    )


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


def offloaded_activation_bytes(model: ModelSpec, workload: Workload, plan: Plan) -> float:
    """Bytes one GPU copies to host RAM per micro-batch under `activation_offload` (and back for the backward)."""
    if not plan.activation_offload or workload.task == "inference":
        return 0.0
    return _offloaded_activations(_context(model, workload), plan)


def _checked_context(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> _Ctx:
    ctx = _context(model, workload)  # validates the workload once per (model, workload)
    for rule in PLAN_RULES:  # check_plan, inline: the planner's hot path (the workload's rules held for the context)
        error = rule(model, workload, plan, cluster)
        if error is not None:
            raise error
    return ctx


def memory_breakdown(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryBreakdown:
    """The per-GPU breakdown alone, without warnings or assumptions: the planner's hot path, which
    only needs to know whether a plan fits (it asks estimate_memory for the plans it keeps)."""
    ctx = _checked_context(model, workload, plan, cluster)
    return _breakdown(ctx, _split_of(ctx, plan, plan.dp), plan, cluster, (plan.dp, plan.zero_stage, plan.offload))


def stage_breakdown(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, stage: int) -> MemoryBreakdown:
    """The per-GPU breakdown of one pipeline stage of `plan` (`stage` indexes the stages, -1 the last), as
    memory_breakdown gives the worst's: to compare with a figure read on that stage (Megatron-LM logs its memory on
    the last rank, the last stage). Off the planner's path: the gate and every plan's fit read the worst stage."""
    ctx = _checked_context(model, workload, plan, cluster)
    sharding = (plan.dp, plan.zero_stage, plan.offload)
    return _breakdown(ctx, _split_of(ctx, plan, plan.dp), plan, cluster, sharding, stage)


def estimate_memory(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryEstimate:
    """Per-GPU memory of `plan` (worst pipeline stage), with named traps and the assumptions used."""
    ctx = _checked_context(model, workload, plan, cluster)
    split = _split_of(ctx, plan, plan.dp)
    breakdown = _breakdown(ctx, split, plan, cluster, (plan.dp, plan.zero_stage, plan.offload))
    # no trap can apply to a plan without pipeline, offload or a tp that splits kv heads or crosses a node
    tp = plan.tp
    plain = (
        plan.pp == 1
        and plan.offload == "none"
        and not model.approximate
        and (tp == 1 or (model.kv_heads % tp == 0 and tp <= cluster.gpus_per_node))
    )
    warnings = [] if plain else _plan_warnings(ctx, split, plan, cluster)
    gpu_fits = breakdown.gpu_fits
    # host RAM is checked only when something is offloaded or loaded whole on the host
    if breakdown.host_ram or breakdown.host_load or not gpu_fits:
        warnings.extend(_fit_warnings(ctx, split, plan, cluster, breakdown, gpu_fits))
    # the notes read the plan's recompute, attention, pipeline, activation offload, torch.compile, loss, fp32 gradient
    # buffer and (for k-bit preparation) ZeRO-3 sharding, which its split holds in its key, and the fields of this one
    key = (plan.zero_stage, plan.offload, plan.fp8_params, plan.host_load)
    assumptions = split.assumptions.get(key)
    if assumptions is None:
        assumptions = split.assumptions[key] = _plan_assumptions(ctx, plan)
    if plan.tp == 1 and plan.pp == 1:  # where torch's AdamW may step (states._adamw_step_share)
        assumptions = with_step_notes(ctx, plan, breakdown, assumptions)
    return MemoryEstimate(breakdown, warnings, assumptions)


def _loss(plan: Plan) -> str:
    """How the plan's loss holds its logits: compiled, fused, chunked or standard (the upcast fp32 logits); megatron
    on the megatron stack (Plan.fp32_main_grads), whose vocab-parallel cross-entropy keeps the same bytes fused or not
    (memory.activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT)."""
    if plan.compiled_loss:
        return "compiled"
    if plan.fp32_main_grads:
        return "megatron"
    return "fused" if plan.fused_loss else "chunked" if plan.chunked_loss else "standard"


def _plan_assumptions(ctx: _Ctx, plan: Plan) -> tuple[Note, ...]:
    """The notes of a plan, cached per context under every plan field they read (shared by the splits)."""
    workload, zero = ctx.workload, plan.zero_stage
    key_p = (
        zero,
        plan.offload,
        plan.recompute,
        plan.flash_attention,
        plan.pp > 1,
        plan.activation_offload,
        fp32_grad_buffer(plan),  # Megatron-LM's fp32 gradient buffer (bf16 with FP8 parameters)
        plan.host_load,
        plan.compiled,
        ctx.paged[_flat_partitions(zero)],  # paged_optimizer(workload, plan), as the context holds it
        kbit_upcast(workload, plan),
        _loss(plan),
        plan.fp32_params,
    )
    found = ctx.assumptions.get(key_p)
    if found is not None:
        return found
    key_w = (
        workload.task,
        workload.precision,
        workload.mixed_precision,
        workload.optimizer,
        key_p[-4],  # paged
        ctx.nf4_bytes,
        key_p[-3],  # upcast
    )
    found = ctx.assumptions[key_p] = _assumptions(key_w, key_p)
    return found


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
#   docstring, and the blocks kept for batches of varied length, MemoryBreakdown.length_slack); the cuBLAS
#   workspaces are tensors of the caching allocator and stay in it.
MEASURED = ("total", "reserved", "device", "allocated")


def measured_bytes(breakdown: MemoryBreakdown, plan: Plan, cluster: Cluster, measured: str) -> float:
    """The estimate read the way a published figure was measured (see MEASURED); "total" is the gate figure."""
    require_choice(measured, MEASURED, "measured")
    nccl = OTHER_NCCL_BYTES if plan.dp * plan.tp * plan.pp * plan.cp > 1 else 0.0
    # the blocks kept for varied lengths grow the pool up to the card, no further: a cudaMalloc that fails makes the
    # allocator free its unused cached blocks and retry (CUDACachingAllocator.cpp `release_cached_blocks`)
    # and so does the 16-bit logits' block beside the standard loss's fp32 backward (activations LOGITS_BLOCK_BYTES_PER_
    # LOGIT), and DeepSpeed ZeRO-3's step temporaries beside the backward's blocks (breakdown STEP_BLOCKS), for the same
    # reason
    kept = breakdown.length_slack + breakdown.logits_block + breakdown.step_block
    slack = min(kept, max(0.0, breakdown.capacity - breakdown.total))
    if measured == "reserved":
        return breakdown.total - nccl + slack
    if measured == "allocated":
        return breakdown.total - nccl - FRAGMENTATION * breakdown.activations - breakdown.recompute_overlap
    if measured == "device":
        # paged optimizer states stay on the card as far as it has room (MemoryBreakdown.paged_optimizer)
        resident = min(breakdown.paged_optimizer, max(0.0, breakdown.capacity - breakdown.total - slack))
        return breakdown.total + (cluster.gpu.memory_gib - cluster.gpu.usable_memory_gib) * GIB + slack + resident
    return breakdown.total
