"""Response and request pieces about GPU memory: the memory block of /estimate and /recommend (its breakdown, the
readings as each tool takes them, the range) and the descriptions of the plan's memory levers (app/planner/schemas.py
PlanIn). Kept apart so app/planner/schemas.py stays within the module size."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from app.common.schemas import RequestModel, coded_error
from app.estimator.vocabulary import Attention, Loss
from app.planner.levers import Levers

ATTENTION_DESCRIPTION = (
    "Attention implementation: flash (FlashAttention 2/3) and sdpa (PyTorch "
    "scaled_dot_product_attention, which runs flash or memory-efficient kernels: no seq_len² scores kept) hold "
    "the same memory; eager (transformers' eager_attention_forward, many remote-code models) keeps the fp32 "
    "softmax and its 16-bit copy, 6 bytes per score. Default: flash_attention's value (flash)."
)
LOSS_DESCRIPTION = (
    "Cross-entropy: standard (transformers' ForCausalLMLoss on fp32-upcast logits, 12 bytes per "
    "logit; on the megatron stack Megatron-LM's vocab-parallel CE, 6), chunked (torchtune CEWithChunkedOutputLoss, "
    "litgpt: the fp32 log-probs only), fused (Liger FusedLinearCrossEntropy, Cut Cross-Entropy, torchtitan's "
    "ChunkedLossWrapper: no whole-sequence logits; on the megatron stack Megatron-LM's native fused CE, 6 bytes per "
    "logit as its unfused one), compiled (the cross-entropy compiled with the model, torchtitan's compile since April "
    "2025, torchtune compile: the 16-bit logits and their gradient, 4 bytes per logit; needs compile), no_upcast "
    "(nn.CrossEntropyLoss on the 16-bit logits with autocast off, a trainer of one's own: 6 bytes per logit; /estimate "
    "only, no stack this service launches runs it). Default: "
    "chunked where chunked_loss is true, compiled where compile is true (the stacks compile the loss with the "
    "model), standard otherwise."
)
FP8_PARAMS_DESCRIPTION = (
    "Linear weights stored and all-gathered in FP8 (Megatron-LM --fp8-param-gather, Transformer "
    "Engine fp8_model_init, torchtitan float8 FSDP all-gather): 1 byte per linear weight in the working copy. "
    "Needs precision fp8 and a pretrain or full_finetune task; default false (on /recommend, unstated: an fp8 "
    "pretraining option on the megatron stack over the distributed optimizer keeps FP8 weights, as Megatron-Bridge's "
    "FP8 recipes do, and says so in its plan; false keeps 16-bit weights)."
)

FP32_PARAMS_DESCRIPTION = (
    "Parameters kept in fp32 and the step run under torch.autocast to the request's precision (bf16 or fp16), with "
    "no FSDP mixed-precision policy: the Hugging Face Trainer's --bf16 on a model loaded without torch_dtype, PyTorch "
    "FSDP without MixedPrecision, Lightning bf16-mixed. 4-byte weights (all-gathered in fp32 under FSDP; the frozen "
    "base too under LoRA), fp32 gradients, optimizer states with no master copy, an fp32 residual stream and the "
    "16-bit weight copies autocast makes. Needs a pretrain, full_finetune or lora task with mixed precision; /estimate "
    "only, no stack this service launches runs it (they train in 16-bit weights with fp32 master copies); default "
    "false."
)


class MemoryOut(BaseModel):
    per_gpu_gib: dict[str, float] = Field(
        description="weights, gradients, optimizer, activations, kv_cache, "
        "other, total (GiB per GPU, worst pipeline stage)"
    )
    capacity_gib: float = Field(
        description="The card's usable memory, GiB: what a process can allocate beside its CUDA context (gpus.json "
        "usable_memory_gib). The reserved reading stops at it; the device reading adds the context and stops at the "
        "card's whole memory as nvidia-smi shows it (capacity_gib plus the context)"
    )
    limit_gib: float | None = Field(default=None, description="What a plan may use: capacity less the headroom")
    fits: bool = Field(description="GPU memory within the limit and host RAM within the node's RAM after the reserve")
    as_measured_gib: dict[str, float] | None = Field(
        default=None,
        description="The peak as each tool would read it, GiB per GPU: allocated (torch.cuda.max_memory_allocated), "
        "reserved (torch.cuda.max_memory_reserved: the caching allocator's pool, NCCL's buffers not in it), device "
        "(nvidia-smi: the process's whole footprint, the CUDA context included). Compare a measured figure with the "
        "reading it was taken with; per_gpu_gib.total is the gate figure",
    )
    per_gpu_gib_range: list[float] | None = Field(
        default=None,
        description="[low, high] of the gate figure (per_gpu_gib.total), GiB per GPU: asymmetric, wider the larger "
        "the activations' share and where the plan has traits no validated run has (docs/validation.md). A plan "
        "fits on its point estimate; where the high end crosses limit_gib it carries memory_may_exceed",
    )
    paged_optimizer_gib: float = Field(
        default=0.0,
        description="Paged optimizer states per GPU (paged_optimizer): in CUDA managed memory that the driver evicts "
        "to host RAM when the card needs the room, so not in per_gpu_gib.total nor the allocated/reserved readings; "
        "the device reading counts what stays on the card",
    )
    host_ram_gib: float
    host_ram_limit_gib: float | None = Field(
        default=None, description="Host RAM per node offload may use: the node's RAM less the OS/process reserve"
    )
    host_load_gib: float = Field(
        default=0.0,
        description="Host RAM per node while the model loads: whole copies of the model as loaded, before ZeRO-3 "
        "shards it (QLoRA under DeepSpeed ZeRO-3: one per rank on the node); `fits` holds the larger of this and "
        "host_ram_gib within host_ram_limit_gib",
    )


class LeversIn(RequestModel):
    """The memory levers a plan may set: on /estimate inside `plan`, on /recommend as `plan` alone, where the search
    applies them to every candidate plan and keeps the stacks that run them (app/planner/stacks.py `runs_levers`)."""

    attention: Attention | None = Field(
        default=None,
        description=ATTENTION_DESCRIPTION,
    )
    loss: Loss | None = Field(
        default=None,
        description=LOSS_DESCRIPTION,
    )
    compile: bool | None = Field(default=None, description="torch.compile of the model; the same as compiled.")
    activation_offload: bool = Field(
        default=False,
        description="Keep saved activations in host RAM and bring them back for the backward (torchtune "
        "enable_activation_offloading, Unsloth's offloaded checkpointing); default false.",
    )
    fp8_params: bool = Field(
        default=False,
        description=FP8_PARAMS_DESCRIPTION,
    )
    fp32_params: bool = Field(default=False, description=FP32_PARAMS_DESCRIPTION)

    @model_validator(mode="after")
    def _compiled_loss_compiles(self) -> LeversIn:
        compiled = self.compile if self.compile is not None else bool(getattr(self, "compiled", False))
        if self.loss == "compiled" and not compiled and type(self) is LeversIn:
            raise coded_error("loss_compiled_needs_compile")
        return self

    def levers(self) -> Levers:
        """The levers as the search applies them to every candidate plan."""
        compiled = bool(self.compile)
        return Levers(
            attention=self.attention or "flash",
            loss=self.loss or ("compiled" if compiled else "standard"),
            compiled=compiled,
            activation_offload=self.activation_offload,
            fp8_params=self.fp8_params,
            fp32_params=self.fp32_params,
        )
