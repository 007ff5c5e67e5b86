"""Pre-training on A100: the speed range holds the published whole runs (issue 32, review item a).

Meta's Llama 2 7B pre-training averaged 2.0T tokens ÷ 184,320 A100-80GB GPU-hours = 3,014 tokens/s per GPU (Touvron
et al. 2023b, Table 2), every restart included. Before, the 8 × A100 80G plan of the same model read 4,292 with a
range of 3,219-5,579: Meta's run below its slow end. The A100 runs of 8-64 GPUs in the validation set read
0.89-1.12× the point, but whole runs on 384-3,360 A100s read 0.66-1.21× our estimate of them at their scale
(performance.py AMPERE_PRETRAIN_SLOWEST), so the slow end of A100 pre-training is 0.67 (every one of them but
StarCoder's lower reading) and the fast end 1.22 (LLaMA 65B's 1.21). In-sample: the factors are read off these rows
(docs/validation.md)."""

from __future__ import annotations

from dataclasses import replace

from app.estimator.hardware import get_gpu
from app.estimator.performance import AMPERE_PRETRAIN_SLOWEST, estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from tests.estimator.validation_cases import GPU_HOURS

META_LLAMA2_7B = 2.0e12 / (184_320 * 3600)  # tokens/s per GPU, Touvron et al. 2023b Table 2


def test_an_8_a100_llama_2_7b_pretraining_range_holds_metas_run() -> None:
    model = get_preset("llama-2-7b").model
    workload = Workload(task="pretrain", seq_len=4096, global_batch=512, tokens=1e10)
    plan = Plan(dp=4, pp=2, zero_stage=1, micro_batch=1)
    cluster = Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=8, nodes=1)
    estimate = estimate_performance(model, workload, plan, cluster)
    performance = estimate.performance
    low, high = performance.tokens_per_s_per_gpu_range or (0.0, 0.0)
    assert round(META_LLAMA2_7B) == 3014
    assert low <= META_LLAMA2_7B <= performance.tokens_per_s_per_gpu <= high
    assert low / performance.tokens_per_s_per_gpu == AMPERE_PRETRAIN_SLOWEST
    assert "range_widened_ampere_pretrain" in [n.code for n in estimate.assumptions]
    # fine-tuning and H100 keep the generic slow end
    finetune = estimate_performance(model, replace(workload, task="full_finetune"), plan, cluster)
    assert "range_widened_ampere_pretrain" not in [n.code for n in finetune.assumptions]
    h100 = estimate_performance(model, workload, plan, replace(cluster, gpu=get_gpu("h100-80g-sxm")))
    assert "range_widened_ampere_pretrain" not in [n.code for n in h100.assumptions]


def test_the_published_a100_whole_pretraining_runs_are_inside_their_gpu_hours_range() -> None:
    """Llama 1 and 2, MPT-7B, BLOOM, Phi-2 (tests/estimator/validation_cases.py GPU_HOURS). StarCoder's model card
    states 320,256 GPU-hours and 512 GPUs for 24 days (294,912): the second is inside, the first (0.66 of our speed)
    stays outside, as before."""
    ampere = [c for c in GPU_HOURS if c.cluster.gpu.id.startswith("a100")]
    assert len(ampere) == 11
    for case in ampere:
        performance = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        fast, slow = performance.gpu_hours_range or (0.0, 0.0)
        if case.source == "starcoder":
            assert fast <= 512 * 24 * 24 <= slow < case.gpu_hours
        else:
            assert fast <= case.gpu_hours <= slow, case.label
