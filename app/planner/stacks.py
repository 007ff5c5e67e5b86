"""Which training stack runs a plan: the support matrix. PURE (standard library + estimator specs).

Three stacks, each a row of what it runs, with its sources, in data/stacks.json (docs/stacks.md
shows the matrix as a table):

- `deepspeed`: DeepSpeed ZeRO under the Hugging Face Trainer / accelerate, PEFT for LoRA/QLoRA.
- `fsdp`: torchrun + torchtitan (FSDP2), full training of the models torchtitan registers; no LoRA/QLoRA.
- `megatron`: Megatron-LM / Megatron-Core; model-parallel LoRA through Megatron-Bridge's PEFT recipes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast, get_args

from app.estimator.performance import compute_precision
from app.estimator.specs import EstimatorError, GpuSpec, LoraSpec, ModelSpec, Plan, Warning_, Workload, plan_with
from app.estimator.vocabulary import (
    BF16_RUN_PRECISIONS,
    FULL_TRAINING_TASKS,
    LORA_TASKS,
    OFFLOADS,
    OPTIMIZERS,
    RECOMPUTES,
    HostLoad,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    Task,
    Tuning,
)
from app.planner.levers import DEFAULT_LEVERS, Levers, levers_of, levers_params, runs_levers, set_levers

Stack = Literal["deepspeed", "fsdp", "megatron"]
STACKS: tuple[Stack, ...] = get_args(Stack)


@dataclass(frozen=True, slots=True)
class Row:
    """What one stack runs. Degrees: which of tp/pp/cp/ep may exceed 1. `zero` maps the model-parallel
    case (False: tp = pp = cp = ep = 1, True: any of them > 1) to the ZeRO stages allowed;
    `offload` maps an offload level to the ZeRO stages it runs with (data parallel only; with dp 1 only where
    `offload_one_gpu`: DeepSpeed's ZeRO-Offload runs on one GPU at the stated stage)."""

    tp: bool
    pp: bool
    cp: bool
    ep: bool
    zero: dict[bool, frozenset[int]]
    offload: dict[str, frozenset[int]]
    offload_one_gpu: bool  # offload runs at dp 1, with the plan's ZeRO stage (data/stacks.json offload_one_gpu_source)
    recompute: frozenset[str]
    lora_recompute: frozenset[str]
    lora: bool  # LoRA with data parallel only
    lora_model_parallel: bool  # LoRA with tp/pp/cp/ep > 1
    qlora: bool  # QLoRA (data parallel only in every stack that has it)
    hsdp: bool  # hybrid sharding (Plan.dp_shard < dp) for full training
    source: str
    families: frozenset[str | None] | None = None  # config.json model_types it builds; None: every family
    lora_families: frozenset[str | None] | None = None  # the same for LoRA/QLoRA; None: as `families`
    flavors: tuple[Flavor, ...] = ()  # torchtitan's [model] name and flavor per implemented shape
    cp_attention: frozenset[str] | None = None  # a flavor's attention types context parallel runs with; None: any
    tp_divides: tuple[str, ...] = ()  # ModelSpec counts tensor parallel must divide ("heads", "kv_heads")
    optimizers: frozenset[str] = frozenset(OPTIMIZERS)  # Workload.optimizer values its training loop runs
    lora_optimizers: frozenset[str] | None = None  # the same for LoRA/QLoRA; None: as `optimizers`
    offload_optimizers: frozenset[str] | None = None  # those it runs with optimizer offload; None: any
    # tp or pp > 1 only with FSDP on: one of these ZeRO stages over dp > 1, or cp > 1 (torchtitan); None: no such rule
    tp_pp_need_fsdp: frozenset[int] | None = None
    peft_recipes: tuple[Recipe, ...] = ()  # Megatron-Bridge PEFT recipes; when any, LoRA runs only for their models
    fp8: frozenset[str] = frozenset()  # task groups ("full", "lora") whose launch runs fp8 where the GPU has it


@dataclass(frozen=True, slots=True)
class Flavor:
    """One model a stack implements by name and flavor (torchtitan's model registry), matched on the whole shape its
    checkpoint and forward pass have (a checkpoint of another vocabulary or FFN width does not load; another RoPE
    trains a shifted model), with what its model runs: pipelining (the TrainSpec's pipelining_fn) and its
    attention (attn_type, which decides context parallel)."""

    family: str
    name: str
    flavor: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None  # None: not matched (MLA has no key/value heads)
    ffn: int
    vocab: int
    experts: int
    expert_ffn: int | None
    rope_theta: float
    rope_scaling: tuple[str, float] | None  # (rope_type, factor) as config.json states it; None: unscaled
    attention: str  # attn_type: "sdpa" or "flex"
    pipeline: bool

    def matches(self, model: ModelSpec) -> bool:
        kv = self.kv_heads is None or self.kv_heads == model.kv_heads
        shape = (model.family, model.layers, model.hidden, model.heads, model.ffn, model.vocab)
        moe_rope = (model.experts, model.expert_ffn, model.rope_theta, model.rope_scaling)
        mine = (self.family, self.layers, self.hidden, self.heads, self.ffn, self.vocab)
        return kv and shape == mine and moe_rope == (self.experts, self.expert_ffn, self.rope_theta, self.rope_scaling)


@dataclass(frozen=True, slots=True)
class Recipe:
    """A Megatron-Bridge PEFT recipe (its exported function name) and the Hugging Face repositories of the model
    it builds (AutoBridge.from_hf_pretrained(hf_path), and that repository's other names)."""

    recipe: str
    hf_repos: tuple[str, ...]

    def matches(self, model: ModelSpec) -> bool:
        return model.hf_repo is not None and model.hf_repo.lower() in {repo.lower() for repo in self.hf_repos}


def _names(entry: dict[str, Any], key: str) -> frozenset[str] | None:
    """An optimizer list of the row; a name outside the vocabulary is an error at import."""
    names = entry[key]
    if names is not None and not set(names) <= set(OPTIMIZERS):
        raise ValueError(f"data/stacks.json: {key} {sorted(names)} outside {', '.join(OPTIMIZERS)}")
    return None if names is None else frozenset(names)


def _row(entry: dict[str, Any]) -> Row:
    """One stack's row of data/stacks.json; a word outside the vocabulary is an error at import."""
    zero = {False: frozenset(entry["zero"]["data_parallel"]), True: frozenset(entry["zero"]["model_parallel"])}
    offload = {level: frozenset(stages) for level, stages in entry["offload"].items()}
    recompute, lora_recompute = frozenset(entry["recompute"]), frozenset(entry["lora_recompute"])
    if not set(offload) <= set(OFFLOADS) or not recompute | lora_recompute <= set(RECOMPUTES):
        raise ValueError(f"data/stacks.json: offload {sorted(offload)} or recompute {sorted(recompute)} unknown")
    entry = {key: value for key, value in entry.items() if not key.endswith("_source")}
    families = {key: None if entry[key] is None else frozenset(entry[key]) for key in ("families", "lora_families")}
    flavors = tuple(_flavor(flavor) for flavor in entry["flavors"])
    cp_attention = entry["cp_attention"]
    optimizers = {key: _names(entry, key) for key in ("optimizers", "lora_optimizers", "offload_optimizers")}
    need_fsdp = entry["tp_pp_need_fsdp"]
    recipes = tuple(Recipe(item["recipe"], tuple(item["hf_repos"])) for item in entry["peft_recipes"])
    return Row(
        **{
            **entry,
            **families,
            **optimizers,
            "tp_pp_need_fsdp": None if need_fsdp is None else frozenset(need_fsdp),
            "peft_recipes": recipes,
            "fp8": frozenset(entry["fp8"]),
            "flavors": flavors,
            "cp_attention": None if cp_attention is None else frozenset(cp_attention),
            "tp_divides": tuple(entry["tp_divides"]),
            "zero": zero,
            "offload": offload,
            "recompute": recompute,
            "lora_recompute": lora_recompute,
        }
    )


def _flavor(entry: dict[str, Any]) -> Flavor:
    scaling = entry["rope_scaling"]
    return Flavor(**{**entry, "rope_scaling": None if scaling is None else (str(scaling[0]), float(scaling[1]))})


def _matrix() -> dict[Stack, Row]:
    text = (Path(__file__).parent / "data" / "stacks.json").read_text(encoding="utf-8")
    rows: dict[str, dict[str, Any]] = json.loads(text)["stacks"]
    if set(rows) != set(STACKS):
        raise ValueError(f"data/stacks.json lists {sorted(rows)}; the stacks are {', '.join(STACKS)}")
    return {stack: _row(rows[stack]) for stack in STACKS}


MATRIX = _matrix()

# When several stacks run a plan: model-parallel plans go to the stack built for them first;
# data-parallel fine-tuning to the Hugging Face path most teams already use.
PREFERENCE: dict[bool, tuple[Stack, ...]] = {
    True: ("megatron", "fsdp", "deepspeed"),
    False: ("deepspeed", "fsdp", "megatron"),
}


def model_parallel(plan: Plan) -> bool:
    return plan.tp > 1 or plan.pp > 1 or plan.cp > 1 or plan.ep > 1


def runs(stack: Stack, workload: Workload, plan: Plan) -> bool:
    """Whether `stack` runs this plan of this workload (training; inference is not a stack's job here)."""
    row = MATRIX[stack]
    parallel = model_parallel(plan)
    if not runs_levers(stack, plan):
        return False
    if (plan.tp > 1 and not row.tp) or (plan.pp > 1 and not row.pp):
        return False
    if (plan.cp > 1 and not row.cp) or (plan.ep > 1 and not row.ep):
        return False
    zero = _zero_run(row, plan)
    if plan.hybrid and (zero != 3 or not row.hsdp or workload.task in LORA_TASKS):
        return False
    if zero not in row.zero[parallel]:
        return False
    allowed = row.offload.get(plan.offload)
    if allowed is None or (plan.offload != "none" and (parallel or zero not in allowed)):
        return False
    if not _fsdp_for_tp_pp(row, plan) or not _runs_optimizer(row, workload, plan):
        return False
    lora = workload.task in LORA_TASKS
    if workload.precision == "fp8" and ("lora" if lora else "full") not in row.fp8:
        return False  # `as_launched` has already turned fp8 into 16 bits where the GPU or no stack runs it
    if plan.recompute not in (row.lora_recompute if lora else row.recompute):
        return False
    if workload.task == "qlora":
        return row.qlora and not parallel
    if lora:
        return row.lora_model_parallel if parallel else row.lora
    return True


def as_launched(workload: Workload, gpu: GpuSpec, model: ModelSpec) -> Workload:
    """The workload as it will run on `gpu`: fp8 stays fp8 only where the GPU has an fp8 peak and some stack that
    builds `model` launches fp8 for the task (data/stacks.json `fp8`, `families`, `flavors`); otherwise it runs, and
    is sized and launched, in the 16 bits the estimator's compute_precision picks for the GPU. The planner searches,
    /estimate sizes and POST /quotes checks the workload so turned, so that no plan is priced at a speed its launch
    does not run (Gemma 2 full training: only the DeepSpeed launch builds it, in bf16)."""
    if workload.precision != "fp8" or workload.task == "inference":
        return workload
    group = "lora" if workload.task in LORA_TASKS else "full"
    runs_fp8 = (group in MATRIX[stack].fp8 and builds(stack, model, workload.task) for stack in STACKS)
    if gpu.peak_flops.get("fp8") and any(runs_fp8):
        return workload
    return replace(workload, precision=cast(Precision, compute_precision(gpu, "bf16")))


def precision_run_as(requested: Workload, launched: Workload, gpu: GpuSpec) -> Warning_:
    """Why an fp8 request is sized and launched in 16 bits (`as_launched`): the GPU has no fp8, or no stack that
    builds the model launches fp8 for the task."""
    name, precision, runs_as = gpu.name, requested.precision, launched.precision
    if not gpu.peak_flops.get(precision):
        names = {"gpu": name, "precision": precision, "runs_as": runs_as}
        return Warning_("precision_unsupported", names)
    return Warning_("fp8_not_launched", {"task": requested.task, "runs_as": runs_as})


def _zero_run(row: Row, plan: Plan) -> int:
    """The ZeRO stage the stack runs the plan at: the plan's over dp × cp > 1 (Megatron-LM's distributed optimizer
    shards over the data-and-context-parallel group, megatron/core/parallel_state.py
    get_data_parallel_group(with_context_parallel=True); torchtitan's FSDP2 over dp_shard × cp, ParallelDims
    fsdp_enabled), so a dp 1 × cp 2 plan at ZeRO-1 is Megatron's alone; with neither none (nothing to shard), except
    with offload on a stack whose ZeRO-Offload runs at world size 1 (DeepSpeed: the stated stage steps its CPU
    optimizer on the host; data/stacks.json offload_one_gpu)."""
    if plan.dp * plan.cp > 1 or (plan.offload != "none" and row.offload_one_gpu):
        return plan.zero_stage
    return 0


def _fsdp_for_tp_pp(row: Row, plan: Plan) -> bool:
    """torchtitan trains a tp/pp plan in bf16 only with FSDP on (maybe_enable_amp: else fp32, and DDP refuses
    tp/pp): data sharded by one of the row's FSDP ZeRO stages over dp > 1, or cp > 1 (data/stacks.json)."""
    if row.tp_pp_need_fsdp is None or (plan.tp == 1 and plan.pp == 1):
        return True
    return (plan.dp > 1 and plan.zero_stage in row.tp_pp_need_fsdp) or plan.cp > 1


def _runs_optimizer(row: Row, workload: Workload, plan: Plan) -> bool:
    """Whether the stack's training loop runs the requested optimizer (with offload, its CPU optimizer)."""
    names = row.lora_optimizers if workload.task in LORA_TASKS and row.lora_optimizers is not None else row.optimizers
    if workload.optimizer not in names:
        return False
    offloaded = row.offload_optimizers if plan.offload != "none" else None
    return offloaded is None or workload.optimizer in offloaded


def flavor(stack: Stack, model: ModelSpec) -> Flavor | None:
    """The stack's registered model for this one (torchtitan's [model] name and flavor), None without one."""
    return next((entry for entry in MATRIX[stack].flavors if entry.matches(model)), None)


def _tp_count(model: ModelSpec, count: str) -> int:
    """A count tensor parallel splits: MLA has no key/value heads to split (Megatron's MultiLatentAttention
    shards its heads only), so kv_heads means the heads there."""
    return model.heads if count == "kv_heads" and model.mla is not None else int(getattr(model, count))


def peft_recipe(stack: Stack, model: ModelSpec) -> Recipe | None:
    """The stack's Megatron-Bridge PEFT recipe for this model (its Hugging Face repository), None without one."""
    return next((entry for entry in MATRIX[stack].peft_recipes if entry.matches(model)), None)


def builds(stack: Stack, model: ModelSpec, task: Task, tp: int = 1, pp: int = 1, cp: int = 1) -> bool:
    """Whether `stack` builds this model for this task at tensor, pipeline and context parallel `tp`, `pp`, `cp`
    (data/stacks.json families, flavors with their pipelining and attention, PEFT recipes and tp_divides)."""
    row = MATRIX[stack]
    lora = task in LORA_TASKS
    families = row.lora_families if lora and row.lora_families is not None else row.families
    if families is not None and model.family not in families:
        return False
    if row.flavors and not lora and not _flavor_runs(row, flavor(stack, model), pp, cp):
        return False
    if row.peft_recipes and lora and peft_recipe(stack, model) is None:
        return False
    return all(_tp_count(model, count) % tp == 0 for count in row.tp_divides)


def _flavor_runs(row: Row, entry: Flavor | None, pp: int, cp: int) -> bool:
    """Whether the registered model runs pipeline `pp` and context parallel `cp`: a pipeline needs the model's
    pipelining_fn, context parallel an attention the row lists (`cp_attention`)."""
    if entry is None or (pp > 1 and not entry.pipeline):
        return False
    return cp == 1 or row.cp_attention is None or entry.attention in row.cp_attention


@lru_cache(maxsize=4096)
def model_stacks(model: ModelSpec, task: Task, tp: int = 1, pp: int = 1, cp: int = 1) -> frozenset[Stack]:
    """The stacks that build this model for this task at tensor, pipeline and context parallel `tp`, `pp`, `cp`
    (memoised: the search asks for every plan it sizes, and the matrix is shipped data)."""
    return frozenset(stack for stack in STACKS if builds(stack, model, task, tp, pp, cp))


def fp32_main_grads(stack: Stack, workload: Workload) -> bool:
    """Whether `stack` accumulates this workload's gradients in an fp32 buffer beside 16-bit weights
    (`Plan.fp32_main_grads`, which also tells the memory model that Megatron's selective recompute applies):
    Megatron-LM does for bf16 runs (main_grads_dtype defaults to fp32 and --bf16 turns on
    accumulate_allreduce_grads_in_fp32: megatron/training/arguments.py), and Megatron-Bridge's PEFT recipes reduce the
    adapters' gradients in fp32 (recipes `_peft_common`: ddp.grad_reduce_in_fp32 True). The adapters are counted with
    fp32 gradients anyway (memory.states `_lora_states`), so for LoRA only the recompute account changes: Megatron-Core
    keeps the whole MLP under selective recompute (recompute_modules ["core_attn"])."""
    if stack != "megatron":
        return False
    if workload.task in LORA_TASKS:
        return True
    return (
        workload.task in FULL_TRAINING_TASKS and workload.mixed_precision and workload.precision in BF16_RUN_PRECISIONS
    )


def host_load(stack: Stack, workload: Workload, plan: Plan) -> HostLoad:
    """Where `stack`'s loader holds the whole model in host RAM before ZeRO-3 shards it (`Plan.host_load`, which the
    host RAM gate counts: app/estimator/memory/).

    QLoRA under DeepSpeed ZeRO-3 (the Trainer's from_pretrained with a BitsAndBytesConfig, launch/trainer.py):
    transformers builds a quantized model on empty (meta) weights, not under deepspeed.zero.Init (the init contexts of
    from_pretrained / `get_init_context`: `elif is_quantized:`), then quantises each weight on the GPU and moves it to
    the CPU on every rank: "For quantized modules with FSDP/DeepSpeed Stage 3, we need to quantize the parameter on
    the GPU and then cast it to CPU", `param_to = "cpu"`, "meta" only `if is_fsdp_enabled() and not
    is_local_dist_rank_0()`; the 16-bit rest (embeddings, norms, head) loads to the CPU too. Source:
    huggingface/transformers src/transformers/modeling_utils.py `_load_state_dict_into_meta_model` at commit
    040ba146759afc625c77f49d04982bb54873995f (the 4.48 line), unchanged in later 4.x releases.
    So each rank of the node holds the whole 4-bit model until deepspeed.initialize partitions it: "every_rank".
    Under FSDP with cpu_ram_efficient_loading only local rank 0 would ("local_rank_0"), but the fsdp stack runs no
    LoRA/QLoRA (data/stacks.json: torchtune's recipe, whose every rank loads the whole checkpoint, is not launched).
    Everything else is built sharded or loaded onto the GPUs: "none"."""
    if stack == "deepspeed" and workload.task == "qlora" and plan.zero_stage == 3:
        return "every_rank"
    return "none"


def speed_point(stack: Stack, workload: Workload) -> Tuning | None:
    """Where in the estimate's range `stack` runs this workload (`Plan.tuning`; None: the point): one point per stack
    and task group, each calibrated on that stack's own published runs (app/estimator/performance.py TUNING_SPEED).
    The deepspeed stack's launch is the Hugging Face Trainer: its full training at `trainer` (fms-acceleration's full
    fine-tuning runs), its LoRA and QLoRA with PEFT at `trainer_peft` (the same table's LoRA and QLoRA runs: PEFT's
    adapter matmuls and dropout, bitsandbytes' dequantisation); the fsdp stack's is torchtitan (`torchtitan`, its
    own benchmark runs); Megatron-LM is the point the efficiency constants are fitted to."""
    if stack == "deepspeed":
        return "trainer_peft" if workload.task in LORA_TASKS else "trainer"
    if stack == "fsdp":
        return "torchtitan"
    return None


def _accounts(stack: Stack, workload: Workload, plan: Plan) -> bool:
    """Whether the plan's memory was counted with `stack`'s gradient buffer (its load, `host_load`, is the preferred
    stack's by construction: `as_run`)."""
    return plan.fp32_main_grads == fp32_main_grads(stack, workload)


def _candidates(workload: Workload, plan: Plan, allowed: frozenset[Stack] | None) -> tuple[Stack, ...]:
    return tuple(stack for stack in PREFERENCE[model_parallel(plan)] if allowed is None or stack in allowed)


def _allowed(model: ModelSpec | None, workload: Workload, plan: Plan) -> frozenset[Stack] | None:
    return None if model is None else model_stacks(model, workload.task, plan.tp, plan.pp, plan.cp)


def stack_for(workload: Workload, plan: Plan, model: ModelSpec | None = None) -> Stack | None:
    """The preferred stack that runs the plan as its memory was counted (`as_run`) and builds `model` at
    the plan's tensor parallel, or None when none does (the search never emits it)."""
    if workload.task == "inference":
        return None
    return _preferred(workload, plan, _allowed(model, workload, plan))


def _preferred(workload: Workload, plan: Plan, allowed: frozenset[Stack] | None) -> Stack | None:
    """The first stack, in order of preference among `allowed`, that runs the plan as its memory was counted."""
    for stack in _candidates(workload, plan, allowed):
        if runs(stack, workload, plan) and _accounts(stack, workload, plan):
            return stack
    return None


def supported(
    workload: Workload, plan: Plan, model: ModelSpec | None = None, *, allowed: frozenset[Stack] | None = None
) -> bool:
    """Whether some stack runs the plan's shape and levels (of those that build `model`, or of `allowed`),
    whatever its gradient buffer."""
    if workload.task == "inference":
        return True
    allowed = _allowed(model, workload, plan) if model is not None else allowed
    return any(runs(stack, workload, plan) for stack in _candidates(workload, plan, allowed))


def as_run(
    workload: Workload, plan: Plan, model: ModelSpec | None = None, *, fp8_weights: bool = False
) -> tuple[Plan, ...]:
    """The plan as the stacks that run it would hold it in memory, to try in order: the preferred stack's
    account first and, when that is Megatron-LM's fp32 gradient buffer and another stack runs the plan
    without one (torchtitan's FSDP2 / DDP: 16 B/param), that leaner account second. The feasibility gate
    takes the first that fits, and `stack_for` names the stack that holds it so. With `fp8_weights` (the request
    left plan.fp8_params unstated) the megatron stack's account of an FP8 pretraining run keeps FP8 weights where it
    runs them (`_fp8_weighted`)."""
    allowed = _allowed(model, workload, plan)
    kind = _kind(plan)  # the gradient buffer is not part of a plan's kind: one for every account
    flags = gradient_accounts(
        workload.task, workload.precision, workload.mixed_precision, kind, allowed, workload.optimizer
    )
    fp8_weighted = fp8_weights and workload.precision == "fp8"  # `_fp8_weighted` keeps every other plan as it is
    if not fp8_weighted and workload.task not in LORA_TASKS and plan.host_load == "none" and plan.tuning is None:
        # the search's common case, a full-training plan without a speed of its own: each account built once with its
        # stack's speed point (`_pointed` on the replaced plan, in one construction: the search holds thousands)
        return tuple(_pointed_account(workload, plan, kind, allowed, flag) for flag in flags)
    plans = tuple(plan if flag == plan.fp32_main_grads else plan_with(plan, fp32_main_grads=flag) for flag in flags)
    if fp8_weights:
        plans = tuple(_fp8_weighted(workload, accounted, allowed) for accounted in plans)
    if workload.task not in LORA_TASKS and plan.host_load == "none":
        # only a LoRA stack loads the model whole on the host (host_load): full training takes its stack's speed
        return plans if plan.tuning else tuple(_pointed(workload, accounted, allowed) for accounted in plans)
    return tuple(_with_stack(workload, accounted, allowed) for accounted in plans)


# The tasks whose megatron-stack launch is Megatron-LM's pretrain_gpt.py, where an FP8 run keeps FP8 weights unless the
# request says otherwise (`_fp8_weighted`). A full fine-tune on Hopper runs Megatron-Bridge's SFT recipe with
# bf16_with_fp8_subchannel_scaling_mixed, the one FP8 recipe that keeps bf16 weights (launch/megatron_bridge.py
# BRIDGE_FP8): its account stays as it is.
FP8_WEIGHT_TASKS = frozenset({"pretrain"})


def _fp8_weighted(workload: Workload, plan: Plan, allowed: frozenset[Stack] | None) -> Plan:
    """The megatron stack's account (Plan.fp32_main_grads) of an FP8 pretraining plan with FP8 weights
    (Plan.fp8_params: the launch's --fp8-param-gather --grad-reduce-in-bf16) where that stack runs them (data parallel
    over the distributed optimizer, levers.runs_levers) and still holds the plan so; the plan as it is otherwise.
    Megatron-LM's flag is off unless given (megatron/training/arguments.py `--fp8-param-gather`, store_true), but
    every Megatron-Bridge FP8 recipe but the blockwise ones turns it on (src/megatron/bridge/training/
    mixed_precision.py: bf16_with_fp8_delayed_scaling_mixed, bf16_with_fp8_current_scaling_mixed, bf16_with_mxfp8_mixed
    and their fp16 twins set fp8_param_gather = True; Megatron-Bridge commit 067f987), and with it Transformer Engine
    keeps no cached FP8 copy beside 16-bit weights (memory.states `te_fp8_weight_cache`): the planner launches what
    those recipes run, with less memory at the point and at the high end, and the same speed point."""
    if (
        workload.precision != "fp8"
        or workload.task not in FP8_WEIGHT_TASKS
        or not plan.fp32_main_grads
        or plan.fp8_params
        or plan.dp == 1
        or plan.zero_stage == 0
    ):
        return plan
    weighted = plan_with(plan, fp8_params=True)
    return weighted if _preferred(workload, weighted, allowed) == "megatron" else plan


def _pointed_account(
    workload: Workload, plan: Plan, kind: tuple[object, ...], allowed: frozenset[Stack] | None, fp32_grads: bool
) -> Plan:
    """`_pointed` of the plan held with `fp32_grads` (Plan.fp32_main_grads), for a plan of `kind` without a speed of
    its own."""
    tuning = _full_speed_point(
        workload.task, workload.precision, workload.mixed_precision, workload.optimizer, kind, allowed, fp32_grads
    )
    if tuning is None:
        return plan if fp32_grads == plan.fp32_main_grads else plan_with(plan, fp32_main_grads=fp32_grads)
    return plan_with(plan, fp32_main_grads=fp32_grads, tuning=tuning)


def _pointed(workload: Workload, plan: Plan, allowed: frozenset[Stack] | None) -> Plan:
    """A full-training plan with the speed point (`speed_point`) of the preferred stack that runs it as counted."""
    tuning = _full_speed_point(
        workload.task, workload.precision, workload.mixed_precision, workload.optimizer, _kind(plan), allowed,
        plan.fp32_main_grads,
    )  # fmt: skip
    return plan if tuning is None else plan_with(plan, tuning=tuning)


@lru_cache(maxsize=4096)
def _full_speed_point(
    task: Task,
    precision: Precision,
    mixed: bool,
    optimizer: Optimizer,
    kind: tuple[object, ...],
    allowed: frozenset[Stack] | None,
    fp32_grads: bool,
) -> Tuning | None:
    """`speed_point` of the preferred stack that runs a full-training plan of this kind (what `runs` and the gradient
    account read of a plan), memoised: the search asks for every plan it counts."""
    workload = Workload(task=task, precision=precision, mixed_precision=mixed, optimizer=optimizer)
    plan = replace(_kind_plan(kind), fp32_main_grads=fp32_grads)
    stack = _preferred(workload, plan, allowed)
    return None if stack is None else speed_point(stack, workload)


def _with_stack(workload: Workload, plan: Plan, allowed: frozenset[Stack] | None) -> Plan:
    """The plan with the load (`host_load`) and the speed (`speed_point`, unless the plan states its own) of the
    preferred stack that runs it with its gradient buffer."""
    stack = _preferred(workload, plan, allowed)
    if stack is None:
        return plan
    load, tuning = host_load(stack, workload, plan), plan.tuning or speed_point(stack, workload)
    return plan if load == plan.host_load and tuning == plan.tuning else plan_with(plan, host_load=load, tuning=tuning)


def _kind(plan: Plan) -> tuple[object, ...]:
    """What the support matrix reads of a plan: which degrees exceed 1, the levels and the memory levers (a lever
    decides which stacks run the plan, `runs_levers`, and so which gradient buffer it is held with)."""
    levers = DEFAULT_LEVERS if _lever_free(plan) else levers_of(plan)
    return (
        plan.dp > 1,
        plan.tp > 1,
        plan.pp > 1,
        plan.cp > 1,
        plan.ep > 1,
        plan.hybrid,
        plan.zero_stage,
        plan.offload,
        plan.recompute,
        levers,
        plan.expert_tp is not None and plan.expert_tp != plan.tp,  # an expert TP of its own: megatron only
    )


def check_expert_tp(workload: Workload, plan: Plan, model: ModelSpec) -> None:
    """422 on plan.expert_tp where it differs from tp and the megatron stack, the one whose launches set it
    (levers.runs_levers), does not run the plan or build the model (inference runs on no training stack)."""
    if plan.expert_tp is None or plan.expert_tp == plan.tp:
        return
    allowed = _allowed(model, workload, plan)
    if (
        workload.task == "inference"
        or (allowed is not None and "megatron" not in allowed)
        or not runs("megatron", workload, plan)
    ):
        raise EstimatorError.of("expert_tp_stack", field="plan.expert_tp", expert_tp=plan.expert_tp, tp=plan.tp)


def _lever_free(plan: Plan) -> bool:
    """No memory lever moved from its default (`levers_of(plan) == DEFAULT_LEVERS`, without building one)."""
    moved = plan.activation_offload or plan.compiled or plan.fp8_params or plan.chunked_loss or plan.fused_loss
    moved = moved or plan.compiled_loss or plan.no_upcast_loss or not plan.flash_attention
    return not moved and plan.attention == "flash"


def _kind_plan(kind: tuple[object, ...]) -> Plan:
    """A plan of this kind (`_kind`): what the support matrix reads of it, the rest at its defaults."""
    dp, tp, pp, cp, ep, hybrid, zero, offload, recompute, levers, own_expert_tp = kind
    return cast(Levers, levers).on(
        Plan(
            dp=4 if dp else 1,
            tp=2 if tp else 1,
            pp=2 if pp else 1,
            cp=2 if cp else 1,
            ep=2 if ep else 1,
            expert_tp=(1 if tp else 2) if own_expert_tp else None,
            dp_shard=2 if hybrid else None,
            zero_stage=cast(int, zero),
            offload=cast(Offload, offload),
            recompute=cast(Recompute, recompute),
        )
    )


@lru_cache(maxsize=4096)
def gradient_accounts(
    task: Task,
    precision: Precision,
    mixed: bool,
    kind: tuple[object, ...],
    allowed: frozenset[Stack] | None = None,
    optimizer: Optimizer = "adamw",
) -> tuple[bool, ...]:
    """`Plan.fp32_main_grads` values to try for a plan of this kind (`as_run`), from the support matrix."""
    plan = _kind_plan(kind)
    workload = Workload(task=task, precision=precision, mixed_precision=mixed, optimizer=optimizer, lora=LoraSpec())
    flags = [
        fp32_main_grads(stack, workload)
        for stack in _candidates(workload, plan, allowed)
        if runs(stack, workload, plan)
    ]
    if not flags:
        return (False,)
    return (True, False) if flags[0] and not all(flags) else (flags[0],)


def no_stack_warning(workload: Workload, plan: Plan, model: ModelSpec) -> Warning_ | None:
    """`no_stack` for a stated training plan that no stack builds and runs (`stack_for`): its figures are the
    estimator's, not a job anyone can launch; None when a stack runs it (or for inference)."""
    if workload.task == "inference" or stack_for(workload, plan, model) is not None:
        return None
    shape = f"dp {plan.dp} × tp {plan.tp} × pp {plan.pp} × cp {plan.cp} × ep {plan.ep}, ZeRO {plan.zero_stage}"
    params = {
        "task": workload.task,
        "shape": shape,
        "offload": plan.offload,
        "recompute": plan.recompute,
        "optimizer": workload.optimizer,
    }
    levers = blocking_levers(workload, plan, model)  # worded as `no_stack.levers` (app/text/messages.py)
    return Warning_("no_stack", params | {"levers": levers}) if levers else Warning_("no_stack", params)


def blocking_levers(workload: Workload, plan: Plan, model: ModelSpec | None = None) -> list[str]:
    """The memory levers (as the request names them: "loss chunked", "activation_offload") that keep every stack from
    running a plan that launches without them: each that no stack runs on the plan alone, else all it sets (each runs
    alone, no stack runs them together); none where the plan without levers has no stack either."""
    named = set_levers(levers_of(plan))  # `supported`: whichever gradient buffer the plan was held with
    if not named or not supported(workload, DEFAULT_LEVERS.on(plan), model):
        return []
    alone = [name for name, lever in named if not supported(workload, lever.on(plan), model)]
    return alone or [name for name, _ in named]


# Fine-tuning tasks whose Hugging Face Trainer launch pads each batch to its longest sample (`as_padded`)
PADDED_TASKS = ("full_finetune", "lora", "qlora")


def as_padded(workload: Workload, plan: Plan, model: ModelSpec | None = None) -> Workload:
    """The workload with `varied_lengths` as the stack that runs the plan feeds its data, where the request left it
    unset. Fine-tuning under the Hugging Face Trainer (the deepspeed stack) pads each batch to its longest sample:
    the launch names DataCollatorForSeq2Seq, whose default `padding=True` pads to the longest sequence of the batch
    (transformers data/data_collator.py `DataCollatorForSeq2Seq`, `PaddingStrategy.LONGEST`; DataCollatorWithPadding
    the same), and nothing packs samples (TrainingArguments has no packing; TRL's SFTConfig `packing` defaults to
    False). torchtitan and Megatron-LM cut concatenated text into seq_len windows (torchtitan
    datasets/hf_datasets.py `HuggingFaceDataset.__iter__` fills a token buffer to seq_len + 1; Megatron
    GPTDataset's sample index), and pretraining under the Trainer groups texts into blocks (run_clm.py
    `group_texts`): batches of one length."""
    if workload.varied_lengths is not None or workload.task == "inference":
        return workload
    varied = workload.task in PADDED_TASKS and stack_for(workload, plan, model) == "deepspeed"
    return replace(workload, varied_lengths=varied)


def fp8_levers_excluded(
    gpu: GpuSpec, gpus: int, model: ModelSpec, workload: Workload, levers: Levers | None
) -> tuple[Literal["levers_unsupported"], dict[str, Any]] | None:
    """`levers_unsupported` where the request keeps FP8 weights (`fp8_params`) and the job runs in 16 bits on `gpu`
    (no FP8 math, or no stack runs the task in FP8: `as_launched`): no plan there can hold them."""
    if levers is None or not levers.fp8_params:
        return None
    launched = as_launched(workload, gpu, model)
    if launched.precision == "fp8":
        return None
    where = {"gpus": gpus, "gpu_name": gpu.name, "nodes": 1}
    return "levers_unsupported", where | {"runs_as": launched.precision} | levers_params(levers)
