"""A nearly idle serving option states the headroom a simulation met (review R3-14): Qwen3-30B-A3B under SGLang at
10 requests/s, an H100 option 10 % busy at the peak showed headroom 1.00, because the one check at 7.24× the peak
missed. A second check at the geometric midpoint between the peak and that factor (√7.24 ≈ 2.7×) meets, and shows."""

from __future__ import annotations

import math

from fastapi.testclient import TestClient

from app.planner.serving_headroom import checked_headroom

QWEN = {
    "model": {"preset": "qwen3-30b-a3b"},
    "task": "serving",
    "serving": {
        "engine": "sglang", "input_tokens": 1000, "output_tokens": 300, "requests_per_s": 10,
        "slo": {"ttft_ms": 1000, "tpot_ms": 40},
    },
}  # fmt: skip


def test_a_missed_check_is_followed_by_one_at_its_midpoint() -> None:
    runs: list[float] = []

    def meets_below_3(factor: float) -> bool:
        runs.append(factor)
        return factor <= 3.0

    headroom, missed_at = checked_headroom(10.0, meets_below_3)
    assert runs == [7.3, math.sqrt(7.3)] and headroom == math.sqrt(7.3) and missed_at == 7.3


def test_a_nearly_idle_h100_option_states_more_than_the_peak(client: TestClient) -> None:
    response = client.post("/recommend", json=QWEN)
    assert response.status_code == 200, response.text
    idle = [o for o in response.json()["options"] if o["serving"]["utilization"]["peak"] < 0.2]
    assert idle
    for option in idle:
        assert option["serving"]["headroom"] > 1.5, option["serving"]["headroom"]
