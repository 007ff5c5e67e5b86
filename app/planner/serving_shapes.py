"""One offer's serving deployments weighed by the closed forms (app/planner/serving.py): its tensor × pipeline
shapes, the replicas each needs for the peak, the smallest configuration that holds them, priced. PURE."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from app.estimator.serving import (
    ServingEstimate,
    estimate_serving,
    kv_cache_tokens,
    max_concurrency,
    replica_capacity,
    sequence_kv_tokens,
    steer_replicas,
)
from app.estimator.serving_levers import pipelines_with
from app.estimator.specs import Cluster, ModelSpec
from app.estimator.vocabulary import TERM_MONTHS
from app.planner.misses import slo_params
from app.planner.offers import DAYS_PER_BILLED_MONTH, Configuration, Constraints, Offer, price
from app.planner.serving_dp_attention import dp_attention_degrees
from app.planner.serving_launch import launch_block, replica_max_seqs
from app.planner.serving_misses import miss_key, queues_for_slots, slo_miss, slot_params
from app.planner.serving_multinode import cross_node_degrees
from app.planner.serving_option import TP_DEGREES, Ask, ServingOption, per_million_tokens, replica_cluster, valid_tp


def _configuration(offer: Offer, gpus: int, constraints: Constraints) -> Configuration | None:
    """The smallest rentable configuration with at least `gpus` cards (independent replicas may span servers)."""
    if offer.rental_unit == "card":
        counts = [c for c in sorted(offer.card_counts) if c >= gpus]
        return Configuration(counts[0], 1) if counts else None
    nodes = math.ceil(gpus / offer.gpus_per_node)
    return Configuration(offer.gpus_per_node, nodes) if nodes <= constraints.max_nodes else None


@dataclass(slots=True)
class OfferShapes:
    """One offer's shapes weighed by the closed forms."""

    candidates: list[ServingOption]  # the offer's deployments that meet the SLO by the closed forms
    miss: ServingOption | None  # its nearest deployment that does not
    # why the offer has no deployment at all: the weights leave no KV cache at any degree (a SKU of servers without
    # a fabric cannot pipeline either), or the smallest shape is refused for the SKU's size limits
    why_not: tuple[str, dict[str, Any]]
    # the fewest-GPU shape refused for the SKU's size limits whose one request meets the SLO: where the shapes it
    # rents miss even one request at a time, the size limit (max_nodes) is what binds
    capable: tuple[int, dict[str, Any]] | None
    evaluations: int


def offer_shapes(ask: Ask, offer: Offer, region: str) -> OfferShapes:
    """The offer's tensor × pipeline shapes, fewest GPUs first; pipelines across servers only for what one server
    cannot serve."""
    one_server = offer.rental_unit == "node" and not offer.may_span_nodes
    found = OfferShapes([], None, ("gpu_memory", {"gpu": offer.gpu.name, "one_server": one_server}), None, 0)
    smallest: int | None = None  # GPUs of the smallest deployment refused for the SKU's size limits
    pipelines = pipelines_with(ask.cfg.engine, ask.cfg.speculative)
    for tp, pp in _shapes(ask, offer, pipelines):
        if any(c.tp * c.pp < tp * pp for c in found.candidates) and tp * pp > offer.gpus_per_node:
            break  # servers beyond the fewest that serve it
        found.evaluations += 1
        option, reason, one_meets = _evaluate(ask, offer, region, tp, pp)
        if option is None:
            if reason and (smallest is None or reason[0] < smallest):  # the shape needing the fewest GPUs
                smallest, found.why_not = reason[0], ("max_nodes", reason[1])
            if reason and one_meets and (found.capable is None or reason[0] < found.capable[0]):
                found.capable = reason
            continue
        if not option.misses:
            found.candidates.append(option)
        elif found.miss is None or miss_key(option) < miss_key(found.miss):
            found.miss = option
    if not pipelines and not found.candidates and found.miss is None and _may_pipeline(ask.model, offer):
        spec = ask.cfg.speculative
        found.why_not = ("pp_speculative", {"engine": ask.cfg.engine, "method": spec.method if spec else ""})
    return found


def most_replicas(ask: Ask, offer: Offer, gpus_per_replica: int) -> int:
    """The most replicas the offer rents (its largest card count, or max_nodes servers)."""
    if offer.rental_unit == "card":
        return max(offer.card_counts, default=0) // gpus_per_replica
    return ask.constraints.max_nodes * offer.gpus_per_node // gpus_per_replica


def _shapes(ask: Ask, offer: Offer, pipelines: bool = True) -> Iterator[tuple[int, int]]:
    """(tp, pp) per replica: every TP degree within a server; then, per count of servers (2, 3, …) where the SKU's
    fabric joins them, TP over all their GPUs (app/planner/serving_multinode.py) and a server's TP with one pipeline
    stage per server (where the engine pipelines with the request's levers)."""
    model = ask.model
    if ask.cfg.dp_attention:
        yield from ((gpus, 1) for gpus in dp_attention_degrees(model, ask.cfg, offer, ask.constraints.max_nodes))
        return
    for tp in TP_DEGREES:
        if tp <= offer.gpus_per_node and valid_tp(model, tp):
            yield tp, 1
    if offer.rental_unit != "node" or not offer.may_span_nodes:
        return
    pipeline = pipelines and _may_pipeline(model, offer)
    for servers in range(2, ask.constraints.max_nodes + 1):
        for tp in cross_node_degrees(model, ask.cfg, offer, servers):
            if valid_tp(model, tp):
                yield tp, 1
        if pipeline and servers <= model.layers:
            yield offer.gpus_per_node, servers


def _may_pipeline(model: ModelSpec, offer: Offer) -> bool:
    return offer.rental_unit == "node" and offer.may_span_nodes and valid_tp(model, offer.gpus_per_node)


def _evaluate(
    ask: Ask, offer: Offer, region: str, tp: int, pp: int
) -> tuple[ServingOption | None, tuple[int, dict[str, Any]] | None, bool]:
    """The option of `tp` × `pp` replicas on the offer; or None with (GPUs needed, why) when the SKU cannot rent
    that many, or None alone when the weights leave no KV cache. Last: whether one request at a time meets the
    SLO on such a replica."""
    model, cfg, peak_factor = ask.model, ask.cfg, ask.peak_factor
    node = replica_cluster(offer, tp, pp)
    stated = cfg.max_model_len  # a stated longest request: one must fit the cache a sequence may use (one rank's)
    short = stated is not None and sequence_kv_tokens(model, cfg, offer.gpu, tp, pp) < stated
    if short or max_concurrency(model, cfg, offer.gpu, tp, pp) < 1:
        if kv_cache_tokens(model, cfg, offer.gpu, tp, pp) < 1:
            return None, None, False  # the weights leave no cache at all: rejected for memory
        return _sequence_too_long(ask, offer, region, node, (tp, pp)), None, False
    one = estimate_serving(model, replace(cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    per_replica, slo_concurrency = replica_capacity(model, cfg, node, tp=tp, pp=pp)
    replicas, limited = 1, None
    if cfg.requests_per_s is not None and per_replica > 0:
        replicas = max(1, math.ceil(cfg.requests_per_s * peak_factor / per_replica - 1e-9))
        # the closed forms' queue before the prefill at the peak (the simulation checks the shown options)
        steady = replicas
        replicas = steer_replicas(model, cfg, node, tp=tp, pp=pp, start=replicas) or replicas
        most = most_replicas(ask, offer, tp * pp)
        if steady <= most < replicas:
            replicas = most  # the closed forms read the simulated tail high: the simulation decides (serving_verify)
        elif 1 <= most < steady:  # more than the SKU rents: a near miss at the most it rents, naming the limit
            limited = _limit_params(ask, offer, tp * pp, replicas, most)
            replicas = most
    option, reason = with_replicas(ask, offer, region, (tp, pp), replicas, (one, per_replica, slo_concurrency))
    if option is not None and limited is not None:
        option.misses.append(("max_nodes", limited))
    return option, reason, one.meets_slo is not False


def _limit_params(ask: Ask, offer: Offer, replica_gpus: int, needed: int, most: int | None = None) -> dict[str, Any]:
    """A `max_nodes` miss's or refusal's parameters: the replicas the peak needs by the closed forms, and for a miss
    the most the SKU rents (`most`: its max_nodes servers, or its largest card count); max_nodes for a SKU rented by
    the server."""
    params: dict[str, Any] = {"replicas": needed, "replica_gpus": replica_gpus}
    if most is not None:
        params["most"] = most
    if offer.rental_unit != "card":
        params["max_nodes"] = ask.constraints.max_nodes
    return params


def with_replicas(
    ask: Ask,
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
    node = replica_cluster(offer, tp, pp)
    config = _configuration(offer, tp * pp * replicas, ask.constraints)
    if config is None:
        return None, (replicas * tp * pp, _limit_params(ask, offer, tp * pp, replicas))
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
        option.misses.append(slo_miss(cfg, one, peak))
    elif not slo_params(cfg) and queues_for_slots(cfg, peak):
        # no target to judge the wait by: a shape whose clients queue for its sequence slots is still not the
        # deployment asked for (review R7: 2,048 per replica on one A100 40 GB card, 128 slots, ranked first at a
        # TTFT of 235 s)
        option.misses.append(("kv_slots_wait", slot_params(cfg, peak)))
    elif cfg.requests_per_s is not None and peak.requests_per_s < cfg.requests_per_s * peak_factor * (1 - 1e-3):
        carried = {"replicas": replicas, "carried": peak.requests_per_s, "offered": offered}
        option.misses.append(("peak_load", carried))
    return option, None


def _option(
    ask: Ask,
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
            ask.model, ask.cfg, (tp, pp, replicas), config, at_load, slo_concurrency, ask.served, fabric=fabric
        ),
        notes=list(at_load.notes),
        dp_attention=ask.cfg.dp_attention,
        max_seqs=replica_max_seqs(at_load, slo_concurrency),
    )


def _sequence_too_long(
    ask: Ask, offer: Offer, region: str, node: Cluster, split: tuple[int, int]
) -> ServingOption | None:
    """A near miss: the KV cache exists but is shorter than one sequence of the requested lengths."""
    tp, pp = split
    config = _configuration(offer, tp * pp, ask.constraints)
    if config is None:
        return None
    result = estimate_serving(ask.model, replace(ask.cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    option = _option(ask, offer, region, (tp, pp, 1), config, (result, result), 1.0, 0.0)
    # the cache one sequence may use: under DP attention one rank's
    tokens = {"context_len": ask.cfg.context_len, "kv_cache_tokens": result.sequence_kv_tokens, "tp": tp}
    option.misses.append(("sequence_too_long", tokens))
    return option
