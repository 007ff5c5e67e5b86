"""One published serving run recorded at first contact (tests/estimator/serving_first_contact.py says how the rows are
kept and read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec

Metric = Literal["ttft_ms", "tpot_ms", "output_tokens_per_s"]


@dataclass(frozen=True, slots=True)
class ServingFirstContact:
    label: str
    source: str
    citation: str
    model: ModelSpec
    gpu: GpuSpec
    tp: int
    cfg: ServingConfig
    metric: Metric
    published: float
    requests: int | None = None  # an offline row's prompts (the run is finite: its ramp and drain count)
