"""Which near miss a SKU shows when no deployment meets the SLO, and how its reason and explanation read (review R2:
Llama 3.1 70B on A100 80G servers, 20 requests/s, p99 targets)."""

from __future__ import annotations

from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.planner.offers import Constraints
from app.planner.serving import search_serving
from app.text.messages import misses as miss_text
from app.text.words import latency
from tests.planner.test_serving_search import offer

LLAMA3_70B = get_preset("llama-3.1-70b").model
A100_NODE = offer("a100-node", "a100-80g-sxm", "30000")
CHAT = ServingConfig(
    input_tokens=2000, output_tokens=400, input_tokens_p95=6000, output_tokens_p95=1000, requests_per_s=20,
    prefix_cache_hit_rate=0.3, slo_ttft_ms=1500, slo_tpot_ms=40, slo_percentile="p99",
)  # fmt: skip


def test_the_near_miss_is_the_shape_one_request_meets_at_the_most_servers_allowed() -> None:
    """TP 2 misses even one request at a time (TPOT 48 ms > 40); TP 8 meets it, and misses the p99 TPOT at the peak
    (and the p99 TTFT: a request waits for one of the sequence slots its launch admits): the near miss is TP 8 on all
    16 servers max_nodes allows (its p99 TPOT nearest the target), not TP 2, and not TP 8 on the 12 servers the
    closed forms started from."""
    found = search_serving(LLAMA3_70B, CHAT, [A100_NODE], Constraints(max_nodes=16))
    assert not found.options
    (miss,) = found.near_misses
    assert (miss.tp, miss.pp, miss.config.nodes) == (8, 1, 16)
    ((code, params),) = miss.misses
    assert code == "slo_peak" and params["percentile"] == "p99" and not params["saturated"]
    assert params["tpot_ms"] > 40 and params["ttft_ms"] > 1500  # both bind
    text = miss_text(miss.misses)
    assert text is not None and "TPOT ≤ 40 ms" in text and "TTFT ≤ 1500 ms" in text


def test_latencies_read_in_their_unit() -> None:
    assert [latency(ms, "en") for ms in (42.72, 1311.2, 12_400, 2_123_219, float("inf"))] == [
        "42.7 ms", "1,311 ms", "12 s", "35 min", "∞",
    ]  # fmt: skip
    assert latency(2_123_219, "zh") == "35 分钟"


def test_a_70b_model_is_not_called_71b() -> None:
    """Review R16: the explanation called Llama 3.1 70B (70.55e9 parameters) "71B"."""
    from app.estimator.params import count_params
    from app.planner.explain import size_words

    assert size_words(count_params(LLAMA3_70B).total) == "70.6B"
    assert size_words(8.03e9) == "8B" and size_words(405.85e9) == "406B"
