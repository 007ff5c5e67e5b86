"""Continued pretraining of a released model loads its weights in every stack's launch, at continued pretraining's
schedule (launch/common.py SCHEDULES: Ibrahim et al. 2024 arXiv:2403.08763, Llama 2 Table 1) with the data-mix note;
`pretrain` of a released preset says it starts from random weights (issue: Llama-3.1-70B continued for ¥400,000 from
noise). Driven through POST /recommend and POST /estimate with the issue's request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset, list_presets
from app.estimator.specs import Plan, Workload
from app.planner.launch import launch_configs
from app.text.messages import WARNINGS, launch as launch_text
from tests.factories import recommend

ISSUE = {"model": {"preset": "llama-3.1-70b"}, "tokens": 5e10, "seq_len": 8192, "constraints": {"deadline_days": 30}}
REPO = "meta-llama/Llama-3.1-70B"
PRESETS_JSON = Path(__file__).resolve().parents[2] / "app" / "estimator" / "data" / "presets.json"


def _recommend(client: TestClient, task: str) -> dict:
    return recommend(client, ISSUE, task=task)


def _loads_released_weights(stack: str, launch: dict) -> bool:
    """Whether the stack's launch starts from the released weights rather than random ones."""
    if stack == "megatron":
        args = launch["args"]
        return "--finetune" in args and any(a.startswith("--load /checkpoints/") and a.endswith("-mcore") for a in args)
    if stack == "fsdp":
        checkpoint = launch["torchtitan"]["checkpoint"]
        return checkpoint.get("initial_load_in_hf") is True and checkpoint.get("initial_load_model_only") is True
    assert stack == "deepspeed"
    model = launch["model"]
    return model["pretrained_model_name_or_path"] == REPO and model["init"] == "from_pretrained"


def _peak_lr(stack: str, launch: dict) -> float:
    if stack == "megatron":
        return float(next(a.split()[1] for a in launch["args"] if a.startswith("--lr ")))
    if stack == "fsdp":
        return launch["torchtitan"]["optimizer"]["lr"]
    return launch["trainer"]["learning_rate"]


def test_continued_pretraining_loads_the_released_weights_in_every_option(client: TestClient) -> None:
    result = _recommend(client, "continued_pretrain")
    shown = result["options"] + result["near_misses"]
    assert result["options"]
    stacks = set()
    for option in shown:
        stack = option["stack"]
        launch = option["launch"][stack]
        stacks.add(stack)
        assert _loads_released_weights(stack, launch), (stack, launch)
        assert _peak_lr(stack, launch) == 1.5e-4  # Llama 2 34B/70B pretraining peak, re-warmed (SCHEDULES)
        assert any("replay" in note for note in launch["notes"]), launch["notes"]
        codes = {w["code"] for w in option["warnings"]}
        assert "starts_from_scratch" not in codes
    assert len(stacks) >= 2


@pytest.mark.parametrize("stack", ["megatron", "fsdp", "deepspeed"])
def test_every_stacks_launch_loads_what_the_task_says(stack: str) -> None:
    """The issue's Megatron launch of this job (TP8 × PP4 on 4 H100 servers): continued pretraining loads the
    converted release with --finetune and re-warms over 1 % of the run; pretraining loads only its own save
    directory, so a first launch starts from random weights. The same for torchtitan and the Trainer."""
    model = get_preset("llama-3.1-70b").model
    plan = Plan(dp=1, tp=8, pp=4) if stack == "megatron" else Plan(dp=32, zero_stage=3, recompute="full")
    for task, loads in (("continued_pretrain", True), ("pretrain", False)):
        workload = Workload(task=task, seq_len=8192, tokens=5e10)
        launch = launch_configs(stack, model, workload, plan, 4, 8, 256)[stack]  # type: ignore[arg-type]
        assert _loads_released_weights(stack, launch) is loads, (stack, task)
        if stack == "megatron" and loads:
            assert "--lr-warmup-fraction 0.01" in launch["args"] and "--lr 0.00015" in launch["args"]


def test_continued_pretraining_is_sized_at_pretrainings_batch(client: TestClient) -> None:
    """The same tokens, model and batch as pretraining: only the start differs, so the plans and times agree."""
    cpt, scratch = _recommend(client, "continued_pretrain"), _recommend(client, "pretrain")
    assert cpt["options"][0]["plan"] == scratch["options"][0]["plan"]
    # 5e10 tokens on 70B: DeepSeek LLM's compute-optimal step (shapes.scaled_pretrain_batch), 5.8M tokens, 512 x 8,192
    assert cpt["options"][0]["plan"]["global_batch"] == 512
    assert cpt["options"][0]["performance"]["time_to_train_hours"] == pytest.approx(
        scratch["options"][0]["performance"]["time_to_train_hours"]
    )


def test_pretraining_a_released_preset_warns_it_starts_from_scratch(client: TestClient) -> None:
    result = _recommend(client, "pretrain")
    for option in result["options"]:
        warning = next(w for w in option["warnings"] if w["code"] == "starts_from_scratch")
        assert REPO in warning["message"] and "continued_pretrain" in warning["message"]
        stack = option["stack"]
        assert not _loads_released_weights(stack, option["launch"][stack])
    estimate = client.post(
        "/estimate",
        json={**{k: v for k, v in ISSUE.items() if k != "constraints"}, "task": "pretrain",
              "hardware": {"gpu": "h100-80g-sxm", "nodes": 4}},
    )  # fmt: skip
    assert estimate.status_code == 200, estimate.text
    assert "starts_from_scratch" in {w["code"] for w in estimate.json()["warnings"]}
    assert {"en", "zh"} <= set(WARNINGS) and all("starts_from_scratch" in WARNINGS[lang] for lang in ("en", "zh"))
    assert "continued_pretrain" in WARNINGS["zh"]["starts_from_scratch"]


def test_pretraining_an_architecture_without_released_weights_does_not_warn(client: TestClient) -> None:
    body = {"model": {"params": 1.5e9}, "task": "pretrain", "tokens": 1e10}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    for option in response.json()["options"]:
        assert "starts_from_scratch" not in {w["code"] for w in option["warnings"]}


def test_the_task_is_offered_and_validated(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "continued_pretrain" in str(schema)
    bad = client.post("/recommend", json={**ISSUE, "task": "continue"})
    assert bad.status_code == 422 and "task" in bad.text


# The published pre-training peaks (app/estimator/data/presets.json pretrain_peak_lr, each with its source): Llama 3.1
# 405B 8e-5 and 70B 1.5e-4 (The Llama 3 Herd of Models, arXiv:2407.21783, Table 3); Mistral 7B publishes none, so it
# re-warms to the schedule's 1.5e-4 (Llama 2 Table 1's 34B/70B peak). Exact: the launch states these numbers.
@pytest.mark.parametrize(
    ("preset", "peak", "capped"),
    [("llama-3.1-405b", 8e-5, True), ("llama-3.1-70b", 1.5e-4, False), ("mistral-7b", 1.5e-4, False)],
)
@pytest.mark.parametrize("stack", ["megatron", "fsdp", "deepspeed"])
def test_continued_pretraining_never_rewarms_past_the_models_published_peak(
    stack: str, preset: str, peak: float, capped: bool
) -> None:
    """The expert review's defect: every model re-warmed to 1.5e-4, ~1.9x Llama 3.1 405B's own peak of 8e-5."""
    model = get_preset(preset).model
    plan = Plan(dp=1, tp=8, pp=4) if stack == "megatron" else Plan(dp=32, zero_stage=3, recompute="full")
    workload = Workload(task="continued_pretrain", seq_len=8192, tokens=5e10)
    launch = launch_configs(stack, model, workload, plan, 4, 8, 256)[stack]  # type: ignore[arg-type]
    assert _peak_lr(stack, launch) == peak
    if stack == "megatron":
        assert f"--min-lr {peak / 10:g}" in launch["args"]  # cosine to a tenth of the peak (MIN_LR_RATIO)
    note = next(note for note in launch["notes"] if "replay" in note)
    assert f"re-warms to {peak:g}" in note
    assert ("pre-trained with" in note) is capped and (model.hf_repo in note) is capped


def test_the_capped_rewarm_is_worded_in_both_languages() -> None:
    params = {"lr": 8e-5, "default": 1.5e-4, "model": "meta-llama/Llama-3.1-405B"}
    zh = launch_text("continued_pretrain_capped", params, "zh")
    assert "8e-05" in zh and "meta-llama/Llama-3.1-405B" in zh and "预训练峰值学习率" in zh
    assert "8e-05" in launch_text("continued_pretrain_capped", params, "en")
    assert "1.5e-04" not in zh and "0.00015" in zh  # the default peak, as the launch's {:g} writes it


def test_every_published_peak_names_its_source() -> None:
    peaks = {p.id: p.model.pretrain_peak_lr for p in list_presets() if p.model.pretrain_peak_lr is not None}
    assert peaks["llama-3.1-405b"] == 8e-5 and peaks["llama-2-70b"] == 1.5e-4 and peaks["llama-2-7b"] == 3e-4
    raw = {entry["id"]: entry for entry in json.loads(PRESETS_JSON.read_text(encoding="utf-8"))["presets"]}
    for preset_id in peaks:
        assert raw[preset_id].get("pretrain_peak_lr_source"), preset_id


# Pretraining from scratch (review R5-6: every model launched at Llama 2 7B's 3e-4): the model's published peak
# (presets.json pretrain_peak_lr: Llama 3.1 405B 8e-5 and 70B 1.5e-4, arXiv:2407.21783 Table 3; GPT-NeoX-20B 9.7e-5,
# Black et al. 2022), else the peak published for its size (PRETRAIN_PEAK_BY_SIZE, Llama 2 Table 1: Mistral 7B, no
# published peak, 3e-4; Qwen2.5 72B, none published, 1.5e-4). Exact: the launch states these numbers.
@pytest.mark.parametrize(
    ("preset", "peak"),
    [
        ("llama-3.1-405b", 8e-5),
        ("llama-3.1-70b", 1.5e-4),
        ("gpt-neox-20b", 9.7e-5),
        ("mistral-7b", 3e-4),
        ("qwen2.5-72b", 1.5e-4),
    ],
)
@pytest.mark.parametrize("stack", ["megatron", "fsdp"])
def test_pretraining_starts_at_the_peak_published_for_the_model_or_its_size(
    stack: str, preset: str, peak: float
) -> None:
    model = get_preset(preset).model
    plan = Plan(dp=1, tp=8, pp=4) if stack == "megatron" else Plan(dp=32, zero_stage=3, recompute="full")
    workload = Workload(task="pretrain", seq_len=8192, tokens=1e12)
    launch = launch_configs(stack, model, workload, plan, 4, 8, 256)[stack]  # type: ignore[arg-type]
    assert _peak_lr(stack, launch) == peak
