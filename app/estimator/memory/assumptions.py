"""The assumptions an estimate states, as notes (codes with parameters, worded in app/estimator/notes.py and the app's
catalog), per (workload, plan) kind; shared by every plan that states the same."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from app.estimator.memory.breakdown import _grads_made_in_backward
from app.estimator.memory.context import _Ctx
from app.estimator.memory.states import (
    DEEPSPEED_IPG_BUFFERS,
    DEEPSPEED_SUB_GROUP_ELEMENTS,
    MASTER_BYTES,
    STATE_FP32_BYTES,
    _adamw_step_share,
    _deepspeed_flat_step,
    _flat_partitions,
    _ipg_buffers,
    _stage_states,
    _zero3_step_temp,
    param_bytes,
)
from app.estimator.notes import Note
from app.estimator.specs import GIB, MemoryBreakdown, Plan
from app.estimator.vocabulary import LORA_TASKS


class _WorkloadKey(NamedTuple):
    """What the notes read of the workload (the estimate's cache key, positional: see estimate_memory)."""

    task: str
    precision: str
    mixed: bool
    optimizer: str
    paged: bool
    nf4_bytes: float
    upcast: bool


class _PlanKey(NamedTuple):
    """What the notes read of the plan (the estimate's cache key, positional: see estimate_memory)."""

    zero: int
    offload: str
    recompute: str
    flash: bool
    pipelined: bool
    activation_offload: bool
    fp32_grads: bool
    host_load: str
    compiled: bool
    paged: bool
    upcast: bool
    loss: str  # compiled, fused, chunked or standard
    fp32_params: bool  # fp32 parameters under torch.autocast (Plan.fp32_params)


@lru_cache(maxsize=1024)
def _assumptions(
    workload_key: tuple[str, str, bool, str, bool, float, bool],
    plan_key: tuple[int, str, str, bool, bool, bool, bool, str, bool, bool, bool, str, bool],
) -> tuple[Note, ...]:
    """The notes, from plain tuples (the hot path builds them; named here, where they are read once). Notes are built
    as tuples, without keyword arguments: an estimate of a new shape builds them (about as fast as the f-strings they
    replace)."""
    w, p = _WorkloadKey(*workload_key), _PlanKey(*plan_key)
    out = [WORST_STAGE]
    out.extend(_states_notes(w, p))
    if w.task != "inference":
        out.extend(_training_notes(w, p))
    if p.pipelined:
        out.append(PIPELINE_1F1B)
    out.append(OTHER_BUFFERS)
    return tuple(out)


# the notes without parameters, built once
WORST_STAGE, PIPELINE_1F1B, OTHER_BUFFERS = Note("worst_stage"), Note("pipeline_1f1b"), Note("other_buffers")
INFERENCE_MEMORY, PAGED_OPTIMIZER, KBIT_UPCAST = Note("inference_memory"), Note("paged_optimizer"), Note("kbit_upcast")
ZERO2_FP32_GRADS, ADAFACTOR_FLAT = Note("zero2_fp32_grads"), Note("adafactor_flat")
PIPELINE_SHARDED_GRADS, ACTIVATION_OFFLOAD, COMPILED, COMPILED_LOSS = (
    Note("pipeline_sharded_grads"),
    Note("activation_offload"),
    Note("compiled"),
    Note("compiled_loss"),
)
HOST_LOAD = {"every_rank": Note("host_load_every_rank"), "local_rank_0": Note("host_load_local_rank_0")}


def _states_notes(w: _WorkloadKey, p: _PlanKey) -> list[Note]:
    """How the model states are held: inference weights, LoRA / QLoRA, Megatron-LM's, mixed or pure precision."""
    task, precision, mixed, optimizer = w.task, w.precision, w.mixed, w.optimizer
    if task == "inference":
        return [INFERENCE_MEMORY]
    if task in LORA_TASKS:
        out = _lora_notes(w, p.fp32_params)
    elif p.fp32_params:  # the rules admit it with mixed precision at a 16-bit dtype only
        state = STATE_FP32_BYTES[optimizer]
        out = [Note("fp32_params", (("optimizer", optimizer), ("state", state), ("per_param", 4 + 4 + state)))]
    elif mixed and precision != "fp32" and p.fp32_grads:
        owned = MASTER_BYTES + STATE_FP32_BYTES[optimizer]  # what the distributed optimizer shards
        out = [Note("megatron_mixed", (("optimizer", optimizer), ("per_param", 2 + 4 + owned), ("owned", owned)))]
    elif mixed and precision != "fp32":
        state = STATE_FP32_BYTES[optimizer]
        per_param = 2 + 2 + MASTER_BYTES + state
        out = [Note("mixed_precision", (("optimizer", optimizer), ("state", state), ("per_param", per_param)))]
    else:
        out = [Note("pure_precision", (("precision", precision), ("optimizer", optimizer)))]
    if w.paged:
        out.append(PAGED_OPTIMIZER)
    return out


def _lora_notes(w: _WorkloadKey, fp32_params: bool) -> list[Note]:
    if w.task == "qlora":  # NF4 and its quantisation constants (double-quantised below 0.55 B/param), QLoRA §3
        code = "qlora_base" + ("_double" if w.nf4_bytes < 0.55 else "") + ("_mixed" if w.mixed else "")
        out = [Note(code, (("task", w.task), ("bits", w.nf4_bytes * 8 - 4)))]
    else:
        out = [Note("lora_base_fp32" if fp32_params else "lora_base", (("task", w.task),))]
    if w.upcast:
        out.append(KBIT_UPCAST)
    return out


def _training_notes(w: _WorkloadKey, p: _PlanKey) -> list[Note]:
    """Activations, ZeRO sharding and what offload and loading put in host RAM."""
    zero = p.zero
    levels = (("recompute", p.recompute), ("flash", p.flash))
    out = [
        Note("activations", levels)
        if p.loss == "standard"
        else Note("activations_megatron_loss", levels)
        if p.loss == "megatron"
        else Note("activations_lean_loss", (*levels, ("loss", p.loss))),
        Note("zero_sharded", (("zero", zero), ("offload", p.offload)))
        if zero
        else Note("zero_replicated", (("offload", p.offload),)),
    ]
    if zero == 2 and not p.pipelined and w.mixed and w.precision != "fp32" and w.task not in LORA_TASKS:
        out.append(ZERO2_FP32_GRADS)
    if w.optimizer == "adafactor" and zero >= 1:
        out.append(ADAFACTOR_FLAT)
    if zero >= 2 and p.pipelined:
        out.append(PIPELINE_SHARDED_GRADS)
    if p.activation_offload:
        out.append(ACTIVATION_OFFLOAD)
    if p.compiled:
        out.append(COMPILED)
    if p.loss == "compiled":
        out.append(COMPILED_LOSS)
    if p.host_load != "none":
        out.append(HOST_LOAD[p.host_load])
    return out


def with_step_notes(ctx: _Ctx, plan: Plan, b: MemoryBreakdown, notes: tuple[Note, ...]) -> tuple[Note, ...]:
    """`notes` and, where torch's foreach AdamW steps the plan (`states._adamw_step_share`), what its step puts in the
    breakdown (`_step_notes`). Those carry the plan's figures, so they are cached per shape (the notes', which the
    context holds, so their id is not reused) and figures: what sets the states' size beyond the shape (dp, its shard
    group, FP8 weights, how the optimizer steps) and the parts the step's notes read."""
    key = (
        id(notes),
        plan.dp,
        plan.dp_shard,
        plan.fp8_params,
        plan.fp32_params,  # no master copy in the optimizer bytes (states._adamw_step_share)
        plan.fsdp_torch_adamw,
        plan.optimizer_in_backward,
        plan.tuning,  # the Trainer's AdamW under DeepSpeed (states.TRAINER_TUNINGS)
        plan.reduce_bucket_elements,  # DeepSpeed ZeRO-1/2's gradient buckets (states._ipg_buffers)
        b.activations,
        b.gradients,
        b.other,
    )
    cached = ctx.assumptions.get(key)
    if cached is None:
        paged = plan.offload == "none" and ctx.paged[_flat_partitions(plan.zero_stage)]  # as breakdown.py reads it
        share = _adamw_step_share(ctx, plan, (plan.zero_stage, plan.offload, paged))
        flat = plan.zero_stage == 3 and _deepspeed_flat_step(
            ctx, plan, 3, plan.offload
        )  # DeepSpeed ZeRO-3's sub-group copies
        cached = ctx.assumptions[key] = notes + _step_notes(ctx, plan, b, share, flat) if share or flat else notes
    buckets = _ipg_buffers(ctx, plan, plan.zero_stage)  # DeepSpeed ZeRO-1/2's gradient buckets, in `other`
    if buckets:
        elements = buckets / DEEPSPEED_IPG_BUFFERS / ctx.dtype
        return (*cached, Note("deepspeed_buckets", (("bucket_gib", _gib(buckets)), ("elements", elements))))
    return cached


def _step_notes(ctx: _Ctx, plan: Plan, b: MemoryBreakdown, share: float, flat: bool) -> tuple[Note, ...]:
    """The step's figures, as the breakdown places them (breakdown.py `_breakdown`; such a plan has one stage):
    torch AdamW's step temporary (a copy of v: `share` of the optimizer bytes), the part of it `other` holds beyond
    the activations it reuses once they are freed (`adamw_step_other`; DeepSpeed ZeRO-3's sub-group gradient copies
    with it where `flat`, states._zero3_step_temp: `zero3_step_other`), and, where the gradients are made in the
    backward (`_grads_made_in_backward`: one micro-batch a step), which phase sets the peak: the backward's start
    (every activation, no gradients yet: `gradients` reads 0) or the optimizer step (the gradients and the
    temporary, the activations freed)."""
    zero, shard = plan.zero_stage, plan.dp_shard or plan.dp
    ((_weights, grads, optim, _host),) = _stage_states(ctx, plan, shard * plan.cp, zero, plan.offload)
    temp, activations = share * optim, b.activations
    out: list[Note] = []
    if _grads_made_in_backward(ctx, plan, plan.dp, zero):
        tail = max(activations, grads + temp)
        step = tail - activations - max(0.0, min(grads, tail - activations))
        phase = "peak_backward_start" if activations >= grads + temp else "peak_optimizer_step"
        figures = (("activations_gib", _gib(activations)), ("grads_gib", _gib(grads)), ("temp_gib", _gib(temp)))
        out.append(Note(phase, figures))
    else:
        if zero == 3 and not plan.fsdp_torch_adamw:  # DeepSpeed's ZeRO-3 steps one sub-group at a time
            temp = _zero3_step_temp(ctx, plan, grads, temp, flat)
        # the step reuses the blocks the freed activations and DeepSpeed's gradient buckets left (breakdown.py)
        step = max(0.0, temp - activations - _ipg_buffers(ctx, plan, zero))
    if step > 0.0 and flat:
        elements = min(grads / param_bytes(ctx, plan), DEEPSPEED_SUB_GROUP_ELEMENTS)
        figures = (("step_gib", _gib(step)), ("temp_gib", _gib(temp)), ("elements", elements))
        out.append(Note("zero3_step_other", figures))
    elif step > 0.0:
        out.append(Note("adamw_step_other", (("step_gib", _gib(step)), ("temp_gib", _gib(temp)))))
    return tuple(out)


def _gib(value: float) -> float:
    return round(value / GIB, 2)
