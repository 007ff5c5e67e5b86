"""The scaling view: plain rows, one per GPU count and link, ordered the way the physics says."""

from __future__ import annotations

from app.estimator.interconnects import inter_node_fabrics
from app.estimator.scaling import scaling_view
from app.estimator.specs import Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, LLAMA2_7B

# The article's 7B workload: DDP, one 1,024-token sequence per GPU per step (test_perf_article.py).
SFT = Workload(task="full_finetune", seq_len=1024, global_batch=1)
ROWS = scaling_view(LLAMA2_7B, SFT, A100_80_SXM, Plan())


def row(link: str, gpus: int) -> dict[str, object]:
    return next(r for r in ROWS if r["link"] == link and r["gpus"] == gpus)


def test_one_row_per_gpu_count_and_link() -> None:
    assert [r["gpus"] for r in ROWS if r["link"] == "nvlink3"] == list(range(1, 9))
    assert [r["gpus"] for r in ROWS if r["link"] == "pcie4"] == list(range(2, 9))
    for fabric in inter_node_fabrics():
        assert [r["nodes"] for r in ROWS if r["link"] == fabric] == [2, 4, 8, 16]


def test_eight_gpus_on_nvlink_land_in_the_articles_band() -> None:
    assert 6.0 <= row("nvlink3", 8)["speedup"] <= 7.5


def test_faster_fabrics_scale_better() -> None:
    order = ["ib-ndr-400", "ib-hdr-200", "roce-100", "eth-100", "eth-25", "eth-10"]
    speedups = [row(fabric, 128)["speedup"] for fabric in order]
    assert speedups == sorted(speedups, reverse=True)


def test_data_parallel_over_10gbe_is_barely_better_than_one_node() -> None:
    """The company's article: 10 GbE is 'only tolerable for pure data parallelism': 16 nodes gain little over one."""
    assert row("eth-10", 16)["speedup"] < 2 * row("nvlink3", 8)["speedup"]
