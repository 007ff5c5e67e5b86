"""What a plan is told besides its figures: the named traps it runs into, why it does not fit (GPU memory, host RAM,
or unknown host RAM), and what would fit instead (ZeRO-3 over every GPU, more GPUs, or a larger card)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from typing import Any

from app.estimator.hardware import load_gpus
from app.estimator.interconnects import host_pcie_bytes_per_s
from app.estimator.memory.activations import _recompute_kind, _split_fields, _split_of
from app.estimator.memory.breakdown import _breakdown, breakdown_gib
from app.estimator.memory.context import _Ctx, _Split
from app.estimator.specs import (
    GIB,
    Cluster,
    MemoryBreakdown,
    Plan,
    Warning_,
)
from app.estimator.vocabulary import TRAINER_TUNINGS


def _plan_warnings(ctx: _Ctx, split: _Split, plan: Plan, cluster: Cluster) -> list[Warning_]:
    """The plan's traps, found in its split (activations._split_of) by the plan and cluster fields they read beside
    the split's own: tp, pp and the micro-batches (dp and the micro-batch) are in the split's key, the model's and the
    task's in the context."""
    key = (plan.offload, cluster.gpu.pcie_gen)
    found = split.traps.get(key)
    if found is None:  # the context's, under every field they read: shared by the splits
        shared = (plan.tp, plan.pp, plan.offload, cluster.gpu.pcie_gen)
        found = ctx.traps.get(shared)
        if found is None:
            model, trains = ctx.model, ctx.workload.task != "inference"
            # An MLA model (DeepSeek-V2/V3) caches one latent per token, not K/V heads: its `kv_heads` is the GQA
            # equivalent of that latent's size (app/estimator/models.py), so no heads are replicated under TP.
            kv_heads = 0 if model.mla else model.kv_heads
            found = ctx.traps[shared] = _trap_warnings(
                kv_heads, model.layers, model.approximate, *shared[:3], trains, shared[3]
            )
        split.traps[key] = found
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
    pcie_gen: int,
) -> tuple[Warning_, ...]:
    """The named traps of a plan, from the few numbers they depend on (cached: plans repeat them). What costs speed,
    not memory, the speed estimate warns once (app/estimator/performance.py: a pipeline short of micro-batches,
    `pipeline_few_microbatches`, and tensor parallel across servers, `tp_across_nodes`)."""
    out: list[Warning_] = []
    if tp > 1 and kv_heads % tp:
        out.append(
            Warning_("kv_heads_replicated", {"kv_heads": kv_heads, "tp": tp, "kept_heads": max(1, kv_heads // tp)})
        )
    if layers % pp:
        out.append(Warning_("pp_uneven_layers", {"layers": layers, "pp": pp, "stage_layers": math.ceil(layers / pp)}))
    if offload != "none" and trains:
        pcie_gbs = host_pcie_bytes_per_s(pcie_gen) / 1e9  # data/interconnects.json pcie_host, with its source
        out.append(Warning_("offload_over_pcie", {"offload": offload, "pcie_gen": pcie_gen, "pcie_gbs": pcie_gbs}))
    if approximate:
        out.append(Warning_("approximate_model"))
    return tuple(out)


def _fit_warnings(
    ctx: _Ctx, split: _Split, plan: Plan, cluster: Cluster, breakdown: MemoryBreakdown, gpu_fits: bool
) -> list[Warning_]:
    out: list[Warning_] = []
    ram = cluster.host_ram_gib
    # a plan that puts nothing on the host fits any host (MemoryBreakdown.host_fits): most plans here are the GPU's
    if (breakdown.host_ram or breakdown.host_load) and not breakdown.host_fits:
        if breakdown.load_binds:
            out.append(_load_warning(breakdown, ram))
        elif ram is not None and breakdown.host_ram_limit is not None:
            params = host_ram_params(breakdown, ram)
            out.append(Warning_("host_ram_exceeded", params))
        else:
            out.append(Warning_("host_ram_unknown", {"offload_gib": breakdown.host_ram / GIB}))
    if not gpu_fits and ctx.workload.task != "inference":
        advice = _zero3_advice(ctx, split, plan, cluster)
        needed = advice.params.get("needed_gib")
        total = breakdown.total
        out.append(advice if needed is None else _own_total(ctx, advice, total))
    return out


def _load_warning(breakdown: MemoryBreakdown, host_ram_gib: float | None) -> Warning_:
    """The whole-model load (Plan.host_load) sets a host peak the node cannot hold, or one on a node of unknown RAM."""
    if host_ram_gib is None:
        return Warning_("host_load_unknown", host_load_params(breakdown))
    return Warning_("host_load_exceeded", host_load_params(breakdown) | host_ram_figures(breakdown, host_ram_gib))


def host_need_params(breakdown: MemoryBreakdown) -> dict[str, Any]:
    """What sets the host peak, as figures (the words' codes: app/text/quote_check_words.py `plan_host_ram*`): `loading`
    with the load's figures (host_load_params), else the offload's GiB per node."""
    if breakdown.load_binds:
        return {"loading": True} | host_load_params(breakdown)
    return {"loading": False, "offload_gib": breakdown.host_ram / GIB}


def host_ram_params(breakdown: MemoryBreakdown, host_ram_gib: float) -> dict[str, Any]:
    """The figures of a host RAM refusal for an offload, by name (GiB per node)."""
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


def _zero3_advice(ctx: _Ctx, split: _Split, plan: Plan, cluster: Cluster) -> Warning_:
    """When a plan does not fit: would ZeRO-3 over every GPU fit, and if not, what would.

    Cached per context under every plan and cluster field it reads: plans that differ only in dp, ZeRO stage or
    offload get the same advice; indexed in the plan's split (activations._split_of), whose key holds all of those
    fields but the ZeRO-3 plan's dp, fp8_params, its optimizer step (fsdp_torch_adamw, the Trainer's DeepSpeed in
    `tuning`, optimizer_in_backward), host_load
    and the cluster's.
    """
    model_parallel = plan.tp * plan.pp * plan.cp
    dp = max(plan.dp, cluster.gpus_per_node * cluster.nodes // model_parallel)
    key = (
        dp,
        plan.fp8_params,
        # the ZeRO-3 plan keeps how its optimizer steps: the Trainer's AdamW's copy of v (states._adamw_step_share),
        # one parameter's gradient at a time (states._full_states)
        plan.fsdp_torch_adamw,
        plan.tuning in TRAINER_TUNINGS,  # and DeepSpeed's under the Trainer
        plan.optimizer_in_backward,
        plan.host_load,  # a whole-model load on the host can keep ZeRO-3 from fitting too
        cluster.gpus_per_node,
        cluster.gpu.usable_memory_gib,
        cluster.memory_headroom,  # the advice says whether ZeRO-3 fits inside the headroom
        cluster.host_ram_gib,  # and the host RAM, where activations are offloaded
    )
    advice = split.advice.get(key)
    if advice is None:  # the context's, under every field it reads: shared by the splits (other ZeRO stages...)
        shared = (_split_fields(plan), _recompute_kind(plan), *key)
        advice = ctx.advice.get(shared)
        if advice is None:
            advice = ctx.advice[shared] = _advise(ctx, plan, cluster, dp, model_parallel)
        split.advice[key] = advice
    return advice


def _own_total(ctx: _Ctx, advice: Warning_, total: float) -> Warning_:
    """`no_fit_zero3` names the plan's own `total` (`total_gib`: the gate's figure, `per_gpu_gib.total`) and the GPU
    memory ZeRO-3 over every GPU would need (`needed_gib`), no more than that total (review R6: 8B full fine-tuning
    on one A100 totals 150.0 GiB, and the warning named only ZeRO-3's 123.9). On one GPU ZeRO-3 shards nothing, and
    the plan can hold less than its ZeRO-3 twin (its gradients made in the backward,
    `breakdown._grads_made_in_backward`), as can a pipeline plan (ZeRO-3's gradients stay whole in fp32 through a
    pipelined step): Llama 3.2 3B full fine-tuning at micro-batch 4 on one H100 totals 82.51 GiB, and the warning said
    88.5 GiB needed. Cached beside the shape's advice (which the context holds: its id is not reused)."""
    own = ctx.advice.get((id(advice), total))
    if own is None:
        own_gib = breakdown_gib(total)
        params = advice.params | {"total_gib": own_gib, "needed_gib": min(advice.params["needed_gib"], own_gib)}
        own = ctx.advice[(id(advice), total)] = replace(advice, params=params)
    return own


def _advise(ctx: _Ctx, plan: Plan, cluster: Cluster, dp: int, model_parallel: int) -> Warning_:
    # ZeRO-3 over every data-parallel rank, not over a hybrid plan's shard group (which `_breakdown` keeps at its dp)
    # (the plan itself at ZeRO-3 over those ranks too: what reads the plan's stage, such as sharded QLoRA skipping
    # PEFT's k-bit preparation, must not see the stage of whichever plan filled this cache entry)
    # ZeRO-3 runs on DeepSpeed or FSDP, never with Megatron-LM's fp32 main-gradient buffer (Plan.fp32_main_grads, the
    # megatron stack's): the twin is what /estimate sizes for the same plan at ZeRO-3 (a Qwen3-30B-A3B EP 8 plan at
    # ZeRO-1 on the megatron stack was told "ZeRO-3 would (74.4 GiB)" where ZeRO-3 reads 67.4)
    zero3_plan = replace(plan, dp=dp, zero_stage=3, offload="none", dp_shard=None, fp32_main_grads=False)
    zero3 = _breakdown(ctx, _split_of(ctx, zero3_plan, dp), zero3_plan, cluster, (dp, 3, "none"))
    if zero3.fits:
        # the ranks ZeRO-3 shards over: dp × cp (Megatron's data-parallel group with context parallelism, torchtitan's
        # FSDP mesh dp_shard × cp; `breakdown` shards so)
        return Warning_("no_fit", {"zero3_gib": breakdown_gib(zero3.total), "dp": dp * plan.cp})
    limit = zero3.capacity if zero3.limit is None else zero3.limit
    needed = {"gpus": dp * model_parallel, "needed_gib": breakdown_gib(zero3.total), "limit_gib": breakdown_gib(limit)}
    fit = _what_would_fit(dp * model_parallel, model_parallel, zero3, dp, cluster.memory_headroom)
    return Warning_("no_fit_zero3", needed | fit)


def _what_would_fit(
    gpus_now: int, model_parallel: int, zero3: MemoryBreakdown, dp: int, headroom: float
) -> dict[str, Any]:
    """What would fit where ZeRO-3 over every GPU does not: `activations_exceed` (the activations alone exceed the
    card), else `fit_gpus` (GPUs of this type that would hold the sharded states) and `cards` (larger cards' ids)."""
    limit = zero3.capacity if zero3.limit is None else zero3.limit
    budget = limit - (zero3.activations + zero3.kv_cache + zero3.other)
    if budget <= 0:
        return {"activations_exceed": True}
    # sharded states scale as 1/dp: their total over the dp group divided by what one GPU can spare
    states = (zero3.weights + zero3.gradients + zero3.optimizer) * dp
    return {
        "fit_gpus": max(gpus_now + 1, math.ceil(states / budget) * model_parallel),
        "cards": _cards_that_fit(zero3.total, headroom),
    }


def _cards_that_fit(total_bytes: float, headroom: float) -> list[str]:
    """The three smallest cards whose limit (usable memory less the plan's headroom, as `breakdown` gates it) holds
    `total_bytes`: a card of the same usable memory, which the plan already misses, is never one of them."""
    fitting = [gpu for gpu in load_gpus().values() if gpu.usable_memory_gib * GIB * (1.0 - headroom) >= total_bytes]
    return [gpu.id for gpu in sorted(fitting, key=lambda g: g.usable_memory_gib)[:3]]
