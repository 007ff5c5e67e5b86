"""Host RAM of a LoRA plan that offloads to the host (issue 32, review item c: "DeepSeek-V3 LoRA plans pin ~1.5 TB").

DeepSpeed ZeRO-Offload keeps on the host, per rank, the partition of the fp32 states it steps: the optimizer states,
the fp32 gradients it copies each reduced gradient into (deepspeed/runtime/zero/stage_1_and_2.py
`single_partition_of_fp32_groups`, stage3.py `fp32_partitioned_groups_flat`) and, with parameter offload, the 16-bit
parameter partition. Over a server's 8 ranks that is the whole: for DeepSeek-V3 LoRA (rank 16 on q, k, v, o, gate, up,
down of every layer and routed expert: 6.65B adapter parameters) the 671B bf16 base (1,249.8 GiB), the fp32 adapters
and their fp32 gradients (4 + 4 bytes each) and the optimizer states the estimate sizes. Before, each rank counted
every adapter's fp32 gradient: 1,522 GiB a server, 173 GiB too many. Tolerance: 1 GiB (rounding)."""

from __future__ import annotations

from app.estimator.compute import lora_params
from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload


def test_deepseek_v3_lora_with_offload_holds_each_fp32_gradient_once_per_server() -> None:
    model = get_preset("deepseek-v3").model
    workload = Workload(task="lora", seq_len=4096, global_batch=128)
    plan = Plan(dp=8, zero_stage=3, offload="optimizer_and_params", recompute="full", micro_batch=1)
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=1, host_ram_gib=2048)
    breakdown = estimate_memory(model, workload, plan, cluster).breakdown
    base, adapters = count_params(model).total, lora_params(model, LoraSpec())
    # the server's host RAM less the bf16 base, the fp32 adapters and their fp32 gradients: the adapters' Adam states
    # (m and v, 8 bytes each, or 12 with an fp32 master copy)
    states = breakdown.host_ram - (base * 2.0 + adapters * (4.0 + 4.0))
    assert 8.0 * adapters - GIB <= states <= 12.0 * adapters + GIB
    assert breakdown.host_ram / GIB < 1400  # was 1,522
