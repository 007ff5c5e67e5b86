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

from app.estimator.specs import Goodput

_DATA_FILE = "goodput.json"
_READ_OVER_WRITE = 2.0  # assumed: a sharded checkpoint loads about twice as fast as it saves (reads vs writes)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("app.estimator").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: _figures hands out one object per end
class _Figures:
    rate_per_gpu_hour: float
    write_bytes_per_s_per_node: float
    restart_h: float
    startup_h: float
    floor_h: float
    evaluation: dict[bool, float]  # by pretraining or not
    kept: float


@lru_cache(maxsize=2)
def _figures(end: str) -> _Figures:
    """The figures of one end of goodput.json as plain floats (read once)."""
    table = _table()

    def figure(name: str) -> float:
        row = table[name]
        return float(row.get(end, row["expected"]))

    evaluation = table["evaluation_fraction"]
    return _Figures(
        rate_per_gpu_hour=figure("interruptions_per_gpu_day") / 24.0,
        write_bytes_per_s_per_node=figure("checkpoint_write_gbytes_per_s_per_node") * 1e9,
        restart_h=figure("restart_minutes") / 60.0,
        startup_h=figure("startup_minutes") / 60.0,
        floor_h=figure("checkpoint_min_interval_minutes") / 60.0,
        evaluation={True: float(evaluation["pretrain"]), False: float(evaluation["finetune"])},
        kept=float(table["checkpoints_kept"]["expected"]),
    )


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
    f = _figures(end)
    fixed = _fixed(f, gpus, nodes, checkpoint_bytes, pretraining)
    return Goodput(*_goodput(f, fixed, ideal_hours, checkpoint_bytes, weights_bytes))


# What `_wall` reads, fixed for one end's figures, cluster, checkpoint size and task (`_fixed`): interruptions per
# hour, save, load and start-up hours, Young's interval, the interval's floor, the evaluation share and the restart
# hours. One flat tuple: the wall-time solve runs three times per plan.
_Fixed = tuple[float, float, float, float, float, float, float, float]
# Once a run outlasts Young's interval the interval stops growing, and `_wall`'s wall hours are a straight line in the
# ideal hours: (ideal hours it starts at, slope, intercept), found from `_wall` itself (`_line`). The range ends
# read it instead of solving again.
_Line = tuple[float, float, float]
# Goodput's fields in field order (`_goodput`): the performance estimate caches them per plan and builds a Goodput of
# its own on every call (an output, mutable).
GoodputFields = tuple[float, float, float, float, float, float, float, float, float, float]


@dataclass(frozen=True, slots=True, eq=False)
class RunCosts:
    """Goodput of one cluster, checkpoint size and task for any run length: the parts that do not depend on
    the length are computed once (`run_costs`), the rest per call (the planner asks for many run lengths)."""

    gpus: int
    checkpoint_bytes: float
    weights_bytes: float
    pretraining: bool
    expected: _Figures
    expected_fixed: _Fixed
    typical: _Figures
    typical_fixed: _Fixed
    expected_line: _Line
    typical_line: _Line

    def with_range(self, ideal_hours: float, fast: float, slow: float) -> tuple[GoodputFields, float, float]:
        """The expected run of `ideal_hours` of compute (Goodput's fields), and the wall hours of the range ends: the
        tuned end runs `fast` times quicker with expected goodput, the typical end `slow` times as fast with the
        "typical" figures."""
        fixed = self.expected_fixed
        run = _goodput(self.expected, fixed, ideal_hours, self.checkpoint_bytes, self.weights_bytes)
        quick, long = ideal_hours / fast, ideal_hours / slow
        start, slope, intercept = self.expected_line
        quick = slope * quick + intercept if quick >= start else _wall(fixed, quick)[0]
        start, slope, intercept = self.typical_line
        long = slope * long + intercept if long >= start else _wall(self.typical_fixed, long)[0]
        return run, quick, long


def run_costs(gpus: int, nodes: int, checkpoint_bytes: float, weights_bytes: float, *, pretraining: bool) -> RunCosts:
    expected, typical = _figures("expected"), _figures("typical")
    expected_fixed = _fixed(expected, gpus, nodes, checkpoint_bytes, pretraining)
    typical_fixed = _fixed(typical, gpus, nodes, checkpoint_bytes, pretraining)
    return RunCosts(
        gpus,
        checkpoint_bytes,
        weights_bytes,
        pretraining,
        expected,
        expected_fixed,
        typical,
        typical_fixed,
        _line(expected_fixed),
        _line(typical_fixed),
    )


def _line(fixed: _Fixed) -> _Line:
    """`_wall`'s straight line past Young's interval (`_Line`), through two of its own points; none (starting at
    infinity) where nothing interrupts a run and the interval never stops growing."""
    young_h = fixed[4]
    if not math.isfinite(young_h):
        return math.inf, 0.0, 0.0
    at_young, at_twice = _wall(fixed, young_h)[0], _wall(fixed, 2.0 * young_h)[0]
    slope = (at_twice - at_young) / young_h
    return young_h, slope, at_young - slope * young_h


def _goodput(
    f: _Figures, fixed: _Fixed, ideal_hours: float, checkpoint_bytes: float, weights_bytes: float
) -> GoodputFields:
    """Goodput's fields, in field order: ideal, wall, base, checkpoints, evaluation, start-up, interval, interruptions
    per hour (fixed[0]: rate per GPU-hour × GPUs), checkpoint bytes, storage."""
    wall, base, saves, evaluation, interval = _wall(fixed, ideal_hours)
    storage = f.kept * checkpoint_bytes + weights_bytes
    return ideal_hours, wall, base, saves, evaluation, fixed[3], interval, fixed[0], checkpoint_bytes, storage


def _wall(fixed: _Fixed, ideal_hours: float) -> tuple[float, float, float, float, float]:
    """(wall hours, wall hours less failures, checkpoint hours, evaluation hours, checkpoint interval hours)."""
    rate_per_hour, save_h, load_h, startup_h, young_h, floor_h, evaluation_share, restart_h = fixed
    # min(young, max(ideal, floor)) with young >= floor, as conditionals (this runs three times per plan)
    interval = young_h if ideal_hours >= young_h else (ideal_hours if ideal_hours > floor_h else floor_h)
    evaluation = ideal_hours * evaluation_share
    saves = ideal_hours / interval * save_h
    # Interruptions happen over the wall time; solve wall = base + rate × wall × cost per interruption.
    base = ideal_hours + evaluation + saves + startup_h
    lost_share = rate_per_hour * (interval / 2.0 + restart_h + load_h)
    if lost_share > 0.9:  # above 0.9 the run would never finish: capped
        lost_share = 0.9
    return base / (1.0 - lost_share), base, saves, evaluation, interval


@lru_cache(maxsize=4096)
def _fixed(f: _Figures, gpus: int, nodes: int, checkpoint_bytes: float, pretraining: bool) -> _Fixed:
    """What the run's length does not change (`_Fixed`), so one cluster, checkpoint size and task compute it once."""
    rate_per_hour = f.rate_per_gpu_hour * gpus
    save_h = checkpoint_bytes / (f.write_bytes_per_s_per_node * max(1, nodes)) / 3600.0
    load_h = save_h / _READ_OVER_WRITE
    mtbi_h = 1.0 / rate_per_hour if rate_per_hour > 0 else math.inf
    young_h = max(math.sqrt(2.0 * save_h * mtbi_h), f.floor_h)  # Young's interval, not below the floor
    evaluation_share = f.evaluation[pretraining]
    return rate_per_hour, save_h, load_h, f.startup_h + load_h, young_h, f.floor_h, evaluation_share, f.restart_h
