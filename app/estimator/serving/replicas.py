"""The SLO solver: the fewest replicas that meet the SLO at the peak, steered by the closed forms
(`steer_replicas`) and decided by the simulation (`replicas_for_slo`), and one replica's capacity within the SLO
(`replica_capacity`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from app.estimator.serving.config import ServingConfig
from app.estimator.serving.engines import _request_overhead_s
from app.estimator.serving.memo import _hardware, _where
from app.estimator.serving.memory import held_sequences
from app.estimator.serving.operating_point import _capacity_point
from app.estimator.serving.rules import validate_config
from app.estimator.serving.scope import _MEMO
from app.estimator.serving.simulation import _Load, _load, _saturated_before_run, _simulate, meets_at_peak
from app.estimator.serving.step import _step_s
from app.estimator.serving_levers import check_draft
from app.estimator.serving_sim import PERCENTILE_LEVELS, LoadLatency, interrupted_tpot_estimate, queue_wait_estimate
from app.estimator.specs import Cluster, EstimatorError, ModelSpec


def _steer(load: _Load, peak_rps: float, start: int) -> int | None:
    """The fewest replicas (≥ start) the closed forms allow at the peak, each replica below saturation and within
    the targets at the SLO's percentile: TTFT, the prefill of an idle replica plus the M/D/1-class queue before
    it (queue_wait_estimate); TPOT, the decode step with the prompts that arrive meanwhile prefilled in its steps
    (interrupted_tpot_estimate). None: even an idle replica misses the TTFT target."""
    cfg = load.cfg
    if cfg.slo_ttft_ms is not None and load.isolated_s * 1e3 > cfg.slo_ttft_ms:
        return None
    low = max(start, math.floor(peak_rps / load.top_rps) + 1 if load.top_rps > 0 else start)
    if _steer_meets(load, peak_rps / low):
        return low
    step, failed = 1, low
    while not _steer_meets(load, peak_rps / (failed + step)):
        failed, step = failed + step, step * 2
        if failed > 1_000_000:
            return None
    high = failed + step
    while high - failed > 1:
        mid = (failed + high) // 2
        if _steer_meets(load, peak_rps / mid):
            high = mid
        else:
            failed = mid
    return high


def _steer_meets(load: _Load, rate: float) -> bool:
    """The closed forms' verdict for one replica at `rate` requests/s."""
    cfg, hw = load.cfg, load.hw
    if rate >= load.top_rps:
        return False
    level = PERCENTILE_LEVELS[cfg.slo_percentile]
    prefill = load.isolated_s - _request_overhead_s(cfg)  # the queue's service: the server's fixed cost holds no GPU
    wait = queue_wait_estimate(rate / hw.ranks, prefill, level)  # DP attention: each rank queues its own prompts
    if cfg.slo_ttft_ms is not None and (load.isolated_s + wait) * 1e3 > cfg.slo_ttft_ms:
        return False
    if cfg.slo_tpot_ms is None:
        return True
    out = cfg.output_tokens
    alone = _step_s(hw, 1.0, cfg.input_tokens + out / 2, 0.0, 0.0)[0] / hw.tokens_per_step
    in_flight = max(1.0, rate * (prefill + (out - 1) * alone * hw.pp))  # Little's law in the engine, idle latencies
    step = hw.pp * _step_s(hw, max(1.0, in_flight / hw.pp), cfg.input_tokens + out / 2, 0.0, 0.0)[0]
    step /= hw.tokens_per_step
    # DP attention: the ranks' prompts are taken as prefilled side by side, one interruption for `ranks` prompts
    return interrupted_tpot_estimate(step, prefill, rate / hw.ranks, out, level) * 1e3 <= cfg.slo_tpot_ms


def steer_replicas(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, start: int = 1
) -> int | None:
    """The fewest replicas (≥ start) the closed forms allow at the peak (no simulation); None when none does. Within
    an answer's scope, once per replica, traffic and start (scope._MEMO)."""
    memo = _MEMO.get()
    key = (model, cfg, _where(cluster, tp, pp), start)
    if memo is not None and key in memo.steered:
        return memo.steered[key]
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    steered = _steer(load, cfg.requests_per_s * cfg.peak_factor, start)
    if memo is not None:
        memo.steered[key] = steered
    return steered


def replicas_for_slo(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, start: int = 1,
    most: int = 4096, granule: int = 1,
) -> tuple[int, LoadLatency] | None:  # fmt: skip
    """The fewest replicas (at most `most`) whose simulated latency at the peak (requests_per_s × peak_factor,
    shared among them) meets the SLO at its percentile, with that latency; None when no count up to `most` does.
    The search starts at `start` (a guess, e.g. the steady state's count) or the closed forms' count if larger
    (`most` where theirs exceeds it), and steps down to the fewest that meet (not below saturation) or up from
    there: O(log n) simulations; stepping down, only multiples of `granule` are tried (the replicas one server
    holds: fewer in between rent no less). The simulation decides; the closed forms, which read its tail high
    (review R2 R9: Llama-3.1-405B at 1 request/s, TP 16 on H100s, they ask 2 replicas and one meets), only
    steer."""
    if cfg.requests_per_s is None:
        raise EstimatorError.of("serving_rate_needed", field="serving.requests_per_s")
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if limit < 1:
        return None
    hw = _hardware(model, cfg, cluster, tp, pp)
    load = _load(model, cfg, hw, limit)
    peak = cfg.requests_per_s * cfg.peak_factor
    low = _steer_within(load, peak, start, most)
    if low is None:
        return None
    tried: dict[int, LoadLatency] = {}
    meets = _meeting(load, peak, tried)
    guess = max(low, start)
    tried[guess] = _simulate(load, peak / guess)  # run whatever it reads: a miss's latency steers the jump below
    if meets_at_peak(tried[guess], cfg):  # the fewest that meet lie at or below the guess: step down, as far as
        # saturation allows
        unsaturated = math.floor(peak / load.top_rps) + 1 if load.top_rps > 0 else 1
        return _fewest_below(max(1, min(unsaturated, guess)), guess, meets, tried, granule)
    failed = guess
    if cfg.slo_ttft_ms is not None:
        # the closed form again, on the prefill time that reproduces the simulated wait (decodes share the
        # prefill's steps, so the simulated service is longer than an idle replica's)
        fitted = replace(load, isolated_s=_fitted_service(load, peak / guess, tried[guess]))
        jump = _steer(fitted, peak, guess + 1)
        if jump is not None and jump <= most:
            if meets(jump):
                return _fewest(guess, jump, meets, tried)
            failed = jump
    # steps that double until one meets, then the interval halved back to the fewest that meet
    step = max(1, failed // 8)
    while True:
        high = min(most, failed + step)
        if meets(high):
            break
        if high == most:
            return None
        failed, step = high, step * 2
    return _fewest(failed, high, meets, tried)


def _meeting(load: _Load, peak: float, tried: dict[int, LoadLatency]) -> Callable[[int], bool]:
    """Whether a count of replicas meets the SLO at the peak, its simulated latency kept in `tried`; a count saturated
    before a run misses without one (nothing of it is read but that)."""

    def meets(replicas: int) -> bool:
        if _saturated_before_run(load, peak / replicas):
            return False
        tried[replicas] = _simulate(load, peak / replicas)
        return meets_at_peak(tried[replicas], load.cfg)

    return meets


def _steer_within(load: _Load, peak: float, start: int, most: int) -> int | None:
    """The closed forms' count (≥ start), or `most` where theirs exceeds it (they read the simulated tail high:
    the simulation decides) and `most` replicas are not saturated at the peak; None where even an idle replica
    misses the TTFT target, or `most` saturate."""
    low = _steer(load, peak, start)
    if low is None:
        return None
    if low <= most:
        return low
    return most if load.top_rps <= 0 or peak / most < load.top_rps else None


def _fewest_below(
    low: int, high: int, meets: Callable[[int], bool], tried: dict[int, LoadLatency], granule: int = 1
) -> tuple[int, LoadLatency]:
    """The fewest replicas in [low, high] that meet, high meeting, among high and the multiples of `granule`:
    steps down that double until one fails (or low is reached), then bisection."""
    step = max(1, high // (8 * granule))
    bottom = -(-low // granule) * granule  # the first multiple of granule at or above low
    while True:
        probe = max(bottom, ((high - 1) // granule - step + 1) * granule)
        if probe >= high:
            return high, tried[high]
        if not meets(probe):
            return _fewest(probe, high, meets, tried, granule)
        high, step = probe, step * 2


def _fewest(
    failed: int, high: int, meets: Callable[[int], bool], tried: dict[int, LoadLatency], granule: int = 1
) -> tuple[int, LoadLatency]:
    """The fewest replicas in (failed, high] that meet, high meeting, among high and the multiples of `granule`
    (failed one of them): bisection."""
    while True:
        mid = failed + ((high - failed) // granule // 2) * granule
        if mid <= failed or mid >= high:
            return high, tried[high]
        if meets(mid):
            high = mid
        else:
            failed = mid


def _fitted_service(load: _Load, rate: float, latency: LoadLatency) -> float:
    """The idle-replica TTFT (`_Load.isolated_s`) whose prefill as the service time makes the closed form's TTFT at
    the SLO's percentile the simulated one (the server's fixed cost per request is latency, not service)."""
    level = PERCENTILE_LEVELS[load.cfg.slo_percentile]
    ttft = latency.ttft.at(load.cfg.slo_percentile)
    served = _request_overhead_s(load.cfg)
    low, high = load.isolated_s - served, 1.0 / rate  # the closed form is infinite at ρ = 1
    if latency.saturated or ttft <= low + served:
        return (high if latency.saturated else low) + served
    for _ in range(40):
        mid = (low + high) / 2
        if mid + served + queue_wait_estimate(rate, mid, level) < ttft:
            low = mid
        else:
            high = mid
    return low + served


def replica_capacity(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1
) -> tuple[float, float]:
    """(requests/s, concurrency) of one tp × pp replica at the highest concurrency that meets the SLO (all it
    holds without an SLO); (0, 0) when not even one sequence fits or meets it. Within an answer's scope, once per
    replica and traffic (scope._MEMO: a large catalog's SKUs of one GPU type share their replicas)."""
    memo = _MEMO.get()
    if memo is None:
        return _replica_capacity(model, cfg, cluster, tp, pp)
    key = (model, cfg, _where(cluster, tp, pp))
    found = memo.capacities.get(key)
    if found is None:
        found = memo.capacities[key] = _replica_capacity(model, cfg, cluster, tp, pp)
    return found


def _replica_capacity(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, pp: int) -> tuple[float, float]:
    validate_config(cfg)
    check_draft(model, cfg.speculative)
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if limit < 1:
        return 0.0, 0.0
    point = _capacity_point(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    return (point.requests_per_s, point.concurrency) if point else (0.0, 0.0)
