"""No tensor or pipeline parallelism where the replica's training states fit one GPU with margin and memory does not
need the split (efficiency.needless_model_parallel, `model_parallel_unneeded`): such a plan ranks after every sensible
one, like an `inefficient` one. Review R4-11: Qwen2.5 0.5B full fine-tune with `fastest` on H100 servers listed
TP 2 x PP 3 x DP 16 over 12 servers (MFU 14.7 %) and PP 3 x DP 16 over 6, plans that only fill GPUs the
128-sequence batch cannot fill by data parallelism. Where it can (8B LoRA on one server) the split stays, chosen for
its speed."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from app.estimator.specs import GIB, MemoryBreakdown, Plan, Workload
from app.planner.efficiency import needless_model_parallel
from app.text import messages

BODY = {
    "model": {"preset": "qwen2.5-0.5b"},
    "task": "full_finetune",
    "tokens": 1e10,
    "seq_len": 2048,
    "constraints": {"gpu_types": ["h100-80g-sxm"], "objective": "fastest", "limit": 8},
}


def test_fastest_does_not_split_a_small_model(client: TestClient) -> None:
    response = client.post("/recommend", json=BODY)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options
    for option in options:
        assert option["plan"]["tp"] == 1 and option["plan"]["pp"] == 1, option["plan"]
    times = [option["performance"]["time_to_train_hours"] for option in options]
    assert times == sorted(times)  # `fastest`: time to train first


def _breakdown(weights: float, gradients: float, optimizer: float, activations: float) -> MemoryBreakdown:
    total = weights + gradients + optimizer + activations
    return MemoryBreakdown(
        total=total,
        weights=weights,
        gradients=gradients,
        optimizer=optimizer,
        activations=activations,
        kv_cache=0.0,
        other=0.0,
        capacity=80 * GIB,
        limit=75 * GIB,
    )


def test_the_guard_reads_the_batch_the_unsharded_states_and_the_activations() -> None:
    job = Workload(task="full_finetune", seq_len=2048, global_batch=128)
    small = _breakdown(0.5 * GIB, 0.5 * GIB, 2 * GIB, 4 * GIB)  # per GPU; on TP 2 x PP 3: 18 GiB unsharded
    filler = Plan(dp=16, tp=2, pp=3)  # 96 GPUs: 128 sequences do not divide over them
    miss = needless_model_parallel(filler, small, job)
    assert miss is not None and miss[0] == "model_parallel_unneeded"
    assert miss[1]["states_gib"] == 18.0 and miss[1]["gpus"] == 96
    assert "18.0 GiB" in messages.misses([miss], "en") and "18.0 GiB" in messages.misses([miss], "zh")
    assert needless_model_parallel(Plan(dp=64, tp=2), small, job) is None  # DP alone fills 128: TP chosen for speed
    assert needless_model_parallel(Plan(dp=96), small, job) is None  # no split
    assert needless_model_parallel(filler, small, replace(job, task="inference")) is None  # TP speeds the decode
    big = _breakdown(20 * GIB, 20 * GIB, 10 * GIB, 10 * GIB)  # 8B on TP 2: 100 GiB unsharded
    assert needless_model_parallel(filler, big, job) is None
    long = _breakdown(0.5 * GIB, 0.5 * GIB, 2 * GIB, 40 * GIB)  # activations need the split
    assert needless_model_parallel(filler, long, job) is None
