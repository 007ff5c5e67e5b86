"""FP8 asked, a SKU whose GPU has no FP8 kernels rejected: its bf16 deployment shown as a priced near miss where it
meets the targets for less than every FP8 option (app/planner/serving_sixteen_bit.py)."""

from __future__ import annotations

from dataclasses import replace

from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.planner.offers import Constraints, Offer
from app.planner.serving import search_serving
from app.planner.serving_launch import Served
from app.planner.serving_sixteen_bit import MISS_CODE, served_as, sixteen_bit, sixteen_bit_misses
from app.text import messages
from tests import factories

LLAMA3_8B = get_preset("llama-3.1-8b").model
H100_NODE = factories.offer(
    "h100-node", "h100-80g-sxm", monthly="400000", unit="node", gpus_per_node=8, regions=("cn-east",)
)
A100_CARD = factories.offer("a100-card", "a100-80g-sxm", monthly="9000", unit="card", regions=("cn-east",))
# TensorRT-LLM: no FP8 weight-only path on Ampere, so its near miss is full bf16 (vLLM's and SGLang's keep the FP8
# weights: tests/api/test_serving_fp8_weight_only.py)
FP8 = ServingConfig(
    input_tokens=512, output_tokens=128, requests_per_s=1.0, slo_tpot_ms=50, engine="trt-llm", precision="fp8"
)


def _misses(cfg: ServingConfig, offers: list[Offer]) -> tuple[list, list]:
    search = search_serving(LLAMA3_8B, cfg, offers, Constraints(), peak_factor=1.5)
    found = sixteen_bit_misses(LLAMA3_8B, cfg, offers, Constraints(), search, peak_factor=1.5, served=Served())
    return search.options, found


def test_a_cheaper_bf16_deployment_on_a_gpu_without_fp8_kernels_is_a_priced_near_miss() -> None:
    """TensorRT-LLM FP8 on an A100 is refused for kernels (kernel_support `fp8_math`); one A100 card in bf16 carries
    the load within the SLO for 9,000 a month against the 400,000 H100 server the FP8 option rents. Before, the
    answer showed the H100 server and only a refusal for the A100."""
    options, found = _misses(FP8, [H100_NODE, A100_CARD])
    assert [o.offer.sku_id for o in options] == ["h100-node"]
    (miss,) = found
    assert miss.offer.sku_id == "a100-card" and miss.misses[0] == (
        MISS_CODE,
        {"gpu": A100_CARD.gpu.name, "engine": "trt-llm"},
    )
    assert miss.cost.compared_monthly < options[0].cost.compared_monthly and miss.rank is None
    assert miss.estimate.meets_slo is not False and miss.peak.meets_slo
    assert "fp8" not in miss.launch["command"]
    english, chinese = messages.misses(miss.misses), messages.misses(miss.misses, "zh")
    assert f"in bf16, not the FP8 asked: {A100_CARD.gpu.name} has no FP8 kernels under trt-llm" in english
    assert "以 bf16 而非所要求的 FP8 运行" in chinese


def test_no_near_miss_where_the_bf16_deployment_costs_more_or_nothing_was_refused_for_fp8() -> None:
    dear_a100 = factories.offer("a100-card", "a100-80g-sxm", monthly="900000", unit="card", regions=("cn-east",))
    assert _misses(FP8, [H100_NODE, dear_a100])[1] == []
    assert (
        _misses(ServingConfig(input_tokens=512, output_tokens=128, requests_per_s=1.0), [H100_NODE, A100_CARD])[1] == []
    )


def test_the_near_miss_answers_the_request_in_bf16() -> None:
    """Its quote states the bf16 it was sized on, not the FP8 asked (a shipped FP8 checkpoint is served converted)."""
    cfg = ServingConfig(input_tokens=512, output_tokens=128, engine="trt-llm", weights="fp8", kv_cache_precision="fp8")
    alt = sixteen_bit(cfg)
    assert (alt.precision, alt.weight_format, alt.kv_format, alt.group_size) == ("bf16", "bf16", "bf16", None)
    _, found = _misses(FP8, [H100_NODE, A100_CARD])
    body = {"precision": "fp8", "kv_cache_precision": "fp8", "weights": "fp8", "task": "serving"}
    _, stated = served_as(found[0], cfg, body)
    assert stated == {"precision": "bf16", "weights": "bf16", "task": "serving"}


def test_under_sglang_the_near_miss_keeps_the_fp8_weights_with_bf16_math() -> None:
    """SGLang runs FP8 weights on an A100 weight-only (can_auto_enable_marlin_fp8: SM80-88), so its near miss is FP8
    weights with bf16 math, tried before full bf16 and kept on a tie; it answers the request with those formats."""
    sglang = replace(FP8, engine="sglang")
    _, (miss,) = _misses(sglang, [H100_NODE, A100_CARD])
    assert miss.offer.sku_id == "a100-card" and miss.misses[0][0] == "fp8_weights_bf16_math"
    assert "--quantization fp8" in miss.launch["command"]
    cfg, stated = served_as(miss, sglang, {"precision": "fp8", "task": "serving"})
    assert (cfg.precision, cfg.weight_format) == ("bf16", "fp8")
    assert stated == {"precision": "bf16", "weights": "fp8", "task": "serving"}
