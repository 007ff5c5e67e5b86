"""One published training run's peak memory recorded at first contact (tests/estimator/memory_first_contact.py says
how the rows are kept and read)."""

from __future__ import annotations

from dataclasses import dataclass

from app.estimator.memory import estimate_memory, stage_breakdown
from app.estimator.specs import Cluster, MemoryBreakdown, ModelSpec, Plan, Workload


@dataclass(frozen=True)
class FirstContactCase:
    label: str
    source: str
    citation: str
    model: ModelSpec
    workload: Workload
    plan: Plan
    cluster: Cluster
    published_gib: float
    measured: str  # the reading the source took: "reserved", "allocated" or "device" (memory.measured_bytes)
    levers: str  # what the run used that moves the peak (attention, loss, compile, offload, fp8 parameters)
    # the pipeline stage the reading was taken on where the source names one (-1: the last; Megatron-LM logs on the
    # last rank); None: not named, the worst stage, the gate's. First contact reads the worst stage always (as
    # recorded); the fitted comparison reads this one (`breakdown`)
    stage: int | None = None

    def breakdown(self) -> MemoryBreakdown:
        """The estimate on the stage the source read (`stage`), else the worst stage's."""
        if self.stage is None:
            return estimate_memory(self.model, self.workload, self.plan, self.cluster).breakdown
        return stage_breakdown(self.model, self.workload, self.plan, self.cluster, self.stage)
