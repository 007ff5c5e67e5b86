"""API shapes of POST /estimate and POST /recommend, and their conversion to estimator specs.

Ranges on every number: a request outside them is a 422 naming the field and the allowed range,
before any estimate runs. Memory is reported in GiB (2^30 bytes); money as decimal strings.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from app.catalog.schemas import TERM_DESCRIPTION
from app.common.schemas import Currency, RequestModel, coded_error, decimal_string, mirror
from app.estimator.specs import EstimatorError, LoraSpec, Plan, Workload
from app.estimator.vocabulary import (
    LORA_TARGETS,
    LORA_TASKS,
    Objective,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    RequestTask,
    Term,
    Tuning,
    WeightFormat,
)
from app.planner.cost_schemas import (  # re-exported: the responses and the quotes import them from here
    AvailabilityOut as AvailabilityOut,
    ConvertedCostOut as ConvertedCostOut,
    CostOut as CostOut,
    ReferencePriceOut as ReferencePriceOut,
    SkuRefOut as SkuRefOut,
    TermCostOut as TermCostOut,
)
from app.planner.memory_schemas import (
    LeversIn,
    MemoryOut as MemoryOut,  # re-exported: the responses import it from here
)
from app.planner.misses import MissCode
from app.planner.model_schemas import (  # re-exported: the API and the Hub import them from here
    HF_ID_MAX_CHARS as HF_ID_MAX_CHARS,
    HF_ID_PATTERN as HF_ID_PATTERN,
    MAX_PARAMS as MAX_PARAMS,
    ModelIn as ModelIn,
    ShortId,
)
from app.planner.option import RejectionCode
from app.planner.serving_schemas import DisaggregatedRejection, ServingIn, ServingOut
from app.planner.stacks import Stack
from app.planner.word_schemas import (
    NoteOut as NoteOut,  # re-exported: the responses import them from here
    WarningOut as WarningOut,
    code_params,
)


class LoraIn(RequestModel):
    rank: int = Field(default=16, ge=1, le=65536, description="LoRA rank r; default 16.")
    targets: Annotated[list[ShortId], Field(max_length=7)] | Literal["all-linear"] = Field(
        default="all-linear",
        description="Adapted projections: q, k, v, o, gate, up, down (at most 7), or all-linear (default).",
    )
    alpha: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        description="LoRA alpha (scaling only, no effect on memory or speed); default 2 × rank.",
    )
    double_quant: bool = Field(
        default=True,
        description="QLoRA: quantise the NF4 block constants too (0.127 instead of 0.5 bit per weight); default true.",
    )

    @model_validator(mode="after")
    def _known_targets(self) -> LoraIn:
        if isinstance(self.targets, list):
            unknown = sorted(set(self.targets) - set(LORA_TARGETS))
            if unknown or not self.targets:
                raise coded_error("lora_targets_unknown", unknown=unknown, allowed=list(LORA_TARGETS))
        return self

    def spec(self) -> LoraSpec:
        targets = LORA_TARGETS if self.targets == "all-linear" else tuple(dict.fromkeys(self.targets))
        return LoraSpec(rank=self.rank, targets=targets, alpha=self.alpha, double_quant=self.double_quant)


ZERO_ALIASES = {"no_shard": 0, "shard_grad_op": 2, "full_shard": 3, "hybrid_shard": 3}


DP_SHARD_DESCRIPTION = (
    "Hybrid sharding (FSDP HYBRID_SHARD / HSDP): ZeRO-3 states sharded over groups of dp_shard data-parallel "
    "ranks (often one server's GPUs) and replicated across the dp / dp_shard groups; must divide dp and needs "
    "zero_stage 3 when smaller than dp. Default: all of dp (plain ZeRO-3 / FSDP FULL_SHARD)."
)


EXPERT_TP_DESCRIPTION = (
    "Megatron-core's expert tensor parallel size (--expert-tensor-parallel-size): the routed experts' own TP degree, "
    "their weights, gradients and optimizer states split over ep × expert_tp ranks (1: whole experts on each rank, "
    "ms-swift's default). expert_tp × ep × pp must divide the GPUs. Default: tp, as Megatron-LM sets it. A value "
    "other than tp runs on the megatron stack only (/estimate sizes it; /recommend searches its own splits)."
)


class PlanIn(LeversIn):
    dp: int = Field(default=1, ge=1, le=65536, description="Data-parallel degree; default 1.")
    tp: int = Field(
        default=1, ge=1, le=64, description="Tensor-parallel degree (keep it within one server); default 1."
    )
    pp: int = Field(default=1, ge=1, le=256, description="Pipeline-parallel stages; default 1.")
    cp: int = Field(
        default=1, ge=1, le=64, description="Context-parallel degree (long sequences split across GPUs); default 1."
    )
    ep: int = Field(default=1, ge=1, le=1024, description="Expert-parallel degree for MoE models; default 1.")
    expert_tp: int | None = Field(default=None, ge=1, le=64, description=EXPERT_TP_DESCRIPTION)
    dp_shard: int | None = Field(default=None, ge=1, le=65536, description=DP_SHARD_DESCRIPTION)
    zero_stage: (
        int
        | Literal[
            "NO_SHARD",
            "SHARD_GRAD_OP",
            "FULL_SHARD",
            "HYBRID_SHARD",
            "no_shard",
            "shard_grad_op",
            "full_shard",
            "hybrid_shard",
        ]
    ) = Field(default=0, description="0-3, or an FSDP sharding strategy name (FULL_SHARD = 3, SHARD_GRAD_OP = 2)")
    offload: Offload = Field(
        default="none", description="What is offloaded to host RAM: none (default), optimizer, optimizer_and_params."
    )
    recompute: Recompute = Field(
        default="none", description="Activation recomputation: none (default), selective, full."
    )
    sequence_parallel: bool | None = Field(
        default=None,
        description="Megatron sequence parallelism alongside tensor parallel; default: on when tp > 1, as "
        "Megatron-LM and torchtitan run it.",
    )
    flash_attention: bool = Field(
        default=True, description="FlashAttention (no seq_len² attention matrix); default true."
    )
    micro_batch: int | None = Field(
        default=None, ge=1, le=4096, description="Sequences per GPU per step; default: the largest that fits."
    )
    global_batch: int | None = Field(
        default=None,
        ge=1,
        le=1048576,
        description="Sequences per optimizer step across all GPUs; default: the workload's.",
    )
    virtual_stages: int = Field(default=1, ge=1, le=64, description="Interleaved pipeline chunks per stage; default 1.")
    chunked_loss: bool = Field(
        default=False,
        description="Cross-entropy in chunks or fused (torchtune, litgpt, Megatron): no full fp32 copy of the "
        "logits; default false, as the Hugging Face Trainer computes it.",
    )
    compiled: bool = Field(
        default=False,
        description="torch.compile of the model (torchtune compile, torchtitan --compile): fused pointwise ops are "
        "recomputed in the backward, so RMSNorm and the MLP save fewer tensors; default false, as the Hugging Face "
        "Trainer runs (torch_compile off).",
    )
    tuning: Tuning | None = Field(
        default=None,
        description="The stack that runs the plan, where known: typical (HF Trainer or accelerate with DeepSpeed or "
        "FSDP, default kernels), tuned (Megatron-LM, torchtitan, llm-foundry) or nemo (NVIDIA NeMo / Megatron-Bridge "
        "recipes); or a speed point calibrated on one stack's published runs: torchtitan (0.93x), trainer (the HF "
        "Trainer's full training, 0.98x), trainer_peft (its LoRA / QLoRA with PEFT, 0.78x). It moves the speed "
        "estimate inside its range (typical: the low end; nemo: 1.25x); default: the speed point of the stack that "
        "runs the plan (Megatron-LM: the median tuned run).",
    )

    @model_validator(mode="after")
    def _zero_range(self) -> PlanIn:
        if isinstance(self.zero_stage, int) and not 0 <= self.zero_stage <= 3:
            raise coded_error("zero_stage_range")
        return self

    @model_validator(mode="after")
    def _levers_agree(self) -> PlanIn:
        """The lever names and the older boolean fields may both be given, but must say the same."""
        given = self.model_fields_set
        if (
            self.attention is not None
            and "flash_attention" in given
            and (self.attention != "eager") != self.flash_attention
        ):
            flash = str(self.flash_attention).lower()
            raise coded_error("attention_contradicts", attention=self.attention, flash_attention=flash)
        if (
            self.loss is not None
            and "chunked_loss" in given
            and (self.loss in ("chunked", "fused")) != self.chunked_loss
        ):
            raise coded_error("loss_contradicts", loss=self.loss, chunked_loss=str(self.chunked_loss).lower())
        if self.compile is not None and "compiled" in given and self.compile != self.compiled:
            raise coded_error("compile_contradicts")
        return self

    @field_validator("dp_shard")
    @classmethod
    def _shard_divides_dp(cls, shard: int | None, info: ValidationInfo) -> int | None:
        dp = info.data.get("dp")
        if shard is not None and isinstance(dp, int) and dp % shard:
            allowed = [d for d in range(1, dp + 1) if dp % d == 0]
            raise coded_error("dp_shard_divides", dp_shard=shard, dp=dp, allowed=allowed)
        return shard

    def spec(self, micro_batch: int) -> Plan:
        zero = self.zero_stage if isinstance(self.zero_stage, int) else ZERO_ALIASES[self.zero_stage.lower()]
        compiled = self.compiled if self.compile is None else self.compile
        # unstated, the loss is compiled where the model is: torchtitan's compile.components default ["model",
        # "loss"] (v0.2.2 torchtitan/config/job_config.py), torchtune compiles its loss under compile: True, and
        # transformers computes the loss inside the forward the Trainer's torch_compile compiles
        loss = self.loss or ("chunked" if self.chunked_loss else "compiled" if compiled else "standard")
        return mirror(
            Plan,
            self,
            zero_stage=zero,
            sequence_parallel=self.sequence_parallel if self.sequence_parallel is not None else self.tp > 1,
            micro_batch=self.micro_batch or micro_batch,
            flash_attention=self.flash_attention if self.attention is None else self.attention != "eager",
            attention=self.attention or ("flash" if self.flash_attention else "eager"),
            chunked_loss=loss == "chunked",
            fused_loss=loss == "fused",
            compiled_loss=loss == "compiled",
            no_upcast_loss=loss == "no_upcast",
            compiled=compiled,
        )


class HardwareIn(RequestModel):
    gpu: str | None = Field(
        default=None,
        max_length=64,
        description="A GPU type id (GET /catalog/gpus), e.g. h100-80g-sxm; give gpu or sku.",
    )
    sku: str | None = Field(
        default=None,
        max_length=64,
        description="A rentable SKU id (GET /catalog/skus), e.g. h100-80g-sxm-8x; its server shape and fabric are "
        "used.",
    )
    gpus_per_node: int | None = Field(
        default=None,
        ge=1,
        le=16,
        description="GPUs per server; default: the SKU's; with `gpu`, the GPU's usual server where `nodes` is given, "
        "else 1 (one card).",
    )
    nodes: int = Field(
        default=1,
        ge=1,
        le=4096,
        description="Servers; default 1. `gpu` alone (neither nodes nor gpus_per_node) is one card, for every task; "
        "`nodes` makes it whole usual servers. `assumptions` says which.",
    )
    intra_node_link: str | None = Field(
        default=None,
        max_length=32,
        description="GPU-to-GPU link inside a server (e.g. nvlink4, pcie4); default: the SKU's or the GPU's usual one.",
    )
    inter_node_gbps: float | None = Field(
        default=None, gt=0, le=102400, description="Per-node injection bandwidth of the fabric, Gbit/s"
    )
    inter_node_fabric: str | None = Field(
        default=None,
        max_length=32,
        examples=["ib-ndr-400"],
        description="Network between servers (e.g. ib-ndr-400, roce-200, eth-10); default: the SKU's or the usual "
        "cluster's.",
    )
    host_ram_gib: float | None = Field(
        default=None, gt=0, le=65536, description="Host RAM per server in GiB (limits offload); default: the SKU's."
    )

    @model_validator(mode="after")
    def _one_of(self) -> HardwareIn:
        if (self.gpu is None) == (self.sku is None):
            raise coded_error("hardware_one_of")
        return self


class WorkloadIn(RequestModel):
    model: ModelIn = Field(
        description="The model: a preset, a pasted Hugging Face config.json, a parameter count, or an explicit "
        "architecture."
    )
    task: RequestTask = Field(
        default="full_finetune",
        description="pretrain (from random weights), continued_pretrain (go on pretraining the released weights "
        "on new text), full_finetune (default), lora, qlora (4-bit base weights), inference (a batch job), or serving "
        "(traffic and latency targets: see `serving`).",
    )
    precision: Precision = Field(
        default="bf16", description="Compute precision of weights and activations: bf16 (default), fp16, fp8 or fp32."
    )
    mixed_precision: bool = Field(
        default=True,
        description="Keep FP32 master weights beside the low-precision copy (standard mixed precision); default true.",
    )
    optimizer: Optimizer = Field(
        default="adamw",
        description="adamw (default), adamw_8bit, lion, sgd (with momentum) or adafactor: sets the optimizer-state "
        "bytes.",
    )
    paged_optimizer: bool | None = Field(
        default=None,
        description="Optimizer states in paged memory that make room for activations (bitsandbytes paged "
        "optimizers); default: on for qlora without ZeRO sharding (ZeRO stage 0) with adamw, adamw_8bit or lion, "
        "which the launch names as the Trainer's paged_adamw_32bit, paged_adamw_8bit or paged_lion_32bit; off "
        "otherwise (a sharded launch runs plain states).",
    )
    kbit_upcast: bool | None = Field(
        default=None,
        description="QLoRA through PEFT's prepare_model_for_kbit_training (TRL SFTTrainer on one GPU, the QLoRA "
        "recipe): fp32 norms put the activations in fp32; default: on for qlora, except ZeRO-3 / FSDP over more than "
        "one GPU (TRL skips it there). false for torchtune, litgpt and Unsloth.",
    )
    varied_lengths: bool | None = Field(
        default=None,
        description="Batches of varied length: a dataset of varied sample lengths padded per batch (the Hugging Face "
        "Trainer's collators pad to the longest sample of the batch), not packed or padded to seq_len. The caching "
        "allocator then keeps blocks cut for other lengths: the reserved and nvidia-smi readings "
        "(memory.as_measured_gib) grow by one more set of the loss's logits-sized buffers; the gate and the "
        "allocated peak do not. Default: as the stack that runs the plan feeds its data: on for fine-tuning under "
        "DeepSpeed and the Hugging Face Trainer (its launch pads each batch to its longest sample), off where the "
        "data is packed into seq_len windows (Megatron-LM, torchtitan, and pretraining).",
    )
    seq_len: int = Field(
        default=2048,
        ge=1,
        le=1048576,
        description="Tokens per sequence; default 2048, or the model's context where shorter. Past the model's "
        "context (config.json's max_position_embeddings, extended by its rope_scaling) is a 422: seq_len_context.",
    )
    micro_batch: int | None = Field(
        default=None, ge=1, le=4096, description="Per-GPU micro-batch; for inference the concurrent sequences"
    )
    global_batch: int | None = Field(
        default=None,
        ge=1,
        le=1048576,
        description="Sequences per optimizer step across all GPUs, at least micro_batch; default: the planner's.",
    )
    tokens: float | None = Field(
        default=None,
        gt=0,
        le=1e16,
        description="Tokens to train on, as a raw count: 100000000 for 100M, 2e9 for 2B (the web wizard asks in "
        "billions). Epochs are included: dataset tokens × epochs. Without it there is no time to finish and the "
        "price is per month.",
        examples=[2_000_000_000],
    )
    lora: LoraIn | None = Field(
        default=None, description="LoRA settings for task lora or qlora; default rank 16 on all linear layers."
    )
    kv_cache_precision: Precision | None = Field(
        default=None, description="KV-cache precision for inference; default: precision."
    )
    output_tokens: int = Field(
        default=256, ge=1, le=1048576, description="Tokens generated per request (inference); default 256."
    )
    weights: WeightFormat | None = Field(
        default=None,
        description="Serving: stored weight format (int4/int8 weight-only with group scales); default = precision",
    )
    serving: ServingIn | None = Field(default=None, description='Traffic, lengths, engine and SLO for task "serving"')

    @model_validator(mode="after")
    def _serving_fields_only_for_serving(self) -> WorkloadIn:
        if self.task != "serving" and (self.serving is not None or self.weights is not None):
            raise coded_error("serving_fields_task")
        return self

    def workload(self) -> Workload:
        """The estimator's workload of a training or batch-inference task (serving has its own config)."""
        if self.task == "serving":
            raise EstimatorError.of("serving_task_workload", field="task")
        if self.task != "inference" and self.global_batch is not None and self.global_batch < (self.micro_batch or 1):
            raise EstimatorError.of(
                "global_batch_micro_batch",
                field="global_batch",
                global_batch=self.global_batch,
                micro_batch=self.micro_batch,
            )
        lora = self.lora.spec() if self.lora else (LoraSpec() if self.task in LORA_TASKS else None)
        return mirror(Workload, self, lora=lora)


MemoryHeadroom = Annotated[
    float,
    Field(
        ge=0,
        le=0.5,
        description="Share of each card's usable memory a plan must leave free (allocator spikes, "
        "fragmentation, framework versions); 0.05 by default",
    ),
]


class EstimateIn(WorkloadIn):
    hardware: HardwareIn = Field(description="Where it runs: a GPU type or a SKU, and how many servers")
    memory_headroom: MemoryHeadroom = 0.05
    plan: PlanIn | None = Field(default=None, description="Omit to get the best feasible plan for the hardware")


class ScalingIn(WorkloadIn):
    gpu: str = Field(max_length=64, examples=["h100-80g-sxm"], description="A GPU type id (GET /catalog/gpus)")
    plan: PlanIn | None = Field(default=None, description="The plan of one replica (tp, pp, ZeRO, micro-batch…)")
    gpus_per_node: int = Field(default=8, ge=1, le=16, description="GPUs per server; default 8.")
    rdma_nics_per_node: int = Field(default=1, ge=1, le=16, description="InfiniBand/RoCE ports per server")


# A budget is money as the admin's prices are (app.common.schemas.money_pattern): a decimal string in plain
# notation, > 0, at most two decimals (the fields' own bounds).
BUDGET = decimal_string("300000.00")


class ConstraintsIn(RequestModel):
    term: Term = Field(default="monthly", description=TERM_DESCRIPTION)
    max_monthly_budget: Annotated[Decimal | None, BeforeValidator(BUDGET)] = Field(
        default=None,
        gt=0,
        le=Decimal("1e12"),
        max_digits=16,
        decimal_places=2,
        description="Most to spend per month on one option, in `currency` (default CNY, the catalog's currency), as "
        'a decimal string such as "300000.00"; options above it become near misses. Default: no limit.',
        examples=["300000.00"],
    )
    max_total_budget: Annotated[Decimal | None, BeforeValidator(BUDGET)] = Field(
        default=None,
        gt=0,
        le=Decimal("1e13"),
        max_digits=17,
        decimal_places=2,
        description='Most the whole job may cost, in `currency`, as a decimal string such as "400000.00": the job '
        "total (its billed months; without tokens, the fewest months the term bills; serving: one term of the "
        "deployment). Options above it become near misses with code `total_budget`. When it is given it decides: "
        "an option within it whose monthly price is above `max_monthly_budget` is offered with the warning "
        "`over_monthly_budget`. Default: no limit.",
        examples=["400000.00"],
    )
    currency: Currency | None = Field(
        default=None,
        description="ISO 4217 code of the budget and of the prices options are ranked by: every SKU's price is "
        "converted into it at the admin-set exchange rate first (a SKU priced in a currency without a rate is in "
        "`rejected` with code `exchange_rate`). Default: CNY, the catalog's currency.",
    )
    deadline_days: float | None = Field(
        default=None,
        gt=0,
        le=3650,
        description="Finish within this many days (needs tokens); options that miss it become near misses.",
    )
    gpu_types: list[ShortId] = Field(
        default_factory=list,
        max_length=32,
        description="Only these GPU type ids of the catalog (GET /catalog/gpus, those `offered` have a SKU); an id "
        "the catalog does not have is a 422 listing those it has; empty (default): any.",
    )
    regions: list[ShortId] = Field(
        default_factory=list,
        max_length=32,
        description="Only SKUs offered in these regions (shenzhen, singapore, los-angeles); empty (default): any.",
    )
    max_nodes: int = Field(default=16, ge=1, le=64, description="At most this many servers per option; default 16.")
    start_date: date | None = Field(
        default=None,
        description="The rental's first day (YYYY-MM-DD): each option's `availability` counts the units free in its "
        "region from it for the option's billed months, and a plan that needs more than are free is a near miss with "
        "code `capacity`. Default: today in the catalog's timezone.",
    )
    require_infiniband: bool = Field(
        default=False, description="Only SKUs with an InfiniBand or RoCE fabric; default false."
    )
    objective: Objective = Field(
        default="balanced", description="Ranking: balanced (default: cost and time together), cheapest or fastest."
    )
    limit: int = Field(
        default=5, ge=1, le=50, description="How many options to return, best first; default 5, at most 50."
    )
    memory_headroom: MemoryHeadroom = 0.05


class RecommendIn(WorkloadIn):
    constraints: ConstraintsIn = Field(
        default_factory=ConstraintsIn,
        description="Budget, deadline, term, GPU types, regions and ranking; all optional",
    )
    plan: LeversIn | None = Field(
        default=None,
        description="Memory levers every option's plan uses (attention, loss, compile, activation_offload, "
        "fp8_params, fp32_params), where its stack runs them: the search keeps only the stacks whose launch sets "
        "them (the option's launch block sets them too). Default: flash attention, the standard loss, nothing else.",
    )


# ---- responses ---------------------------------------------------------------------------------


class GoodputOut(BaseModel):
    factor: float = Field(description="Compute hours ÷ wall hours")
    compute_hours: float = Field(description="Tokens ÷ throughput: the GPUs' compute alone")
    lost_hours: dict[str, float] = Field(description="failures, checkpoints, evaluation, startup (job hours)")
    interruptions: float = Field(description="Expected interruptions over the run (Llama 3's rate per GPU-day)")
    checkpoint_gib: float = Field(description="One checkpoint: weights and optimizer state of the trained parameters")
    checkpoint_interval_hours: float
    storage_gib: float = Field(description="Storage the run needs: two checkpoints kept plus the final weights")


class PerformanceOut(BaseModel):
    step_time_s: float | None = None
    tokens_per_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    mfu: float | None = Field(
        default=None,
        description="Model FLOPs utilisation, attention counted causally (half the s×s score matrix, as NVIDIA NeMo "
        "reports MFU), against the precision's dense peak",
    )
    mfu_full_attention: float | None = Field(
        default=None,
        description="The same with attention counted over the full s×s matrix (Megatron-LM, PaLM appendix B)",
    )
    breakdown_s: dict[str, float] = Field(default_factory=dict)
    time_to_train_hours: float | None = None
    gpu_hours: float | None = None
    prefill_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    time_per_output_token_ms: float | None = None
    tokens_per_s_per_gpu_range: list[float] | None = Field(
        default=None,
        description="[low, high]: a typical stack (HF Trainer/accelerate with DeepSpeed or FSDP) to a tuned one "
        "(Megatron-LM, torchtitan)",
    )
    time_to_train_hours_range: list[float] | None = Field(
        default=None, description="[tuned, typical] wall hours, goodput included"
    )
    gpu_hours_range: list[float] | None = Field(
        default=None, description="[tuned, typical] GPU-hours, goodput included"
    )
    goodput: GoodputOut | None = Field(
        default=None, description="What the run loses besides compute; time_to_train_hours includes it"
    )


class PlanOut(BaseModel):
    dp: int
    dp_shard: int | None = None  # hybrid sharding's shard group; None: all of dp
    tp: int
    pp: int
    cp: int
    ep: int
    expert_tp: int | None = None  # the experts' own tensor parallel size where stated; None: tp (Megatron's default)
    zero_stage: int
    offload: str
    recompute: str
    sequence_parallel: bool
    flash_attention: bool
    attention: str = Field(default="flash", description="flash, sdpa or eager (plan.attention)")
    micro_batch: int
    global_batch: int | None
    virtual_stages: int
    loss: str = Field(
        default="standard", description="standard, chunked, fused, compiled or no_upcast cross-entropy (plan.loss)"
    )
    compiled: bool = False
    activation_offload: bool = False
    fp8_params: bool = False
    fp32_params: bool = Field(default=False, description="fp32 parameters under torch.autocast (plan.fp32_params)")
    summary: str


class ModelOut(BaseModel):
    name: str
    params: int
    active_params: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    approximate: bool


class EstimateOut(BaseModel):
    model: ModelOut
    plan: PlanOut
    memory: MemoryOut
    performance: PerformanceOut | None
    warnings: list[WarningOut]
    assumptions: list[str]
    assumption_codes: list[NoteOut] = Field(
        default_factory=list,
        description="`assumptions` as codes with parameters, one for one and in the same order (app/text/note_words.py "
        "words them in English and Chinese)",
    )
    serving: ServingOut | None = Field(default=None, description='task "serving": latency, throughput, KV cache')


class ScalingRowOut(BaseModel):
    scope: str = Field(description="'node': GPUs in one server; 'multi-node': servers joined by a fabric")
    link: str = Field(description="Intra-node link or inter-node fabric")
    gpus: int
    nodes: int
    fits: bool = Field(
        description="One replica's plan fits each GPU's memory at this point (data parallel over its GPUs), by the "
        "gate POST /estimate applies; where it does not, no throughput is shown (warnings say from how many GPUs on "
        "it fits)"
    )
    per_gpu_gib: float = Field(description="Memory per GPU at this point (POST /estimate's memory.per_gpu_gib.total)")
    limit_gib: float = Field(description="What a GPU may use (its usable memory less the 5 % headroom)")
    tokens_per_s: float | None = Field(description="Modelled throughput; null where the plan does not fit")
    speedup: float | None = Field(
        description="Throughput over one replica's share of the baseline's (the row with `baseline` true: the fewest "
        "GPUs that fit, the fastest link among them), so the baseline reads its replica count; null where the plan "
        "does not fit"
    )
    efficiency: float | None = Field(
        description="speed-up per replica, 1 at the baseline; above 1 only where ZeRO shards the optimizer step over "
        "more ranks (warning scaling_superlinear says so); null where the plan does not fit"
    )
    baseline: bool = Field(default=False, description="The point speed-up and efficiency count from")


class ScalingOut(BaseModel):
    model: ModelOut
    gpu: str
    base_plan: PlanOut
    rows: list[ScalingRowOut]
    warnings: list[WarningOut] = Field(
        default_factory=list, description="scaling_rows_unfit / scaling_none_fits: points whose plan does not fit"
    )


class OptionOut(BaseModel):
    rank: int | None
    sku: SkuRefOut
    gpus_per_node: int
    nodes: int
    total_gpus: int
    plan: PlanOut
    memory: MemoryOut
    performance: PerformanceOut
    cost: CostOut
    indicative: bool = Field(
        default=False,
        description="The total is not final: the SKU's price is indicative (warning indicative_price), or the "
        "fabric add-on the option needs is priced on consultation and left out of it (cost.fabric_on_consultation)",
    )
    availability: AvailabilityOut
    explanation: str
    warnings: list[WarningOut]
    stack: Stack | None = Field(
        default=None, description="The training stack that runs the plan (docs/stacks.md); null for inference"
    )
    launch: dict[str, Any] | None = Field(
        description="{stack: that stack's complete launch configuration}; serving: the engine's launch, null for a "
        "near miss whose replica cannot hold one request"
    )
    miss_reason: str | None = Field(default=None, description="Why a near miss misses, in English (from `misses`)")
    misses: list[MissOut] = Field(
        default_factory=list,
        description="A near miss's reasons as codes with parameters (app/text/messages.py words them)",
    )
    reference_prices: list[ReferencePriceOut] = Field(default_factory=list)
    serving: ServingOut | None = Field(default=None, description='task "serving": latency, throughput, KV cache')
    quote: QuoteBodyOut | None = Field(default=None, description="POST /quotes body for this option")
    assumptions: list[str] = Field(
        default_factory=list,
        description="What this option assumes beyond the plan: the inter-node fabric a multi-server option's "
        "speed counts on, and whether its add-on is in the price and the quote; how its plan differs from every run "
        "that calibrated the speed (an MoE model, offloaded states), which widens its range",
    )
    assumption_codes: list[NoteOut] = Field(
        default_factory=list,
        description="`assumptions` as codes with parameters, one for one (app/text/messages.py ASSUMPTIONS words them "
        "in English and Chinese)",
    )


class QuoteBodyOut(BaseModel):
    """The body of POST /quotes for this option: add `customer` and post it as is. `plan` is in /estimate's
    plan shape, `workload` in /recommend's; the quote's total is the option's `cost.job_total`."""

    sku_id: str
    quantity: int = Field(description="Cards or servers, as the SKU is rented (the option's cost.units)")
    term: str
    months: int
    addons: list[str] = Field(
        default_factory=list,
        description="The fabric add-on (e.g. infiniband-400g) when the option joins several servers over it; "
        "one priced on consultation is listed on the quote but left out of its total, as out of job_total",
    )
    region: str | None = Field(default=None, description="The region the option was found in (its sku.region)")
    start_date: date | None = Field(default=None, description="The rental's first day (constraints.start_date)")
    plan: dict[str, Any]
    workload: dict[str, Any]


class MissOut(BaseModel):
    code: MissCode
    params: dict[str, Any] = Field(
        description="deadline: days, deadline_days; budget: monthly, budget, currency (converted_monthly, "
        "compared_currency); slo_one_request, slo_peak: ttft_ms, tpot_ms, slo_ttft_ms, slo_tpot_ms (slo_peak from "
        "the simulation also percentile and saturated: the figures are that percentile at the peak, a saturated "
        "ttft_ms null, unbounded); peak_load: "
        "replicas, carried, offered (requests/s); sequence_too_long: context_len, kv_cache_tokens, tp"
    )


class RejectedOut(BaseModel):
    sku: str
    code: RejectionCode | DisaggregatedRejection
    params: dict[str, Any] = code_params(
        "The figures behind the reason (GiB, GPU names, regions…); `reason` is them in English",
    )
    reason: str


class ParetoPointOut(BaseModel):
    sku: str
    total_gpus: int
    cost: str = Field(description="The job total (monthly price without tokens) in the request's currency")
    hours: float | None


class RecommendOut(BaseModel):
    model: ModelOut
    currency: str = Field(
        description="The currency options are ranked, budgeted and compared in (constraints.currency)"
    )
    options: list[OptionOut]
    near_misses: list[OptionOut]
    rejected: list[RejectedOut]
    pareto: list[ParetoPointOut]
    assumptions: list[str]
    assumption_codes: list[NoteOut] = Field(
        default_factory=list, description="`assumptions` as codes with parameters, one for one and in the same order"
    )
    stopped_early: bool = Field(
        default=False,
        description="True when the search used up PLANNER_TIME_BUDGET_MS before every SKU was searched: "
        "the SKUs left are in `rejected` with code `time_budget`, and the options come from the others.",
    )
    search: dict[str, int]
