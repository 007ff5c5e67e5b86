"""Serving deployments: search SKU × tensor parallel × replicas for the cheapest that carry an offered
load within latency targets. PURE: offers in, options out (estimator, offers and the time budget only).

For each offer and TP degree the estimator gives one replica's capacity at the SLO (the highest
concurrency whose TTFT and TPOT meet the targets, `app.estimator.serving`). The replicas needed for
the peak load (offered requests/s × peak factor) set the GPU count; a rentable configuration is the
smallest that holds them. Replicas share nothing (each is its own engine behind a load balancer), so
they may sit on separate servers without any inter-node fabric. Ranking: lowest cost per million output
tokens in the request's currency (app.planner.market; for an offered load, the lowest monthly price),
then the lower monthly price, the larger capacity within the SLO (headroom), lower TPOT, then SKU id;
objective "fastest" ranks by a request's end-to-end latency at the offered load first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from app.estimator.serving import (
    ENGINE_DEFAULTS,
    ServingConfig,
    ServingEstimate,
    estimate_serving,
    kernel_support,
    kv_cache_tokens,
    max_concurrency,
    meets_at_peak,
    peak_latency,
    replica_capacity,
    replicas_for_slo,
    sglang_memory_fraction,
    simulations,
    steer_replicas,
)
from app.estimator.serving_sim import LoadLatency
from app.estimator.specs import Cluster, EstimatorError, ModelSpec
from app.estimator.vocabulary import INTEGER_WEIGHT_FORMATS, TERM_MONTHS
from app.messages import misses as miss_text
from app.planner.budget import past, search_deadline
from app.planner.misses import Miss, budget_params, slo_params
from app.planner.offers import (
    DAYS_PER_BILLED_MONTH,
    FABRIC_GBPS,
    Configuration,
    Constraints,
    Cost,
    Offer,
    price,
    unconvertible,
)

SECONDS_PER_BILLED_MONTH = DAYS_PER_BILLED_MONTH * 86400
TP_DEGREES = (1, 2, 4, 8, 16)
NO_FABRIC_NOTE = "Replicas share nothing: separate servers need no InfiniBand or RoCE, only the ordinary network."
PIPELINE_NOTE = (
    "Each replica's {pp} pipeline stages pass activations between servers over the SKU's {fabric} (a few MB a "
    "step: far less than tensor parallelism across servers would need); rent the SKU's {fabric} add-on for "
    "every server (quote `addons`; see the option's warnings for its price); replicas still share nothing."
)


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
    notes: list[str] = field(default_factory=list)
    rank: int | None = None
    misses: list[Miss] = field(default_factory=list)  # a near miss's reasons (app/messages.py words them)
    pp: int = 1  # pipeline stages of one replica, one server each beyond a server's TP
    # one replica: (its estimate at one request, requests/s within the SLO, concurrency there)
    replica: tuple[ServingEstimate, float, float] | None = None
    verified: bool = False  # its latency simulated: `estimate` carries the latency at the offered load and peak

    @property
    def miss_reason(self) -> str | None:
        """Why a near miss misses, in English."""
        return miss_text(self.misses)


@dataclass(frozen=True, slots=True)
class _Ask:
    """What every evaluation of one search shares."""

    model: ModelSpec
    cfg: ServingConfig
    constraints: Constraints
    peak_factor: float
    model_repo: str | None


@dataclass(slots=True)
class ServingSearch:
    options: list[ServingOption]
    near_misses: list[ServingOption]
    rejected: list[tuple[str, str, dict[str, Any]]]  # (sku id, code, its parameters for app/messages.py)
    evaluations: int = 0
    not_searched: list[str] = field(default_factory=list)  # SKUs left when the time budget ran out

    @property
    def stopped_early(self) -> bool:
        return bool(self.not_searched)


def valid_tp(model: ModelSpec, tp: int) -> bool:
    """Engines split attention heads evenly: heads % tp == 0 and KV heads divide or are divided by tp."""
    return model.heads % tp == 0 and (model.kv_heads % tp == 0 or tp % model.kv_heads == 0)


def _region(offer: Offer, constraints: Constraints) -> str | None:
    allowed = [r for r in offer.regions if not constraints.regions or r in constraints.regions]
    return allowed[0] if allowed else None


def _configuration(offer: Offer, gpus: int, constraints: Constraints) -> Configuration | None:
    """The smallest rentable configuration with at least `gpus` cards (independent replicas may span servers)."""
    if offer.rental_unit == "card":
        counts = [c for c in sorted(offer.card_counts) if c >= gpus]
        return Configuration(counts[0], 1) if counts else None
    nodes = math.ceil(gpus / offer.gpus_per_node)
    return Configuration(offer.gpus_per_node, nodes) if nodes <= constraints.max_nodes else None


def _money(amount: Decimal, quantum: Decimal) -> Decimal:
    return amount.quantize(quantum, rounding=ROUND_HALF_UP)


def per_million_tokens(monthly: Decimal, tokens_per_s: float, quantum: Decimal) -> Decimal:
    """Monthly price ÷ output tokens produced in a billed month at that rate, per million tokens."""
    if tokens_per_s <= 0:
        return Decimal(0)
    per_month = Decimal(str(tokens_per_s)) * SECONDS_PER_BILLED_MONTH
    return _money(monthly * Decimal(1_000_000) / per_month, quantum)


def search_serving(
    model: ModelSpec,
    cfg: ServingConfig,
    offers: list[Offer],
    constraints: Constraints,
    *,
    peak_factor: float = 1.5,
    model_repo: str | None = None,
) -> ServingSearch:
    """Cheapest deployments per offer and TP degree that carry cfg.requests_per_s × peak_factor within the SLO.

    Without requests_per_s, one replica per configuration at cfg.concurrency (or the most it holds). A model
    no server of the offer serves is tried as a pipeline: TP over a server's GPUs, one stage per server,
    on SKUs a fabric joins.
    """
    with simulations():
        return _search(_Ask(model, replace(cfg, peak_factor=peak_factor), constraints, peak_factor, model_repo), offers)


def _search(ask: _Ask, offers: list[Offer]) -> ServingSearch:
    """search_serving's body, its simulations shared."""
    model, cfg, constraints = ask.model, ask.cfg, ask.constraints
    rank_key = _fastest_key if constraints.objective == "fastest" else _key
    options: list[ServingOption] = []
    misses: list[ServingOption] = []
    rejected: list[tuple[str, str, dict[str, Any]]] = []
    evaluations = 0
    not_searched: list[str] = []
    deadline = search_deadline()
    for offer in offers:
        if past(deadline):
            not_searched.append(offer.sku_id)
            continue
        if constraints.gpu_types and offer.gpu.id not in constraints.gpu_types:
            continue
        region = _region(offer, constraints)
        if region is None:
            continue
        if offer.unconvertible:
            rejected.append((offer.sku_id, "exchange_rate", unconvertible(offer)))
            continue
        unsupported = kernel_support(offer.gpu, cfg)
        if unsupported:
            rejected.append((offer.sku_id, "kernels", {"gap": unsupported.gap, **unsupported.params}))
            continue
        candidates: list[ServingOption] = []
        offer_miss: ServingOption | None = None
        smallest: int | None = None  # GPUs of the smallest deployment refused for the SKU's size limits
        # the weights leave no KV cache at any degree; a SKU of servers without a fabric cannot pipeline either
        one_server = offer.rental_unit == "node" and not offer.may_span_nodes
        why_not: tuple[str, dict[str, Any]] = ("gpu_memory", {"gpu": offer.gpu.name, "one_server": one_server})
        for tp, pp in _shapes(model, offer, constraints):
            if pp > 1 and candidates:
                break  # pipelines across servers only for what one server cannot serve
            evaluations += 1
            option, reason = _evaluate(ask, offer, region, tp, pp)
            if option is None:
                if reason and (smallest is None or reason[0] < smallest):  # the shape needing the fewest GPUs
                    smallest, why_not = reason[0], ("capacity", reason[1])
                continue
            if not option.misses:
                candidates.append(option)
            elif offer_miss is None or _miss_key(option) < _miss_key(offer_miss):
                offer_miss = option
        best_for_offer, verified_miss = _verified_best(ask, region, candidates, rank_key)
        if verified_miss is not None and (offer_miss is None or _miss_key(verified_miss) < _miss_key(offer_miss)):
            offer_miss = verified_miss
        if best_for_offer is not None:
            options.append(best_for_offer)
        elif offer_miss is not None:
            misses.append(offer_miss)
        else:
            rejected.append((offer.sku_id, *why_not))
    budget = constraints.max_monthly_budget
    if budget is not None:
        over = [o for o in options if o.cost.compared_monthly > budget]
        for option in over:
            option.misses.append(("budget", budget_params(option.cost, budget)))
        options = [o for o in options if not o.misses]
        misses.extend(over)
    options.sort(key=rank_key)
    misses.sort(key=lambda o: (o.peak.tpot_ms, o.cost.compared_monthly, o.offer.sku_id))
    options = options[: constraints.limit]
    for rank, option in enumerate(options, start=1):
        option.rank = rank
    misses = misses[: constraints.limit]
    for miss in misses:
        _simulated(ask, miss)
    return ServingSearch(options, misses, rejected, evaluations, not_searched)


def _verified_best(
    ask: _Ask, region: str, candidates: list[ServingOption], rank_key: Callable[[ServingOption], Any]
) -> tuple[ServingOption | None, ServingOption | None]:
    """The best of one offer's candidates once simulated: in the closed forms' order, each candidate's replicas
    are set by the simulation at the peak until the best verified one ranks before every candidate left (the
    simulation only adds replicas to what the closed forms allow, so a later candidate cannot overtake it).
    Also the nearest candidate the simulation turned into a miss."""
    best: ServingOption | None = None
    miss: ServingOption | None = None
    for candidate in sorted(candidates, key=rank_key):
        if best is not None and rank_key(best) <= rank_key(candidate):
            break
        option = _verify(ask, region, candidate)
        if option is None:
            continue
        if option.misses:
            miss = option if miss is None or _miss_key(option) < _miss_key(miss) else miss
        elif best is None or rank_key(option) < rank_key(best):
            best = option
    return best, miss


def _most_replicas(ask: _Ask, offer: Offer, gpus_per_replica: int) -> int:
    """The most replicas the offer rents (its largest card count, or max_nodes servers)."""
    if offer.rental_unit == "card":
        return max(offer.card_counts, default=0) // gpus_per_replica
    return ask.constraints.max_nodes * offer.gpus_per_node // gpus_per_replica


# How far below the closed forms' replica count the simulation may still meet the SLO: their exponential queue
# tail reads the simulated p90 high (Llama-3.1-70B RAG, 8,000 / 300 tokens at 5 requests/s, TP 8 on A100s: the
# closed forms ask 17 replicas, the simulation meets the SLO with 15), so smaller configurations down to 0.8 of
# their count are simulated, and none below.
CLOSED_FORM_SLACK = 0.8


def _smallest_configuration_meeting(ask: _Ask, option: ServingOption, node: Cluster, replicas: int) -> int:
    """`replicas`, or the replicas of the smallest smaller configuration whose simulated peak still meets the SLO
    (one simulation a configuration, stepping down until one misses; none where the closed forms need more than
    1 / CLOSED_FORM_SLACK times the replicas the smaller configuration holds)."""
    gpus_per_replica = option.tp * option.pp
    gpus = option.config.gpus
    closed = steer_replicas(ask.model, ask.cfg, node, tp=option.tp, pp=option.pp) or 1
    while True:
        smaller = _smaller_configuration_replicas(ask, option.offer, gpus_per_replica, gpus)
        if smaller < max(1, CLOSED_FORM_SLACK * closed):
            return replicas
        latency = peak_latency(ask.model, ask.cfg, node, tp=option.tp, pp=option.pp, replicas=smaller)
        if latency is None or not meets_at_peak(latency, ask.cfg):
            return replicas
        replicas, gpus = smaller, smaller * gpus_per_replica


def _smaller_configuration_replicas(ask: _Ask, offer: Offer, gpus_per_replica: int, gpus: int) -> int:
    """The replicas the next smaller rentable configuration than `gpus` GPUs holds (0: none smaller)."""
    if offer.rental_unit == "card":
        smaller = [count for count in offer.card_counts if count < gpus]
        return max(smaller, default=0) // gpus_per_replica
    return max(0, gpus - offer.gpus_per_node) // gpus_per_replica


def _verify(ask: _Ask, region: str, option: ServingOption) -> ServingOption | None:
    """The option with the replicas its simulated latency at the peak needs, and that latency; a miss (slo_peak)
    when no count the offer rents meets the SLO; None when the count needed cannot be rented."""
    cfg = ask.cfg
    if cfg.requests_per_s is None or option.replica is None:
        return option
    tp, pp, offer = option.tp, option.pp, option.offer
    node = _replica_cluster(offer, tp, pp)
    most = _most_replicas(ask, offer, tp * pp)
    # up from the closed forms' count; fewer replicas matter only where they rent a smaller configuration
    found = replicas_for_slo(
        ask.model, cfg, node, tp=tp, pp=pp, start=option.replicas, most=max(most, 1), floor=option.replicas
    )
    if found is None:
        _simulated(ask, option)
        peak = option.estimate.latency["peak"] if option.estimate.latency else None
        option.misses.append(_simulated_miss(cfg, peak))
        return option
    needed = found[0]
    if needed == option.replicas:
        needed = _smallest_configuration_meeting(ask, option, node, needed)
    if needed != option.replicas:
        rebuilt, _ = _with_replicas(ask, offer, region, (tp, pp), needed, option.replica)
        if rebuilt is None:
            return None
        # the simulation decides the load the replicas carry: the steady state's peak misses no longer apply
        rebuilt.misses = [m for m in rebuilt.misses if m[0] == "slo_one_request"]
        option = rebuilt
    _simulated(ask, option, needed)
    if option.estimate.meets_slo is False and not option.misses:
        option.misses.append(_simulated_miss(cfg, option.estimate.latency["peak"] if option.estimate.latency else None))
    return option


def _simulated(ask: _Ask, option: ServingOption, needed: int | None = None) -> None:
    """The option's estimate at the offered load with its simulated latency (average and peak)."""
    if ask.cfg.requests_per_s is None or option.verified or option.estimate.max_concurrency < 1:
        return
    node = _replica_cluster(option.offer, option.tp, option.pp)
    option.estimate = estimate_serving(
        ask.model, ask.cfg, node, tp=option.tp, pp=option.pp, replicas=option.replicas,
        replicas_needed=needed or option.estimate.replicas_needed,
    )  # fmt: skip
    option.verified = True


def _simulated_miss(cfg: ServingConfig, peak: LoadLatency | None) -> Miss:
    """slo_peak with the simulated percentile at the peak (the SLO's own)."""
    q = cfg.slo_percentile
    if peak is None:
        return "slo_peak", {"ttft_ms": math.inf, "tpot_ms": math.inf, "percentile": q, "saturated": True} | slo_params(
            cfg
        )
    reached = {"ttft_ms": peak.ttft.at(q) * 1e3, "tpot_ms": peak.tpot.at(q) * 1e3, "percentile": q}
    return "slo_peak", reached | {"saturated": peak.saturated} | slo_params(cfg)


def _miss_key(option: ServingOption) -> tuple[float, int]:
    """The nearer miss of one offer: the lower TPOT at the peak, then the larger KV cache (a sequence too long
    for every degree is reported at the one that comes closest)."""
    return option.peak.tpot_ms, -option.estimate.kv_cache_tokens


def _compared_per_token(option: ServingOption) -> Decimal:
    """Monthly price in the compared currency per output token/s at the offered load (∝ cost per token). The
    rate is read to 3 significant figures: options that carry the same offered load tie, whatever the last
    digits of the load solver, and the next keys decide."""
    tokens = float(f"{option.estimate.output_tokens_per_s:.3g}")
    return option.cost.compared_monthly / Decimal(str(tokens)) if tokens > 0 else Decimal("Infinity")


def _key(option: ServingOption) -> tuple[Decimal, Decimal, float, float, str, int]:
    """Lowest cost per million output tokens first (for an offered load every option carries the same tokens,
    so this is the cheapest; at a given concurrency, the same price buys the layout that produces more), then
    the lower monthly price, the larger capacity (headroom), the lower TPOT."""
    return (
        _compared_per_token(option),
        option.cost.compared_monthly,
        -round(option.headroom, 3),
        option.estimate.tpot_ms,
        option.offer.sku_id,
        option.config.gpus,
    )


def _fastest_key(option: ServingOption) -> tuple[float, float, Decimal, Decimal, str, int]:
    """objective "fastest": the lowest end-to-end latency of a request at the offered load (TTFT + the
    output's TPOTs, read to 3 significant figures), then the lower TTFT, then as the cheapest."""
    cheapest = _key(option)
    latency = float(f"{option.estimate.e2e_latency_ms:.3g}")
    return latency, option.estimate.ttft_ms, cheapest[0], cheapest[1], option.offer.sku_id, option.config.gpus


def _shapes(model: ModelSpec, offer: Offer, constraints: Constraints) -> Iterator[tuple[int, int]]:
    """(tp, pp) per replica: every TP degree within a server; then a server's TP with 2, 3, … stages, one
    server each, where the SKU's fabric joins servers."""
    for tp in TP_DEGREES:
        if tp <= offer.gpus_per_node and valid_tp(model, tp):
            yield tp, 1
    if offer.rental_unit != "node" or not offer.may_span_nodes or not valid_tp(model, offer.gpus_per_node):
        return
    for pp in range(2, min(constraints.max_nodes, model.layers) + 1):
        yield offer.gpus_per_node, pp


def _replica_cluster(offer: Offer, tp: int, pp: int) -> Cluster:
    """The servers one replica occupies, joined by the SKU's fabric when it spans several."""
    nodes = math.ceil(tp * pp / offer.gpus_per_node)
    fabric = offer.inter_node_fabric if nodes > 1 else None
    return Cluster(
        gpu=offer.gpu,
        gpus_per_node=offer.gpus_per_node,
        nodes=nodes,
        intra_node_link=offer.intra_node_link,
        inter_node_gbps=FABRIC_GBPS.get(fabric) if fabric else None,
        inter_node_fabric=fabric,
    )


def _evaluate(
    ask: _Ask, offer: Offer, region: str, tp: int, pp: int
) -> tuple[ServingOption | None, tuple[int, dict[str, Any]] | None]:
    """The option of `tp` × `pp` replicas on the offer; or None with (GPUs needed, why) when the SKU cannot rent
    that many, or None alone when the weights leave no KV cache."""
    model, cfg, peak_factor = ask.model, ask.cfg, ask.peak_factor
    node = _replica_cluster(offer, tp, pp)
    if max_concurrency(model, cfg, offer.gpu, tp, pp) < 1:
        if kv_cache_tokens(model, cfg, offer.gpu, tp, pp) < 1:
            return None, None  # the weights leave no cache at all: rejected for memory
        return _sequence_too_long(ask, offer, region, node, (tp, pp)), None
    one = estimate_serving(model, replace(cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    per_replica, slo_concurrency = replica_capacity(model, cfg, node, tp=tp, pp=pp)
    replicas = 1
    if cfg.requests_per_s is not None and per_replica > 0:
        replicas = max(1, math.ceil(cfg.requests_per_s * peak_factor / per_replica - 1e-9))
        # the closed forms' queue before the prefill at the peak (the simulation checks the shown options)
        replicas = steer_replicas(model, cfg, node, tp=tp, pp=pp, start=replicas) or replicas
    return _with_replicas(ask, offer, region, (tp, pp), replicas, (one, per_replica, slo_concurrency))


def _with_replicas(
    ask: _Ask,
    offer: Offer,
    region: str,
    split: tuple[int, int],
    replicas: int,
    replica: tuple[ServingEstimate, float, float],
) -> tuple[ServingOption | None, tuple[int, dict[str, Any]] | None]:
    """The option of at least `replicas` tp × pp replicas on the smallest configuration that holds them (their
    steady-state figures), or None with (GPUs needed, why) when the SKU cannot rent that many."""
    model, cfg, peak_factor = ask.model, ask.cfg, ask.peak_factor
    tp, pp = split
    one, per_replica, slo_concurrency = replica
    node = _replica_cluster(offer, tp, pp)
    config = _configuration(offer, tp * pp * replicas, ask.constraints)
    if config is None:
        params: dict[str, Any] = {"replicas": replicas, "replica_gpus": tp * pp}
        if offer.rental_unit != "card":
            params["max_nodes"] = ask.constraints.max_nodes
        return None, (replicas * tp * pp, params)
    replicas = config.gpus // (tp * pp)  # whole configuration in use: spare GPUs become spare replicas
    at_load = estimate_serving(model, cfg, node, tp=tp, pp=pp, replicas=replicas, simulate=False)
    peak = at_load
    if cfg.requests_per_s is not None:
        peak_cfg = replace(cfg, requests_per_s=cfg.requests_per_s * peak_factor)
        peak = estimate_serving(model, peak_cfg, node, tp=tp, pp=pp, replicas=replicas, simulate=False)
    offered = (cfg.requests_per_s or at_load.requests_per_s) * (peak_factor if cfg.requests_per_s else 1.0)
    headroom = per_replica * replicas / offered if offered > 0 else 0.0
    option = _option(ask, offer, region, (tp, pp, replicas), config, (at_load, peak), slo_concurrency, headroom)
    option.replica = replica
    slo_missed = one.meets_slo is False or peak.meets_slo is False
    if slo_missed:
        option.misses.append(_slo_miss(cfg, one, peak))
    elif cfg.requests_per_s is not None and peak.requests_per_s < cfg.requests_per_s * peak_factor * (1 - 1e-3):
        carried = {"replicas": replicas, "carried": peak.requests_per_s, "offered": offered}
        option.misses.append(("peak_load", carried))
    return option, None


def _option(
    ask: _Ask,
    offer: Offer,
    region: str,
    shape: tuple[int, int, int],
    config: Configuration,
    estimates: tuple[ServingEstimate, ServingEstimate],
    slo_concurrency: float,
    headroom: float,
) -> ServingOption:
    """An option of `replicas` tp × pp replicas on `config`: (at the offered load, at the peak) estimates."""
    tp, pp, replicas = shape
    at_load, peak = estimates
    term = ask.constraints.term
    fabric = offer.inter_node_fabric if tp * pp > offer.gpus_per_node else None
    hours = TERM_MONTHS[term] * DAYS_PER_BILLED_MONTH * 24.0  # a deployment runs its term
    cost = price(offer, config, term, hours, joined=fabric is not None)  # replicas sharing nothing need no fabric
    return ServingOption(
        offer=offer,
        config=config,
        region=region,
        tp=tp,
        pp=pp,
        replicas=replicas,
        estimate=at_load,
        peak=peak,
        cost=cost,
        per_million_output_tokens=per_million_tokens(
            cost.monthly_effective, at_load.output_tokens_per_s, offer.money_quantum
        ),
        headroom=headroom,
        launch=launch_block(
            ask.model, ask.cfg, (tp, pp, replicas), config, at_load, slo_concurrency, ask.model_repo, fabric=fabric
        ),
        notes=list(at_load.notes),
    )


def _sequence_too_long(
    ask: _Ask, offer: Offer, region: str, node: Cluster, split: tuple[int, int]
) -> ServingOption | None:
    """A near miss: the KV cache exists but is shorter than one sequence of the requested lengths."""
    tp, pp = split
    config = _configuration(offer, tp * pp, ask.constraints)
    if config is None:
        return None
    result = estimate_serving(ask.model, replace(ask.cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    option = _option(ask, offer, region, (tp, pp, 1), config, (result, result), 1.0, 0.0)
    tokens = {"context_len": ask.cfg.context_len, "kv_cache_tokens": result.kv_cache_tokens, "tp": tp}
    option.misses.append(("sequence_too_long", tokens))
    return option


def _slo_miss(cfg: ServingConfig, one: ServingEstimate, peak: ServingEstimate) -> Miss:
    """The latency targets missed, with the TTFT and TPOT reached: by one request at a time, or at the peak."""
    reached = one if one.meets_slo is False else peak
    params = {"ttft_ms": reached.ttft_ms, "tpot_ms": reached.tpot_ms} | slo_params(cfg)
    return ("slo_one_request" if one.meets_slo is False else "slo_peak"), params


# ---- launch commands ---------------------------------------------------------------------------

# Weight formats read from a quantised checkpoint's config.json (quantization_config): vLLM and SGLang pick the
# fast kernel themselves (vllm/model_executor/layers/quantization/awq_marlin.py and gptq_marlin.py
# `override_quantization_method`: awq_marlin / gptq_marlin when no --quantization is given, or marlin; an
# explicit `--quantization awq` / `gptq` keeps the slower AWQ / GPTQ kernels). So no flag: the checkpoint is
# named instead. FP8 from a 16-bit checkpoint is quantised on load with `--quantization fp8` (W8A8 on GPUs
# with FP8 tensor cores: FP8 math, as the sizing assumes; FP8-Marlin weight-only on Ampere).
ONLINE_QUANTIZATION = {"fp8": "fp8"}
CHECKPOINT_NOTE = {
    "int4": "int4 needs a 4-bit AWQ or GPTQ checkpoint (group 128) of {repo}; the engine reads its "
    "quantization_config and picks the Marlin kernels itself (no --quantization flag)",
    "int8": "int8 weight-only needs an 8-bit GPTQ checkpoint of {repo}; the engine reads its "
    "quantization_config and picks the Marlin kernels itself (no --quantization flag)",
    "fp8": "fp8 quantises the 16-bit checkpoint on load (or use an FP8 checkpoint of {repo}); on GPUs with FP8 "
    "tensor cores the GEMMs run in FP8",
}
QUANTISED_CHECKPOINT = "<{fmt} checkpoint of {repo}>"
# TensorRT-LLM serves a quantised checkpoint made by TensorRT Model Optimizer (docs features/quantization.html:
# "Offline Quantization with ModelOpt", examples/llm_ptq/hf_ptq.py --qformat), and sets the KV-cache dtype
# through the LLM API's KvCacheConfig(dtype="fp8"), passed to trtllm-serve as --extra_llm_api_options YAML.
TRTLLM_QFORMAT = {"fp8": "fp8", "int4": "int4_awq", "int8": "int8_wo"}
TRTLLM_CHECKPOINT_NOTE = (
    "quantise {repo} with TensorRT Model Optimizer first (examples/llm_ptq/hf_ptq.py --qformat {qformat}"
    "{kv}) and serve the exported checkpoint"
)
TRTLLM_KV_OPTIONS = "extra_llm_api_options.yaml"
TRTLLM_KV_NOTE = f"{TRTLLM_KV_OPTIONS} holds `kv_cache_config: {{dtype: fp8}}` (the FP8 KV cache the sizing assumes)"
STATIC_NOTE = (
    "{engine} always batches continuously: the static-batching figures describe a fixed batch run offline; "
    "the server admits requests as they come"
)


def _max_seqs(estimate: ServingEstimate, slo_concurrency: float) -> int:
    """--max-num-seqs: the most sequences a replica runs within the SLO (admitting more would break the
    latency targets; the load balancer queues the rest), never more than the KV cache holds."""
    return max(1, min(estimate.max_concurrency, math.floor(slo_concurrency) or 1))


def launch_block(
    model: ModelSpec,
    cfg: ServingConfig,
    shape: tuple[int, int, int],
    config: Configuration,
    estimate: ServingEstimate,
    slo_concurrency: float,
    model_repo: str | None,
    *,
    fabric: str | None = None,
) -> dict[str, Any]:
    """The engine's command line for one (tp, pp, replicas) replica, and how replicas are laid out; `fabric`
    joins the servers of a replica whose pipeline stages span several."""
    tp, pp, replicas = shape
    seqs = _max_seqs(estimate, slo_concurrency)
    notes = [NO_FABRIC_NOTE] if (config.nodes > 1 or replicas > 1) and fabric is None else []
    if fabric is not None:
        notes.append(PIPELINE_NOTE.format(pp=pp, fabric=fabric))
    repo = model_repo or model.name
    notes += _format_notes(cfg, repo)
    return {
        "engine": cfg.engine,
        "command": " ".join(_command(repo, cfg, tp, pp, seqs)),
        "replicas": replicas,
        "gpus_per_replica": tp * pp,
        "layout": _layout(config, tp, pp, replicas, fabric),
        "needs_infiniband": fabric is not None,
        "notes": notes,
    }


def _format_notes(cfg: ServingConfig, repo: str) -> list[str]:
    """How the weights and KV cache the sizing assumed reach the engine, and batching it does not do."""
    notes = []
    weights = cfg.weight_format
    if cfg.engine == "trt-llm":
        kv = " --kv_cache_qformat fp8" if cfg.kv_format == "fp8" else ""
        if weights in TRTLLM_QFORMAT:
            notes.append(TRTLLM_CHECKPOINT_NOTE.format(repo=repo, qformat=TRTLLM_QFORMAT[weights], kv=kv))
        if cfg.kv_format == "fp8":
            notes.append(TRTLLM_KV_NOTE)
    elif weights in CHECKPOINT_NOTE:
        notes.append(CHECKPOINT_NOTE[weights].format(repo=repo))
    if cfg.batching == "static":
        notes.append(STATIC_NOTE.format(engine=cfg.engine))
    return notes


def _model_argument(repo: str, cfg: ServingConfig) -> str:
    """What the command loads: the repo, or a quantised checkpoint of it (vLLM/SGLang int4/int8; TensorRT-LLM
    every quantised format)."""
    if cfg.engine == "trt-llm" and cfg.weight_format in TRTLLM_QFORMAT:
        return QUANTISED_CHECKPOINT.format(fmt=f"{cfg.weight_format} Model Optimizer", repo=repo)
    if cfg.engine != "trt-llm" and cfg.weight_format in INTEGER_WEIGHT_FORMATS:
        return QUANTISED_CHECKPOINT.format(fmt=cfg.weight_format, repo=repo)
    return repo


def _command(repo: str, cfg: ServingConfig, tp: int, pp: int, seqs: int) -> list[str]:
    """One replica's command line: vLLM `vllm serve`, SGLang `sglang.launch_server`, `trtllm-serve`."""
    max_len, weights = cfg.context_len, cfg.weight_format
    model = _model_argument(repo, cfg)
    if cfg.engine == "sglang":
        fraction = cfg.gpu_memory_utilization or sglang_memory_fraction(tp)
        parts = ["python -m sglang.launch_server", f"--model-path {model}", f"--tp {tp}"]
        parts += [f"--pp-size {pp}", f"--nnodes {pp}"] if pp > 1 else []
        parts += [
            f"--context-length {max_len}",
            f"--mem-fraction-static {fraction:g}",
            f"--max-running-requests {seqs}",
        ]
        if cfg.kv_format == "fp8":
            parts.append("--kv-cache-dtype fp8_e5m2")
        if weights in ONLINE_QUANTIZATION:
            parts.append(f"--quantization {ONLINE_QUANTIZATION[weights]}")
        return parts
    if cfg.engine == "trt-llm":
        fraction = cfg.gpu_memory_utilization or ENGINE_DEFAULTS["trt-llm"].memory_fraction
        parts = [f"trtllm-serve {model}", f"--tp_size {tp}"] + ([f"--pp_size {pp}"] if pp > 1 else [])
        parts += [f"--max_seq_len {max_len}", f"--max_batch_size {seqs}"]
        parts.append(f"--kv_cache_free_gpu_memory_fraction {fraction:g}")
        return parts + ([f"--extra_llm_api_options {TRTLLM_KV_OPTIONS}"] if cfg.kv_format == "fp8" else [])
    fraction = cfg.gpu_memory_utilization or ENGINE_DEFAULTS["vllm"].memory_fraction
    parts = ["vllm serve", model, f"--tensor-parallel-size {tp}"]
    parts += [f"--pipeline-parallel-size {pp}"] if pp > 1 else []
    parts += [f"--max-model-len {max_len}", f"--gpu-memory-utilization {fraction:g}", f"--max-num-seqs {seqs}"]
    if cfg.kv_format == "fp8":
        parts.append("--kv-cache-dtype fp8")
    if weights in ONLINE_QUANTIZATION:
        parts.append(f"--quantization {ONLINE_QUANTIZATION[weights]}")
    return parts


def _layout(config: Configuration, tp: int, pp: int, replicas: int, fabric: str | None) -> str:
    if fabric is not None:
        return (
            f"{replicas} replica(s) of {pp} servers: TP {tp} inside each server, {pp} pipeline stages across "
            f"servers joined by {fabric}; vLLM runs each replica as one Ray cluster (ray start --head on the "
            "first server, ray start --address on the others, the command on the head), behind a load balancer"
        )
    per_node = config.cards_per_node // (tp * pp) if config.cards_per_node >= tp * pp else 0
    return (
        f"{replicas} replica(s) of {tp * pp} GPU(s): {per_node} per server, each pinned with CUDA_VISIBLE_DEVICES "
        "to its own GPUs and listening on its own port, behind a load balancer"
    )


def check_serving_plan(model: ModelSpec, tp: int, pp: int) -> None:
    """Field-named errors for a TP/PP split the engines refuse."""
    if not valid_tp(model, tp):
        raise EstimatorError(
            f"tp {tp} must divide the model's {model.heads} attention heads (and its {model.kv_heads} KV heads "
            "must divide or be divided by it)",
            field="plan.tp",
        )
    if pp > model.layers:
        raise EstimatorError(f"pp {pp} exceeds the model's {model.layers} layers", field="plan.pp")
