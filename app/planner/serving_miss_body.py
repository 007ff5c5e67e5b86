"""The config and request body a serving near miss answers, for its figures and its POST /quotes body: a deployment
shown with a change from the request is quoted as what it launches. `bf16_for_fp8`: the request in 16 bits
(app/planner/serving_sixteen_bit.py `served_as`); `pp_speculative`: the request without speculative decoding (the
engine starts none in a pipelined replica, app/planner/serving.py `_without_speculation`). PURE."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.estimator.serving import ServingConfig
from app.planner.serving import ServingOption
from app.planner.serving_sixteen_bit import served_as


def miss_served_as(
    option: ServingOption, cfg: ServingConfig, body: dict[str, Any]
) -> tuple[ServingConfig, dict[str, Any]]:
    """(config, request body) the near miss was sized on."""
    if option.misses and option.misses[0][0] == "pp_speculative":
        serving = body.get("serving")
        if isinstance(serving, dict):
            body = body | {"serving": {key: value for key, value in serving.items() if key != "speculative"}}
        return replace(cfg, speculative=None), body
    return served_as(option, cfg, body)
