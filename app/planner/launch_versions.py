"""The releases a training launch was written for: `launch.<stack>.versions`, {tool: "version (where it is
published)"}, the shape of a serving launch's `versions` (app/planner/serving_launch.py ENGINE_VERSIONS). PURE.

Each launch's flags, configuration keys and LoRA target names were read from these releases:

- DeepSpeed + Hugging Face Trainer + PEFT: ds_config keys and the Trainer's arguments (app/planner/launch/), the
  PEFT LoraConfig, and the Hugging Face module names LoRA targets. transformers is pinned to its last v4 release:
  v5 stores an MoE layer's experts as fused 3-D parameters (`experts.gate_up_proj`, `experts.down_proj`) where v4
  has one module per expert (Mixtral `block_sparse_moe.experts.<i>.w1/w2/w3`; Qwen2-MoE, Qwen3-MoE and
  DeepSeek-V2/V3 `mlp.experts.<i>.gate_proj/up_proj/down_proj`), and a v4 `target_modules` list matches no expert
  under v5, so PEFT would adapt attention only. tests/planner/data/transformers_lora_modules.txt lists every linear
  module of each family at the pinned release; tests/planner/test_launch_versions.py checks the targets against it.
- torchtitan: the job-config keys (tests/planner/data/torchtitan_job_config_keys.txt, tag v0.2.2).
- Megatron-LM: the command-line flags (tests/planner/data/megatron_arguments.txt, tag core_v0.15.3).
- Megatron-Bridge (LoRA, and full fine-tuning with an SFT recipe, on Megatron): run_recipe.py and its overrides
  (tests/planner/data/megatron_bridge_overrides.txt, tag v0.6.0).
"""

from __future__ import annotations

from app.estimator.vocabulary import LORA_TASKS, Task

# Release pages: the version each launch names and where it is published.
TRANSFORMERS = "4.57.6 (https://github.com/huggingface/transformers/releases/tag/v4.57.6, the last v4 release)"
# PEFT 0.18.1 declares `transformers` without an upper bound (its wheel's METADATA) and loads v4 models
PEFT = "0.18.1 (https://github.com/huggingface/peft/releases/tag/v0.18.1)"
# the release data/stacks.json cites for the Trainer path (deepspeed/runtime/pipe/engine.py at v0.19.5)
DEEPSPEED = "0.19.5 (https://github.com/deepspeedai/DeepSpeed/releases/tag/v0.19.5)"
TORCHTITAN = "0.2.2 (https://github.com/pytorch/torchtitan/releases/tag/v0.2.2)"
MEGATRON_LM = "core_v0.15.3 (https://github.com/NVIDIA/Megatron-LM/releases/tag/core_v0.15.3)"
MEGATRON_BRIDGE = "0.6.0 (https://github.com/NVIDIA-NeMo/Megatron-Bridge/releases/tag/v0.6.0)"
# the Trainer's use_liger_kernel (plan.loss fused): the release app/planner/levers.py LIGER_FAMILIES is read from; it
# requires transformers>=4.52.0 (its pyproject.toml), so it runs with the pinned 4.57.6
LIGER = "0.8.2 (https://github.com/linkedin/Liger-Kernel/releases/tag/v0.8.2)"


def training_versions(stack: str, task: Task, *, bridge: bool = False, liger: bool = False) -> dict[str, str]:
    """{tool: release} for the launch of `stack` running `task`; `bridge`: a Megatron full fine-tune that runs
    Megatron-Bridge's SFT recipe (app/planner/launch/megatron_bridge.py _bridge_sft); `liger`: the Trainer's fused
    loss."""
    if stack == "deepspeed":
        peft = {"peft": PEFT} if task in LORA_TASKS else {}
        return {
            "deepspeed": DEEPSPEED,
            "transformers": TRANSFORMERS,
            **peft,
            **({"liger-kernel": LIGER} if liger else {}),
        }
    if stack == "fsdp":
        return {"torchtitan": TORCHTITAN}
    # Megatron: LoRA runs through Megatron-Bridge (app/planner/launch/megatron_bridge.py _bridge)
    if task == "lora" or bridge:
        return {"megatron-bridge": MEGATRON_BRIDGE}
    return {"megatron-lm": MEGATRON_LM}
