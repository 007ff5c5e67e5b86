"""The rules a workload and a plan must keep to be estimated at all; a plan that breaks one is refused with the field
it names (traps a plan may run into are warnings instead: app/estimator/memory/advice.py)."""

from __future__ import annotations

from collections.abc import Callable

from app.estimator.specs import (
    Cluster,
    EstimatorError,
    LoraSpec,
    ModelSpec,
    Plan,
    Workload,
    require_choice,
)
from app.estimator.vocabulary import (
    FULL_TRAINING_TASKS,
    HALF_PRECISIONS,
    HOST_LOADS,
    LORA_TARGETS,
    LORA_TASKS,
    OFFLOADS,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTES,
    TASKS,
)

MAX_SEQ_LEN = 10_000_000
MAX_BATCH = 1_000_000


def _positive_int(value: object, field: str, allowed: str | None = None) -> None:
    """EstimatorError naming `field` unless `value` is a positive int; `allowed` ("1..N") where it has a bound."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        name, shown = field.split(".")[-1], repr(value)
        if allowed is None:
            raise EstimatorError.of("positive_integer", field=field, name=name, value=shown)
        raise EstimatorError.of("integer_range", field=field, name=name, allowed=allowed, value=shown)


def _validate_workload(model: ModelSpec, workload: Workload) -> None:
    _validate_choices(workload)
    _positive_int(workload.seq_len, "seq_len", f"1..{MAX_SEQ_LEN}")
    if workload.seq_len > MAX_SEQ_LEN:
        raise EstimatorError.of("at_most", field="seq_len", name="seq_len", most=MAX_SEQ_LEN)
    if workload.global_batch is not None:
        _positive_int(workload.global_batch, "global_batch")
    if workload.task in LORA_TASKS:
        _validate_lora(model, workload.lora or LoraSpec())
    if workload.kbit_upcast and workload.task != "qlora":
        raise EstimatorError.of("kbit_upcast_qlora", field="kbit_upcast")


def _validate_choices(workload: Workload) -> None:
    require_choice(workload.task, TASKS, "task")
    require_choice(workload.precision, PRECISIONS, "precision")
    require_choice(workload.optimizer, OPTIMIZERS, "optimizer")


def _validate_lora(model: ModelSpec, lora: LoraSpec) -> None:
    _positive_int(lora.rank, "lora.rank", f"1..{model.hidden}")
    if lora.rank > model.hidden:
        raise EstimatorError.of("lora_rank_hidden", field="lora.rank", rank=lora.rank, hidden=model.hidden)
    if not 0.0 <= lora.dropout < 1.0:
        raise EstimatorError.of("lora_dropout", field="lora.dropout", dropout=lora.dropout)
    unknown = [t for t in lora.targets if t not in LORA_TARGETS and t != "all-linear"]
    if unknown or not lora.targets:
        raise EstimatorError.of("lora_targets", field="lora.targets", allowed=list(LORA_TARGETS), unknown=unknown)


# --- plan rules: one table, read by validate_plan and by the planner's hot path alike ----------------------------
#
# Each rule returns the error a plan breaking it gets, or None; the table runs in order and the first error wins, so a
# rule may rely on those before it (tp is a positive int when the heads rule divides by it). A plan that keeps every
# rule builds no error object. Related checks share one rule: the planner checks thousands of plans per search, and a
# call per check would cost more than the checks (app/estimator/memory/estimate.py `_checked_context`).

PlanRule = Callable[[ModelSpec, Workload, Plan, Cluster | None], EstimatorError | None]

_DEGREES = ("dp", "tp", "pp", "cp", "ep", "micro_batch", "virtual_stages")
_ZERO_STAGES = (0, 1, 2, 3)


def _degrees(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None) -> EstimatorError | None:
    """Every degree and the micro-batch a positive integer (micro_batch at most MAX_BATCH); ZeRO stage 0-3."""
    dp, tp, pp, cp, ep, mb, vs = plan.dp, plan.tp, plan.pp, plan.cp, plan.ep, plan.micro_batch, plan.virtual_stages
    if not (
        type(dp) is int
        and type(tp) is int
        and type(pp) is int
        and type(cp) is int
        and type(ep) is int
        and type(mb) is int
        and type(vs) is int
        and dp > 0
        and tp > 0
        and pp > 0
        and cp > 0
        and ep > 0
        and mb > 0
        and vs > 0
    ):  # one expression for the planner's plans; below, which degree it is
        for name, value in zip(_DEGREES, (dp, tp, pp, cp, ep, mb, vs), strict=True):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:  # bool is an int, but no degree
                return EstimatorError.of("positive_integer", field=f"plan.{name}", name=name, value=value)
    if mb > MAX_BATCH:
        return EstimatorError.of("at_most", field="plan.micro_batch", name="micro_batch", most=MAX_BATCH)
    if plan.zero_stage not in _ZERO_STAGES:
        return EstimatorError.of("zero_stage", field="plan.zero_stage")
    return None


def _split_fits_model(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None
) -> EstimatorError | None:
    """tp divides the attention heads; the pipeline (with its virtual stages) has a layer per stage; ep > 1 only on a
    mixture-of-experts model, dividing its experts, inside dp × tp."""
    tp, pp, ep = plan.tp, plan.pp, plan.ep
    if model.heads % tp:
        divisors = [d for d in range(1, min(model.heads, 64) + 1) if model.heads % d == 0]
        return EstimatorError.of("tp_heads", field="plan.tp", tp=tp, heads=model.heads, allowed=divisors)
    if pp > model.layers:
        return EstimatorError.of("pp_layers", field="plan.pp", pp=pp, layers=model.layers)
    if plan.virtual_stages > 1 and pp == 1:
        # megatron/core/parallel_state.py initialize_model_parallel: "pipeline-model-parallel size should be greater
        # than 1 with interleaved schedule" (a RuntimeError): one stage has nothing to interleave
        return EstimatorError.of("virtual_stages_pp", field="plan.virtual_stages", virtual_stages=plan.virtual_stages)
    if plan.virtual_stages > 1 and pp * plan.virtual_stages > model.layers:
        vs, most = plan.virtual_stages, model.layers // pp
        return EstimatorError.of(
            "virtual_stages_layers",
            field="plan.virtual_stages",
            layers=model.layers,
            pp=pp,
            virtual_stages=vs,
            most=most,
        )
    if ep > 1 and not model.is_moe:
        return EstimatorError.of("ep_dense", field="plan.ep")
    if ep > 1 and (model.experts % ep or ep > plan.dp * tp):
        return EstimatorError.of("ep_experts", field="plan.ep", ep=ep, experts=model.experts)
    if plan.expert_tp is not None:
        return _expert_tp(plan)
    if ep > 1 and (plan.dp * plan.cp) % ep:
        # Unset, the experts' tp is tp (Megatron's default), so the expert grid tp × ep × pp divides the GPUs only where
        # ep divides dp × cp; EP 4 beside TP 4 on 4 GPUs would split each expert over 16 ranks that do not exist
        inner = plan.dp * tp * plan.cp
        allowed = [d for d in range(1, inner // ep + 1) if inner % (d * ep) == 0] if inner % ep == 0 else []
        return EstimatorError.of("ep_grid", field="plan.ep", ep=ep, tp=tp, dp_cp=plan.dp * plan.cp, allowed=allowed)
    return None


def _expert_tp(plan: Plan) -> EstimatorError | None:
    """A stated expert_tp is a positive integer whose expert grid, expert_tp × ep × pp, divides the GPUs, as
    Megatron-core requires (megatron/core/parallel_state.py `initialize_model_parallel` at d98e8a64: "world_size is not
    divisible by expert_tensor_model_pipeline_parallel size"). Unset it is tp, checked by `_split_fits_model`."""
    etp = plan.expert_tp
    if type(etp) is not int or etp < 1:
        return EstimatorError.of("positive_integer", field="plan.expert_tp", name="expert_tp", value=etp)
    inner = plan.dp * plan.tp * plan.cp  # GPUs / pp
    if inner % (etp * plan.ep):
        allowed = (
            [d for d in range(1, inner // plan.ep + 1) if inner % (d * plan.ep) == 0] if inner % plan.ep == 0 else []
        )
        return EstimatorError.of(
            "expert_tp_grid", field="plan.expert_tp", expert_tp=etp, ep=plan.ep, pp=plan.pp, gpus=plan.gpus,
            allowed=allowed,
        )  # fmt: skip
    return None


def _choices(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None) -> EstimatorError | None:
    """offload, recompute and host_load from their vocabularies (offloading parameters under ZeRO-3); a hybrid-sharding
    group (dp_shard) that divides dp, under ZeRO-3 when smaller than dp."""
    offload = plan.offload
    if offload not in OFFLOADS:
        return EstimatorError.of("choice", field="plan.offload", name="offload", allowed=list(OFFLOADS))
    if offload == "optimizer_and_params" and plan.zero_stage != 3:
        return EstimatorError.of("offload_params_zero3", field="plan.offload")
    if plan.recompute not in RECOMPUTES:
        return EstimatorError.of("choice", field="plan.recompute", name="recompute", allowed=list(RECOMPUTES))
    if plan.host_load not in HOST_LOADS:
        return EstimatorError.of("choice", field="plan.host_load", name="host_load", allowed=list(HOST_LOADS))
    shard = plan.dp_shard
    if shard is None:
        return None
    if type(shard) is not int or shard < 1 or plan.dp % shard:
        allowed = [d for d in range(1, plan.dp + 1) if plan.dp % d == 0]
        return EstimatorError.of("dp_shard_divide", field="plan.dp_shard", shard=shard, dp=plan.dp, allowed=allowed)
    if shard < plan.dp and plan.zero_stage != 3:
        return EstimatorError.of("dp_shard_zero3", field="plan.dp_shard", shard=shard, dp=plan.dp)
    return None


def _fits_sequence_and_cluster(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None
) -> EstimatorError | None:
    """cp divides the sequence; the plan's GPUs fit the cluster (when one is given)."""
    if plan.cp > 1 and workload.seq_len % plan.cp:
        return EstimatorError.of("cp_seq_len", field="plan.cp", cp=plan.cp, seq_len=workload.seq_len)
    if plan.cp > 1 and not plan.flash_attention and plan.attention == "eager":
        # Context parallelism runs its ring through fused attention kernels only: torchtitan's through SDPA's flash,
        # memory-efficient or cuDNN backends (torch.distributed.tensor.experimental.context_parallel patches
        # F.scaled_dot_product_attention), Megatron-LM's through Transformer Engine's fused attention
        # (megatron/core/transformer/dot_product_attention.py asserts context_parallel_size == 1: "Context parallelism
        # is only supported by TEDotProductAttention!"). Eager attention keeps its local queries' scores against every
        # key, which no stack shards
        return EstimatorError.of("cp_eager_attention", field="plan.attention", cp=plan.cp)
    if plan.compiled_loss and not plan.compiled:
        return EstimatorError.of("loss_compiled", field="plan.loss")
    if plan.fp8_params and (workload.precision != "fp8" or workload.task not in FULL_TRAINING_TASKS):
        return EstimatorError.of(
            "fp8_params_task", field="plan.fp8_params", precision=workload.precision, task=workload.task
        )
    if plan.fp32_params and not _autocasts(workload, plan):
        return EstimatorError.of(
            "fp32_params_task", field="plan.fp32_params", precision=workload.precision, task=workload.task
        )
    if plan.optimizer_in_backward:
        return _optimizer_in_backward(workload, plan)
    # Plan.gpus and Cluster.gpus, multiplied out: two property calls cost as much as the rest of this rule
    if cluster is not None and plan.dp * plan.tp * plan.pp * plan.cp > cluster.gpus_per_node * cluster.nodes:
        return EstimatorError.of("plan_cluster_gpus", field="plan", gpus=plan.gpus, cluster=cluster.gpus)
    return None


def _autocasts(workload: Workload, plan: Plan) -> bool:
    """Whether fp32 parameters under autocast (Plan.fp32_params) fit the workload: training with mixed precision at a
    16-bit dtype autocast casts to (torch.autocast takes float16 or bfloat16 on CUDA), a full or LoRA task (QLoRA's
    base is NF4, its fp32 norms are Workload.kbit_upcast), and weights not stored in FP8."""
    return (
        workload.precision in HALF_PRECISIONS  # torch.autocast's lower-precision dtypes on CUDA
        and workload.mixed_precision
        and (workload.task in FULL_TRAINING_TASKS or workload.task == "lora")
        and not plan.fp8_params
    )


def _optimizer_in_backward(workload: Workload, plan: Plan) -> EstimatorError | None:
    """The optimizer stepped in the backward (Plan.optimizer_in_backward) as torchtune runs it: a full fine-tune or
    pretraining on one GPU without ZeRO (sharded gradients are reduced after the backward, which the per-parameter
    step would precede) and without gradient accumulation (full_finetune_single_device.py refuses it)."""
    field = "plan.optimizer_in_backward"
    if workload.task not in FULL_TRAINING_TASKS:
        return EstimatorError.of("optimizer_in_backward_task", field=field)
    if plan.dp * plan.tp * plan.pp * plan.cp > 1 or plan.zero_stage:
        return EstimatorError.of("optimizer_in_backward_gpu", field=field)
    if workload.global_batch is not None and workload.global_batch != plan.micro_batch:
        return EstimatorError.of(
            "optimizer_in_backward_batch", field=field, micro_batch=plan.micro_batch, global_batch=workload.global_batch
        )
    return None


# in the order a plan is refused: a plan breaking two rules is told of the first
PLAN_RULES: tuple[PlanRule, ...] = (_degrees, _split_fits_model, _choices, _fits_sequence_and_cluster)


def check_plan(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None = None) -> None:
    """Raise the first broken plan rule (PLAN_RULES) as EstimatorError; the workload is checked elsewhere (once per
    (model, workload) context, or by validate_plan)."""
    for rule in PLAN_RULES:
        error = rule(model, workload, plan, cluster)
        if error is not None:
            raise error


def validate_plan(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None = None) -> None:
    """Raise EstimatorError (field like "plan.tp") for plans that cannot run; traps are warnings instead."""
    _validate_workload(model, workload)
    check_plan(model, workload, plan, cluster)
