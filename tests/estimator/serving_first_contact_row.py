"""One published serving run recorded at first contact (tests/estimator/serving_first_contact.py says how the rows are
kept and read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec

Metric = Literal["ttft_ms", "tpot_ms", "output_tokens_per_s", "input_tokens_per_s"]


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
    nodes: int = 1  # servers of one replica (over cluster's fabric); >1: the figure is per server
    # the published DP attention / EP degree over whole servers (0: none), which the estimator reads since it models it
    # (recorded first on the plain-TP `tp` x `nodes` shape)
    dp_attention: int = 0
    # the published figure's statistic over the requests of an online run: their median, or their mean (read against
    # the simulation's mean)
    statistic: Literal["median", "mean"] = "median"
