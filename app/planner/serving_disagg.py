"""Disaggregated serving deployments (`serving.disaggregated`): a prefill pool and a decode pool on separate servers of
one SKU, the KV of each request sent between them over the SKU's fabric (app/estimator/serving_disagg.py), priced as
the servers both pools occupy with the fabric add-on on each. PURE: offers in, options out.

Per offer the decode pool is sized first (the TP degree within a server and the fewest replicas whose simulated time
per token at the peak meets the target, fewest GPUs first), then the prefill pool (its TTFT target less the KV
transfer to that decode TP). Launches (app/planner/serving_launch.py `disaggregated_launch`) are each engine's own:
SGLang's PD disaggregation (python/sglang/srt/server_args.py `disaggregation_mode` prefill | decode,
`disaggregation_transfer_backend`, default mooncake) behind its router (`python -m sglang_router.launch_router
--pd-disaggregation --prefill URL --decode URL`); vLLM with NixlConnector (`--kv-transfer-config`, kv_role
kv_producer | kv_consumer) behind the proxy of its NixlConnector guide; TensorRT-LLM context and generation servers
(`cache_transceiver_config` in their LLM API options) behind `trtllm-serve disaggregated -c disagg_config.yaml`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Unpack, get_args

from app.estimator.serving import (
    ServingConfig,
    ServingEstimate,
    estimate_serving,
    max_concurrency,
    meets_at_peak,
    peak_latency,
    peak_latency_at,
    replicas_for_slo,
    simulations,
    weights_bytes,
)
from app.estimator.serving_disagg import Pools, decode_config, joined, joined_estimate, kv_transfer_s, prefill_config
from app.estimator.specs import Cluster, EstimatorError, ModelSpec
from app.estimator.vocabulary import TERM_MONTHS, Engine
from app.planner.offers import DAYS_PER_BILLED_MONTH, Configuration, Constraints, Offer, price
from app.planner.serving import _with_other_term, offer_region
from app.planner.serving_headroom import simulated_headroom
from app.planner.serving_launch import disaggregated_launch
from app.planner.serving_option import (
    TP_DEGREES,
    Ask,
    SearchOptions,
    ServingOption,
    ServingSearch,
    per_million_tokens,
    replica_cluster,
    search_ask,
    valid_tp,
)
from app.planner.serving_rank import ranking

# every engine runs prefill and decode on separate pools (SGLang PD, vLLM NixlConnector, trtllm-serve disaggregated)
DISAGGREGATED_ENGINES: tuple[str, ...] = get_args(Engine)


def check_disaggregated(cfg: ServingConfig) -> None:
    """422 on serving.disaggregated where its launches are not built or it is not modelled."""
    if cfg.engine not in DISAGGREGATED_ENGINES:
        raise EstimatorError.of(
            "disaggregated_engine",
            field="serving.disaggregated",
            engines=list(DISAGGREGATED_ENGINES),
            engine=cfg.engine,
        )
    if cfg.requests_per_s is None or cfg.batching != "continuous":
        raise EstimatorError.of("disaggregated_load", field="serving.disaggregated")


def search_disaggregated(
    model: ModelSpec, cfg: ServingConfig, offers: list[Offer], constraints: Constraints, **how: Unpack[SearchOptions]
) -> ServingSearch:
    """The cheapest disaggregated deployment per offer that carries the peak within the SLO (one option per SKU)."""
    check_disaggregated(cfg)
    ask = search_ask(model, cfg, constraints, how)
    options: list[ServingOption] = []
    rejected: list[tuple[str, str, dict[str, Any]]] = []
    with simulations():
        for offer in offers:
            region = offer_region(offer, constraints, cfg, rejected)
            if region is None:
                continue
            if offer.rental_unit != "node" or offer.inter_node_fabric is None:
                rejected.append((offer.sku_id, "no_fabric", {}))
                continue
            servers = _replica_servers(ask, offer)
            if servers > 1:  # a pool replica would be pipelined across servers: not sized
                rejected.append((offer.sku_id, "disaggregated_spanning", {"servers": servers}))
                continue
            option = _deployment(ask, offer, region)
            if option is None:
                rejected.append((offer.sku_id, "disaggregated_pools", {"max_nodes": constraints.max_nodes}))
            else:
                options.append(option)
        rank = ranking(constraints)
        options = sorted(options, key=rank)[: constraints.limit]
        for option in options:
            _headroom(ask, option)
    options = sorted(options, key=rank)
    for place, option in enumerate(options, start=1):
        option.rank = place
        _with_other_term(option)
    return ServingSearch(options, [], rejected, evaluations=len(offers))


def merged(colocated: ServingSearch, disaggregated: ServingSearch, constraints: Constraints) -> ServingSearch:
    """`serving.disaggregated: "auto"`: both searches' options in one ranking."""
    rank = ranking(constraints)
    options = sorted(colocated.options + disaggregated.options, key=rank)[: constraints.limit]
    for place, option in enumerate(options, start=1):
        option.rank = place
    shown = {option.offer.sku_id for option in options}
    rejected: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for sku, code, params in colocated.rejected + disaggregated.rejected:  # once per SKU: the colocated reason binds
        if sku in shown:
            continue
        if sku not in rejected:
            rejected[sku] = (sku, code, params)
        elif code != rejected[sku][1]:  # the other search's reason, kept as a detail (`also`: its codes)
            first = rejected[sku][2]
            rejected[sku] = (sku, rejected[sku][1], first | {"also": [*first.get("also", []), code]})
    return replace(
        colocated,
        options=options,
        rejected=list(rejected.values()),
        evaluations=colocated.evaluations + disaggregated.evaluations,
    )


def _pool(
    ask: Ask, offer: Offer, config_for: Callable[[int], ServingConfig | None], gpus_left: int
) -> tuple[int, int] | None:
    """(tp, replicas) of the pool that meets its target at the peak on the fewest GPUs (the smaller TP on a tie)."""
    best: tuple[int, int, int] | None = None
    for tp in TP_DEGREES:
        if tp > offer.gpus_per_node or not valid_tp(ask.model, tp):
            continue
        cfg = config_for(tp)
        if cfg is None or max_concurrency(ask.model, cfg, offer.gpu, tp, 1) < 1:
            continue
        found = replicas_for_slo(ask.model, cfg, replica_cluster(offer, tp, 1), tp=tp, most=max(1, gpus_left // tp))
        if found is not None and (best is None or tp * found[0] < best[0]):
            best = (tp * found[0], tp, found[0])
    return (best[1], best[2]) if best else None


def _replica_servers(ask: Ask, offer: Offer) -> int:
    """1 where some tensor-parallel degree within one server holds a decode replica with room for a request's KV;
    otherwise the servers the weights alone need (at least 2). Pools size replicas within one server only."""
    cfg = decode_config(ask.cfg)
    for tp in TP_DEGREES:
        if (
            tp <= offer.gpus_per_node
            and valid_tp(ask.model, tp)
            and max_concurrency(ask.model, cfg, offer.gpu, tp, 1) >= 1
        ):
            return 1
    server_bytes = offer.gpus_per_node * offer.gpu.memory_gib * 2**30
    return (
        max(2, math.ceil(weights_bytes(ask.model, cfg.weight_format, cfg.group_size) / server_bytes))
        if server_bytes > 0
        else 2
    )


def _filled(pool: tuple[int, int], offer: Offer) -> tuple[int, int]:
    """(tp, replicas) of a pool on the whole servers it occupies: the servers are rented whole, so the GPUs its
    fewest replicas leave on them run more replicas of that pool (each pool keeps servers of its own), which only
    lowers its latency at the peak."""
    tp, replicas = pool
    servers = math.ceil(tp * replicas / offer.gpus_per_node)
    return tp, max(replicas, servers * offer.gpus_per_node // tp)


def _at_peak(
    ask: Ask, offer: Offer, pools: Pools, cfgs: tuple[ServingConfig, ServingConfig], rented_gpus: int
) -> ServingEstimate:
    """The deployment at the peak (requests_per_s × peak_factor), as a colocated option's `peak` is: each pool's
    steady state at that rate, joined (the simulated percentiles at the peak are the estimate's latency["peak"])."""
    rate = (ask.cfg.requests_per_s or 0.0) * ask.peak_factor
    at_peak = [
        estimate_serving(
            ask.model, replace(pool_cfg, requests_per_s=rate), replica_cluster(offer, tp, 1), tp=tp, replicas=n,
            simulate=False,
        )
        for pool_cfg, (tp, n) in zip(cfgs, (pools.prefill, pools.decode), strict=True)
    ]  # fmt: skip
    peak = joined_estimate(
        replace(pools, prefill_estimate=at_peak[0], decode_estimate=at_peak[1]), ask.cfg, rented_gpus
    )
    return replace(peak, requests_per_s=min(at_peak[0].requests_per_s, at_peak[1].requests_per_s))


def _headroom(ask: Ask, option: ServingOption) -> None:
    """A shown deployment's headroom, the pools' load to saturation at the peak, held to their simulated percentiles
    (`simulated_headroom`): the factor by which the peak may grow with the joined latency (the prefill pool's TTFT,
    the transfer and the decode pool's wait for a slot; the decode pool's TPOT) still within the SLO."""
    if option.pools is None or option.headroom_held or option.estimate.meets_slo is False:
        return
    option.headroom_held = True
    transfer = (option.kv_transfer_ms or 0.0) / 1e3
    pools = []
    for cfg, pool in (
        (prefill_config(ask.cfg, transfer), option.pools["prefill"]),
        (decode_config(ask.cfg), option.pools["decode"]),
    ):
        tp, replicas = pool["tp"], pool["replicas"]
        at = peak_latency_at(ask.model, cfg, replica_cluster(option.offer, tp, 1), tp=tp, replicas=replicas)
        if at is None:
            return
        pools.append(at)
    prefill_at, decode_at = pools
    option.headroom = simulated_headroom(
        option.headroom, lambda factor: meets_at_peak(joined(prefill_at(factor), decode_at(factor), transfer), ask.cfg)
    )


def _servers(offer: Offer) -> Cluster:
    """Two servers of the offer joined by its fabric: where the KV crosses."""
    return replace(replica_cluster(offer, offer.gpus_per_node, 2), nodes=2)


# servers of decode replicas tried above the fewest whose own latency meets the SLO: each more server shortens the wait
# for a slot (which the prefill pool's TTFT target then leaves room for), so the cheapest pair may hold more of them
DECODE_STEPS = 2


def _admission_s(ask: Ask, offer: Offer, decode: tuple[int, int]) -> float | None:
    """The decode pool's wait for a sequence slot at the SLO percentile at the peak; None where it saturates."""
    tp, replicas = decode
    at = peak_latency(ask.model, decode_config(ask.cfg), replica_cluster(offer, tp, 1), tp=tp, replicas=replicas)
    if at is None or at.saturated:
        return None
    return at.admission.at(ask.cfg.slo_percentile)


def _carries(ask: Ask, offer: Offer, config_for: Callable[[int], ServingConfig | None], pool: tuple[int, int]) -> bool:
    """Whether the pool (tp, replicas) meets its target under `config_for` at the peak (one simulation)."""
    cfg = config_for(pool[0])
    if cfg is None:
        return False
    at = peak_latency(ask.model, cfg, replica_cluster(offer, pool[0], 1), tp=pool[0], replicas=pool[1])
    return at is not None and meets_at_peak(at, cfg)


def _pools(ask: Ask, offer: Offer) -> tuple[tuple[int, int], tuple[int, int], float] | None:
    """(prefill, decode, the decode wait for a slot) on the fewest servers within max_nodes: the decode pool on the
    servers its fewest replicas meeting its own target occupy (filled, `_filled`) up to DECODE_STEPS servers more,
    each with the prefill pool its TTFT target less the KV transfer and that wait needs (review R8-2: the wait is
    part of the time to first token)."""
    cfg, model = ask.cfg, ask.model
    most = ask.constraints.max_nodes * offer.gpus_per_node
    fewest = _pool(ask, offer, lambda tp: decode_config(cfg), most - 1)
    if fewest is None:
        return None
    servers, decode_tp = _servers(offer), fewest[0]

    def prefill_for(wait: float) -> Callable[[int], ServingConfig | None]:
        def config(tp: int) -> ServingConfig | None:
            pcfg = prefill_config(cfg, kv_transfer_s(model, cfg, servers, tp, decode_tp), wait)
            return None if pcfg.slo_ttft_ms is not None and pcfg.slo_ttft_ms <= 0 else pcfg

        return config

    first = math.ceil(decode_tp * fewest[1] / offer.gpus_per_node)
    unhurried = _pool(ask, offer, prefill_for(0.0), most - first * offer.gpus_per_node)  # no wait: the fewest
    if unhurried is None:
        return None
    floor = math.ceil(unhurried[0] * unhurried[1] / offer.gpus_per_node)
    best: tuple[int, tuple[int, int], tuple[int, int], float] | None = None
    for decode_servers in range(first, first + DECODE_STEPS + 1):
        if best is not None and decode_servers + floor >= best[0]:
            break  # no prefill pool is smaller than the one no wait needs: more decode servers cost more
        decode = _filled((decode_tp, fewest[1]), offer) if decode_servers == first else (
            decode_tp, decode_servers * offer.gpus_per_node // decode_tp
        )  # fmt: skip
        wait = _admission_s(ask, offer, decode)
        left = most - decode_servers * offer.gpus_per_node
        if wait is None or left <= 0:
            continue
        prefill = (
            unhurried
            if _carries(ask, offer, prefill_for(wait), unhurried)
            else _pool(ask, offer, prefill_for(wait), left)
        )
        if prefill is None:
            continue
        nodes = decode_servers + math.ceil(prefill[0] * prefill[1] / offer.gpus_per_node)
        if best is None or nodes < best[0]:
            best = (nodes, prefill, decode, wait)
    return None if best is None else best[1:]


def _deployment(ask: Ask, offer: Offer, region: str) -> ServingOption | None:
    """The offer's disaggregated deployment: decode pool, then prefill pool, both within max_nodes servers."""
    cfg, model = ask.cfg, ask.model
    found = _pools(ask, offer)
    if found is None:
        return None
    prefill, decode, wait = found
    servers = _servers(offer)
    nodes = sum(math.ceil(tp * replicas / offer.gpus_per_node) for tp, replicas in (prefill, decode))
    if nodes > ask.constraints.max_nodes:
        return None
    needed = {"prefill": prefill[1], "decode": decode[1]}
    prefill, decode = _filled(prefill, offer), _filled(decode, offer)  # the servers are rented whole: no GPU idle
    transfer = kv_transfer_s(model, cfg, servers, prefill[0], decode[0])
    pcfg, dcfg = prefill_config(cfg, transfer, wait), decode_config(cfg)
    config = Configuration(offer.gpus_per_node, nodes)
    estimates = [
        estimate_serving(model, pool_cfg, replica_cluster(offer, tp, 1), tp=tp, replicas=n, replicas_needed=needed)
        for pool_cfg, (tp, n), needed in ((pcfg, prefill, needed["prefill"]), (dcfg, decode, needed["decode"]))
    ]
    pools = Pools(prefill, decode, estimates[0], estimates[1], transfer)
    joined = joined_estimate(pools, cfg, rented_gpus=config.gpus)
    peak = _at_peak(ask, offer, pools, (pcfg, dcfg), config.gpus)
    hours = TERM_MONTHS[ask.constraints.term] * DAYS_PER_BILLED_MONTH * 24.0
    cost = price(offer, config, ask.constraints.term, hours, joined=True)  # the KV crosses servers: fabric on each
    peak_use = max(joined.utilization.values()) if joined.utilization else 1.0
    shapes = {"prefill": prefill, "decode": decode}
    option = ServingOption(
        offer=offer,
        config=config,
        region=region,
        tp=decode[0],
        replicas=decode[1],
        estimate=joined,
        peak=peak,
        cost=cost,
        per_million_output_tokens=per_million_tokens(
            cost.monthly_effective, joined.output_tokens_per_s, offer.money_quantum
        ),
        headroom=1.0 / peak_use if peak_use > 0 else 0.0,  # held to the simulation if shown (`_headroom`)
        launch=disaggregated_launch(model, (pcfg, dcfg), shapes, (estimates[0], estimates[1]), ask.served, offer),
        notes=list(joined.notes),
        verified=True,
        pools={name: {"tp": tp, "replicas": n, "gpus": tp * n} for name, (tp, n) in shapes.items()},
        kv_transfer_ms=transfer * 1e3,
        pool_utilization={
            name: dict(estimate.utilization)
            for name, estimate in zip(("prefill", "decode"), estimates, strict=True)
            if estimate.utilization is not None
        }
        or None,
    )
    return option
