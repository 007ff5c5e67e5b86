"""The replica search skips a run whose verdict is known before it (simulation._saturated_before_run): a count whose
sequence slots fill at the steady state's time a slot is held is saturated whatever the run reads."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, replicas_for_slo, simulation, simulations
from app.estimator.serving.memo import _hardware
from app.estimator.serving.memory import held_sequences
from app.estimator.serving_sim import LoadLatency
from app.estimator.specs import Cluster

H100_NODE = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
QWEN_72B = get_preset("qwen2.5-72b").model
# benchmarks/recommend.py's serving mix: Qwen2.5-72B in int4, 4,000 / 300 tokens at 3 requests/s, TPOT 40 ms; on one
# H100 a replica its launch admits 6 sequences
INT4_TPOT = ServingConfig(input_tokens=4000, output_tokens=300, requests_per_s=3, slo_tpot_ms=40, weights="int4")
PEAK = 3 * 1.5


def test_the_replica_search_runs_no_count_whose_slots_fill_at_the_steady_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """7 and 9 replicas fill their 6 slots at the steady state's hold (rate × hold ≥ 6): the search ran both, read
    both saturated, and now runs neither; it finds the same count."""
    ran: list[float] = []
    run = simulation._run_simulation

    def recorded(load: simulation._Load, rate: float) -> LoadLatency:
        ran.append(rate)
        return run(load, rate)

    monkeypatch.setattr(simulation, "_run_simulation", recorded)
    with simulations():
        found = replicas_for_slo(QWEN_72B, INT4_TPOT, H100_NODE, tp=1)
    assert found is not None and found[0] == 10
    assert ran and PEAK / 7 not in ran and PEAK / 9 not in ran


@pytest.mark.parametrize("replicas", [7, 9])
def test_a_count_skipped_for_its_slots_is_saturated_when_run(replicas: int) -> None:
    """The verdict the skip stands for: run anyway, the count is saturated (so it misses the SLO)."""
    with simulations():
        hw = _hardware(QWEN_72B, INT4_TPOT, H100_NODE, 1, 1)
        load = simulation._load(QWEN_72B, INT4_TPOT, hw, held_sequences(QWEN_72B, INT4_TPOT, H100_NODE.gpu, 1, 1))
        assert load.slots == 6
        assert simulation._saturated_before_run(load, PEAK / replicas)
        assert simulation._run_simulation(load, PEAK / replicas).saturated
