"""A `pp_speculative` near miss (a SKU only a pipelined replica serves, under an engine that runs no speculation
across pipeline stages) is a deployment without speculation: its quote body states the request without it, so the
quote's plan check re-sizes what the launch runs (review finding R3: the body kept `speculative` and POST /quotes
answered 422 "does not start speculative decoding (mtp) in a replica split into 2 pipeline stages")."""

from __future__ import annotations

from app.planner.mappers import model_out
from app.planner.offers import Constraints
from app.planner.schemas import RecommendIn
from app.planner.service import resolve_model
from app.planner.serving_service import recommendation
from tests.planner.test_serving_multinode import H100_TCP

DEEPSEEK_MTP = {
    "model": {"preset": "deepseek-v3"},
    "task": "serving",
    "serving": {"engine": "sglang", "input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10,
                "speculative": {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.85}},
}  # fmt: skip


def test_the_near_miss_without_speculation_quotes_no_speculation() -> None:
    request = RecommendIn.model_validate(DEEPSEEK_MTP)
    model, _warnings = resolve_model(request.model)
    answer = recommendation(model, request, [H100_TCP], Constraints(max_nodes=16), model_out(model), [], currency="CNY")
    (miss,) = [m for m in answer.near_misses if m.misses[0].code == "pp_speculative"]
    serving = miss.quote.workload["serving"]
    assert "speculative" not in serving, serving
    assert "--speculative-algorithm" not in miss.launch["command"]
    assert miss.plan.pp == 2
