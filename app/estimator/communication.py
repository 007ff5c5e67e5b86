"""Per-step communication and offload times of a plan, and how much of each hides behind compute.

Volumes: ring collectives move 2(n-1)/n of the bytes per GPU (all-reduce; reduce-scatter and all-gather
half that), Megatron-LM TP all-reduces b·s·h twice forward and twice backward per layer, ZeRO-3 moves
1.5× data parallel's volume (ZeRO paper §7), pipeline stages send b·s·h per micro-batch;
bandwidths come from `interconnects` (measured NCCL busbw). What overlaps with compute:

- DP gradient all-reduce / ZeRO-1,2 reduce-scatter: overlaps the backward of the last micro-batch,
  all buckets but the last (PyTorch DDP `bucket_cap_mb`=25).
- ZeRO-1,2 parameter all-gather after the step: exposed (DeepSpeed runs it after `optimizer.step()`).
- ZeRO-3 / FSDP all-gathers (forward, backward) and reduce-scatter: overlap the forward / backward of
  every micro-batch by prefetch; the first layer's gather is exposed. The all-gathers move every
  sharded weight, trainable or frozen (FSDP shards the whole module; LoRA's frozen base is gathered
  like any other parameter, in NF4 for QLoRA as in FSDP-QLoRA); only the gradient reduce-scatter
  shrinks to the adapters for LoRA.
- TP all-reduces (or SP all-gather + reduce-scatter): exposed (Megatron without `--tp-comm-overlap`).
- PP activation / gradient sends: exposed, on the critical path of 1F1B.
- CP ring K/V exchange: overlaps the attention core of the same layer (Megatron CP).
- EP all-to-all (dispatch + combine, forward and backward, forward again under full recompute): exposed, or
  overlapping the micro-batch's forward + backward with `Plan.ep_overlap` (DualPipe, Megatron's
  --overlap-moe-expert-parallel-comm); an all-to-all, not a ring: off-server bytes leave through each GPU's
  share of the server's network.
- Optimizer offload: gradient copies to the host overlap the backward (ZeRO-Offload, Ren et al.
  2021 §4.1); CPU Adam and the parameter copy back are exposed (delayed parameter update is off by
  default).

Overlap is not free: NCCL kernels take SMs and HBM bandwidth from the compute they hide behind, so
only `OVERLAP_HIDE_FRACTION` of the overlappable time is actually hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from app.estimator.compute import nf4_bytes_per_param, trainable_split
from app.estimator.interconnects import (
    LinkBandwidth,
    all_reduce_s,
    all_to_all_s,
    gather_or_scatter_s,
    group_bandwidth,
    host_pcie_bytes_per_s,
    point_to_point_s,
)
from app.estimator.params import count_params
from app.estimator.specs import Cluster, ModelSpec, Plan, Workload
from app.estimator.vocabulary import BYTES_PER_ELEMENT

# Fraction of an overlappable collective that really hides behind compute. Assumed 0.7 (not
# measured): NCCL kernels occupy SMs (one block per channel) and contend for HBM with the compute
# they overlap. It was held fixed while calibrating performance.py on the published runs.
OVERLAP_HIDE_FRACTION = 0.7
DDP_BUCKET_BYTES = 25 * 2**20  # torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=25) default
ACTIVATION_BYTES = 2.0  # activations travel in bf16/fp16, also in FP8 recipes (Transformer Engine)
# CPU Adam streams fp32 param, m, v, grad in (16 B) and param, m, v, bf16 copy out (14 B) per param.
CPU_ADAM_BYTES_PER_PARAM = 30.0
# Achieved host memory traffic of CPU Adam per node. Assumed 100 GB/s: a 2-socket DDR4-3200
# 8-channel server peaks at ~410 GB/s and vectorised CPU Adam reaches a fraction of it. DeepSpeed:
# "DeepSpeedCPUAdam is 5X-7X faster than the standard PyTorch implementation" (deepspeed.ai
# tutorials/zero-offload) yet "significant time is spent on CPUAdam" (DeepSpeed PR #7474: Qwen2.5-3B
# on 2 A100-40G with offload, 2.4-3.1 s per step; this constant gives ~0.9 s of CPU Adam for 3.1B).
HOST_ADAM_BYTES_PER_S = 100e9


@dataclass(slots=True)  # not frozen: frozen __init__ costs ~0.5 µs per field, built on every estimate
class StepShape:
    """Compute times the collectives can hide behind, per GPU."""

    micro_batches: int
    fwd_s: float  # forward of one micro-batch (its stage)
    bwd_s: float  # backward of one micro-batch, recompute included
    attention_s: float  # attention core of one micro-batch
    layers_local: int
    trainable_local: float  # parameters with gradients on one GPU before ZeRO sharding
    placement: dict[str, int]  # GPUs of each group kind on one node (`per_node`)
    weights_local: float = 0.0  # every parameter on one GPU before ZeRO sharding; 0: the trainable ones


def hide(comm_s: float, window_s: float) -> float:
    """Exposed part of `comm_s` that can overlap a compute window of `window_s`."""
    return comm_s - OVERLAP_HIDE_FRACTION * min(comm_s, window_s)


def per_node(plan: Plan, gpus_per_node: int) -> dict[str, int]:
    """GPUs of one group on one node, ranks ordered tp, cp, dp (ep inside dp), pp (Megatron default); with an expert
    tp of its own (Plan.expert_tp), the experts' grid ordered expert tp, ep, expert dp, pp (Megatron-LM
    megatron/core/parallel_state.py at d98e8a64, the expert RankGenerator), so ep follows the expert tp ranks."""
    return _per_node(plan.tp, plan.cp, plan.dp, plan.ep, plan.pp, gpus_per_node, plan.expert_tp or 0)


@lru_cache(maxsize=16384)
def _per_node(tp: int, cp: int, dp: int, ep: int, pp: int, gpus_per_node: int, etp: int = 0) -> dict[str, int]:
    # keyed by ints: hashing the Plan dataclass costs more than this arithmetic
    left = max(1, gpus_per_node // (tp * cp))
    return {
        "tp": min(tp, gpus_per_node),
        "cp": max(1, min(cp, gpus_per_node // (tp or 1))),
        "dp": min(dp, left),
        "ep": min(ep, max(1, gpus_per_node // etp) if etp else left),
        "pp": max(1, min(pp, gpus_per_node // (tp * cp * dp))),
    }


def trainable_params_local(model: ModelSpec, workload: Workload, plan: Plan) -> float:
    """Parameters with gradients on one GPU (before ZeRO sharding); experts split over ep."""
    shared, experts = trainable_split(model, workload.task, workload.lora)
    return local_trainable(shared, experts, plan)


def local_trainable(shared: float, experts: float, plan: Plan) -> float:
    """Trainable parameters on one GPU: the shared ones over tp × pp, the experts over ep × expert tp × pp."""
    if plan.expert_tp is None or plan.expert_tp == plan.tp:
        return (shared + experts / plan.ep) / (plan.tp * plan.pp)
    return (shared / plan.tp + experts / (plan.ep * plan.expert_tp)) / plan.pp


def weights_params_local(model: ModelSpec, plan: Plan) -> float:
    """Parameters on one GPU before ZeRO sharding, trainable or frozen; experts split over ep × expert tp."""
    counts = count_params(model)
    experts = counts.total - counts.active if model.is_moe else 0
    return local_trainable(counts.total - experts, experts, plan)


def gathered_bytes(workload: Workload) -> float:
    """Bytes per parameter a ZeRO-3 / FSDP all-gather moves: the training dtype, NF4 for QLoRA's base."""
    return nf4_bytes_per_param(workload) if workload.task == "qlora" else grad_bytes(workload)


def grad_bytes(workload: Workload) -> float:
    """Gradients are reduced in 16 bits (fp32 for fp32 training); a 7B model's bf16 gradients are 14 GB."""
    return 4.0 if workload.precision == "fp32" else 2.0


def tp_comm(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape) -> float:
    """Megatron TP: 2 all-reduces forward + 2 backward per layer (+2 under full recompute), b·s·h each.

    Sequence parallelism replaces each all-reduce by a reduce-scatter + all-gather pair that moves the
    same bytes (Korthikanti et al. 2022 §4.2.2), so the time is the same with or without it.
    """
    if plan.tp <= 1:
        return 0.0
    count = 4 + (2 if plan.recompute == "full" else 0)
    message = plan.micro_batch * workload.seq_len / plan.cp * model.hidden * ACTIVATION_BYTES
    per_layer = count * all_reduce_s(message, plan.tp, group_bandwidth(cluster, plan.tp, shape.placement["tp"]))
    etp = plan.expert_tp
    if etp is None or etp == plan.tp or not model.is_moe:
        return shape.layers_local * per_layer
    # An MoE layer's MLP half of them runs in the token dispatcher over the expert tensor parallel group (Megatron-LM
    # megatron/core/transformer/moe/token_dispatcher.py at d98e8a64, MoEAlltoAllTokenDispatcher: `tp_group` is
    # pg_collection.expt_tp; the dispatch all-gathers the tokens over it and the combine reduce-scatters them, both
    # skipped at expert tp 1, where each rank runs whole experts); kept as simple as the dense count: the same
    # message over a group of expert_tp ranks, inside a node where it fits (ranks ordered tp first, as `per_node`)
    moe = min(shape.layers_local, model.moe_layers)
    link = group_bandwidth(cluster, etp, min(etp, cluster.gpus_per_node))
    expert_half = count / 2 * all_reduce_s(message, etp, link)
    return shape.layers_local * per_layer - moe * (per_layer / 2 - expert_half)


def pp_comm(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape) -> float:
    """One activation send forward and one gradient send backward per micro-batch and virtual stage
    (÷tp: Megatron's scatter-gather; interleaving multiplies the sends by v, Narayanan et al. 2021 §2.2)."""
    if plan.pp <= 1:
        return 0.0
    message = plan.micro_batch * workload.seq_len / plan.cp * model.hidden * ACTIVATION_BYTES / plan.tp
    return (
        2.0 * plan.virtual_stages * point_to_point_s(message, group_bandwidth(cluster, plan.pp, shape.placement["pp"]))
    )


def cp_comm(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape) -> float:
    """Ring attention: K and V chunks go round the cp ring (forward), K, V and their grads backward."""
    if plan.cp <= 1:
        return 0.0
    kv_width = model.kv_heads * model.d_head / plan.tp
    chunk = plan.micro_batch * workload.seq_len / plan.cp * 2 * kv_width * ACTIVATION_BYTES
    link = group_bandwidth(cluster, plan.cp, shape.placement["cp"])
    per_layer = 3 * (plan.cp - 1) * point_to_point_s(chunk, link)
    return hide(shape.layers_local * per_layer, shape.attention_s)


def ep_comm(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape) -> float:
    """Expert parallel: dispatch + combine all-to-all, forward and backward, per MoE layer, and the forward pair
    again under full recompute (Megatron-LM megatron/core/recompute.py at d98e8a64, `checkpointed_forward`: each
    whole TransformerLayer, its MoE token dispatcher included, runs under tensor_parallel.checkpoint / te_checkpoint
    and is re-run in the backward; selective recompute's default modules, core attention, leave it out).

    Priced as an all-to-all (`interconnects.all_to_all_s`), not a ring: across servers the off-server share of each
    GPU's buffer leaves through that GPU's share of the server's network, so cross-server EP is as slow as DeepSeek-V3
    reports (arXiv 2412.19437 §3.2.1: computation-to-communication ≈ 1:1 with cross-node EP)."""
    if plan.ep <= 1 or not model.is_moe:
        return 0.0
    tokens = plan.micro_batch * workload.seq_len / plan.cp
    message = tokens * model.experts_per_token * model.hidden * ACTIVATION_BYTES
    moe_layers = model.moe_layers / plan.pp
    count = 4 + (2 if plan.recompute == "full" else 0)
    seconds = moe_layers * count * all_to_all_s(message, plan.ep, cluster, shape.placement["ep"])
    return hide(seconds, shape.fwd_s + shape.bwd_s) if plan.ep_overlap else seconds


def dp_comm(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape
) -> tuple[float, float]:
    """(exposed, total) seconds per step of data-parallel and ZeRO traffic.

    Gradients are reduced once per step, after the last micro-batch (DDP `no_sync`, Megatron's
    gradient buffer), for ZeRO-0, 1 and 2 alike, so ZeRO-1 and ZeRO-2 cost the same time (the
    planner relies on that tie). DeepSpeed stage 2 actually reduce-scatters after every micro-batch
    (it keeps only its gradient partition); that extra traffic is not modelled.
    """
    if plan.dp <= 1:
        return 0.0, 0.0
    link = group_bandwidth(cluster, plan.dp, shape.placement["dp"])
    size = shape.trainable_local * grad_bytes(workload)
    if plan.zero_stage >= 3:
        weights = (shape.weights_local or shape.trainable_local) * gathered_bytes(workload)
        if plan.hybrid:
            return _hybrid_comm(weights, size, plan, cluster, shape)
        return _zero3_comm(weights, size, plan.dp, link, shape)
    reduce = all_reduce_s(size, plan.dp, link) if plan.zero_stage == 0 else gather_or_scatter_s(size, plan.dp, link)
    last_bucket = all_reduce_s(min(size, DDP_BUCKET_BYTES), plan.dp, link)
    exposed = max(last_bucket, hide(reduce, shape.bwd_s))
    gather = gather_or_scatter_s(size, plan.dp, link) if plan.zero_stage in (1, 2) else 0.0
    return exposed + gather, reduce + gather


def _zero3_comm(
    weights: float, grads: float, shard: int, link: LinkBandwidth, shape: StepShape, replicas_s: float = 0.0
) -> tuple[float, float]:
    """FSDP / ZeRO-3 per micro-batch: all-gather of the weights (fwd), all-gather again + reduce-scatter
    of the gradients (bwd) over the `shard` ranks, then `replicas_s` of hybrid-sharding all-reduce; prefetched.
    `weights` and `grads` are the unsharded bytes on one GPU."""
    gather = gather_or_scatter_s(weights, shard, link)
    scatter = gather_or_scatter_s(grads, shard, link) + replicas_s
    first_layer = gather / max(1, shape.layers_local)
    per_mb = first_layer + hide(gather, shape.fwd_s) + hide(gather + scatter, shape.bwd_s)
    return shape.micro_batches * per_mb, shape.micro_batches * (2 * gather + scatter)


def _hybrid_comm(weights: float, grads: float, plan: Plan, cluster: Cluster, shape: StepShape) -> tuple[float, float]:
    """Hybrid sharding (HSDP): the ZeRO-3 all-gathers and reduce-scatter run inside each shard group of
    `dp_shard` consecutive data-parallel ranks (one server's NVLink when the group is the node's ranks), and
    each rank's gradient shard (grads / dp_shard) is then all-reduced across the dp / dp_shard replica groups
    over the inter-node fabric. PyTorch FSDP docs (`ShardingStrategy.HYBRID_SHARD`: "Apply FULL_SHARD within a
    node, and replicate parameters across nodes"); FSDP2 `fully_shard(mesh=2-D DeviceMesh)` all-reduces the
    reduce-scattered gradients over the replicate dimension after every backward (`set_requires_all_reduce`
    defaults to True), so the all-reduce is counted per micro-batch, as the reduce-scatter is."""
    shard = plan.shard_dp
    replicas = plan.dp // shard
    in_node = shape.placement["dp"]  # data-parallel ranks on one node, consecutive: the shard group fills them first
    shard_link = group_bandwidth(cluster, shard, min(shard, in_node))
    replica_link = group_bandwidth(cluster, replicas, max(1, in_node // shard))
    replicas_s = all_reduce_s(grads / shard, replicas, replica_link)
    return _zero3_comm(weights, grads, shard, shard_link, shape, replicas_s)


def offload_time(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape) -> float:
    """Exposed seconds per step of CPU offload: PCIe copies and the CPU Adam step (ZeRO-Offload)."""
    if plan.offload == "none":
        return 0.0
    pcie = host_pcie_bytes_per_s(cluster.gpu.pcie_gen)
    shard = shape.trainable_local / (plan.shard_dp if plan.zero_stage >= 1 else 1)
    grads_down = hide(shard * grad_bytes(workload) / pcie, shape.bwd_s)
    # every GPU of the node runs CPU Adam on its shard at the same time, sharing the host's memory
    cpu_adam = shard * cluster.gpus_per_node * CPU_ADAM_BYTES_PER_PARAM / HOST_ADAM_BYTES_PER_S
    params_up = shard * BYTES_PER_ELEMENT.get(workload.precision, 2.0) / pcie
    exposed = grads_down + cpu_adam + params_up
    if plan.offload == "optimizer_and_params":
        local = count_params(model).total / (plan.tp * plan.pp * max(1, plan.shard_dp if plan.zero_stage >= 3 else 1))
        fetch = 2 * local * BYTES_PER_ELEMENT.get(workload.precision, 2.0) / pcie
        exposed += shape.micro_batches * hide(fetch, shape.fwd_s + shape.bwd_s)
    return exposed


def microbatch_communication(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, shape: StepShape
) -> float:
    """Exposed seconds of the per-micro-batch collectives (tp, pp, cp, ep): independent of ZeRO and offload."""
    per_microbatch = 0.0
    if plan.tp > 1:
        per_microbatch += tp_comm(model, workload, plan, cluster, shape)
    if plan.pp > 1:
        per_microbatch += pp_comm(model, workload, plan, cluster, shape)
    if plan.cp > 1:
        per_microbatch += cp_comm(model, workload, plan, cluster, shape)
    if plan.ep > 1:
        per_microbatch += ep_comm(model, workload, plan, cluster, shape)
    return per_microbatch
