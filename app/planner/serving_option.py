"""A serving deployment option, the serving search's ask and its answer, and what every stage of the search reads of
them (app/planner/serving.py: the search; serving_shapes.py: an offer's shapes by the closed forms; serving_verify.py:
the simulation; serving_rank.py: the order). PURE."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypedDict

from app.estimator.notes import Note
from app.estimator.serving import ServingConfig, ServingEstimate
from app.estimator.specs import Cluster, ModelSpec, Warning_
from app.planner.availability import Availability
from app.planner.misses import Miss
from app.planner.offers import DAYS_PER_BILLED_MONTH, Configuration, Constraints, Cost, Offer
from app.planner.serving_dp_attention import dp_attention_config
from app.planner.serving_launch import Served
from app.text.messages import misses as miss_text

SECONDS_PER_BILLED_MONTH = DAYS_PER_BILLED_MONTH * 86400


TP_DEGREES = (1, 2, 4, 8, 16)
# the peak over the offered load a search holds the SLO at where the caller names none (ServingConfig.peak_factor's
# default, as serving.peak_factor's in the API)
PEAK_FACTOR = 1.5


@dataclass(slots=True)
class ServingOption:
    offer: Offer
    config: Configuration
    region: str
    tp: int
    replicas: int
    estimate: ServingEstimate  # at the offered load
    peak: ServingEstimate  # at the peak load
    cost: Cost
    per_million_output_tokens: Decimal
    headroom: float  # what the replicas carry within the SLO ÷ the peak load
    launch: dict[str, Any]
    notes: list[Note] = field(default_factory=list)  # the estimate's, as codes (app/estimator/notes.py)
    rank: int | None = None
    misses: list[Miss] = field(default_factory=list)  # a near miss's reasons (app/text/messages.py words them)
    pp: int = 1  # pipeline stages of one replica, one server each beyond a server's TP
    # one replica: (its estimate at one request, requests/s within the SLO, concurrency there)
    replica: tuple[ServingEstimate, float, float] | None = None
    verified: bool = False  # its latency simulated: `estimate` carries the latency at the offered load and peak
    warnings: list[Warning_] = field(default_factory=list)  # about its cost: budgets, the other term
    # verified at the peak, its simulation at the offered load not run yet (`settle` runs it): the replicas the
    # simulation needs, for the estimate
    deferred: int | None = None
    # verified on whole servers that hold more replicas than the fewest that meet: (replica cluster, (tp, pp), replicas
    # rented, replicas a server holds) for serving.replicas_needed, counted once the option is shown
    # (serving_verify.count_needs); None: counted already, or nothing to count
    needs: tuple[Cluster, tuple[int, int], int, int] | None = None
    # disaggregated prefill/decode (app/planner/serving_disagg.py): {"prefill": {"tp", "replicas", "gpus"}, "decode":
    # {…}} and the KV transfer per request, ms; None: colocated replicas
    pools: dict[str, dict[str, int]] | None = None
    kv_transfer_ms: float | None = None
    # each pool's utilisation at the offered load and the peak ({"prefill": {"average", "peak"}, "decode": {…}});
    # the option's own (estimate.utilization) is the busier pool's
    pool_utilization: dict[str, dict[str, float]] | None = None
    availability: Availability | None = None  # set after the search (app.planner.serving_service.with_capacity)
    headroom_held: bool = False  # `headroom` held to the simulation (`simulated_headroom`): shown options only
    headroom_missed_at: float | None = None  # the factor of the peak whose headroom simulation missed the SLO
    dp_attention: bool = False  # DP attention with EP over the tp ranks (app/planner/serving_dp_attention.py)
    # the sequences the launch admits per replica (serving_launch.replica_max_seqs): serving.max_concurrency reads
    # no more; None: the estimate's (what the KV cache and the engine's max_num_seqs hold)
    max_seqs: int | None = None

    @property
    def miss_reason(self) -> str | None:
        """Why a near miss misses, in English."""
        return miss_text(self.misses)


@dataclass(frozen=True, slots=True)
class Ask:
    """What every evaluation of one search shares."""

    model: ModelSpec
    cfg: ServingConfig
    constraints: Constraints
    peak_factor: float
    served: Served

    @classmethod
    def at_peak(
        cls, model: ModelSpec, cfg: ServingConfig, constraints: Constraints, peak_factor: float, served: Served
    ) -> Ask:
        """The ask of a search that holds the SLO at `peak_factor` (the traffic carries it too)."""
        return cls(model, replace(cfg, peak_factor=peak_factor), constraints, peak_factor, served)


class SearchOptions(TypedDict, total=False):
    """A serving search's keywords beside its model, traffic, offers and constraints (app/planner/serving.py
    `search_serving`, serving_disagg.py `search_disaggregated`): the peak factor (PEAK_FACTOR where not given) and what
    the launches serve (`served`, else the repository `model_repo` alone)."""

    peak_factor: float
    served: Served | None
    model_repo: str | None


def search_ask(model: ModelSpec, cfg: ServingConfig, constraints: Constraints, options: SearchOptions) -> Ask:
    """The ask of a search called with `options` (SearchOptions)."""
    served = options.get("served") or Served(repo=options.get("model_repo"))
    return Ask.at_peak(model, cfg, constraints, options.get("peak_factor", PEAK_FACTOR), served)


@dataclass(slots=True)
class ServingSearch:
    options: list[ServingOption]
    near_misses: list[ServingOption]
    rejected: list[tuple[str, str, dict[str, Any]]]  # (sku id, code, its parameters for app/text/messages.py)
    evaluations: int = 0
    not_searched: list[str] = field(default_factory=list)  # SKUs left when the time budget ran out

    @property
    def stopped_early(self) -> bool:
        return bool(self.not_searched)


def valid_tp(model: ModelSpec, tp: int) -> bool:
    """Engines split attention heads evenly: heads % tp == 0 and KV heads divide or are divided by tp."""
    return model.heads % tp == 0 and (model.kv_heads % tp == 0 or tp % model.kv_heads == 0)


def _money(amount: Decimal, quantum: Decimal) -> Decimal:
    return amount.quantize(quantum, rounding=ROUND_HALF_UP)


def per_million_tokens(monthly: Decimal, tokens_per_s: float, quantum: Decimal) -> Decimal:
    """Monthly price ÷ output tokens produced in a billed month at that rate, per million tokens."""
    if tokens_per_s <= 0:
        return Decimal(0)
    per_month = Decimal(str(tokens_per_s)) * SECONDS_PER_BILLED_MONTH
    return _money(monthly * Decimal(1_000_000) / per_month, quantum)


def ask_for(ask: Ask, option: ServingOption) -> Ask:
    """The search's ask as the option was sized: with DP attention where the option runs it."""
    return ask if option.dp_attention == ask.cfg.dp_attention else replace(ask, cfg=dp_attention_config(ask.cfg))


def replica_cluster(offer: Offer, tp: int, pp: int) -> Cluster:
    """The servers one replica occupies, joined by the SKU's fabric when it spans several."""
    nodes = math.ceil(tp * pp / offer.gpus_per_node)
    fabric = offer.inter_node_fabric if nodes > 1 else None
    return Cluster(
        gpu=offer.gpu,
        gpus_per_node=offer.gpus_per_node,
        nodes=nodes,
        intra_node_link=offer.intra_node_link,
        inter_node_gbps=offer.inter_node_gbps if fabric else None,
        inter_node_fabric=fabric,
    )
