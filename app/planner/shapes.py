"""The parallel plans a search walks, before any estimate: the degrees (tensor inside a node, pipeline over the
layers, context from 32k-token sequences, experts for MoE models), the ZeRO stages, offloads and micro-batches each
shape allows and which of them some stack runs (with the request's memory levers), and the default optimizer step.
PURE, as app/planner/search.py which walks them."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from app.estimator.specs import Cluster, LoraSpec, ModelSpec, Plan, Workload, plan_with
from app.estimator.vocabulary import (
    LORA_TASKS,
    OFFLOADS,
    PRETRAINING_TASKS,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    Task,
)
from app.planner.levers import DEFAULT_LEVERS, Levers, levers_of
from app.planner.stacks import Stack, model_stacks, supported

TP_DEGREES = (1, 2, 4, 8)
MICRO_BATCHES = (1, 2, 4, 8, 16)
MAX_PP = 16


def divisors(n: int, limit: int) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def stage_layers(layers: int, pp: int) -> tuple[int, int, int] | None:
    """(first, middle, last): the transformer layers on the first stage, on each middle stage and on the last of a
    pipeline of `pp` stages; None where no such split exists. Even where pp divides the layers; otherwise every
    middle stage holds ceil(layers / pp), the most any stage holds (the count the estimator sizes memory and the
    pipeline's pace on: app/estimator/performance.py microbatch_compute_s), and the first and last stages, which
    also run the embedding and the output head and loss, share the rest, the last never more than the first:
    Llama 3 trained its 126 layers on PP 16 as 7 | 8 × 14 | 7 ("we reduce one Transformer layer each from the
    first and the last stages", Dubey et al. 2024, arXiv:2407.21783 §3.3.2). The launches say so with Megatron-LM's
    --decoder-first/last-pipeline-num-layers (each > 0, the middle layers split evenly over the pp - 2 middle stages:
    Megatron-Core transformer_config.py, core_v0.15.3) and torchtitan's pipeline_parallel_first/last_stage_less_layers
    (v0.2.2 distributed/pipeline_parallel.py generate_llm_fqn_per_model_part)."""
    if pp < 1 or pp > layers:
        return None
    most = -(-layers // pp)
    if layers % pp == 0:
        return most, most, most
    rest = layers - (pp - 2) * most  # what the first and last stages share
    if rest < 2:
        return None
    return rest - rest // 2, most, rest // 2


def pipeline_degrees(layers: int, ranks: int) -> list[int]:
    """Pipeline degrees up to MAX_PP dividing `ranks` (the GPUs over tensor parallel: no other degree fills the
    cluster): those dividing the layers, and the powers of two that split them unevenly (`stage_layers`), the degrees
    the published uneven layouts use (Llama 3.1 405B's 126 layers on PP 16, Dubey et al. 2024 §3.3.2; DeepSeek-V3's
    61 on PP 16, DeepSeek-AI 2024 §3.2.1), so that a prime layer count or one with few divisors still pipelines
    while a model with even splits keeps the search it had (80 layers on 3 servers stay unpipelined)."""
    return [pp for pp in _pp_candidates(ranks) if layers % pp == 0 or (pp & (pp - 1) == 0 and stage_layers(layers, pp))]


@lru_cache(maxsize=256)
def _pp_candidates(ranks: int) -> tuple[int, ...]:
    return tuple(pp for pp in range(1, min(MAX_PP, ranks) + 1) if ranks % pp == 0)


# Fine-tuning's default step: 128 sequences (Alpaca's recipe) of up to 4,096 tokens, Tülu 3's SFT batch (Lambert et
# al. 2024, SFT hyperparameters: effective batch size 128, max length 4,096): about 0.5M tokens per optimizer step
FINETUNE_BATCH = 128
FINETUNE_STEP_TOKENS = FINETUNE_BATCH * 4096


def default_global_batch(workload: Workload) -> int:
    """Sequences per optimizer step when the customer gives none: ~2M tokens for pretraining, from scratch or
    continued (Ibrahim et al. 2024, arXiv:2403.08763, continue at the original run's batch)
    (GPT-3 used 0.5M-3.2M, Brown et al. 2020 Table 2.1); for fine-tuning 128 sequences, fewer past 4,096 tokens so
    that a step stays near FINETUNE_STEP_TOKENS (128 sequences of 32k tokens would be 4M tokens a step, and a
    short job a dozen optimizer steps); so that every plan is compared at the same optimisation semantics."""
    if workload.global_batch:
        return workload.global_batch
    if workload.task in PRETRAINING_TASKS:
        return _pow2(max(1, 2**21 // workload.seq_len))
    return min(FINETUNE_BATCH, _pow2(max(1, FINETUNE_STEP_TOKENS // workload.seq_len)))


# The pre-training step grows with the job's compute: DeepSeek LLM's fitted optimal batch B_opt = 0.2920 * C^0.3271
# tokens, C the compute budget in FLOPs (DeepSeek-AI 2024, arXiv:2401.02954 §3.1, Eq. 1; C = 6 x non-embedding
# parameters x tokens here). Published runs near it: DeepSeek LLM 67B, 2T tokens, 6,144 x 4,096 = 25M tokens (rule:
# 19M); DeepSeek-V3, 37B active, 14.8T tokens, 15,360 x 4,096 = 63M (rule: 30M; arXiv:2412.19437 §4.2); Llama 2 7B,
# 2T tokens, 4M (rule: 9M; Touvron et al. 2023 §2.2). Never below the 2M-token default, never above DeepSeek-V3's
# 63M (the largest published step of these), rounded down to a power of two of sequences like the default.
BATCH_SCALING_COEFFICIENT = 0.2920
BATCH_SCALING_EXPONENT = 0.3271
PRETRAIN_STEP_TOKENS = 2**21
MAX_PRETRAIN_STEP_TOKENS = 15360 * 4096


def scaled_pretrain_batch(workload: Workload, nonembedding_params: int) -> int | None:
    """Sequences per optimizer step of a pre-training job (from scratch or continued, at the same batch: Ibrahim et al.
    2024, arXiv:2403.08763, continue at the original run's) with a token count and no global batch given:
    DeepSeek LLM's compute-optimal batch (BATCH_SCALING_*) within [PRETRAIN_STEP_TOKENS, MAX_PRETRAIN_STEP_TOKENS];
    None where the default stands (another task, no tokens, a batch given). A 1e12-token DeepSeek-V3 run at 4,096
    tokens takes 2,048 sequences, not 512: at 512 every one of 512 GPUs holds one sequence and no data-parallel
    degree is left for expert parallelism (review R4-4: TP 8 x PP 16, EP 1, MFU 18.8 %; at 2,048, PP 4 x EP 64)."""
    if workload.task not in PRETRAINING_TASKS or not workload.tokens or workload.global_batch:
        return None
    compute = 6.0 * nonembedding_params * workload.tokens
    tokens = BATCH_SCALING_COEFFICIENT * compute**BATCH_SCALING_EXPONENT
    tokens = min(max(tokens, PRETRAIN_STEP_TOKENS), MAX_PRETRAIN_STEP_TOKENS)
    batch = _pow2(max(1, int(tokens) // workload.seq_len))
    return batch if batch != default_global_batch(workload) else None


def _pow2(n: int) -> int:
    return 1 << max(0, n.bit_length() - 1)


def plan_shapes(model: ModelSpec, workload: Workload, cluster: Cluster) -> Iterator[Plan]:
    """Shapes (dp, tp, pp, cp, ep): tp inside one node and dividing the heads, pp splitting the layers into stages
    (`pipeline_degrees`: uneven ones too),
    context parallel for long sequences (`context_degrees`), expert parallel for MoE models
    (`expert_degrees`, inside dp). Yielded tp, then pp, then cp, then ep ascending."""
    gpus = cluster.gpus
    for tp in TP_DEGREES:
        if tp > cluster.gpus_per_node or cluster.gpus_per_node % tp or model.heads % tp:
            continue
        if tp > 1 and workload.task != "inference" and not model_stacks(model, workload.task, tp) - {"deepspeed"}:
            continue  # no tensor-parallel stack builds the model at this tp (kv heads, family: data/stacks.json)
        for pp in pipeline_degrees(model.layers, gpus // tp):
            for cp in context_degrees(workload, gpus // (tp * pp)):
                if gpus % (tp * pp * cp):
                    continue
                dp = gpus // (tp * pp * cp)
                shard = hybrid_shard(workload, cluster, dp, tp * cp)
                for ep in expert_degrees(model, workload, dp):
                    yield Plan(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, sequence_parallel=tp > 1)
                    if shard is not None:
                        yield Plan(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, sequence_parallel=tp > 1, dp_shard=shard)


def hybrid_shard(workload: Workload, cluster: Cluster, dp: int, inner: int) -> int | None:
    """The shard group of hybrid sharding (HSDP) worth searching: the data-parallel ranks of one server,
    when data parallel spans servers (ZeRO-3's gathers then stay on the server's own link and only the
    gradient all-reduce crosses the fabric); None where it cannot help (one server, no data parallel on
    the server, LoRA/QLoRA or inference, which no stack runs with it: data/stacks.json)."""
    if cluster.nodes == 1 or workload.task in LORA_TASKS or workload.task == "inference":
        return None
    in_node = min(dp, max(1, cluster.gpus_per_node // inner))
    return in_node if 1 < in_node < dp and dp % in_node == 0 else None


# Context parallel splits each sequence over cp GPUs (ring attention: Megatron-Core `--context-parallel-size`,
# torchtitan `context_parallel_degree`); it pays off where activations, not weights, fill the card: from
# 32k tokens (Llama 3 trained its 128k stage with cp 16, Dubey et al. 2024 §3.3.2 Table 4).
CP_MIN_SEQ_LEN = 32768
CP_DEGREES = (1, 2, 4, 8, 16)
EP_DEGREES = (1, 2, 4, 8, 16, 32, 64)


def context_degrees(workload: Workload, most: int) -> tuple[int, ...]:
    if workload.task == "inference" or workload.seq_len < CP_MIN_SEQ_LEN:
        return (1,)
    return tuple(cp for cp in CP_DEGREES if cp <= most and workload.seq_len % cp == 0)


def expert_degrees(model: ModelSpec, workload: Workload, dp: int) -> tuple[int, ...]:
    """Expert parallel degrees: dividing the experts and the data-parallel ranks they are sharded over
    (the estimator places the expert-parallel group inside data parallel, `Plan`)."""
    if workload.task == "inference" or not model.is_moe:
        return (1,)
    return tuple(ep for ep in EP_DEGREES if model.experts % ep == 0 and dp % ep == 0)


def zero_stages(task: Task, dp: int) -> tuple[int, ...]:
    if task == "inference" or dp == 1:
        return (0,)
    return (0, 1, 2, 3)


def offloads(task: Task, zero: int, host_ram_known: bool = True) -> tuple[Offload, ...]:
    """DeepSpeed offloads optimizer states with ZeRO ≥ 1 and parameters only with ZeRO-3.

    Offload needs host RAM the plan can count on: a server whose RAM is unknown gets none."""
    if task == "inference" or not host_ram_known:
        return ("none",)
    return OFFLOADS if zero == 3 else ("none", "optimizer") if zero >= 1 else ("none",)


def micro_batches(workload: Workload, dp: int, global_batch: int, pinned: int | None = None) -> tuple[int, ...]:
    """Micro-batches dividing the global batch; a pinned one (the request's, or the inference
    batch) is the only choice."""
    if workload.task == "inference":
        return (pinned or 1,)
    if pinned is not None:
        return (pinned,) if global_batch % (dp * pinned) == 0 else ()
    return tuple(mb for mb in MICRO_BATCHES if global_batch % (dp * mb) == 0)


def level_plan(shape: Plan, zero: int, offload: Offload, recompute: Recompute, micro_batch: int) -> Plan:
    """A plan of `shape` with these settings: the shape's degrees and levers (a shape holds nothing else: plan_shapes,
    Levers.on), copied with `plan_with` (dataclasses.replace costs several times more, and the search builds
    thousands)."""
    return plan_with(shape, zero_stage=zero, offload=offload, recompute=recompute, micro_batch=micro_batch)


def runnable_levels(
    workload: Workload, shape: Plan, recomputes: tuple[Recompute, ...], host_ram_known: bool, model: ModelSpec
) -> dict[int, set[tuple[Offload, Recompute]]]:
    """Per ZeRO stage, the (offload, recompute) pairs some stack runs at this shape. The support
    matrix reads the task and which degrees exceed 1, so the answer is remembered by those."""
    parallel = (shape.dp > 1, shape.tp > 1, shape.pp > 1, shape.cp > 1, shape.ep > 1, shape.hybrid)
    allowed = model_stacks(model, workload.task, shape.tp, shape.pp, shape.cp)
    kind = (workload.task, parallel, recomputes, host_ram_known, allowed, workload.optimizer, workload.precision)
    return runnable_by_kind(*kind, levers_of(shape))


@lru_cache(maxsize=512)
def runnable_by_kind(
    task: Task,
    parallel: tuple[bool, ...],
    recomputes: tuple[Recompute, ...],
    host_ram_known: bool,
    allowed: frozenset[Stack] | None = None,
    optimizer: Optimizer = "adamw",
    precision: Precision = "bf16",
    levers: Levers = DEFAULT_LEVERS,
) -> dict[int, set[tuple[Offload, Recompute]]]:
    dp, tp, pp, cp, ep = (2 if on else 1 for on in parallel[:5])
    shape = Plan(dp=2 * dp, tp=tp, pp=pp, cp=cp, ep=ep, dp_shard=2) if parallel[5] else Plan(dp, tp, pp, cp, ep)
    shape = levers.on(shape)
    if shape.activation_offload and not host_ram_known:
        return {}  # activations go to host RAM the plan can count on, as states do (`offloads`)
    lora = LoraSpec() if task in LORA_TASKS else None
    workload = Workload(task=task, optimizer=optimizer, precision=precision, lora=lora)
    out: dict[int, set[tuple[Offload, Recompute]]] = {}
    for zero in zero_stages(task, shape.dp):
        out[zero] = {
            (offload, recompute)
            for offload in offloads(task, zero, host_ram_known)
            for recompute in recomputes
            if supported(workload, level_plan(shape, zero, offload, recompute, 1), allowed=allowed)
        }
    return out
