"""POST /estimate with a stated plan passes the gate /recommend applies: memory as the stack that will run the
plan holds it (app/planner/search.py `as_held`). Megatron-LM's fp32 main-gradient buffer is 4 bytes per parameter
beside 2-byte bf16 weights (Megatron-LM docs/user-guide/features/dist_optimizer.md: bf16 parameters, fp32
gradients); the response rounds to 0.01 GiB, hence the tolerance."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def _estimate(client: TestClient, **body) -> dict:
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_plan_only_megatron_runs_is_counted_with_its_fp32_gradient_buffer(client: TestClient) -> None:
    # ZeRO-1 with tensor parallel: Megatron-LM's distributed optimizer, no other stack runs it
    result = _estimate(
        client,
        model={"preset": "llama-2-7b"},
        task="full_finetune",
        hardware={"gpu": "h100-80g-sxm", "gpus_per_node": 8},
        plan={"dp": 4, "tp": 2, "zero_stage": 1, "recompute": "full"},
    )
    memory = result["memory"]["per_gpu_gib"]
    assert memory["gradients"] == pytest.approx(2 * memory["weights"], abs=0.02)
    assert any("Megatron-LM" in line and "18 B/param" in line for line in result["assumptions"])


def test_a_tp_pp_plan_without_fsdp_is_not_counted_as_torchtitan(client: TestClient) -> None:
    """Llama 3.1 8B, tp 2 × pp 2 on four A100 40G PCIe: 40.6 GiB with Megatron's buffer, over the 37.05 GiB
    limit. torchtitan would hold it at 16 B/param, but without FSDP (dp 1, cp 1) it trains tp/pp in fp32
    (torchtitan/distributed/utils.py maybe_enable_amp): no stack runs the lean account, so the plan does not fit."""
    result = _estimate(
        client,
        model={"preset": "llama-3.1-8b"},
        task="full_finetune",
        hardware={"gpu": "a100-40g-pcie", "gpus_per_node": 4},
        plan={"tp": 2, "pp": 2, "global_batch": 128},
    )
    memory = result["memory"]
    assert memory["fits"] is False
    assert memory["per_gpu_gib"]["gradients"] == pytest.approx(2 * memory["per_gpu_gib"]["weights"], abs=0.02)
