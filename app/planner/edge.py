"""Options at the edge of GPU memory, and what the ranking charges them for it. PURE.

A plan fits on its point estimate; where its memory range's high end crosses the limit it carries
`memory_may_exceed`, and at equal cost the ranking puts first the option that fits at its high end
(option.Option.fits_high). An option is *at the edge* when its point estimate sits within RELIEF_MARGIN (3 %)
of the limit, where the memory relief already says a plan "may not start" (app/planner/relief.py), and the high end
of its range passes the card itself, not just the headroom limit. The relief moved every plan it could away from
there; what stays at the edge is a configuration whose every plan is that tight (Llama 3.1 70B LoRA at TP 2 x PP 2 on
four A100 40G cards: 36.94 of 37.05 GiB, high end 46.91 against the card's 39.0 GiB).

How likely such a run is to fail: between 97 % of the limit and the card there is 8.5 % of the estimate (5 % headroom);
of the validation rows read as live tensors (torch.cuda.max_memory_allocated, 60 of the 286 in
tests/estimator/validation_cases.py MEMORY and memory_first_contact.py), 14 read more than 8.5 % above the estimate
and 15 more than 6.3 % (the gap from 99 % of the limit): about one run in four. The reserved and nvidia-smi
readings read above more often (51 % and 70 %), but they count blocks the allocator frees and retries before it runs
out, so one in four is the floor. A customer who rents an edge option and runs out of memory pays for the term and
rents again, so the option is worth renting over one that fits at its high end only while that one costs more than
1 / (1 - 1/4) = 4/3 of it. The ranking therefore charges an edge option EDGE_PREMIUM = 4/3 of its cost
(`ranked_cost`): an option that fits at its high end for at most a third more ranks first, a dearer one does not
(Llama 3.1 70B LoRA keeps four A100 40G cards for CNY 11,200 before one 8 x A100 80G server for 30,000, its
explanation leading with the risk). The option's explanation says so (app/text/words.py EXPLAIN_WORDS `edge`).
An edge option also does not count as holding the states for "Offload last" (ranking._offload_last): Llama 3.1 70B
full fine-tuning on H100 ranks one server with the optimizer offloaded (CNY 100,000, high end 62.1 of 75.05 GiB)
before two at 74.85 of 75.05 GiB (high end 87.9) for 200,000.
"""

from __future__ import annotations

from decimal import Decimal

from app.estimator.memory.band import MemoryBand
from app.estimator.specs import MemoryBreakdown
from app.planner.relief import RELIEF_MARGIN

EDGE_PREMIUM = Decimal(4) / Decimal(3)  # 1 / (1 - 1/4): one edge run in four rents again (module docstring)


def at_edge(memory: MemoryBreakdown, band: MemoryBand | None) -> bool:
    """The point estimate within RELIEF_MARGIN of the limit and the range's high end above the card."""
    if band is None or not memory.gpu_fits:
        return False
    limit = memory.capacity if memory.limit is None else memory.limit
    return memory.total >= (1.0 - RELIEF_MARGIN) * limit and band.high > memory.capacity


def ranked_cost(cost: Decimal, edge: bool) -> Decimal:
    """The cost the ranking compares: EDGE_PREMIUM of it at the edge."""
    return cost * EDGE_PREMIUM if edge else cost
