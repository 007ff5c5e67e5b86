"""A release that decodes without CUDA graphs (EngineRelease.eager_decode: TensorRT-LLM 0.17's PyTorch backend launched
without --extra_llm_api_options) pays the host's kernel launches on every layer of every step.

Published figures (sgl-project/sglang#1401, 2024-09-12, `sglang.bench_latency --batch-size 1 --input 128 --output 8`,
decode median latency with and without `--disable-cuda-graph`):
  DeepSeek-Coder-V2-Lite (MLA + MoE, 27 layers), triton backend, MLA on: 6.22 ms with CUDA graphs, "4x" slower without
  (the title figure: the no-graph line is cut off in the stored thread): 3 x 6.22 = 18.66 ms more a token.
  Llama 3 8B (32 layers), triton backend: 7.06 ms with, 9.28 ms without: 2.22 ms more a token.
The step model adds EAGER_MOE_LAYER_S / EAGER_DENSE_LAYER_S per layer, so the release's TPOT must exceed the current
release's by those differences. Tolerance 3 %: the estimate's own decode step is the same in both runs (the release's
other flag, no overlap scheduler, moves an arrival's wait, not a decode step), so only rounding in the simulated
median separates them. The first-contact rows that led here (source `dstack-r1-h200`, TensorRT-LLM 0.17 lines) are not
used: they run as this release from now on and count as fitted for it.
"""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.serving.engines import engine_release
from app.estimator.specs import Cluster, ModelSpec

H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=1)
TOLERANCE = 0.03


def _tpot_ms(model: ModelSpec, release: str | None, mla: int | None) -> float:
    cfg = ServingConfig(
        input_tokens=128, output_tokens=8, concurrency=1, engine="trt-llm", precision="bf16", weights="bf16",
        release=release, mla_cache_values=mla,
    )  # fmt: skip
    return estimate_serving(model, cfg, H100, tp=1).tpot_ms


@pytest.mark.parametrize(
    ("preset", "mla", "published_extra_ms"),
    [("deepseek-v2-lite", 512 + 64, 3 * 6.22), ("llama-3-8b", None, 9.28 - 7.06)],
    ids=["deepseek-v2-lite", "llama-3-8b"],
)
def test_eager_decode_adds_the_published_no_graph_time(preset: str, mla: int | None, published_extra_ms: float) -> None:
    model = get_preset(preset).model
    extra = _tpot_ms(model, "trt-llm-0.17-pytorch", mla) - _tpot_ms(model, None, mla)
    assert extra == pytest.approx(published_extra_ms, rel=TOLERANCE)


def test_eager_release_changes_the_step() -> None:
    """The release runs a step unlike the current engine, so the serving levers (which assume the current step) are
    refused for it, as for the other past releases that change the step."""
    assert engine_release("trt-llm-0.17-pytorch").changes_step
