"""The hint (the best plan of the search on one server fewer) seeds a search with an incumbent, and the answer does not
depend on it (search_plans' docstring). A hint carries the levers of its own search, which may be the fused loss that
memory relief took where no standard-loss plan fit (search.py `_fused_fit`); the hinted search then considered a
fused-loss plan where the request named no lever and standard plans fit, so the options of larger configurations
depended on the order the node counts were searched in (a 405B pre-training recommendation changed which plan it
offered on 8 servers)."""

from __future__ import annotations

from dataclasses import replace

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Workload
from app.planner.search import search_plans

LLAMA_8B = get_preset("llama-3.1-8b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=1)


def test_a_hint_with_the_fused_loss_does_not_change_a_search_that_named_no_lever() -> None:
    workload = Workload(task="full_finetune", seq_len=4096)
    plain = search_plans(LLAMA_8B, workload, H100).best
    assert plain is not None and not plain.plan.fused_loss
    hinted = search_plans(LLAMA_8B, workload, H100, hint=replace(plain.plan, fused_loss=True)).best
    assert hinted is not None
    assert hinted.plan == plain.plan
