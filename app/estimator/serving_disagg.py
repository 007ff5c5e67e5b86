"""Disaggregated prefill and decode: one pool of replicas prefills prompts, another decodes, and each request's KV
cache moves from the first to the second over the fabric (SGLang PD disaggregation, `--disaggregation-mode prefill |
decode`, KV over Mooncake or NIXL; DistServe, Zhong et al. OSDI 2024, and Splitwise, Patel et al. ISCA 2024, for the
design). Each pool is sized by the same scheduler simulation as a colocated replica:

- The prefill pool runs requests of the given prompts and one output token (a request leaves once its first token is
  out): its simulated time to first token, plus the KV transfer, is the deployment's, judged against the TTFT target.
- The decode pool receives each request with its prompt's KV already computed: the simulation runs it with the whole
  prompt but its last token found in the cache (serving_levers' prefix cache at a hit rate of 1), so its steps carry
  decodes and no prompt chunks interrupt them; its time per output token is judged against the TPOT target.
- A decode replica admits a request only to a free sequence slot (KV for the prompt and its output; SGLang's decode
  server pre-allocates it before the transfer, `--max-running-requests`), held for the request's whole decode: the
  wait for one (`LoadLatency.admission`, at least the M/D/c queue's on the slots, serving_sim.mdc_wait_quantiles) is
  part of the time to first token, and the decode pool is sized, for every engine alike, so that the joined TTFT
  meets its target at the peak (review R8-2: an SGLang pool at 99 % of its slots read no wait).
- The KV of a prompt (all layers; each TP rank sends its shard to its peer) crosses the SKU's inter-node fabric once:
  bytes ÷ the per-GPU cross-server bandwidth plus the fabric's latency (app.estimator.interconnects).

Pure, standard library only; app.planner.serving_disagg searches the pools' TP degrees and replicas.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.estimator.interconnects import group_bandwidth, point_to_point_s
from app.estimator.serving import ServingConfig, ServingEstimate, kv_bytes_per_token, meets_at_peak
from app.estimator.serving_sim import PERCENTILES, LoadLatency, Quantiles
from app.estimator.specs import Cluster, ModelSpec


def prefill_config(cfg: ServingConfig, transfer_s: float, admission_s: float = 0.0) -> ServingConfig:
    """The prefill pool's config: one output token; the TTFT target less the KV transfer and the decode pool's wait
    for a slot at the SLO percentile (`admission_s`); no TPOT target, no speculation (the draft runs where the
    decodes do)."""
    ttft = cfg.slo_ttft_ms - (transfer_s + admission_s) * 1e3 if cfg.slo_ttft_ms is not None else None
    return replace(
        cfg, output_tokens=1, output_tokens_p95=None, slo_tpot_ms=None, slo_ttft_ms=ttft, speculative=None,
        kv_transfer_s=transfer_s,
    )  # fmt: skip


def decode_config(cfg: ServingConfig) -> ServingConfig:
    """The decode pool's config: every prompt arrives computed (all but its last token found in the cache), its wait
    for a sequence slot simulated (`decode_pool`), the TTFT target its own (that wait and its first step within it;
    the joined TTFT, the prefill pool's after it, is what the deployment is judged on)."""
    return replace(cfg, prefix_cache_hit_rate=1.0, decode_pool=True)


def kv_transfer_s(model: ModelSpec, cfg: ServingConfig, servers: Cluster, tp_prefill: int, tp_decode: int) -> float:
    """Seconds to move one mean prompt's KV cache from a prefill replica to a decode replica on another server: the
    whole cache split over the fewer TP ranks of the two, each rank over its own cross-server link."""
    total = cfg.input_tokens * kv_bytes_per_token(model, cfg.kv_format, cfg.mla_cache_values)
    link = group_bandwidth(replace(servers, nodes=max(2, servers.nodes)), 2, 1)
    return point_to_point_s(total / min(tp_prefill, tp_decode), link)


@dataclass(frozen=True, slots=True)
class Pools:
    """A disaggregated deployment's two pools: (tp, replicas) each, their estimates at the offered load (simulated at
    the load and its peak), and the KV transfer per request."""

    prefill: tuple[int, int]
    decode: tuple[int, int]
    prefill_estimate: ServingEstimate
    decode_estimate: ServingEstimate
    transfer_s: float


def _shifted(values: Quantiles, seconds: float) -> Quantiles:
    return Quantiles(values.p50 + seconds, values.p90 + seconds, values.p99 + seconds)


def joined(prefill: LoadLatency, decode: LoadLatency, transfer_s: float) -> LoadLatency:
    """A request's latency through both pools: the prefill pool's TTFT, the transfer and the decode pool's wait for a
    slot (each percentile the sum of the parts' at it: no lower than the sum's own where they rise together), then
    the decode pool's time per token; its end-to-end time the first plus the decode pool's time after its first
    step."""
    ttft = _shifted(prefill.ttft, transfer_s)
    ttft = Quantiles(*(ttft.at(q) + decode.admission.at(q) for q in PERCENTILES))
    decoding = Quantiles(
        decode.e2e.p50 - decode.ttft.p50, decode.e2e.p90 - decode.ttft.p90, decode.e2e.p99 - decode.ttft.p99
    )
    e2e = Quantiles(ttft.p50 + decoding.p50, ttft.p90 + decoding.p90, ttft.p99 + decoding.p99)
    saturated = prefill.saturated or decode.saturated
    return LoadLatency(ttft, decode.tpot, e2e, saturated, min(prefill.requests, decode.requests))


def joined_estimate(pools: Pools, cfg: ServingConfig, rented_gpus: int | None = None) -> ServingEstimate:
    """The deployment as one estimate: the decode pool's throughput, memory and KV capacity, the joined latency
    (meets_slo judged on it at the peak), every GPU rented (`rented_gpus`, else both pools') counted per token."""
    pre, dec = pools.prefill_estimate, pools.decode_estimate
    gpus = pools.prefill[0] * pools.prefill[1] + pools.decode[0] * pools.decode[1]
    gpus = max(gpus, rented_gpus or 0)
    latency = None
    meets = dec.meets_slo
    if pre.latency is not None and dec.latency is not None:
        latency = {name: joined(pre.latency[name], dec.latency[name], pools.transfer_s) for name in pre.latency}
        has_slo = cfg.slo_ttft_ms is not None or cfg.slo_tpot_ms is not None
        meets = meets_at_peak(latency["peak"], cfg) if has_slo else None
    utilization = None
    if pre.utilization is not None and dec.utilization is not None:
        utilization = {k: max(pre.utilization[k], dec.utilization[k]) for k in pre.utilization}
    average = latency["average"] if latency else None
    return replace(
        dec,
        ttft_ms=average.ttft.p50 * 1e3 if average else pre.ttft_ms + pools.transfer_s * 1e3,
        e2e_latency_ms=average.e2e.p50 * 1e3 if average else dec.e2e_latency_ms,
        output_tokens_per_s_per_gpu=dec.output_tokens_per_s / gpus,
        meets_slo=meets,
        latency=latency,
        utilization=utilization,
        isolated_ttft_ms=(pre.isolated_ttft_ms or 0.0) + pools.transfer_s * 1e3,
        request_overhead_ms=pre.request_overhead_ms,
        notes=[*dec.notes],
    )
