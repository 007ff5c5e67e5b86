"""The product's domain words, each declared once as a `Literal` beside what it means.

Everything else imports these: the estimator's specs, the API schemas, the planner search, the
CLI and the wizard's form. Tuples of the allowed values are derived with `typing.get_args`, in the
order declared here, which is the order people are offered them (the wizard's selects, the CLI's
choices, the API's enums). Labels for people (en/zh) live in `app/text/i18n.py`, keyed by these
values. Standard library only: the estimator owns this module.
"""

from __future__ import annotations

from typing import Literal, get_args

# What the customer does with the model. LoRA and QLoRA freeze the base weights and train small
# adapters (QLoRA on a 4-bit base); `continued_pretrain` goes on pretraining a released model's weights on
# new raw text, `pretrain` trains from random initialisation; `inference` serves the model.
Task = Literal["lora", "qlora", "full_finetune", "continued_pretrain", "pretrain", "inference"]
# The 16-bit number formats: brain float (8-bit exponent) and IEEE half (5-bit exponent, loss scaling).
HalfPrecision = Literal["bf16", "fp16"]
# Number format of the weights and the GEMMs (fp32 means TF32 tensor cores).
Precision = Literal[HalfPrecision, "fp8", "fp32"]
Optimizer = Literal["adamw", "adamw_8bit", "lion", "sgd", "adafactor"]
# Where optimizer states (and with ZeRO-3 the parameters) live between steps; ordered from the
# fastest to the leanest, as the planner tries them.
Offload = Literal["none", "optimizer", "optimizer_and_params"]
# Activation recomputation, from none to the whole layer; ordered as Offload.
Recompute = Literal["none", "selective", "full"]
# The memory levers a request may set (plan.attention, plan.loss): flash (FlashAttention) and sdpa (PyTorch
# scaled_dot_product_attention) keep no seq_len² scores, eager materialises them; the cross-entropy as transformers
# computes it (standard), in chunks, fused with the head, compiled with the model, or on the 16-bit logits as the head
# made them, without the fp32 upcast (no_upcast: a trainer's own nn.CrossEntropyLoss outside autocast).
Attention = Literal["flash", "sdpa", "eager"]
Loss = Literal["standard", "chunked", "fused", "compiled", "no_upcast"]
# Where a training stack's loader holds the whole model in host RAM before ZeRO-3 / FSDP shards it: nowhere
# (built sharded, or loaded onto the GPUs), on every rank of a node, or on each node's local rank 0 only
# (Plan.host_load; app/planner/stacks.py says which stack loads how).
HostLoad = Literal["none", "every_rank", "local_rank_0"]
# How far the training stack is tuned, for the speed estimate: `typical` (HF Trainer or accelerate with DeepSpeed or
# FSDP, default kernels), `tuned` (Megatron-LM, torchtitan, llm-foundry: the runs the efficiency constants are fitted
# to) or `nemo` (NVIDIA NeMo / Megatron-Bridge recipes: Transformer Engine's fused kernels, overlapped communication);
# or the planner's stack and task, each speed point calibrated on that stack's own published runs
# (performance.TUNING_SPEED): `torchtitan` (full training under torchtitan), `trainer` (full training under the
# Hugging Face Trainer), `trainer_peft` (LoRA / QLoRA under the Trainer with PEFT).
Tuning = Literal["typical", "tuned", "nemo", "torchtitan", "trainer", "trainer_peft"]
# The tunings that name the Hugging Face Trainer (its torch AdamW steps the states: memory.states).
TRAINER_TUNINGS: frozenset[Tuning] = frozenset({"trainer", "trainer_peft"})
# The tunings whose stack runs without DeepSpeed: torchtitan's FSDP2 and NeMo's Megatron-Core (no ZeRO-1/2 gradient
# buckets: memory.states DEEPSPEED_IPG_BUFFERS).
NON_DEEPSPEED_TUNINGS: frozenset[Tuning] = frozenset({"torchtitan", "nemo"})
Mlp = Literal["gelu", "swiglu"]
Norm = Literal["layernorm", "rmsnorm"]
# The linear layers LoRA may adapt: the attention projections q, k, v, o and the MLP's gate, up, down.
AttentionTarget = Literal["q", "k", "v", "o"]
MlpTarget = Literal["gate", "up", "down"]
LoraTarget = Literal[AttentionTarget, MlpTarget]
# A rental term: billed by the month, or a year at the annual discount.
Term = Literal["monthly", "annual"]
# What the recommendation ranks by (app/planner/ranking.py).
Objective = Literal["balanced", "cheapest", "fastest"]
# What one price buys: one card, or a whole server.
RentalUnit = Literal["card", "node"]
# A SKU (or an add-on) on sale, or retired from the catalog and recommendations.
SkuStatus = Literal["active", "retired"]
# A quote's life: issued, then accepted by the customer, cancelled by an admin, or expired unanswered.
QuoteStatus = Literal["issued", "accepted", "cancelled", "expired"]
# What an API key may do (app.apikeys): ask for recommendations, issue quotes, search its organisation's quotes.
ApiScope = Literal["recommend", "quotes:write", "quotes:read"]
# The languages of pages and printed quotes.
Language = Literal["en", "zh"]

# Serving: an inference deployment under traffic and latency targets (app/estimator/serving/), asked
# of POST /estimate and /recommend beside the tasks above; the wizard's "serve a model" path.
ServingTask = Literal["serving"]
RequestTask = Literal[Task, ServingTask]
# Which published checkpoint of a model a launch names where a preset knows both: the pretrained (base) weights
# or the post-trained chat/instruct model (app/estimator/data/presets.json `variants`).
Variant = Literal["base", "instruct"]
# The inference engine whose memory budget, paging and launch command a serving estimate follows.
Engine = Literal["vllm", "sglang", "trt-llm"]
# Continuous (in-flight, chunked prefill) or static batching.
Batching = Literal["continuous", "static"]
# Speculative decoding: a draft proposes tokens the target verifies in one step (app/estimator/serving_levers.py):
# an EAGLE-3 head, the model's own multi-token-prediction module, prompt n-gram lookup, or a separate draft model.
SpeculativeMethod = Literal["eagle3", "mtp", "ngram", "draft_model"]
# The math and the KV cache of a served model: the training precisions but fp32.
ServingPrecision = Literal[HalfPrecision, "fp8"]
# Integer weight formats of a served model: weight-only quantisation with group scales.
IntegerWeightFormat = Literal["int8", "int4"]
# Stored weights of a served model.
WeightFormat = Literal[ServingPrecision, IntegerWeightFormat]

TASKS: tuple[Task, ...] = get_args(Task)
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
HALF_PRECISIONS: tuple[HalfPrecision, ...] = get_args(HalfPrecision)
OPTIMIZERS: tuple[Optimizer, ...] = get_args(Optimizer)
OFFLOADS: tuple[Offload, ...] = get_args(Offload)
RECOMPUTES: tuple[Recompute, ...] = get_args(Recompute)
HOST_LOADS: tuple[HostLoad, ...] = get_args(HostLoad)
LORA_TARGETS: tuple[LoraTarget, ...] = get_args(LoraTarget)
ATTENTION_TARGETS: tuple[AttentionTarget, ...] = get_args(AttentionTarget)
MLP_TARGETS: tuple[MlpTarget, ...] = get_args(MlpTarget)
TERMS: tuple[Term, ...] = get_args(Term)
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
RENTAL_UNITS: tuple[RentalUnit, ...] = get_args(RentalUnit)
SKU_STATUSES: tuple[SkuStatus, ...] = get_args(SkuStatus)
QUOTE_STATUSES: tuple[QuoteStatus, ...] = get_args(QuoteStatus)
LANGUAGES: tuple[Language, ...] = get_args(Language)
API_SCOPES: tuple[ApiScope, ...] = get_args(ApiScope)

ENGINES: tuple[Engine, ...] = get_args(Engine)
VARIANTS: tuple[Variant, ...] = get_args(Variant)
BATCHINGS: tuple[Batching, ...] = get_args(Batching)
SPECULATIVE_METHODS: tuple[SpeculativeMethod, ...] = get_args(SpeculativeMethod)
WEIGHT_FORMATS: tuple[WeightFormat, ...] = get_args(WeightFormat)
INTEGER_WEIGHT_FORMATS: tuple[IntegerWeightFormat, ...] = get_args(IntegerWeightFormat)
SERVING_PRECISIONS: tuple[ServingPrecision, ...] = get_args(ServingPrecision)

LORA_TASKS: tuple[Task, ...] = ("lora", "qlora")  # tasks that train adapters on a frozen base
FULL_TRAINING_TASKS: tuple[Task, ...] = ("full_finetune", "continued_pretrain", "pretrain")  # train every weight
# Tasks that train on raw text at pretraining's batch and evaluation cadence: from scratch, or from released weights
PRETRAINING_TASKS: tuple[Task, ...] = ("continued_pretrain", "pretrain")
# Precisions a training stack runs as bf16: FP8 keeps bf16 weights and activations and runs only its
# GEMMs in FP8 (Transformer Engine's `fp8_autocast` inside a bf16 run), so the launch flags are bf16's.
BF16_RUN_PRECISIONS: tuple[Precision, ...] = ("bf16", "fp8")
# Bytes one element of each precision occupies.
BYTES_PER_ELEMENT: dict[str, float] = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}
TERM_MONTHS: dict[Term, int] = {"monthly": 1, "annual": 12}  # months a term commits to
MAX_QUOTE_MONTHS = 60  # the longest rental a quote prices (POST /quotes months; /recommend near-misses longer jobs)
