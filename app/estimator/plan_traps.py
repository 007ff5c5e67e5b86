"""The named traps of a training plan the speed estimate warns (app/estimator/performance.py): a batch that does not
divide over the data-parallel ranks, a pipeline short of micro-batches (its bubble as the step time counts it), tensor
parallelism across servers, a TCP fabric. PURE."""

from __future__ import annotations

import math
from functools import lru_cache

from app.estimator.specs import Warning_


def pipeline_short(m: int, pp: int, virtual_stages: int) -> bool:
    """Too few micro-batches for the pipeline: m < 4 × pp ÷ v, where 1F1B's bubble of (p − 1)/v micro-batch slots
    (Narayanan et al. 2021 §2.2, interleaved: v virtual stages a rank) is a fifth of the step or more."""
    return pp > 1 and m * virtual_stages < 4 * pp


def bubble_share(m: int, pp: int, virtual_stages: int) -> float:
    """The pipeline's idle share of a step: (p − 1)/v bubble slots of m + (p − 1)/v (Narayanan et al. 2021 §2.2)."""
    slots = (pp - 1) / virtual_stages
    return slots / (m + slots)


@lru_cache(maxsize=8192)
def plan_traps(
    ragged: bool, m: int, pp: int, virtual_stages: int, tp: int, gpus_per_node: int, tcp: bool
) -> tuple[Warning_, ...]:
    """Named traps of a plan (cached: the planner meets the same few combinations again and again). Stages that do
    not divide the layers are the memory estimate's `pp_uneven_layers`, which names the largest stage's layers."""
    found: list[Warning_] = []
    if ragged:
        found.append(Warning_("ragged_batch"))
    if pipeline_short(m, pp, virtual_stages):
        # the interleaved schedule's bubble, as the step time counts it (review R5-7: 405B at pp 16 × v 4 with 16
        # micro-batches was said to idle 48 %, 1F1B's figure, where its own step counted 19 %)
        bubble = bubble_share(m, pp, virtual_stages)
        wanted = math.ceil(4 * pp / virtual_stages)
        params = {"micro_batches": m, "pp": pp, "virtual_stages": virtual_stages, "bubble": bubble, "wanted": wanted}
        found.append(Warning_("pipeline_few_microbatches", params))
    if tp > gpus_per_node:
        found.append(Warning_("tp_across_nodes", {"tp": tp, "gpus_per_node": gpus_per_node}))
    if tcp:
        found.append(Warning_("ethernet_fabric"))
    return tuple(found)
