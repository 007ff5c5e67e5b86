"""The memory levers a request may set (plan.attention, plan.loss, plan.compile, plan.activation_offload,
plan.fp8_params, plan.fp32_params), which stacks run each, and a plan with them.

Which stack runs which lever is what its launch block can set (app/planner/launch/):
- deepspeed, the Hugging Face Trainer: every attention through from_pretrained's `attn_implementation` ("eager",
  "sdpa", "flash_attention_2": transformers modeling_utils.py PreTrainedModel.from_pretrained); the fused loss through
  TrainingArguments `use_liger_kernel` (Liger's fused linear cross-entropy) and compile through `torch_compile`
  (transformers training_args.py); no chunked loss, no activation offload and no FP8 weights of its own.
- fsdp, torchtitan: its models call scaled_dot_product_attention or flex attention (model attn_type "sdpa" / "flex"),
  never an eager score matrix; compile and the compiled loss through [compile] enable / components ["model", "loss"]
  (torchtitan/config/configs.py CompileConfig); FP8 weights all-gathered through quantize.linear.float8
  enable_fsdp_float8_all_gather, which needs FSDP sharding; no fused or chunked loss the config names, no activation
  offload (enable_cpu_offload offloads parameters, gradients and optimizer states).
- megatron, Megatron-LM: --attention-backend flash or unfused (megatron/core/transformer/enums.py AttnBackend);
  the fused cross-entropy through --cross-entropy-loss-fusion with the native implementation (megatron/core/
  model_parallel_config.py cross_entropy_loss_fusion, cross_entropy_fusion_impl "native"; megatron/training/
  arguments.py rejects the Transformer Engine one), which keeps as many bytes a logit as the unfused loss (memory.
  activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT), so the search never takes it for memory (`fused_relief`);
  --fp8-param-gather, which megatron/training/arguments.py `validate_args` asserts only with the distributed optimizer
  (or FSDP, which the launch never sets): "--fp8-param-gather only supported with distributed optimizer, torch fsdp2,
  megatron fsdp, or inference mode" (Megatron-LM commit d98e8a6); activation offload through --cpu-offloading
  (model_parallel_config.py cpu_offloading, cpu_offloading_num_layers), which transformer_config.py refuses with
  pipeline parallelism and with recompute; no torch.compile, no chunked loss.
No stack runs the cross-entropy on 16-bit logits without the fp32 upcast (plan.loss "no_upcast"): transformers'
ForCausalLMLoss (src/transformers/loss/loss_utils.py `logits.float()`), torchtitan's cross_entropy_loss (`.float()`) and
Megatron-LM's vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py `calculate_logits_max`:
`vocab_parallel_logits.float()`) all upcast. /estimate sizes it (trainers of their own run it); /recommend refuses it
as levers_unsupported.
No stack runs fp32 parameters under autocast (plan.fp32_params): the deepspeed stack's ds_config turns bf16 (or fp16)
on, and DeepSpeed casts the module to it (deepspeed/runtime/engine.py `_configure_distributed_model`: `self.module
.bfloat16()`) with fp32 master weights in its optimizer; torchtitan's FSDP2 all-gathers in its MixedPrecisionPolicy's
param_dtype (bf16 by default, torchtitan/config mixed_precision_param) and Megatron-LM keeps bf16 weights with fp32
main parameters in its optimizer. /estimate sizes it (the Hugging Face Trainer or accelerate FSDP with a model loaded
without torch_dtype, atorch's amp_native); /recommend refuses it as levers_unsupported.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from app.estimator.specs import Plan, plan_with
from app.estimator.vocabulary import Attention, Loss

LeverStack = str  # "deepspeed", "fsdp" or "megatron" (app/planner/stacks.py Stack)


@dataclass(frozen=True, slots=True)
class Levers:
    """The levers a /recommend request sets for every candidate plan (defaults: what every stack runs)."""

    attention: Attention = "flash"
    loss: Loss = "standard"
    compiled: bool = False
    activation_offload: bool = False
    fp8_params: bool = False
    fp32_params: bool = False

    def on(self, plan: Plan) -> Plan:
        """`plan` with these levers (the search's plans carry them from their shape)."""
        return plan_with(
            plan,
            flash_attention=self.attention != "eager",
            attention=self.attention,
            chunked_loss=self.loss == "chunked",
            fused_loss=self.loss == "fused",
            compiled_loss=self.loss == "compiled",
            no_upcast_loss=self.loss == "no_upcast",
            fp8_params=self.fp8_params,
            fp32_params=self.fp32_params,
            activation_offload=self.activation_offload,
            compiled=self.compiled,
        )


DEFAULT_LEVERS = Levers()


def levers_of(plan: Plan) -> Levers:
    """The levers `plan` carries."""
    loss: Loss = (
        "fused"
        if plan.fused_loss
        else "chunked"
        if plan.chunked_loss
        else "compiled"
        if plan.compiled_loss
        else "no_upcast"
        if plan.no_upcast_loss
        else "standard"
    )
    attention: Attention = plan.attention if plan.flash_attention else "eager"
    return Levers(attention, loss, plan.compiled, plan.activation_offload, plan.fp8_params, plan.fp32_params)


def runs_levers(stack: LeverStack, plan: Plan) -> bool:
    """Whether `stack`'s launch sets every lever `plan` carries (module docstring). An expert tensor parallel size
    other than tp (Plan.expert_tp) only the megatron stack's launches set: Megatron-LM's --expert-tensor-parallel-size,
    Megatron-Bridge's model.expert_tensor_parallel_size."""
    if plan.expert_tp is not None and plan.expert_tp != plan.tp and stack != "megatron":
        return False
    if plan.chunked_loss or plan.no_upcast_loss or plan.fp32_params:
        # no stack's launch names a chunked cross-entropy, one without the fp32 upcast, nor fp32 parameters under
        # autocast (module docstring)
        return False
    if stack == "deepspeed":
        return not plan.activation_offload and not plan.fp8_params
    if stack == "fsdp":
        sharded = plan.dp > 1 and plan.zero_stage >= 2
        return (
            plan.flash_attention
            and not plan.fused_loss
            and not plan.activation_offload
            and (not plan.fp8_params or sharded)
        )
    # megatron: --fp8-param-gather only beside the distributed optimizer (module docstring), which its
    # launch sets for data parallel over ZeRO 1 or more (launch/megatron_lm.py `--use-distributed-optimizer`)
    offload_ok = not plan.activation_offload or (plan.pp == 1 and plan.recompute == "none")
    fp8_ok = not plan.fp8_params or (plan.dp > 1 and plan.zero_stage >= 1)
    return plan.attention != "sdpa" and not plan.compiled and not plan.compiled_loss and offload_ok and fp8_ok


# The config.json model_types whose loss Liger-Kernel fuses: MODEL_TYPE_TO_APPLY_LIGER_FN in
# src/liger_kernel/transformers/monkey_patch.py at v0.8.2 (commit 000be60), the text models of it. The Trainer's
# use_liger_kernel patches only these (transformers Trainer `_apply_liger_kernel_to_instance`); the search takes the
# fused loss on its own only for them (`fused_relief`).
LIGER_FAMILIES = frozenset({
    "gemma", "gemma2", "gemma3_text", "glm4", "gpt_oss", "granite", "llama", "ministral", "mistral", "mixtral",
    "nemotron", "olmo2", "olmo3", "phi3", "qwen2", "qwen3", "qwen3_moe", "smollm3", "exaone4",
})  # fmt: skip


def fused_relief(family: str | None, plan: Plan) -> Plan | None:
    """`plan` with the fused loss, where it has the standard one and Liger fuses its family's loss; None otherwise,
    and on the megatron stack (Plan.fp32_main_grads). The Trainer runs it through Liger, which then never holds the
    s × vocabulary logits, nor keeps a second set cached for padded batches; Megatron-LM's --cross-entropy-loss-fusion
    (module docstring) keeps the 16-bit logits and their fp32 softmax as its unfused loss does (memory.activations
    MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT): no relief there."""
    standard = not (plan.fused_loss or plan.chunked_loss or plan.compiled_loss or plan.fp32_main_grads)
    return plan_with(plan, fused_loss=True) if standard and family in LIGER_FAMILIES else None


LEVER_STACKS: tuple[LeverStack, ...] = ("deepspeed", "fsdp", "megatron")
# The request's name of each lever field (plan.compile sets `compiled`)
_REQUEST_NAMES = {"compiled": "compile"}
# The plan on which each stack runs the most levers: data-parallel over sharded states (torchtitan's FP8 all-gather),
# no pipeline and no recompute (Megatron-LM's --cpu-offloading)
_ROOMY = Plan(dp=2, zero_stage=3)


def set_levers(levers: Levers) -> list[tuple[str, Levers]]:
    """Each lever `levers` moves from its default, named as the request names it ("attention sdpa",
    "activation_offload"), with the levers that set it alone."""
    out: list[tuple[str, Levers]] = []
    for lever in fields(Levers):
        value = getattr(levers, lever.name)
        if value == getattr(DEFAULT_LEVERS, lever.name):
            continue
        name = _REQUEST_NAMES.get(lever.name, lever.name)
        out.append(
            (name if isinstance(value, bool) else f"{name} {value}", replace(DEFAULT_LEVERS, **{lever.name: value}))
        )
    return out


def levers_params(levers: Levers) -> dict[str, Any]:
    """The parameters of a `levers_unsupported` rejection: the levers set, and the stacks that run each alone
    ("attention sdpa: deepspeed/fsdp"; "none" where no stack runs it)."""
    named = set_levers(levers)
    runs = []
    for name, alone in named:
        stacks = [stack for stack in LEVER_STACKS if runs_levers(stack, alone.on(_ROOMY))]
        runs.append(f"{name}: {'/'.join(stacks) or 'none'}")
    return {"levers": [name for name, _ in named], "runs": runs}
