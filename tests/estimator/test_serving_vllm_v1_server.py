"""vLLM's V1 engine before 0.10 spends 4 ms of a request's time to first token outside the model steps, not the 51 ms
of the current release (app/estimator/serving/engines.py ENGINE_RELEASES "vllm-0.8").

Published:

- FITTED: IOG-Foundation/llm-inference-benchmarks @4990a807 results/vllm_200prompts1qps_Meta-Llama-3-8B-Instruct_
  sharegpt_1xNVIDIA-H100-PCIe.json, vLLM 0.8.5, Llama 3 8B on one H100 PCIe, 200 ShareGPT prompts (mean 206 tokens,
  all but the last block in the prefix cache) at 1 request/s: median_ttft_ms 20.36. The 4 ms were read from this row
  and 14 like it (tests/estimator/serving_first_contact_iog.py); at first contact, with the current release's 51 ms,
  the estimate read +234 %. Tolerance 10 %: the 15 rows' residuals spread 3.3-6.1 ms around the 4, about ±8 % of a
  20 ms TTFT.
- Out of that fit: surajssd/llm-k8s @58b61c59 serving_*_qps_1.json, vLLM 0.8.3, Llama 3.3 70B at TP 8 on 8 x A100
  40GB, ShareGPT at 1 request/s: median_ttft_ms 56.37 (the estimate read +83 % at first contact). Tolerance 12 %,
  the issue's loaded-latency goal.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.specs import Cluster, EstimatorError
from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT, ServingFirstContact, predict

IOG_LLAMA3_8B_H100_1RPS_TTFT_MS = 20.36
LLMK8S_1RPS_TTFT_MS = 56.37
LLAMA3_8B = get_preset("llama-3-8b").model
H100_PCIE = Cluster(gpu=get_gpu("h100-80g-pcie"), gpus_per_node=8)


def _row(label: str) -> ServingFirstContact:
    return next(row for row in SERVING_FIRST_CONTACT if row.label == label)


def test_vllm_0_8_5_ttft_on_h100_pcie_fitted() -> None:
    row = _row("iog vllm-0.8.5 llama-3-8b h100 tp1 sharegpt 1 rps ttft")
    assert row.cfg.release == "vllm-0.8"
    assert predict(row) == pytest.approx(IOG_LLAMA3_8B_H100_1RPS_TTFT_MS, rel=0.10)


def test_vllm_0_8_3_ttft_on_a100_40g_tp8_out_of_fit() -> None:
    row = _row("llm-k8s vllm-0.8.3 llama-3.3-70b a100-40g tp8 sharegpt 1 rps ttft")
    assert predict(row) == pytest.approx(LLMK8S_1RPS_TTFT_MS, rel=0.12)


def test_the_release_moves_only_the_server_cost() -> None:
    """The release changes the time to first token by 51 - 4 ms and not the model's step."""
    cfg = ServingConfig(input_tokens=206, output_tokens=202, concurrency=1, engine="vllm")
    current = estimate_serving(LLAMA3_8B, cfg, H100_PCIE)
    past = estimate_serving(LLAMA3_8B, replace(cfg, release="vllm-0.8"), H100_PCIE)
    assert current.ttft_ms - past.ttft_ms == pytest.approx(51.0 - 4.0)
    assert past.tpot_ms == pytest.approx(current.tpot_ms, rel=1e-12)


def test_prefix_cache_runs_on_a_release_that_differs_only_in_its_server() -> None:
    """The prefix-cache lever is modelled on the current engines' steps: a release whose step is the current one
    takes it, one whose step differs (vllm-0.2: NCCL all-reduce) is still refused."""
    cfg = ServingConfig(input_tokens=206, output_tokens=202, concurrency=4, prefix_cache_hit_rate=0.9)
    assert estimate_serving(LLAMA3_8B, replace(cfg, release="vllm-0.8"), H100_PCIE).ttft_ms > 0
    with pytest.raises(EstimatorError):
        estimate_serving(LLAMA3_8B, replace(cfg, release="vllm-0.2"), H100_PCIE)
