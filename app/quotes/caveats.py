"""What qualifies a serving quote's latency, frozen with it as notes (review R5-4): the warnings its option carried on
the estimate itself — a fine-grained MoE decoding outside the validated range (`moe_low_concurrency_unvalidated`:
its time per token is optimistic), prompts past the longest request a replica accepts (`prompts_over_limit`: the
latencies still count them), clients queueing for a KV slot (`concurrency_over_kv`) — recomputed on the SKU and
quantity quoted, as /recommend words them on the option (app.planner.serving_service `option_out`). A quote keeps no
float: the figures app.text.messages.FROZEN_WARNINGS names are kept as decimal strings (`messages.frozen_params`)."""

from __future__ import annotations

from typing import Any

from app.estimator.serving import ServingConfig, ServingEstimate
from app.estimator.specs import ModelSpec
from app.planner.schemas import WorkloadIn
from app.planner.serving_request import served
from app.planner.serving_service import queue_warnings, regime_warnings
from app.text import messages

# The key under which the plan check hands a serving quote's caveats to the quote service (app.quotes.service
# `create_quote`), which freezes them as notes, not as figures of the plan.
CAVEATS = "caveats"


def latency_caveats(
    model: ModelSpec, cfg: ServingConfig, result: ServingEstimate, request: WorkloadIn
) -> list[dict[str, Any]]:
    """The option's warnings that qualify the latency the quote freezes, as note codes and their figures. The longest
    request a replica accepts is its launch's (app.planner.serving_launch `_length`): the stated one, else the model's
    context, never more than one sequence's KV cache (`queue_warnings` caps it there)."""
    longest = cfg.max_model_len or served(request.model, model).context
    warned = regime_warnings(model, result) + queue_warnings(cfg, result, longest)
    return [{"code": w.code, "params": messages.frozen_params(w.code, w.params)} for w in warned]
