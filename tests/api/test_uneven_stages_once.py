"""Uneven pipeline stages are said once, with the split the estimate sized: before, a plan whose stages do not divide
the layers carried both `pp_uneven_layers` (the memory estimate's, naming the largest stage's layers) and
`uneven_stages` (the speed estimate's, the same fact without them), on /estimate and on each /recommend option.

Llama 3.1 405B: 126 layers (its config.json `num_hidden_layers`) over 16 stages, as Dubey et al. 2024
(arXiv:2407.21783 §3.3.2) trained it: the middle stages hold ceil(126 / 16) = 8 layers (app/planner/shapes.py
stage_layers)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.text import messages

BODY = {
    "model": {"preset": "llama-3.1-405b"},
    "task": "pretrain",
    "tokens": 1e10,
    "hardware": {"gpu": "h100-80g-sxm", "nodes": 16},
    "plan": {"dp": 1, "tp": 8, "pp": 16},
}


def test_an_uneven_pipeline_is_one_warning_naming_the_largest_stage(client: TestClient) -> None:
    response = client.post("/estimate", json=BODY)
    assert response.status_code == 200, response.text
    warnings = response.json()["warnings"]
    uneven = [w for w in warnings if w["code"] in ("pp_uneven_layers", "uneven_stages")]
    assert [w["code"] for w in uneven] == ["pp_uneven_layers"], uneven
    assert uneven[0]["params"] == {"layers": 126, "pp": 16, "stage_layers": 8}
    assert "(8 layers)" in uneven[0]["message"]
    assert "（8 层）" in messages.warning("pp_uneven_layers", uneven[0]["params"], "zh")


def test_the_speed_estimate_no_longer_repeats_it() -> None:
    """The code the speed estimate emitted is gone from the catalogs (en and zh) and the API's warning codes."""
    from typing import get_args

    from app.estimator.specs import WarningCode
    from app.text.warning_words import WARNINGS

    assert "uneven_stages" not in get_args(WarningCode)
    assert all("uneven_stages" not in words for words in WARNINGS.values())
