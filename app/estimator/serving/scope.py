"""The scope of one answer (`memo.simulations` opens it): what the answer computes once, each a pure function of its
key, kept until the answer is given so every request starts cold. A module of its own, importing nothing of the
serving estimator at run time, so the memory model's functions (`memory._rank_kv_tokens`) can read it too."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (types only: step and serving_sim import the memory model, which imports this module)
    from app.estimator.serving.config import ServingEstimate
    from app.estimator.serving.step import _Hardware
    from app.estimator.serving_sim import LoadLatency


@dataclass(slots=True)
class _Memo:
    """What one answer computes once: simulations by (replica, traffic, engine, seed, rate), replicas' constants
    (with their memos) by (model, traffic, servers, split), the KV tokens a GPU of a replica holds by (model, traffic,
    GPU, split), and the steady-state estimates (`estimate.estimate_serving`). A search and the estimates of the
    options it shows ask for the same runs and points, and each is a pure function of these."""

    runs: dict[tuple[object, ...], LoadLatency] = field(default_factory=dict)
    hardware: dict[tuple[object, ...], _Hardware] = field(default_factory=dict)
    hardware_of: dict[tuple[object, ...], _Hardware] = field(default_factory=dict)  # by the traffic with its rate
    kv_tokens: dict[tuple[object, ...], int] = field(default_factory=dict)
    estimates: dict[tuple[object, ...], ServingEstimate] = field(default_factory=dict)  # steady state (not simulated)
    capacities: dict[tuple[object, ...], tuple[float, float]] = field(default_factory=dict)  # replicas.replica_capacity
    steered: dict[tuple[object, ...], int | None] = field(default_factory=dict)  # replicas.steer_replicas


# Scoped to the answer (`memo.simulations`), so every request starts cold.
_MEMO: ContextVar[_Memo | None] = ContextVar("serving_memo", default=None)
