"""Latency under load: one replica's scheduler and step handed to the simulation (app/estimator/serving_sim.py),
its runs memoised per answer and their TTFT held to the M/D/1 queue's floor on the prefill and the M/D/c queue's on
the sequence slots, the simulated latency at the peak (`peak_latency`), an offline run's output rate and the SLO
judged on the simulated percentile (`meets_at_peak`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.estimator.serving.config import ServingConfig
from app.estimator.serving.engines import (
    ENGINE_DEFAULTS,
    _batched_tokens,
    _max_num_seqs,
    _overlap_loop,
    _request_overhead_s,
)
from app.estimator.serving.memo import _hardware, _where
from app.estimator.serving.memory import held_sequences, sequence_kv_tokens
from app.estimator.serving.operating_point import _isolated_ttft_s, _launch_slots, _operating_point
from app.estimator.serving.scope import _MEMO
from app.estimator.serving.step import _Hardware, _sim_decode, _sim_step
from app.estimator.serving_run import DecodeTime, Scheduler, StepTime
from app.estimator.serving_sim import (
    PERCENTILES,
    Lengths,
    LoadLatency,
    Quantiles,
    finite_run_output_rate,
    md1_ttft_floor,
    mdc_wait_quantiles,
    simulate,
)
from app.estimator.specs import Cluster, ModelSpec


def _lengths(cfg: ServingConfig, kv_tokens: int) -> tuple[Lengths, Lengths]:
    """Prompt and output lengths: constant at the means, or lognormal through the stated 95th percentiles, a
    drawn length no longer than max_model_len or the KV cache one sequence may use (an engine refuses a longer
    request)."""
    cap = min(cfg.max_model_len or kv_tokens, kv_tokens)
    prompts = Lengths(cfg.input_tokens, cfg.input_tokens_p95, max(cap, cfg.input_tokens))
    return prompts, Lengths(cfg.output_tokens, cfg.output_tokens_p95, max(cap, cfg.output_tokens))


def _scheduler(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, slots: int | None = None) -> Scheduler:
    """The scheduler the simulation runs: the replica's, or under DP attention one rank's (its own token budget,
    max_num_seqs and KV cache: each request is scheduled on one rank, its prompt chunked there alone). `slots`: the
    sequences the replica's launch admits where it caps them below what the KV cache holds (`_Load.slots`, each rank
    its share rounded up, as serving_launch passes --max-num-seqs per DP rank); the engine's max_num_seqs otherwise."""
    return Scheduler(
        token_budget=_batched_tokens(cfg, hw.gpu),
        max_seqs=-(-slots // hw.ranks) if slots is not None else _max_num_seqs(cfg, hw.gpu),
        kv_tokens=sequence_kv_tokens(model, cfg, hw.gpu, hw.tp, hw.pp),
        block=ENGINE_DEFAULTS[cfg.engine].block_size,
        mixed=ENGINE_DEFAULTS[cfg.engine].mixed_prefill,
        lookahead=int(_overlap_loop(cfg)),
        reserve=ENGINE_DEFAULTS[cfg.engine].kv_reserve_share,
    )


def _rank_step(hw: _Hardware) -> tuple[StepTime, DecodeTime]:
    """The simulated scheduler's step and decode-only step. Under DP attention the simulation runs one rank and every
    rank is taken to run a batch like it (balanced ranks, as _operating_point takes them): the step model, which counts
    a step's sequences and tokens over the whole replica, sees `ranks` times the rank's (the expert GEMMs and the
    all-to-all carry every rank's tokens)."""
    step, decode, n = _sim_step(hw), _sim_decode(hw), hw.ranks
    if n == 1:
        return step, decode

    def balanced(decodes: int, kv: float, prefill: int, span: float) -> float:
        return step(decodes * n, kv * n, prefill * n, span * n)

    def balanced_decode(decodes: int, kv: float) -> float:  # balanced(decodes, kv, 0, 0.0): n × 0 is 0
        return decode(decodes * n, kv * n)

    return balanced, balanced_decode


@dataclass(frozen=True, slots=True)
class _Load:
    """One tp × pp replica under a load: what the simulation and the closed forms need of it."""

    model: ModelSpec
    cfg: ServingConfig
    hw: _Hardware
    top_rps: float  # requests/s one replica completes at most (all it holds in flight)
    isolated_s: float
    key: tuple[object, ...] = ()  # what a simulation depends on besides the rate, for the memo
    limit: int = 1  # the sequences one replica holds under load by its engine's KV rule (memory.held_sequences)
    slots: int = 1  # the sequences its launch admits (--max-num-seqs: operating_point._launch_slots), at most limit

    @property
    def service_s(self) -> float:
        """The service time of the M/D/1 queue in front of a prompt: its prefill on an idle replica (the engine's fixed
        per-request cost left out: it holds no GPU), and a prefill pool's KV transfer after it."""
        return self.isolated_s - _request_overhead_s(self.cfg) + self.cfg.kv_transfer_s

    def utilization(self, rate: float, latency: LoadLatency) -> float:
        """The busier of the replica's resources at `rate`: compute (rate ÷ the most it completes), the prompts'
        share of its time (rate × service_s, the M/D/1 queue's load) and the KV cache's sequence slots (Little's
        law: rate × the simulated time a request holds its KV ÷ the slots its launch admits), so a replica whose queue
        grows for want of KV cache or of slots reads at least 1."""
        prompts = rate / self.hw.ranks  # DP attention: each rank prefills its own prompts
        return max(rate / self.top_rps, prompts * self.service_s, rate * latency.held_s / self.slots)


def _load(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Load:
    top = _operating_point(model, cfg, hw, limit).requests_per_s
    key = hw.key or (model, replace(cfg, requests_per_s=None), _where(hw.cluster, hw.tp, hw.pp))
    slots = _launch_slots(model, cfg, hw, limit)
    return _Load(model, cfg, hw, top, _isolated_ttft_s(model, cfg, hw), key, limit, slots)


def _saturated_before_run(load: _Load, rate: float) -> bool:
    """Saturated at `rate` whatever a run would read: at or past what the replica completes at most, or with its
    prompts alone keeping it busy (`_run_simulation` and `_held_to_md1` mark both saturated), or with its sequence
    slots full at the steady state's time a request holds one (`_admission` marks it saturated on the longer of that
    time and the run's own: the run can only add to it): no run is needed to know that it misses the SLO (the serving
    mix's replica searches ran 6 such runs in 48, all saturated)."""
    if rate >= load.top_rps or rate / load.hw.ranks * load.service_s >= 1:
        return True
    slots = _rank_slots(load)
    return _slots_full(load, rate, _steady_hold_s(load, slots, rate), slots)


def _meets(load: _Load, rate: float) -> bool:
    """meets_at_peak of the replica's simulated latency at `rate`, without a run where it is saturated before one."""
    return not _saturated_before_run(load, rate) and meets_at_peak(_simulate(load, rate), load.cfg)


def _simulate(load: _Load, rate: float) -> LoadLatency:
    """Simulated latencies of one replica at `rate` requests/s (reused within a `simulations` block)."""
    memo, key = _MEMO.get(), (*load.key, rate)
    found = memo.runs.get(key) if memo is not None else None
    if found is None:
        found = _run_simulation(load, rate)
        if memo is not None:
            memo.runs[key] = found
    return found


def _run_simulation(load: _Load, rate: float) -> LoadLatency:
    capped = load.slots if load.slots < load.limit else None  # the launch admits fewer than the KV cache holds
    scheduler, ranks = _scheduler(load.model, load.cfg, load.hw, capped), load.hw.ranks
    prompts, outputs = _lengths(load.cfg, scheduler.kv_tokens)
    step, decode = _rank_step(load.hw)
    latency = simulate(
        step, scheduler, rate / ranks, prompts, outputs,  # DP attention: one rank's share of the arrivals
        seed=load.cfg.seed, per_request_s=_request_overhead_s(load.cfg),
        cached_share=load.cfg.prefix_cache_hit_rate, tokens_per_step=load.hw.tokens_per_step,
        decode_time=decode,
    )  # fmt: skip
    if ranks > 1:
        latency = replace(latency, running=latency.running * ranks)  # the replica's ranks together
    latency = _held_to_md1(latency, load, rate)
    latency = _admission(latency, load, rate)
    # beyond what the replica completes at most, or its KV slots (or prompts) loaded to 1 or more: the queue grows,
    # whatever a finite run's queue at its last arrival read (`_Load.utilization`)
    if not latency.saturated and (rate >= load.top_rps or load.utilization(rate, latency) >= 1):
        return replace(latency, saturated=True)
    return latency


def _held_to_md1(latency: LoadLatency, load: _Load, rate: float) -> LoadLatency:
    """The simulated latencies with each TTFT percentile at least the M/D/1 queue's on the replica's service time
    (`_Load.service_s`) at `rate`, and each end-to-end percentile later by as much as its TTFT's was raised.

    A run of a thousand measured requests samples the tail widely at high load (an M/D/1 queue of 0.33 s prompts at
    ρ = 0.83: over 200 seeds the p90 of such runs lies between 1.66 and 4.79 s for nine in ten, its exact value
    2.40 s), and a replica count searched on one run keeps whichever its draw lets through. A replica's prompts
    queue for its prefill as an M/D/1 queue's customers do (one after another, each about its idle-replica time),
    so that queue's percentile is the floor; prompts of lognormal lengths about the same mean queue longer still
    (M/G/1: the Pollaczek-Khinchine mean grows with the service time's variance), which the simulation reads above
    it. Saturated where the prompts alone keep the replica busy (ρ ≥ 1). Under DP attention each rank is such a
    queue, with its share of the arrivals."""
    service, rate = load.service_s, rate / load.hw.ranks
    if rate * service >= 1:
        return latency if latency.saturated else replace(latency, saturated=True)
    floor = md1_ttft_floor(rate, service, load.isolated_s - service)
    ttft = Quantiles(*(max(latency.ttft.at(q), floor.at(q)) for q in PERCENTILES))
    if ttft == latency.ttft:
        return latency
    later = [latency.e2e.at(q) + ttft.at(q) - latency.ttft.at(q) for q in PERCENTILES]
    return replace(latency, ttft=ttft, e2e=Quantiles(*itertools.accumulate(later, max)))


def _admission(latency: LoadLatency, load: _Load, rate: float) -> LoadLatency:
    """The wait for a sequence slot before a request's first step: the simulated time to first token beyond an idle
    replica's, held at least to the M/D/c queue's wait (`mdc_wait_quantiles`: Erlang C and Kingman's heavy-traffic
    tail extended to c servers, Köllerström, J. Appl. Prob. 11, 1974) on the `slots` its launch admits, each held
    the simulated mean time a request keeps its KV (`held_s`); TTFT and end-to-end raised by as much.

    A run of a thousand requests rarely fills 34 slots held 11 s each at ρ = 0.99 long enough to show the wait the
    queue settles to (review R8-2: the SGLang decode pool sized to 99 % of its slots read no wait). A disaggregated
    decode replica records the wait (`LoadLatency.admission`, part of the joined TTFT: serving_disagg.joined). A
    colocated replica's simulation already admits at most its launch's --max-num-seqs and queues the rest (the wait is
    in its TTFT, sampled as widely as the M/D/1 queue's, `_held_to_md1`): the floor is applied only where the queue's
    percentile lies above it (a maximum, so the wait is never counted twice), and a replica whose slots are loaded to
    1 or more is saturated."""
    pool, ranks = load.cfg.decode_pool, load.hw.ranks
    slots = _rank_slots(load)
    held = max(latency.held_s, _steady_hold_s(load, slots, rate))
    if _slots_full(load, rate, held, slots):
        return latency if latency.saturated else replace(latency, saturated=True)
    floor = mdc_wait_quantiles(rate / ranks, slots, held)
    if pool:
        waits = [max(0.0, latency.ttft.at(q) - load.isolated_s, floor.at(q)) for q in PERCENTILES]
    else:  # a percentile the queue leaves at no wait keeps its simulated figure (a short prompt's below an idle one's)
        waits = [floor.at(q) if floor.at(q) > 0 else -math.inf for q in PERCENTILES]
        if max(waits) == -math.inf:
            return latency  # no queue for the slots: the simulated figures stand as they are
    ttft = [max(latency.ttft.at(q), load.isolated_s + wait) for q, wait in zip(PERCENTILES, waits, strict=True)]
    later = [latency.e2e.at(q) + first - latency.ttft.at(q) for q, first in zip(PERCENTILES, ttft, strict=True)]
    admission = Quantiles(*waits) if pool else latency.admission
    return replace(
        latency, ttft=Quantiles(*ttft), e2e=Quantiles(*itertools.accumulate(later, max)), admission=admission
    )


def _rank_slots(load: _Load) -> int:
    """The sequence slots a rank of the replica admits (DP attention shares them among its ranks), at least 1."""
    return max(1, load.slots // load.hw.ranks)


def _slots_full(load: _Load, rate: float, held: float, slots: int) -> bool:
    """A colocated replica's slots (`slots` a rank) loaded to 1 or more at `rate`, each held `held` seconds (Little's
    law, each rank its share of the arrivals); a disaggregated decode pool queues for them instead (`_admission`)."""
    return not load.cfg.decode_pool and rate / load.hw.ranks * held >= slots


def _steady_hold_s(load: _Load, slots: int, rate: float) -> float:
    """Seconds a request holds a sequence slot in the steady state at `rate`: the replica keeps N sequences in flight
    where it completes `rate` requests/s with N of them (operating_point, bisected over N up to its `slots` a rank),
    and each is held N ÷ rate (Little's law). A finite run starts empty and near saturation never reaches that queue:
    its mean holding time is a lighter batch's (review R11-1: a disaggregated decode pool at 99.6 % of the most it
    completes read a 1.3 s p99 TTFT; in the steady state its slots are all but full, each held the full batch's time,
    and the M/D/c wait on them is tens of seconds). Slots full or beyond: their full batch's time."""
    total = slots * load.hw.ranks
    top = _operating_point(load.model, load.cfg, load.hw, total).requests_per_s
    if rate <= 0 or top <= 0:
        return 0.0
    if rate >= top:
        return total / top
    low, high = 0.0, float(total)
    for _ in range(STEADY_BISECTIONS):
        middle = (low + high) / 2
        if _operating_point(load.model, load.cfg, load.hw, middle).requests_per_s < rate:
            low = middle
        else:
            high = middle
    return high / rate


# halvings of the slots in `_steady_hold_s`: the sequences in flight to 1/512 of the slots (a 256-slot replica's to
# half a sequence), finer than the simulation's own noise
STEADY_BISECTIONS = 9


def offline_run_output_tokens_per_s(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, requests: int, pp: int = 1
) -> float:
    """Output tokens/s one replica reports over a finite offline run of `requests` requests queued at once (the
    ramp-up and the drain counted, as the engines' benchmarks count them: serving_sim.finite_run_output_rate)."""
    hw = _hardware(model, cfg, cluster, tp, pp)
    scheduler = _scheduler(model, cfg, hw)
    prompts, outputs = _lengths(cfg, scheduler.kv_tokens)
    ranks = hw.ranks  # DP attention: one rank's share of the requests, the ranks side by side
    rank = finite_run_output_rate(_rank_step(hw)[0], scheduler, prompts, outputs, -(-requests // ranks), seed=cfg.seed)
    return rank * ranks


def meets_at_peak(latency: LoadLatency, cfg: ServingConfig) -> bool:
    """The SLO judged on the simulated percentile at the peak; a saturated replica never meets it."""
    if latency.saturated:
        return False
    q = cfg.slo_percentile
    if cfg.slo_ttft_ms is not None and latency.ttft.at(q) * 1e3 > cfg.slo_ttft_ms:
        return False
    return not (cfg.slo_tpot_ms is not None and latency.tpot.at(q) * 1e3 > cfg.slo_tpot_ms)


def peak_latency(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, replicas: int = 1
) -> LoadLatency | None:
    """The simulated latency of one of `replicas` replicas at the peak (requests_per_s × peak_factor shared among
    them); None when no sequence fits or no load is given."""
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    return _simulate(load, cfg.requests_per_s * cfg.peak_factor / replicas)


def peak_meets_at(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, replicas: int = 1
) -> Callable[[float], bool] | None:
    """meets_at_peak of `peak_latency_at`'s latency at a factor of the peak, without a run where the replica is
    saturated before one (`_saturated_before_run`); None when no sequence fits or no load is given."""
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load, peak = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit), cfg.requests_per_s * cfg.peak_factor
    return lambda factor: _meets(load, peak * factor / replicas)


def peak_latency_at(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, replicas: int = 1
) -> Callable[[float], LoadLatency] | None:
    """`peak_latency` with the peak scaled by a factor (the replica's quantities computed once, for several factors);
    None when no sequence fits or no load is given."""
    limit = held_sequences(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load, peak = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit), cfg.requests_per_s * cfg.peak_factor
    return lambda factor: _simulate(load, peak * factor / replicas)
