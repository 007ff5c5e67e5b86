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


def _positive_int(value: object, field: str, allowed: str = "a positive integer") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise EstimatorError(f"{field.split('.')[-1]} must be {allowed}, got {value!r}.", field=field)


def _validate_workload(model: ModelSpec, workload: Workload) -> None:
    _validate_choices(workload)
    _positive_int(workload.seq_len, "seq_len", f"an integer in 1..{MAX_SEQ_LEN}")
    if workload.seq_len > MAX_SEQ_LEN:
        raise EstimatorError(f"seq_len must be at most {MAX_SEQ_LEN}.", field="seq_len")
    if workload.global_batch is not None:
        _positive_int(workload.global_batch, "global_batch")
    if workload.task in LORA_TASKS:
        _validate_lora(model, workload.lora or LoraSpec())
    if workload.kbit_upcast and workload.task != "qlora":
        raise EstimatorError("kbit_upcast applies to task qlora only.", field="kbit_upcast")


def _validate_choices(workload: Workload) -> None:
    require_choice(workload.task, TASKS, "task")
    require_choice(workload.precision, PRECISIONS, "precision")
    require_choice(workload.optimizer, OPTIMIZERS, "optimizer")


def _validate_lora(model: ModelSpec, lora: LoraSpec) -> None:
    _positive_int(lora.rank, "lora.rank", f"an integer in 1..hidden ({model.hidden})")
    if lora.rank > model.hidden:
        raise EstimatorError(
            f"lora.rank ({lora.rank}) must not exceed the hidden size ({model.hidden}).", field="lora.rank"
        )
    if not 0.0 <= lora.dropout < 1.0:
        raise EstimatorError(f"lora.dropout must be in [0, 1), got {lora.dropout!r}.", field="lora.dropout")
    unknown = [t for t in lora.targets if t not in LORA_TARGETS and t != "all-linear"]
    if unknown or not lora.targets:
        raise EstimatorError(
            f"lora.targets must be a non-empty list of {', '.join(LORA_TARGETS)} or 'all-linear'; got {unknown}.",
            field="lora.targets",
        )


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
                return EstimatorError(f"{name} must be a positive integer, got {value!r}.", field=f"plan.{name}")
    if mb > MAX_BATCH:
        return EstimatorError(f"micro_batch must be at most {MAX_BATCH}.", field="plan.micro_batch")
    if plan.zero_stage not in _ZERO_STAGES:
        return EstimatorError("zero_stage must be 0, 1, 2 or 3.", field="plan.zero_stage")
    return None


def _split_fits_model(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None
) -> EstimatorError | None:
    """tp divides the attention heads; the pipeline (with its virtual stages) has a layer per stage; ep > 1 only on a
    mixture-of-experts model, dividing its experts, inside dp × tp."""
    tp, pp, ep = plan.tp, plan.pp, plan.ep
    if model.heads % tp:
        divisors = [d for d in range(1, min(model.heads, 64) + 1) if model.heads % d == 0]
        return EstimatorError(
            f"tp={tp} does not divide the {model.heads} attention heads; allowed tp: {divisors}.", field="plan.tp"
        )
    if pp > model.layers:
        return EstimatorError(f"pp={pp} exceeds the {model.layers} layers.", field="plan.pp")
    if plan.virtual_stages > 1 and pp * plan.virtual_stages > model.layers:
        return EstimatorError("pp × virtual_stages exceeds the number of layers.", field="plan.virtual_stages")
    if ep > 1 and not model.is_moe:
        return EstimatorError("ep > 1 needs a mixture-of-experts model.", field="plan.ep")
    if ep > 1 and (model.experts % ep or ep > plan.dp * tp):
        return EstimatorError(
            f"ep={ep} must divide the {model.experts} experts and fit inside dp × tp.", field="plan.ep"
        )
    return None


def _choices(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None) -> EstimatorError | None:
    """offload, recompute and host_load from their vocabularies (offloading parameters under ZeRO-3); a hybrid-sharding
    group (dp_shard) that divides dp, under ZeRO-3 when smaller than dp."""
    offload = plan.offload
    if offload not in OFFLOADS:
        return EstimatorError(f"offload must be {_either(OFFLOADS)}.", field="plan.offload")
    if offload == "optimizer_and_params" and plan.zero_stage != 3:
        return EstimatorError("offloading parameters needs zero_stage 3 (FSDP FULL_SHARD).", field="plan.offload")
    if plan.recompute not in RECOMPUTES:
        return EstimatorError(f"recompute must be {_either(RECOMPUTES)}.", field="plan.recompute")
    if plan.host_load not in HOST_LOADS:
        return EstimatorError(f"host_load must be {_either(HOST_LOADS)}.", field="plan.host_load")
    shard = plan.dp_shard
    if shard is None:
        return None
    if type(shard) is not int or shard < 1 or plan.dp % shard:
        allowed = [d for d in range(1, plan.dp + 1) if plan.dp % d == 0]
        return EstimatorError(
            f"dp_shard={shard} must divide dp={plan.dp}; allowed dp_shard: {allowed}.", field="plan.dp_shard"
        )
    if shard < plan.dp and plan.zero_stage != 3:
        return EstimatorError(
            f"dp_shard={shard} < dp={plan.dp} (hybrid sharding) needs zero_stage 3 (FSDP HYBRID_SHARD).",
            field="plan.dp_shard",
        )
    return None


def _fits_sequence_and_cluster(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster | None
) -> EstimatorError | None:
    """cp divides the sequence; the plan's GPUs fit the cluster (when one is given)."""
    if plan.cp > 1 and workload.seq_len % plan.cp:
        return EstimatorError(f"cp={plan.cp} must divide seq_len ({workload.seq_len}).", field="plan.cp")
    if plan.compiled_loss and not plan.compiled:
        return EstimatorError(
            "loss compiled is the cross-entropy compiled with the model: it needs compile true.", field="plan.loss"
        )
    if plan.fp8_params and (workload.precision != "fp8" or workload.task not in FULL_TRAINING_TASKS):
        return EstimatorError(
            "fp8_params stores the trained weights in FP8: it needs precision fp8 and a pretrain or full_finetune "
            f"task; got precision {workload.precision}, task {workload.task}.",
            field="plan.fp8_params",
        )
    if plan.optimizer_in_backward:
        return _optimizer_in_backward(workload, plan)
    # Plan.gpus and Cluster.gpus, multiplied out: two property calls cost as much as the rest of this rule
    if cluster is not None and plan.dp * plan.tp * plan.pp * plan.cp > cluster.gpus_per_node * cluster.nodes:
        return EstimatorError(
            f"The plan needs dp×tp×pp×cp = {plan.gpus} GPUs; the cluster has {cluster.gpus}.", field="plan"
        )
    return None


def _optimizer_in_backward(workload: Workload, plan: Plan) -> EstimatorError | None:
    """The optimizer stepped in the backward (Plan.optimizer_in_backward) as torchtune runs it: a full fine-tune or
    pretraining on one GPU without ZeRO (sharded gradients are reduced after the backward, which the per-parameter
    step would precede) and without gradient accumulation (full_finetune_single_device.py refuses it)."""
    field = "plan.optimizer_in_backward"
    if workload.task not in FULL_TRAINING_TASKS:
        return EstimatorError(
            "optimizer_in_backward steps the trained weights: it needs a full training task.", field=field
        )
    if plan.dp * plan.tp * plan.pp * plan.cp > 1 or plan.zero_stage:
        return EstimatorError("optimizer_in_backward runs on one GPU without ZeRO.", field=field)
    if workload.global_batch is not None and workload.global_batch != plan.micro_batch:
        return EstimatorError(
            "optimizer_in_backward steps every micro-batch: the global batch must be the micro-batch "
            f"({plan.micro_batch}), got {workload.global_batch}.",
            field=field,
        )
    return None


def _either(choices: tuple[str, ...]) -> str:
    return f"{', '.join(choices[:-1])} or {choices[-1]}"


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
