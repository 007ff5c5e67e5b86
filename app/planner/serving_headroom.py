"""A shown serving option's headroom, held to the simulation: how far its peak load may grow within the SLO, as one
simulated run checked it. PURE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

# Where a shown option's one headroom simulation is run, as a share of the closed forms' claim above 1 (1 + share ×
# (claim − 1)): one run, as the claim's own check was (a bisection step adds a third to a serving search's CPU,
# benchmarks/recommend.py --serving). The claim never held in 12 options of 6 requests (Llama 3.1 8B/70B, Qwen2.5 7B
# under SGLang, Mixtral 8x7B on A100 and H100; bisected to 1/64 of the claim), whose headroom reached 0.02-0.92 of its
# margin (median 0.66): at 0.4, 10 of the 12 checks pass where every claim's check fell to 1.
HEADROOM_CHECK_SHARE: Final = 0.4


def simulated_headroom(claimed: float, meets_at: Callable[[float], bool]) -> float:
    """The headroom an option that meets its SLO at the peak states: a factor by which the peak may grow with the
    SLO's simulated percentile still within its targets (and no replica saturated), checked by one simulation at
    1 + HEADROOM_CHECK_SHARE × (claim − 1) below the closed forms' claim (their capacity within the SLO, or a
    pool's load to saturation), and 1 where that run misses: a lower bound the simulation met, never the claim
    unchecked. At least 1: a replica the simulation shows meeting at the peak carries the peak."""
    if claimed <= 1.0:
        return 1.0
    checked = 1.0 + HEADROOM_CHECK_SHARE * (claimed - 1.0)
    return checked if meets_at(checked) else 1.0
