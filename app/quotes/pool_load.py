"""A disaggregated quote's pools against the traffic its workload states, as /recommend sized them
(app.planner.serving_disagg `_deployment`): the decode pool on `decode_config`, the prefill pool on `prefill_config`
less the KV transfer between the two pools' TP degrees over the SKU's fabric and the decode pool's wait for a slot,
each pool's replicas simulated at the peak (`estimate_serving`). A workload that states no request rate is refused
(`pools_no_load`). A pool saturated at the peak, or missing its share of the SLO there, is refused with `slo_not_met`
on `plan.pools.<pool>.replicas`, naming the replicas of its shape that carry it; else the quote freezes the
deployment's figures (`joined_estimate`) as `plan.serving`, with each pool's utilization.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.catalog.models import Sku
from app.common.errors import InvalidInput
from app.estimator.serving import ServingConfig, ServingEstimate, estimate_serving
from app.estimator.serving_disagg import Pools, decode_config, joined_estimate, kv_transfer_s, prefill_config
from app.estimator.specs import Cluster, ModelSpec
from app.planner.misses import slo_params
from app.planner.schemas import WorkloadIn
from app.planner.serving_mappers import serving_out
from app.quotes.caveats import CAVEATS, latency_caveats
from app.quotes.service import refusal

if TYPE_CHECKING:
    from app.quotes.schemas import PoolsIn

# what a serving quote freezes of its estimate (app.quotes.plan_check `_check_serving_fits` and the pools' load)
KEPT = frozenset(
    {
        "ttft_ms",
        "tpot_ms",
        "latency",
        "isolated_ttft_ms",
        "request_overhead_ms",
        "utilization",
        "replicas",
        "gpus_per_replica",
    }
    | {"meets_slo", "engine", "max_concurrency"}
)


def pools_load(
    model: ModelSpec, cfg: ServingConfig, servers: Cluster, sku: Sku, pools: PoolsIn, quantity: int, request: WorkloadIn
) -> dict[str, Any]:
    """The figures a disaggregated quote freezes (`{"serving": …}`, with the caveats on its latency: app.quotes.caveats,
    on the joined estimate as /recommend warns of them); a 422 on the pool that does not carry the peak.
    `servers`: two servers of the SKU joined by its fabric (where the KV crosses). Without a request rate there is no
    load to check the pools against, as /recommend sizes none without one (`disaggregated_load`): a 422
    `pools_no_load` on `workload.serving.requests_per_s`, never a quote issued unchecked."""
    if cfg.requests_per_s is None:
        raise refusal("workload.serving.requests_per_s", "pools_no_load", {})
    shapes = {"prefill": (pools.prefill.tp, pools.prefill.replicas), "decode": (pools.decode.tp, pools.decode.replicas)}
    transfer = kv_transfer_s(model, cfg, servers, shapes["prefill"][0], shapes["decode"][0])
    replica = replace(servers, nodes=1, inter_node_fabric=None, inter_node_gbps=None)  # a pool's replica: one server
    configs = {"decode": decode_config(cfg)}
    decode = estimate_serving(model, configs["decode"], replica, tp=shapes["decode"][0], replicas=shapes["decode"][1])
    # the prefill pool's target leaves room for the decode pool's wait for a slot, as /recommend sized it
    peak = decode.latency.get("peak") if decode.latency else None
    wait = peak.admission.at(cfg.slo_percentile) if peak is not None and not peak.saturated else 0.0
    configs["prefill"] = prefill_config(cfg, transfer, wait)
    estimates = {
        "prefill": estimate_serving(
            model, configs["prefill"], replica, tp=shapes["prefill"][0], replicas=shapes["prefill"][1]
        ),
        "decode": decode,
    }
    _check_pools(shapes, estimates, configs, sku)
    joined = joined_estimate(
        Pools(shapes["prefill"], shapes["decode"], estimates["prefill"], estimates["decode"], transfer),
        cfg,
        rented_gpus=quantity * sku.gpus_per_node,
    )
    serving = serving_out(joined, cfg).model_dump(mode="json", include=set(KEPT))
    serving["pools"] = {
        name: {"tp": tp, "replicas": n, "gpus": tp * n, "utilization": _utilization(estimates[name])}
        for name, (tp, n) in shapes.items()
    }
    serving["kv_transfer_ms"] = round(transfer * 1e3, 3)
    return {"serving": serving, CAVEATS: latency_caveats(model, cfg, joined, request)}


def _utilization(estimate: ServingEstimate) -> dict[str, float] | None:
    return None if estimate.utilization is None else {k: round(v, 3) for k, v in estimate.utilization.items()}


def _check_pools(
    shapes: dict[str, tuple[int, int]],
    estimates: dict[str, ServingEstimate],
    configs: dict[str, ServingConfig],
    sku: Sku,
) -> None:
    """Refuse the pools whose replicas are saturated at the peak, or miss the pool's target there (the prefill pool
    its TTFT less the transfer, the decode pool its TPOT): one error per such pool on its `replicas`, naming the
    replicas of its TP that carry it and the servers both pools then occupy."""
    misses = {name: miss for name in shapes if (miss := _miss(name, shapes, estimates[name], configs[name]))}
    if not misses:
        return
    carried = dict(shapes) | {
        name: (shapes[name][0], miss["needed"]) for name, miss in misses.items() if "needed" in miss
    }
    quantity = sum(math.ceil(tp * n / sku.gpus_per_node) for tp, n in carried.values())
    refused = [
        refusal(
            f"plan.pools.{name}.replicas", "slo_not_met", miss | ({"quantity": quantity} if "needed" in miss else {})
        )
        for name, miss in misses.items()
    ]
    raise InvalidInput("; ".join(r.detail for r in refused), errors=[e for r in refused for e in r.errors])


def _miss(
    name: str, shapes: dict[str, tuple[int, int]], estimate: ServingEstimate, cfg: ServingConfig
) -> dict[str, Any] | None:
    """The figures of a pool that does not carry the peak within its target (None where it does)."""
    peak = estimate.latency.get("peak") if estimate.latency else None
    saturated = peak is not None and peak.saturated
    if estimate.meets_slo is not False and not saturated:
        return None
    tp, replicas = shapes[name]
    q = cfg.slo_percentile
    params: dict[str, Any] = {"pool": name, "tp": tp, "replicas": replicas, "percentile": q, "saturated": saturated}
    params["peak_rps"] = (cfg.requests_per_s or 0.0) * cfg.peak_factor
    params["utilization"] = (estimate.utilization or {}).get("peak", 0.0)
    if peak is not None:
        params["latency_ms"] = (peak.ttft if name == "prefill" else peak.tpot).at(q) * 1e3
    needed = estimate.replicas_needed
    if needed is not None and needed > replicas:
        params |= {"needed": needed, "gpus": tp * needed}
    # the prefill pool's TTFT target is the workload's less the KV transfer: to a tenth of a ms, as a TPOT is worded
    return params | {name: round(target, 1) for name, target in slo_params(cfg).items()}
