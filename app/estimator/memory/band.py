"""What a plan's peak would read on the card, and how sure the estimate is: the readings and the range.

`memory_band` is computed once per answered plan (the /estimate result, each /recommend option), never inside the
plan search, so it costs the search nothing.

Readings (`MemoryBand.readings`): the gate figure (`MemoryBreakdown.total`) as each tool would show it, from
`memory.measured_bytes` (its comment names the sources): "allocated" = torch.cuda.max_memory_allocated() (live tensors:
the total less NCCL's buffers and the caching allocator's slack), "reserved" = torch.cuda.max_memory_reserved() (the
allocator's segments: the total less NCCL's buffers, which NCCL allocates itself), "device" = nvidia-smi (the total
plus the CUDA context, gpus.json memory_gib less usable_memory_gib).

Range (`MemoryBand.low`, `.high`, bytes of the gate figure): the validation rows (tests/estimator/validation_cases.py
MEMORY and tests/estimator/memory_first_contact.py, 180 published peaks, each read as measured) put the published
peak between 0.90x and 1.15x of the estimate where model states dominate, and further above it the larger the share
of activations and the loss (the rows whose error grows with sequence length: ms-swift's and Hugging Face Trainer
LoRA runs, -30 to -50 % at 4-8k tokens), so the band is asymmetric and widens with that share:
    low  = states + max(0, rest - total x (LOW + widening + lean_low))
    high = total x (1 + HIGH + ACTIVATION_HIGH x activation share + widening + lean_high)
where `states` are the model states (weights, gradients, optimizer states: bytes by formula from the parameter count,
the precisions and the sharding, which no reading falls below) and `rest` the terms the estimate can over-count
(activations, KV cache, NCCL's and the loss's buffers, the allocator's slack). The low margin is fitted as a share of
the total but taken out of `rest` alone: the low end never falls below the exact bytes of the states (Llama 3.1 70B
LoRA at TP 2 x PP 2 on an A100 40G: 33.05 GiB of weights per GPU, where the whole total scaled gave 29.55).
`widening` adds WIDEN for each trait of the plan that no validated run has and that read furthest off where a
neighbour had it (UNVALIDATED below), up to MAX_WIDEN: a plan far from validated runs gets a wider band. `lean_*`
widen one side or both where validated runs of a kind read off in a known direction (LEANS below): a 4-bit base
(QLoRA: GPTQ and bitsandbytes runs read -27 to +35 % off), experts sharded over expert parallelism (torchtitan's
Llama 4 Scout FSDP x EP runs read 1.47x the estimate: the estimate leans low there). These constants are fitted on
all 180 rows (benchmarks/memory_first_contact.py and benchmarks/validation.py report the coverage), not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.estimator.memory.estimate import measured_bytes
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, ModelSpec, Plan, Warning_, Workload

READINGS = ("allocated", "reserved", "device")

LOW = 0.10  # fitted: validation rows dominated by model states read down to 0.90x of the estimate
HIGH = 0.15  # fitted: ... and up to 1.15x
ACTIVATION_HIGH = 0.30  # fitted: published / estimate grows with the activation share (first-contact LoRA rows)
WIDEN = 0.10  # per unvalidated trait: the nearest validated neighbours of each read 14-42 % off
MAX_WIDEN = 0.20
KBIT_WIDEN = 0.12  # fitted, both sides: QLoRA rows read -27 to +35 % (Qwen README Q-LoRA, fms-acceleration, PEFT docs)
EXPERT_PARALLEL_HIGH = 0.30  # fitted, high side: torchao's Llama 4 Scout FSDP 4 x EP 4 runs read 1.47x the estimate


@dataclass(frozen=True, slots=True)
class MemoryBand:
    readings: dict[str, float]  # bytes per GPU as each tool would read the peak (READINGS)
    low: float  # bytes of the gate figure
    high: float
    unvalidated: tuple[str, ...]  # the plan's traits no validated run has (they widen the band)


def unvalidated_traits(model: ModelSpec, workload: Workload, plan: Plan) -> tuple[str, ...]:
    """Traits of the plan that few validation rows have, each with the validated neighbour that read furthest off:
    parameter offload (PEFT's FSDP QLoRA with CPU offload, -42 %), eager attention (ms-swift Qwen without flash
    attention, -30 to -34 %), pipeline parallelism (torchtitan's 405B 3D/4D runs, -14 to -23 %; Megatron-Bridge's
    Llama 3 70B FP8 runs -11 to +9 %). Expert parallelism has validated runs now, which lean one way (`leans`)."""
    traits = []
    if plan.offload == "optimizer_and_params":
        traits.append("parameter_offload")
    if not plan.flash_attention and workload.task != "inference":
        traits.append("eager_attention")
    if plan.pp > 1:
        traits.append("pipeline")
    return tuple(traits)


def leans(model: ModelSpec, workload: Workload, plan: Plan) -> tuple[float, float]:
    """(low, high) widening where validated runs of the plan's kind read off in a known direction: a 4-bit base both
    ways (KBIT_WIDEN: GPTQ's and bitsandbytes' dequantisation buffers and PEFT's k-bit preparation, over- and
    under-counted by turns), routed experts under expert parallelism upward (EXPERT_PARALLEL_HIGH: token dispatch and
    grouped-GEMM buffers the estimate does not count)."""
    low = high = 0.0
    if workload.task == "qlora":
        low += KBIT_WIDEN
        high += KBIT_WIDEN
    if model.experts and plan.ep > 1 and workload.task != "inference":
        high += EXPERT_PARALLEL_HIGH
    return low, high


def memory_band(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, b: MemoryBreakdown) -> MemoryBand:
    readings = {name: measured_bytes(b, plan, cluster, name) for name in READINGS}
    traits = unvalidated_traits(model, workload, plan)
    widen = min(MAX_WIDEN, WIDEN * len(traits))
    lean_low, _lean_high = leans(model, workload, plan)
    states = b.weights + b.gradients + b.optimizer  # exact bytes: never widened (module docstring)
    low = states + max(0.0, b.total - states - b.total * (LOW + widen + lean_low))
    return MemoryBand(readings, low, high_end(model, workload, plan, b, traits), traits)


def high_end(
    model: ModelSpec, workload: Workload, plan: Plan, b: MemoryBreakdown, traits: tuple[str, ...] | None = None
) -> float:
    """The high end of `memory_band` alone (bytes per GPU), without the readings: what a planner's gate on the high
    end reads for every plan it sizes."""
    traits = unvalidated_traits(model, workload, plan) if traits is None else traits
    widen = min(MAX_WIDEN, WIDEN * len(traits))
    share = (b.activations + b.kv_cache) / b.total if b.total > 0 else 0.0
    return b.total * (1.0 + HIGH + ACTIVATION_HIGH * share + widen + leans(model, workload, plan)[1])


def may_exceed(band: MemoryBand, b: MemoryBreakdown) -> Warning_ | None:
    """`memory_may_exceed`: the plan fits on its point estimate, and the high end of its range crosses the limit the
    gate checks (capacity less the headroom); None where it fits at the high end too, or does not fit at all."""
    limit = b.capacity if b.limit is None else b.limit
    if b.total > limit or band.high <= limit:
        return None
    params = {
        "total_gib": round(b.total / GIB, 2),
        "high_gib": round(band.high / GIB, 2),
        "limit_gib": round(limit / GIB, 2),
    }
    return Warning_("memory_may_exceed", params)
