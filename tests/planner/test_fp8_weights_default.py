"""An FP8 pretraining request that leaves plan.fp8_params unstated is held on the megatron stack with FP8 weights, as
Megatron-Bridge's FP8 recipes run it (fp8_param_gather True in all but the blockwise ones), and launched so
(--fp8-param-gather --grad-reduce-in-bf16): app/planner/stacks.py `_fp8_weighted`. Before, Llama 3.1 70B FP8 pretraining
on 40 H100 servers was sized with 16-bit weights and Transformer Engine's cached FP8 copies (68.4 GiB, high end
96.4 GiB over the 75.05 GiB limit: memory_may_exceed); held with FP8 weights it is 47.4 GiB, high end 70.1 GiB, on the
same 40 servers. A request that states fp8_params false keeps 16-bit weights, and a 16-bit request is untouched."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import Plan, Workload
from app.planner.levers import runs_levers
from app.planner.stacks import as_run, stack_for

BODY = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "pretrain",
    "tokens": 1e12,
    "seq_len": 8192,
    "precision": "fp8",
    "constraints": {"max_nodes": 64, "deadline_days": 60},
}
MEGATRON_PLAN = Plan(dp=16, tp=4, pp=5, zero_stage=1, sequence_parallel=True)


def _options(client: TestClient, body: dict) -> list[dict]:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    return list(response.json()["options"])


def _megatron(options: list[dict]) -> list[dict]:
    found = [option for option in options if option["stack"] == "megatron"]
    assert found, [option["stack"] for option in options]
    return found


def _fits_high(option: dict) -> bool:
    memory = option["memory"]
    return bool(memory["per_gpu_gib_range"][1] <= memory["limit_gib"])


def test_unstated_fp8_weights_hold_the_70b_at_its_high_end_and_launch_them(client: TestClient) -> None:
    held = _megatron(_options(client, BODY))
    stated = _megatron(_options(client, BODY | {"plan": {"fp8_params": False}}))
    for option in held:
        assert option["plan"]["fp8_params"] is True, option["plan"]
        assert option["quote"]["plan"]["fp8_params"] is True
        args = option["launch"]["megatron"]["args"]
        assert "--fp8-param-gather" in args and "--grad-reduce-in-bf16" in args
        assert "--use-distributed-optimizer" in args  # Megatron-LM asserts it beside --fp8-param-gather
        assert _fits_high(option), option["memory"]
        assert all(warning["code"] != "memory_may_exceed" for warning in option["warnings"])
    # 16-bit weights on the fewest servers cross the limit at the high end; FP8 weights hold it there on no more
    fewest_stated = min(stated, key=lambda option: option["nodes"])
    fewest_held = min(held, key=lambda option: option["nodes"])
    assert not _fits_high(fewest_stated)
    assert fewest_held["nodes"] <= fewest_stated["nodes"]
    total = fewest_held["memory"]["per_gpu_gib"]["total"]
    assert total < fewest_stated["memory"]["per_gpu_gib"]["total"]


def test_a_stated_false_keeps_16_bit_weights(client: TestClient) -> None:
    for option in _options(client, BODY | {"plan": {"fp8_params": False}}):
        assert option["plan"]["fp8_params"] is False
        if option["stack"] == "megatron":
            assert "--fp8-param-gather" not in option["launch"]["megatron"]["args"]


def test_a_16_bit_request_keeps_16_bit_weights(client: TestClient) -> None:
    options = _options(client, BODY | {"precision": "bf16"})
    assert options
    assert all(option["plan"]["fp8_params"] is False for option in options)


def test_the_account_moves_only_an_fp8_megatron_pretraining_plan_over_the_distributed_optimizer() -> None:
    model = get_preset("llama-3.1-70b").model
    fp8 = Workload(task="pretrain", seq_len=8192, global_batch=512, precision="fp8")
    held = as_run(fp8, MEGATRON_PLAN, model, fp8_weights=True)
    assert [plan.fp8_params for plan in held] == [True]
    assert stack_for(fp8, held[0], model) == "megatron"
    assert as_run(fp8, MEGATRON_PLAN, model) == tuple(replace(plan, fp8_params=False) for plan in held)
    for plan in (Plan(dp=1, tp=4, pp=5, zero_stage=1), Plan(dp=16, tp=4, pp=5, zero_stage=0)):
        assert not any(p.fp8_params for p in as_run(fp8, plan, model, fp8_weights=True)), plan
    bf16 = Workload(task="pretrain", seq_len=8192, global_batch=512)
    assert as_run(bf16, MEGATRON_PLAN, model, fp8_weights=True) == as_run(bf16, MEGATRON_PLAN, model)
    finetune = Workload(task="full_finetune", seq_len=8192, global_batch=512, precision="fp8")
    assert as_run(finetune, MEGATRON_PLAN, model, fp8_weights=True) == as_run(finetune, MEGATRON_PLAN, model)


def test_megatron_runs_fp8_weights_only_beside_the_distributed_optimizer() -> None:
    """Megatron-LM's validate_args asserts --fp8-param-gather only with the distributed optimizer, which its launch
    sets for data parallel over ZeRO 1 or more; before, the megatron stack took an FP8-weights plan without it."""
    assert runs_levers("megatron", Plan(dp=8, zero_stage=1, fp8_params=True))
    assert not runs_levers("megatron", Plan(dp=8, zero_stage=0, fp8_params=True))
    assert not runs_levers("megatron", Plan(dp=1, tp=8, zero_stage=1, fp8_params=True))


def test_estimate_holds_an_unstated_fp8_plan_as_recommend_does(client: TestClient) -> None:
    """Review R10-3: /recommend put Llama 3.1 70B FP8 pre-training first on 16 H100 servers at TP 2 x PP 4 x DP 16,
    ZeRO-1, with FP8 weights (52.0 GiB); the same plan re-checked on /estimate without fp8_params read 16-bit weights
    and Transformer Engine's FP8 copies, 92.8 GiB, "does not fit". A stated false still keeps 16-bit weights."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "pretrain",
        "tokens": 1e12,
        "precision": "fp8",
        "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 16},
        "plan": {"tp": 2, "pp": 4, "dp": 16, "zero_stage": 1},
    }
    unstated = client.post("/estimate", json=body)
    stated = client.post("/estimate", json=body | {"plan": body["plan"] | {"fp8_params": False}})
    assert unstated.status_code == 200 and stated.status_code == 200, (unstated.text, stated.text)
    held, sixteen = unstated.json(), stated.json()
    assert held["plan"]["fp8_params"] is True and sixteen["plan"]["fp8_params"] is False
    assert held["memory"]["fits"] and not sixteen["memory"]["fits"]
    assert held["memory"]["per_gpu_gib"]["total"] < sixteen["memory"]["per_gpu_gib"]["total"] - 30
