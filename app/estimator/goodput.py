"""GPU-hours as real runs spend them: the goodput of a training run.

The ideal time to train (tokens ÷ throughput) is what the GPUs compute; a real run also loses time
to restarts after interruptions (the work since the last checkpoint, the relaunch and the reload),
to saving checkpoints, to evaluation and to start-up. Each part is modelled from the figures in
data/goodput.json (every one cited or marked assumed there):

- interruptions: rate per GPU-day × GPUs × wall time; each costs half a checkpoint interval of lost
  work, the relaunch time and a checkpoint load (Dubey et al. 2024 §3.3.4 for the rate);
- checkpoints: size (trainable parameters × (weight + optimizer bytes)) ÷ (nodes × per-node write
  rate), saved at Young's optimal interval sqrt(2 × save time × mean time between interruptions);
- evaluation: a fraction of compute (forward passes on held-out data);
- start-up: one launch plus one model load.

goodput = ideal hours ÷ wall hours. The `typical` end uses the pessimistic figures of the same file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

_DATA_FILE = "goodput.json"
_READ_OVER_WRITE = 2.0  # checkpoint loads read about twice as fast as saves write (assumed, see goodput.json)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("app.estimator").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def _figure(name: str, end: str) -> float:
    row = _table()[name]
    return float(row.get(end, row["expected"]))


@dataclass(frozen=True, slots=True)
class Goodput:
    """Where a run's wall time goes, in hours of the whole job (not GPU-hours)."""

    factor: float  # ideal ÷ wall
    ideal_hours: float
    wall_hours: float
    parts_hours: dict[str, float]  # failures, checkpoints, evaluation, startup
    interruptions: float  # expected number over the run
    checkpoint_bytes: float
    checkpoint_interval_hours: float
    storage_bytes: float  # checkpoints kept plus the final weights


def estimate_goodput(
    ideal_hours: float,
    gpus: int,
    nodes: int,
    checkpoint_bytes: float,
    weights_bytes: float,
    *,
    pretraining: bool,
    end: str = "expected",
) -> Goodput:
    """Wall time of a run whose compute alone takes `ideal_hours` on `gpus` GPUs in `nodes` nodes.

    `end` is "expected" (the point estimate) or "typical" (the pessimistic end of the range).
    """
    rate_per_hour = _figure("interruptions_per_gpu_day", end) / 24.0 * gpus
    write = _figure("checkpoint_write_gbytes_per_s_per_node", end) * 1e9 * max(1, nodes)
    save_h = checkpoint_bytes / write / 3600.0
    load_h = checkpoint_bytes / (write * _READ_OVER_WRITE) / 3600.0
    restart_h = _figure("restart_minutes", end) / 60.0
    startup_h = _figure("startup_minutes", end) / 60.0 + load_h
    mtbi_h = 1.0 / rate_per_hour if rate_per_hour > 0 else math.inf
    floor_h = _figure("checkpoint_min_interval_minutes", end) / 60.0
    interval = min(max(math.sqrt(2.0 * save_h * mtbi_h), floor_h), max(ideal_hours, floor_h))
    evaluation = ideal_hours * _table()["evaluation_fraction"]["pretrain" if pretraining else "finetune"]
    saves = ideal_hours / interval * save_h
    # Interruptions happen over the wall time; solve wall = base + rate × wall × cost per interruption.
    base = ideal_hours + evaluation + saves + startup_h
    cost = interval / 2.0 + restart_h + load_h
    lost_share = min(rate_per_hour * cost, 0.9)  # above 0.9 the run would never finish: capped
    wall = base / (1.0 - lost_share)
    failures = wall - base
    kept = _table()["checkpoints_kept"]["expected"]
    return Goodput(
        factor=ideal_hours / wall if wall > 0 else 1.0,
        ideal_hours=ideal_hours,
        wall_hours=wall,
        parts_hours={"failures": failures, "checkpoints": saves, "evaluation": evaluation, "startup": startup_h},
        interruptions=rate_per_hour * wall,
        checkpoint_bytes=checkpoint_bytes,
        checkpoint_interval_hours=interval,
        storage_bytes=kept * checkpoint_bytes + weights_bytes,
    )
