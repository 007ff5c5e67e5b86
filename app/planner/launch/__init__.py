"""A plan as the named stack's complete launch configuration. PURE.

Every configuration carries the world size, the batch arithmetic over the ranks that really see different data (data
parallel only: tensor, pipeline and context ranks share a batch), recompute, and for LoRA/QLoRA the adapter settings.
Keys come from each tool's documentation, cited in each stack's module.

The package, by job: `common` (the job a launch block is written from, batch and schedule arithmetic, notes),
`trainer` (the Hugging Face Trainer's arguments, PEFT and bitsandbytes configs), `deepspeed` (the DeepSpeed runner and
ds_config.json, with the Trainer), `torchtitan` (the fsdp stack's train.toml), `megatron_lm` (Megatron-LM's
pretrain_gpt.py arguments), `megatron_bridge` (Megatron-Bridge's recipes and overrides for LoRA and SFT) and
`configs` (the entry point: `launch_configs`, `optimizer_name`). Serving engines' launches are in
app/planner/serving_launch.py.

tests/planner/test_launch_schemas.py checks every emitted Megatron flag, Megatron-Bridge override and torchtitan
key against the lists extracted from those files (tests/planner/data/, with their commits).
"""

from __future__ import annotations

from app.planner.launch.common import Job
from app.planner.launch.configs import launch_configs, optimizer_name
from app.planner.launch.deepspeed import DEEPSPEED_OPTIMIZER, consolidated_save_bytes, deepspeed_config
from app.planner.launch.megatron_bridge import bridge_overrides
from app.planner.launch.megatron_lm import MEGATRON_OPTIMIZER, megatron_args
from app.planner.launch.torchtitan import TORCHTITAN_OPTIMIZER, torchtitan_config
from app.planner.launch.trainer import TRAINER_OPTIM, peft_config

__all__ = [
    "DEEPSPEED_OPTIMIZER",
    "MEGATRON_OPTIMIZER",
    "TORCHTITAN_OPTIMIZER",
    "TRAINER_OPTIM",
    "Job",
    "bridge_overrides",
    "consolidated_save_bytes",
    "deepspeed_config",
    "launch_configs",
    "megatron_args",
    "optimizer_name",
    "peft_config",
    "torchtitan_config",
]
