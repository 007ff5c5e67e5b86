"""One replica's scheduler run request by request (`run_scheduler`), the loop behind app/estimator/serving_sim.py's
`simulate`: the scheduler described there, its state held in locals, the step model's terms read inline where it
has them apart (`DenseDecode`, `DenseStep`). Standard library only: the same inputs give the same floats."""

from __future__ import annotations

import functools
import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# Past this many seconds the run's clock restarts at zero whenever the replica falls idle (no request spans an
# idle gap). A float's spacing at 2^20 s is 2^-32 s (IEEE 754 binary64, 52-bit fraction), so the steps of a few
# milliseconds added to the clock keep their digits; at a near-zero rate the arrivals lie ~1e14 s out, where
# the spacing (~0.03 s) swallowed whole steps. Below it the clock is the arrivals' own, float for float.
REBASE_S: Final = float(2**20)
# A decode step no run reaches (a sentinel: a run takes a few hundred thousand), kept an int like the steps it is
# compared with.
NEVER: Final = 1 << 62

# StepTime(decode sequences, their KV tokens in total, prompt tokens prefilled, Σ chunk·(offset + chunk/2)):
# seconds. The last argument is the causal attention of the chunks (a chunk at `offset` attends to the offset
# and half of itself).
StepTime = Callable[[int, float, int, float], float]
# DecodeTime(decode sequences, their KV tokens in total): StepTime of a step that prefills nothing, to the last bit
# (the step model's decode-only case, read without the prompt's terms: most of a run's steps only decode).
DecodeTime = Callable[[int, float], float]


@dataclass(frozen=True, slots=True, eq=False)
class DenseDecode:
    """A DecodeTime linear in its terms (a dense model on one stage): memory = weights_s + kv·reads·kv_s, compute =
    flops·decodes / efficiency + attention·kv, the step the larger plus fixed + per_seq·decodes + per_token·decodes.
    `run_scheduler` reads its terms and evaluates it inline, in this order (the same floats), saving a call per step.
    Compared by identity, as DenseStep (which holds a dict and a function)."""

    weights_s: float
    kv_s: float
    reads: float
    flops: float
    efficiency: float
    attention: float
    fixed: float
    per_seq: float
    per_token: float

    def terms(self) -> tuple[float, float, float, float, float, float, float, float, float]:
        """Its nine terms in field order (what `run_scheduler` evaluates inline)."""
        return (self.weights_s, self.kv_s, self.reads, self.flops, self.efficiency, self.attention, self.fixed,
                self.per_seq, self.per_token)  # fmt: skip

    def __call__(self, decodes: int, kv: float) -> float:
        memory = self.weights_s + kv * self.reads * self.kv_s
        compute = self.flops * decodes / self.efficiency + self.attention * kv
        return (
            (compute if compute > memory else memory) + self.fixed + self.per_seq * decodes + self.per_token * decodes
        )


@dataclass(frozen=True, slots=True, eq=False)
class DenseStep(DenseDecode):
    """A StepTime of a dense model on one stage: DenseDecode's terms, and for the prompt tokens the GEMMs at the
    prefill efficiency scaled by their wave occupancy (`occupancy`, kept by tile rows in `by_rows`), weighed with the
    decodes' by their rows unless the engine packs them into one GEMM (`packed`). `run_scheduler` evaluates it inline,
    in this order (the same floats). Without prompt tokens it is its DenseDecode to the last bit (adding an int 0 or
    0.0 leaves a float as it is), so it serves as one."""

    prefill_efficiency: float
    packed: bool
    tile_rows: int
    by_rows: dict[int, float]
    occupancy: Callable[[float], float]
    eager_prefill: float = 0.0  # the least a step that prefills takes (an eager forward's host launches), 0: none

    def __call__(self, decodes: int, kv: float, prefill: int = 0, span: float = 0.0) -> float:
        tokens = decodes + prefill
        memory = self.weights_s + (kv * self.reads + prefill) * self.kv_s
        if prefill:
            share = self.by_rows.get(-(-tokens // self.tile_rows)) or self.occupancy(tokens)
            if self.packed:  # one GEMM over the decodes' and the prompt's rows
                efficiency = self.prefill_efficiency * share
            else:
                efficiency = (decodes * self.efficiency + prefill * self.prefill_efficiency * share) / tokens
        else:
            efficiency = self.efficiency
        compute = self.flops * tokens / efficiency + self.attention * (kv + span)
        bound = compute if compute > memory else memory
        if prefill and bound < self.eager_prefill:
            bound = self.eager_prefill
        return bound + self.fixed + self.per_seq * decodes + self.per_token * tokens


@dataclass(frozen=True, slots=True)
class Scheduler:
    """The engine limits the scheduler works within (per replica)."""

    token_budget: int  # max_num_batched_tokens
    max_seqs: int  # max_num_seqs
    kv_tokens: int  # the KV cache, in tokens
    block: int  # KV page, tokens
    mixed: bool = True  # decodes ride in the steps that prefill (vLLM, TensorRT-LLM); else those steps prefill alone
    # decode steps already scheduled when an arrival is received: 1 where the scheduler runs one batch ahead of the GPU
    # (SGLang's and TensorRT-LLM's overlap loops: data/engines.json overlap_schedule), so an arrival during a decode
    # step is scheduled after the step that follows it; 0 where each step's output is processed before the next
    lookahead: int = 0
    # the share of a request's output still to come that admission reserves in the KV cache (run_scheduler): 1
    # reserves its whole length and never preempts (TensorRT-LLM's default GUARANTEED_NO_EVICT); below 1 the cache is
    # allocated as tokens are generated and, when a step cannot get its tokens' blocks, the running request admitted
    # last is preempted and later recomputed (vLLM V1: 0, SGLang: its new_token_ratio). data/engines.json
    # kv_reserve_share
    reserve: float = 1.0


@dataclass(slots=True)
class Outcome:
    """What a run gives back: each request's first-token and completion times, and the queue at the last arrival."""

    start: list[float]  # arrival, first-token and completion times on the run's clock (see REBASE_S)
    first: list[float]
    finish: list[float]
    queue_at_last_arrival: int
    admitted: list[float]  # when its KV cache was reserved, on the same clock
    preemptions: int = 0
    recomputed_tokens: int = 0


def run_scheduler(scheduler: Scheduler, step_time: StepTime, arrival: list[float], prompt: list[int],  # noqa: C901
         output: list[int], cached: list[int] | None = None, tokens_per_step: float = 1.0,
         decode_time: DecodeTime | None = None) -> Outcome:  # fmt: skip
    """One run of the scheduler over the requests (arrival, lengths). Over the complexity limit by design (C901):

    The replica's state is held in locals and the steps are written out in one loop rather than as methods: the
    loop runs a few thousand events per simulation and a search runs a few simulations per candidate, so Python's
    attribute and call overheads were most of a serving answer's time. The arithmetic, and its order, is that of
    the scheduler described at the top of this module: the same inputs give the same floats.

    `cached`: each prompt's tokens found in the prefix cache (its prefill starts after them; its KV still reserved
    whole). `tokens_per_step`: tokens a decode step yields per sequence on average (speculative decoding; the
    context grows by as much a step, and a request completes after ceil((output − 1) / it) decode steps).
    `decode_time`: the step model's decode-only steps (step_time's with no prompt tokens otherwise)."""
    count = len(arrival)
    decode = decode_time or (lambda decodes, kv: step_time(decodes, kv, 0, 0.0))
    dense = decode_time if isinstance(decode_time, DenseDecode) else None
    d_weights, d_kv, d_reads, d_flops, d_eff, d_attention, d_fixed, d_per_seq, d_per_token = (
        dense.terms() if dense is not None else (0.0,) * 9
    )
    d_compute = d_seq = d_token = 0.0
    # a DenseStep's terms, evaluated inline in the steps that prefill (its __call__'s arithmetic, in its order)
    whole = step_time if isinstance(step_time, DenseStep) else None
    s_prefill_eff, s_by_rows, s_occupancy, s_packed, s_tile, s_eager = (
        (whole.prefill_efficiency, whole.by_rows, whole.occupancy, whole.packed, whole.tile_rows, whole.eager_prefill)
        if whole is not None else (0.0, {}, float, False, 1, 0.0)
    )  # fmt: skip
    s_weights, s_kv, s_reads, s_flops, s_eff, s_attention, s_fixed, s_per_seq, s_per_token = (
        whole.terms() if whole is not None else (0.0,) * 9
    )
    ceil = math.ceil
    token_budget, max_seqs, kv_tokens, block = (
        scheduler.token_budget, scheduler.max_seqs, scheduler.kv_tokens, scheduler.block
    )  # fmt: skip
    mixed, lookahead = scheduler.mixed, scheduler.lookahead
    tps = tokens_per_step
    constant = count > 0 and prompt.count(prompt[0]) == count and output.count(output[0]) == count
    if constant:
        need = [-(-(prompt[0] + output[0]) // block) * block] * count
        steps_to_finish = [output[0] - 1 if tps == 1.0 else ceil((output[0] - 1) / tps)] * count
    else:
        need = [-(-(p + o) // block) * block for p, o in zip(prompt, output, strict=True)]  # KV reserved, whole pages
        steps_to_finish = [o - 1 for o in output] if tps == 1.0 else [ceil((o - 1) / tps) for o in output]
    inf = math.inf
    first = [inf] * count
    finish = [inf] * count
    prefilled = list(cached) if cached else [0] * count  # prompt tokens prefilled (or found in the cache) so far
    # KV allocated as tokens come (Scheduler.reserve < 1): admission reserves the prompt and `share` of the output still
    # owed; a step that cannot get its tokens' KV preempts the running request admitted last, whose prefill (prompt +
    # output so far) is computed again when it is admitted anew from the front of the queue
    share = scheduler.reserve
    # (where max_num_seqs requests of the longest length fit whole, the cache never binds: both rules admit alike and
    # nothing is preempted, so the run takes the whole-length path, the faster)
    grow = share < 1.0 and count > 0 and max_seqs * max(need) > kv_tokens
    if grow:
        prompt = list(prompt)  # a preempted request's prompt becomes prompt + its output so far
    out_left = list(output)  # tokens still owed, the first included (grow only)
    order: dict[int, None] = {}  # the running requests in admission order (grow only; popitem takes the last)
    end_at = [0] * count  # the decode step a decoding request completes at, 0 when not decoding (grow only)
    pre_sum = dec_prompt = pending = 0  # Σ prompts admitted not yet decoding, Σ decodes' prompts, Σ output owed
    preemptions = recomputed = 0
    base = [0.0] * count  # prompt + 1 − the decode step at which it joined the decodes (× tokens_per_step)
    waiting: deque[int] = deque()
    prefilling: deque[int] = deque()  # admitted, prompt not yet complete; first come first served
    # (decode step after which it is complete) × count + request, in that order, as ints: a heap; a queue where every
    # request decodes as many steps and none is preempted (they complete in the order they joined the decodes, which
    # is the order of their arrival, so of their numbers: the heap's order)
    ends: list[int] | deque[int]
    if constant and not grow:
        ends = deque()
        push, pop = ends.append, ends.popleft
    else:
        ends = []
        push, pop = functools.partial(heapq.heappush, ends), functools.partial(heapq.heappop, ends)
    next_end = NEVER  # ends[0] // count, the first decode step after which a request completes (NEVER: none)
    sqrt = math.sqrt
    decoding = 0
    decode_base = 0.0  # Σ base over the decoding requests: their KV tokens = base + decoding × steps × tps
    decode_steps = 0  # decode steps so far (every decoding request advances on each)
    reserved = 0  # KV tokens reserved by the running requests
    running = 0
    start = [0.0] * count  # arrival on the run's clock
    admitted = [0.0] * count
    origin = 0.0  # the arrival time the clock counts from (0 until the arrivals pass REBASE_S)
    now = 0.0
    nxt = 0  # the next request to arrive
    completed = 0
    queue_at_last_arrival = 0
    upcoming = arrival[0] - origin if count else inf  # the next arrival on the run's clock (inf: none left)
    free = inf
    while completed < count:
        while upcoming <= now:
            start[nxt] = upcoming
            waiting.append(nxt)
            nxt += 1
            if nxt == count:  # requests without a first token yet: the queue
                queue_at_last_arrival = len(waiting) + len(prefilling)
                upcoming = inf
            else:
                upcoming = arrival[nxt] - origin
        if running == 0 and not waiting:  # idle until the next request
            if arrival[nxt] >= REBASE_S:
                origin, now = arrival[nxt], 0.0
                upcoming = arrival[nxt] - origin
            else:
                now = arrival[nxt]
            continue
        # admission: waiting requests in arrival order while a sequence slot and their KV cache are free (one
        # request is always admitted into an empty replica, as engines run a request longer than the cache's share)
        while waiting and running < max_seqs:
            head = waiting[0]
            # `reserved` (whole lengths) bounds what the running requests can come to hold: within it any rule admits
            if running and reserved + need[head] > kv_tokens:
                if not grow:
                    break
                # the cache the running requests hold after their next token, `share` of what they still owe, and
                # the head's prompt and share
                kv = decode_base + decoding * decode_steps * tps
                owed = pending - kv + dec_prompt
                if pre_sum + kv + decoding * tps + share * (owed + out_left[head]) + prompt[head] > kv_tokens:
                    break
            waiting.popleft()
            prefilling.append(head)
            reserved += need[head]
            running += 1
            if grow:
                if first[head] == inf:  # (a resumed request keeps its first admission)
                    admitted[head] = now
                order[head] = None
                pre_sum += prompt[head]
                pending += out_left[head]
            else:
                admitted[head] = now
        if grow:
            # the cache free once the decodes' next tokens have theirs (only past the whole lengths' bound: within it
            # nothing can run out)
            free = inf if reserved <= kv_tokens else (
                kv_tokens - pre_sum - decode_base - decoding * (decode_steps + 1) * tps
            )  # fmt: skip
            while free < 0 and running > 1:
                victim = order.popitem()[0]  # the running request admitted last (vLLM: self.running.pop())
                preemptions += 1
                running -= 1
                reserved -= need[victim]
                pending -= out_left[victim]
                if end_at[victim]:  # decoding: its output so far joins its prompt, to be prefilled again
                    emitted = int(base[victim] + decode_steps * tps) - prompt[victim]
                    steps_to_finish[victim] = end_at[victim] - decode_steps - 1  # the resumed prefill yields a token
                    end_at[victim] = 0
                    decoding -= 1
                    decode_base -= base[victim]
                    dec_prompt -= prompt[victim]
                    prompt[victim] += emitted
                    out_left[victim] -= emitted
                    lost = prompt[victim]
                else:  # still prefilling (the last admitted: the end of `prefilling`)
                    prefilling.remove(victim)
                    pre_sum -= prompt[victim]
                    lost = prefilled[victim]
                prefilled[victim] = cached[victim] if cached else 0
                recomputed += lost - prefilled[victim]
                waiting.appendleft(victim)
                free = (
                    inf
                    if reserved <= kv_tokens
                    else kv_tokens - pre_sum - decode_base - decoding * (decode_steps + 1) * tps
                )
        if prefilling:
            # one step: a token for every decoding request, then prompt chunks within what is left of the budget
            if mixed:
                decodes, kv = decoding, decode_base + decoding * decode_steps * tps
            else:  # a prefill batch: the running requests wait for it
                decodes, kv = 0, 0.0
            budget = token_budget - decodes
            tokens, span = 0, 0.0
            finished = 0  # the prompts this step completes: the first of `prefilling` (chunks go in its order)
            request = prefilling[0]
            offset = prefilled[request]
            if len(prefilling) == 1 and 0 < prompt[request] - offset <= budget:  # most steps: one prompt, whole
                tokens = prompt[request] - offset
                span = tokens * (offset + tokens / 2)  # (the loop below: 0.0 + it)
                prefilled[request] = prompt[request]
                finished = 1
            else:
                for request in prefilling:
                    if budget <= 0:
                        break
                    offset = prefilled[request]
                    chunk = prompt[request] - offset
                    if chunk > budget:
                        chunk = budget
                    budget -= chunk
                    tokens += chunk
                    span += chunk * (offset + chunk / 2)
                    prefilled[request] = offset + chunk
                    if offset + chunk == prompt[request]:
                        finished += 1
            if whole is None:
                now += step_time(decodes, kv, tokens, span)
            else:  # DenseStep.__call__(decodes, kv, tokens, span), inline
                rows = decodes + tokens
                memory = s_weights + (kv * s_reads + tokens) * s_kv
                if tokens:
                    occupied = s_by_rows.get(-(-rows // s_tile)) or s_occupancy(rows)
                    if s_packed:  # one GEMM over the decodes' and the prompt's rows
                        efficiency = s_prefill_eff * occupied
                    else:
                        efficiency = (decodes * s_eff + tokens * s_prefill_eff * occupied) / rows
                else:
                    efficiency = s_eff
                compute = s_flops * rows / efficiency + s_attention * (kv + span)
                bound = compute if compute > memory else memory
                if tokens and bound < s_eager:
                    bound = s_eager
                now += bound + s_fixed + s_per_seq * decodes + s_per_token * rows
            if decodes:
                decode_steps += 1
        else:
            finished = 0
            # steps that only decode, advanced together up to the next completion, or up to the step after the next
            # arrival when it could be admitted at once
            kv = decode_base + decoding * decode_steps * tps
            steps = next_end - decode_steps
            if dense is None:
                first_step = decode(decoding, kv)
            else:  # DenseDecode inline: its terms that depend on `decoding` alone, once for the event's steps
                d_compute, d_seq, d_token = d_flops * decoding / d_eff, d_per_seq * decoding, d_per_token * decoding
                memory, compute = d_weights + kv * d_reads * d_kv, d_compute + d_attention * kv
                first_step = (compute if compute > memory else memory) + d_fixed + d_seq + d_token
            if upcoming < inf and not waiting and running < max_seqs:
                # steps to the one after the next arrival, at least 1. Over more than 8 steps the k-th takes
                # first_step + k·growth (the context grows a token a step), so n steps take
                # n·first_step + growth·n(n − 1)/2, the time the advance below counts: the smallest n that reaches
                # the arrival is that quadratic's root, rounded up (first_step alone overshot the arrival by about
                # growth·n²/2, most at the longest gaps, the lowest rates)
                gap = upcoming - now
                until = ceil(gap / first_step)
                if until > 8 and steps > 9:  # (otherwise until stays over 8 either way: the completion comes first)
                    if dense is None:
                        growth = decode(decoding, kv + decoding * tps) - first_step
                    else:
                        grown = kv + decoding * tps
                        memory, compute = d_weights + grown * d_reads * d_kv, d_compute + d_attention * grown
                        growth = (compute if compute > memory else memory) + d_fixed + d_seq + d_token - first_step
                    if growth > 0:
                        half = first_step - growth / 2
                        until = ceil((sqrt(half * half + 2 * growth * gap) - half) / growth)
                        if until < 9:
                            until = 9
                if until < steps:
                    if until < 1:
                        until = 1
                    if until + lookahead < steps:
                        steps = until + lookahead
            if grow and free < (steps - 1) * decoding * tps and running > 1:  # up to the step the cache cannot hold
                room = 1 + int(free // (decoding * tps))
                if room < steps:
                    steps = room
            if steps > 8:  # the context grows by a token a step: over a few steps the first step's time stands
                if dense is None:
                    last_step = decode(decoding, kv + decoding * (steps - 1) * tps)
                else:
                    grown = kv + decoding * (steps - 1) * tps
                    memory, compute = d_weights + grown * d_reads * d_kv, d_compute + d_attention * grown
                    last_step = (compute if compute > memory else memory) + d_fixed + d_seq + d_token
                now += steps * (first_step + last_step) / 2
            else:
                now += steps * first_step
            decode_steps += steps
        # after a step of either kind: the requests past their last decode step complete (none where no decode step
        # ran: every end is beyond decode_steps), then the prompts the step completed join the decodes
        while next_end <= decode_steps:  # complete: the cache freed
            entry = pop()
            next_end = ends[0] // count if ends else NEVER
            request = entry % count
            if grow:
                if end_at[request] != entry // count:  # left over from a decode the request was preempted from
                    continue
                end_at[request] = 0
                del order[request]
                dec_prompt -= prompt[request]
                pending -= out_left[request]
            decoding -= 1
            decode_base -= base[request]
            finish[request] = now
            completed += 1
            running -= 1
            reserved -= need[request]
        while finished:  # most steps complete no prompt
            finished -= 1
            request = prefilling.popleft()
            if grow:
                if first[request] == inf:  # (a resumed request's first token came before its preemption)
                    first[request] = now
                pre_sum -= prompt[request]
            else:
                first[request] = now
            if steps_to_finish[request] <= 0:
                finish[request] = now
                completed += 1
                running -= 1
                reserved -= need[request]
                if grow:
                    del order[request]
                    pending -= out_left[request]
                continue
            # joins the decodes: its KV tokens are prompt + 1 now and grow by one a decode step
            joined = prompt[request] + 1 - decode_steps * tps
            base[request] = joined
            decode_base += joined
            decoding += 1
            end = decode_steps + steps_to_finish[request]
            if grow:
                end_at[request] = end
                dec_prompt += prompt[request]
            push(end * count + request)
            if end < next_end:
                next_end = end
    return Outcome(start, first, finish, queue_at_last_arrival, admitted, preemptions, recomputed)
