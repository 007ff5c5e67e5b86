"""An fp8 request is priced at fp8 speed only where its launch runs fp8 (data/stacks.json `fp8`,
stacks.as_launched): torchtitan's float8 converter and Megatron's Transformer Engine for full training on a GPU
with an fp8 peak. DeepSpeed under the Trainer, torchtune's LoRA and the Megatron-Bridge LoRA launch run bf16, and an
A100 has no fp8: there the option is sized, priced and launched in bf16 and says why.

Before: an H100 fp8 full fine-tune could rank a DeepSpeed option priced at fp8 speed whose Trainer launch ran bf16
(about 1.3x optimistic), and an H100 fp8 LoRA job was priced at fp8 speed on launches that all run bf16."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.stacks import as_launched, runs
from tests import factories
from tests.factories import recommend as _recommend


def test_only_stacks_whose_launch_runs_fp8_take_an_fp8_plan() -> None:
    full = Workload(task="full_finetune", precision="fp8")
    lora = Workload(task="lora", precision="fp8", lora=LoraSpec())
    plan = Plan(dp=8, zero_stage=3)
    assert not runs("deepspeed", full, plan)
    assert runs("fsdp", full, plan)
    assert runs("megatron", full, Plan(dp=4, tp=2, zero_stage=1))
    assert not any(runs(stack, lora, plan) for stack in ("deepspeed", "fsdp", "megatron"))


def test_fp8_turns_into_16_bits_where_no_launch_runs_it() -> None:
    h100, a100 = get_gpu("h100-80g-sxm"), get_gpu("a100-80g-sxm")
    llama, gemma2 = get_preset("llama-3.1-8b").model, get_preset("gemma-2-9b").model
    full = Workload(task="full_finetune", precision="fp8")
    assert as_launched(full, h100, llama) is full
    assert as_launched(full, a100, llama).precision == "bf16"
    lora = Workload(task="lora", precision="fp8", lora=LoraSpec())
    assert as_launched(lora, h100, llama).precision == "bf16"
    bf16 = factories.workload("lora")
    assert as_launched(bf16, a100, llama) is bf16
    # only the DeepSpeed launch builds Gemma 2 for full training, and it runs bf16
    assert as_launched(full, h100, gemma2).precision == "bf16"


def test_gemma_2_fp8_full_finetune_on_h100_runs_bf16_rather_than_not_fitting(client: TestClient) -> None:
    # it was rejected on 128 H100 for GPU memory: the search kept fp8 and no stack that builds Gemma 2 runs it
    body = {"model": {"preset": "gemma-2-9b"}, "task": "full_finetune", "tokens": 1e8, "seq_len": 8192}
    constraints = {"gpu_types": ["h100-80g-sxm"]}
    result = _recommend(client, **body, precision="fp8", constraints=constraints)
    assert result["options"], result["rejected"]
    assert all("fp8_not_launched" in {w["code"] for w in o["warnings"]} for o in result["options"])
    hardware = {"sku": "h100-80g-sxm-8x", "nodes": 1}
    estimate = client.post("/estimate", json={**body, "precision": "fp8", "hardware": hardware})
    assert estimate.status_code == 200, estimate.text
    assert "fp8_not_launched" in {w["code"] for w in estimate.json()["warnings"]}


def test_h100_fp8_full_finetune_options_launch_fp8(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9, "precision": "fp8"}
    result = _recommend(client, **body, constraints={"gpu_types": ["h100-80g-sxm"], "limit": 5})
    assert result["options"]
    for option in result["options"]:
        assert option["stack"] in ("fsdp", "megatron"), option["stack"]
        launch = option["launch"][option["stack"]]
        # Megatron-Bridge's SFT recipe (launch/megatron_bridge.py BRIDGE_FP8)
        if option["stack"] == "megatron" and "recipe" in launch:
            assert "mixed_precision=bf16_with_fp8_subchannel_scaling_mixed" in launch["overrides"]
        elif option["stack"] == "megatron":
            assert any(arg.startswith("--fp8-format") for arg in launch["args"])
        else:
            assert "quantize.linear.float8" in launch["torchtitan"]["model"]["converters"]


def test_h100_fp8_lora_is_priced_and_launched_in_bf16_and_says_so(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}
    constraints = {"gpu_types": ["h100-80g-sxm"], "objective": "cheapest", "limit": 1}
    fp8 = _recommend(client, **body, precision="fp8", constraints=constraints)["options"][0]
    bf16 = _recommend(client, **body, constraints=constraints)["options"][0]
    assert fp8["performance"]["time_to_train_hours"] == bf16["performance"]["time_to_train_hours"]
    warning = next(w for w in fp8["warnings"] if w["code"] == "fp8_not_launched")
    assert warning["params"]["runs_as"] == "bf16"
    customer = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}
    quote = client.post("/quotes", json={**fp8["quote"], "customer": customer})
    assert quote.status_code == 201, quote.text
    assert quote.json()["total"] == fp8["cost"]["job_total"]


def test_a100_fp8_runs_as_bf16_with_the_reason(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e8, "precision": "fp8"}
    result = _recommend(client, **body, constraints={"gpu_types": ["a100-80g-sxm"], "limit": 3})
    assert result["options"]
    for option in result["options"]:
        assert "precision_unsupported" in {w["code"] for w in option["warnings"]}
