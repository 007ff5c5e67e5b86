"""A training launch's notes are codes with parameters in the launch catalog (app/text/launch_words.py LAUNCH): a
block's `notes` are the English of its `texts`, every note reads in Chinese with no English sentence left (tools, their
functions and flags, paths and model ids set aside), and the wizard's launch download words them in the page's
language."""

from __future__ import annotations

from typing import Any

import pytest

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, MemoryBreakdown, Plan, Workload
from app.planner.launch import launch_configs
from app.text import messages
from tests.web.test_serve_chinese import ENGLISH_RUN, IDENTIFIERS, NAMES

GIB = 2**30
# host RAM the plan leaves free on node 0: 50 GiB, too little to gather a 70B model for a save
TIGHT = MemoryBreakdown(
    total=GIB, weights=GIB, gradients=0, optimizer=0, activations=0, kv_cache=0, other=0, capacity=80 * GIB,
    host_ram=100 * GIB, host_ram_limit=150 * GIB,
)  # fmt: skip
# (preset, task, stack, tokens, optimizer, servers, memory): each reaches the note named first
CASES: dict[str, tuple[str, str, str, float | None, str, int, MemoryBreakdown | None]] = {
    "hostfile": ("llama-2-7b", "lora", "deepspeed", 1e9, "adamw", 2, None),
    "zero3_no_gather": ("llama-2-70b", "lora", "deepspeed", 1e9, "adamw", 1, TIGHT),
    "trainer_sgd": ("llama-2-7b", "lora", "deepspeed", 1e9, "sgd", 1, None),
    "torchtitan_download": ("llama-2-7b", "full_finetune", "fsdp", 1e9, "adamw", 1, None),
    "bridge_data": ("llama-2-7b", "lora", "megatron", 1e9, "adamw", 1, None),
    "bridge_no_tokens": ("llama-2-7b", "lora", "megatron", None, "adamw", 1, None),
    "megatron_convert": ("llama-2-7b", "full_finetune", "megatron", 1e9, "adamw", 1, None),
    "megatron_no_tokens": ("llama-2-7b", "full_finetune", "megatron", None, "adamw", 1, None),
    "continued_pretrain": ("llama-2-7b", "continued_pretrain", "deepspeed", 1e9, "adamw", 1, None),
    "continued_pretrain_capped": ("llama-3.1-405b", "continued_pretrain", "deepspeed", 1e9, "adamw", 1, None),
}
# Tools and the functions, scripts and commands the notes name: kept as their projects spell them.
TOOLS = (
    "Megatron-LM",
    "Megatron-Bridge",
    "DeepSpeed save_checkpoint",
    "python zero_to_fp32.py",
    "transformers get_optimizer_cls_and_kwargs",
    *NAMES,
)
# parameters for the notes no preset reaches (a Hub model's YaRN or RoPE scaling, an MoE block ZeRO-3 must gather)
EXAMPLE = {"env": "DEEPSPEED_MOE_LEAF", "stated": "beta_fast 16", "kind": "yarn", "factor": 4.0}


def _launch(case: str) -> dict[str, Any]:
    preset, task, stack, tokens, optimizer, nodes, memory = CASES[case]
    lora = {"lora": LoraSpec()} if task == "lora" else {}
    workload = Workload(task=task, seq_len=4096, tokens=tokens, optimizer=optimizer, **lora)  # type: ignore[arg-type]
    plan = Plan(dp=8 * nodes, zero_stage=3)
    return launch_configs(stack, get_preset(preset).model, workload, plan, nodes, 8, 512, memory=memory)[stack]  # type: ignore[arg-type]


def english_left(chinese: str) -> list[str]:
    for name in TOOLS:
        chinese = chinese.replace(name, " ")
    return ENGLISH_RUN.findall(IDENTIFIERS.sub(" ", chinese))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_training_launchs_notes_are_the_english_of_their_codes(case: str) -> None:
    block = _launch(case)
    texts = block["texts"]["notes"]
    assert case in [text["code"] for text in texts]
    assert block["notes"] == [messages.launch(text["code"], text["params"]) for text in texts]
    for text in texts:
        chinese = messages.launch(text["code"], text["params"], "zh")
        assert not english_left(chinese), (text["code"], chinese)


@pytest.mark.parametrize("code", ["moe_leaf", "megatron_yarn", "megatron_rope"])
def test_the_notes_no_preset_reaches_read_in_chinese_too(code: str) -> None:
    assert messages.launch(code, EXAMPLE) != messages.launch(code, EXAMPLE, "zh")
    assert not english_left(messages.launch(code, EXAMPLE, "zh"))
