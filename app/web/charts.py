"""Geometry for the results page's inline SVG: the per-GPU memory bar and the cost-versus-time
scatter. Pure functions returning coordinates; the templates draw them (SVG is markup, so it runs
under the strict Content-Security-Policy without inline styles: colours come from app.css classes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from app.planner.schemas import MemoryOut, OptionOut, ParetoPointOut

MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "kv_cache", "other")
BAR_WIDTH = 300.0


@dataclass(frozen=True, slots=True)
class Segment:
    """One memory part's rectangle on the bar: its GiB, left edge and width in the bar's units."""

    part: str
    gib: float
    x: float
    width: float


@dataclass(frozen=True, slots=True)
class MemoryBar:
    """The per-GPU memory bar: its parts, the capacity line's position, and what the numbers say."""

    segments: list[Segment]
    capacity_x: float
    total_gib: float
    capacity_gib: float
    fits: bool
    limit_gib: float  # what a plan may use: the capacity less the headroom (the feasibility gate's figure)
    limit_x: float
    width: float = BAR_WIDTH


def memory_bar(memory: MemoryOut) -> MemoryBar:
    """Segments scaled so that the larger of capacity and total spans the bar."""
    parts = memory.per_gpu_gib
    total = parts.get("total", sum(parts.get(p, 0.0) for p in MEMORY_PARTS))
    scale = BAR_WIDTH / max(memory.capacity_gib, total, 1e-9)
    limit = memory.limit_gib if memory.limit_gib is not None else memory.capacity_gib
    x = 0.0
    segments = []
    for part in MEMORY_PARTS:
        gib = float(parts.get(part, 0.0))
        if gib <= 0:
            continue
        width = gib * scale
        segments.append(Segment(part=part, gib=gib, x=round(x, 2), width=round(width, 2)))
        x += width
    return MemoryBar(
        segments=segments,
        capacity_x=round(memory.capacity_gib * scale, 2),
        total_gib=total,
        capacity_gib=memory.capacity_gib,
        fits=memory.fits,
        limit_gib=limit,
        limit_x=round(limit * scale, 2),
    )


# The cost-versus-time front stops where paying more saves less than this: half an hour, and a
# tenth of the time. (A 100M-token LoRA's front otherwise runs on to 128 H100s at ¥1.6M to save
# seconds; the planner's own `pareto` keeps every point, the page shows the useful part.)
MIN_SAVING_HOURS = 0.5
MIN_SAVING_FRACTION = 0.1


@dataclass(frozen=True, slots=True)
class Point:
    """An option or a front point on the chart: its position, label, figures, and which side of it the label
    sits on (`end`: to its left, near the right edge)."""

    x: float
    y: float
    label: str
    cost: float
    hours: float
    on_front: bool
    anchor: str = "start"


@dataclass(frozen=True, slots=True)
class Tick:
    """An axis tick: its position along the axis and the value it reads."""

    position: float
    value: float


@dataclass(frozen=True, slots=True)
class Scatter:
    points: list[Point]
    front_path: str
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    # The frame, the same for every chart: the SVG's size and the margins around the plot area.
    width: ClassVar[int] = 600
    height: ClassVar[int] = 340
    left: ClassVar[int] = 78
    right: ClassVar[int] = 16
    top: ClassVar[int] = 30
    bottom: ClassVar[int] = 50


def _log_range(values: list[float]) -> tuple[float, float]:
    low, high = math.log10(min(values)), math.log10(max(values))
    if high - low < 0.3:  # a single point or a narrow spread: widen so it sits mid-axis
        low, high = low - 0.3, high + 0.3
    pad = (high - low) * 0.08
    return low - pad, high + pad


def _ticks(low: float, high: float) -> list[float]:
    """1-2-5 steps per decade inside [10^low, 10^high], at most about five of them."""
    values = []
    for decade in range(math.floor(low), math.ceil(high) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0**decade
            if low <= math.log10(value) <= high:
                values.append(value)
    if len(values) > 5:
        values = [v for v in values if f"{v:.0e}".startswith("1")] or values[:: len(values) // 4]
    return values


def useful_front(pareto: list[ParetoPointOut]) -> tuple[list[ParetoPointOut], int]:
    """The Pareto points, cheapest first, up to where paying more saves under half an hour or a
    tenth of the time; and how many dearer points were left out."""
    ordered = sorted((p for p in pareto if p.hours), key=lambda p: Decimal(p.cost))
    kept: list[ParetoPointOut] = []
    for point in ordered:
        if kept:
            previous = kept[-1].hours or 0.0
            saved = previous - (point.hours or 0.0)
            if saved < MIN_SAVING_HOURS or saved < MIN_SAVING_FRACTION * previous:
                break
        kept.append(point)
    return kept, len(ordered) - len(kept)


def _short_gpu(name: str) -> str:
    """'NVIDIA A100 40GB PCIe' → 'A100 40GB': the words a point's label has room for."""
    words = name.removeprefix("NVIDIA ").split()
    return " ".join(words[:2])


def scatter(
    options: list[OptionOut], front: list[ParetoPointOut], gpu_of_sku: dict[str, str] | None = None
) -> Scatter | None:
    """Options and front points with a time to finish, on log-log axes, each labelled with its size
    ("#1 4× A100 40GB"); None when none has a time. A point both an option and on the front is drawn once."""
    gpu_of_sku = gpu_of_sku or {}
    raw: dict[tuple[str, int], dict[str, Any]] = {}
    for option in options:
        hours = option.performance.time_to_train_hours
        cost = option.cost.job_total or option.cost.monthly_effective
        if hours and float(cost) > 0:
            key = (option.sku.id, option.total_gpus)
            raw[key] = {"cost": float(cost), "hours": hours, "rank": option.rank, "front": False}
    for point in front:
        if point.hours and float(point.cost) > 0:
            key = (point.sku, point.total_gpus)
            entry = raw.setdefault(key, {"cost": float(point.cost), "hours": point.hours, "rank": None})
            entry["front"] = True
    if not raw:
        return None
    chart = Scatter(points=[], front_path="", x_ticks=[], y_ticks=[])
    xl, xh = _log_range([r["hours"] for r in raw.values()])
    yl, yh = _log_range([r["cost"] for r in raw.values()])
    inner_w = chart.width - chart.left - chart.right
    inner_h = chart.height - chart.top - chart.bottom

    def px(hours: float) -> float:
        return round(chart.left + (math.log10(hours) - xl) / (xh - xl) * inner_w, 1)

    def py(cost: float) -> float:
        return round(chart.top + (yh - math.log10(cost)) / (yh - yl) * inner_h, 1)

    points = []
    for (sku, gpus), r in raw.items():
        size = f"{gpus}× {_short_gpu(gpu_of_sku.get(sku, sku))}"
        x = px(r["hours"])
        points.append(
            Point(
                x=x,
                y=py(r["cost"]),
                label=f"#{r['rank']} {size}" if r["rank"] else size,
                cost=r["cost"],
                hours=r["hours"],
                on_front=r["front"],
                anchor="end" if x > chart.width - chart.right - 150 else "start",
            )
        )
    on_front = sorted((p for p in points if p.on_front), key=lambda p: p.x)
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(on_front))
    return Scatter(
        points=points,
        front_path=path,
        x_ticks=[Tick(px(v), v) for v in _ticks(xl, xh)],
        y_ticks=[Tick(py(v), v) for v in _ticks(yl, yh)],
    )
