"""POST /estimate as people describe clusters: defaults for what they leave out, stated in `assumptions`.

Each test here answered 422 (or silently used one GPU per node) before the cluster defaults existed.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

LLAMA_8B = {"preset": "llama-3.1-8b"}


def _estimate(client: TestClient, **body) -> dict:
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _gpus(result: dict) -> int:
    plan = result["plan"]
    return plan["dp"] * plan["tp"] * plan["pp"] * plan["cp"]


def test_a_catalog_sku_over_two_nodes_uses_the_catalogs_network(client: TestClient) -> None:
    """a100-80g-sxm-8x lists '10 Gbps BGP' and no RDMA fabric: 2 × 8 GPUs over 10 GbE, said so."""
    result = _estimate(
        client,
        model=LLAMA_8B,
        task="pretrain",
        tokens=1e9,
        hardware={"sku": "a100-80g-sxm-8x", "nodes": 2},
        plan={"dp": 16, "zero_stage": 1},
    )
    assert _gpus(result) == 16
    assert any("10 Gbps BGP" in a and "TCP" in a for a in result["assumptions"])
    assert "ethernet_fabric" in {w["code"] for w in result["warnings"]}
    # what the quote would say: the catalog rents this SKU one server per job (it answered fits, silently)
    assert any("rented one server per job" in a and "quantity_one_server" in a for a in result["assumptions"])


def test_a_retired_fabric_add_on_estimates_the_plain_network(db) -> None:
    """h100-80g-sxm-8x sells its InfiniBand as an add-on: retired, two servers are estimated over their plain
    network (they were estimated over InfiniBand) and said to be rented one per job."""
    from contextlib import nullcontext

    from app.catalog.repository import get_addon, get_sku_by_slug
    from app.planner.schemas import HardwareIn
    from app.planner.workload import resolve_cluster

    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    assert sku is not None
    addon = get_addon(db, sku.id, "infiniband-400g")
    assert addon is not None
    hardware = HardwareIn(sku="h100-80g-sxm-8x", nodes=2)
    joined, _notes = resolve_cluster(hardware, lambda: nullcontext(db))
    assert joined.inter_node_fabric == "ib-ndr-400"
    addon.status = "retired"
    db.flush()
    plain, notes = resolve_cluster(hardware, lambda: nullcontext(db))
    assert plain.inter_node_fabric != "ib-ndr-400" and plain.inter_node_gbps < joined.inter_node_gbps
    assert any("rented one server per job" in note.text for note in notes)


def test_a_gpu_type_and_a_node_count_mean_whole_usual_servers(client: TestClient) -> None:
    """A100 SXM: 8 per HGX board and eight HDR 200 Gb/s NICs (data/interconnects.json, DGX A100)."""
    result = _estimate(
        client,
        model=LLAMA_8B,
        task="pretrain",
        tokens=1e10,
        hardware={"gpu": "a100-80g-sxm", "nodes": 2},
        plan={"dp": 16, "zero_stage": 3},
    )
    assert _gpus(result) == 16
    assert any("ib-hdr-200, 8 × 200 Gb/s = 1600 Gb/s per node" in a for a in result["assumptions"])
    one_node = _estimate(client, model=LLAMA_8B, hardware={"gpu": "h100-80g-sxm", "nodes": 1})
    assert _gpus(one_node) == 8


def test_a_named_fabric_or_a_rate_overrides_the_default(client: TestClient) -> None:
    base = {"model": LLAMA_8B, "task": "pretrain", "tokens": 1e10, "plan": {"dp": 16, "zero_stage": 3}}
    default = _estimate(client, hardware={"gpu": "h100-80g-sxm", "nodes": 2}, **base)
    slow = _estimate(client, hardware={"gpu": "h100-80g-sxm", "nodes": 2, "inter_node_gbps": 25}, **base)
    assert slow["performance"]["tokens_per_s"] < default["performance"]["tokens_per_s"]
    assert not any(a.startswith("fabric:") for a in slow["assumptions"])


def test_tensor_parallel_turns_sequence_parallel_on_unless_told(client: TestClient) -> None:
    hardware = {"gpu": "h100-80g-sxm", "gpus_per_node": 8}
    said = _estimate(client, model=LLAMA_8B, hardware=hardware, plan={"dp": 4, "tp": 2})
    assert said["plan"]["sequence_parallel"] is True
    assert any(a.startswith("sequence parallel: on") for a in said["assumptions"])
    off = _estimate(client, model=LLAMA_8B, hardware=hardware, plan={"dp": 4, "tp": 2, "sequence_parallel": False})
    assert off["plan"]["sequence_parallel"] is False
    assert said["memory"]["per_gpu_gib"]["activations"] < off["memory"]["per_gpu_gib"]["activations"]


@pytest.mark.parametrize(("asked", "used"), [(100, 104), (99, 96), (3, 8)])
def test_a_global_batch_that_does_not_divide_is_rounded_with_a_warning(
    client: TestClient, asked: int, used: int
) -> None:
    """OPT-175B's 2M-token batch on 124 data-parallel replicas is such a shape (Zhang et al. 2022)."""
    result = _estimate(
        client,
        model=LLAMA_8B,
        hardware={"gpu": "h100-80g-sxm", "gpus_per_node": 8},
        plan={"dp": 8, "zero_stage": 3, "global_batch": asked},
    )
    assert result["plan"]["global_batch"] == used
    warning = next(w for w in result["warnings"] if w["code"] == "global_batch_rounded")
    assert str(asked) in warning["message"] and str(used) in warning["message"]


def test_lora_targets_accept_all_linear(client: TestClient) -> None:
    body = {"model": LLAMA_8B, "task": "lora", "hardware": {"gpu": "a100-80g-sxm", "gpus_per_node": 1}}
    explicit = _estimate(client, lora={"rank": 16, "targets": "all-linear"}, **body)
    default = _estimate(client, lora={"rank": 16}, **body)
    assert explicit["memory"] == default["memory"]
    too_many = client.post("/estimate", json={**body, "lora": {"targets": ["q"] * 8}})
    assert too_many.status_code == 422


def test_speed_comes_with_ranges_goodput_and_storage(client: TestClient) -> None:
    result = _estimate(
        client,
        model=LLAMA_8B,
        task="pretrain",
        tokens=2e10,
        hardware={"gpu": "h100-80g-sxm", "nodes": 2},
        plan={"dp": 16, "zero_stage": 3, "recompute": "selective"},
    )
    perf = result["performance"]
    low, high = perf["tokens_per_s_per_gpu_range"]
    assert low < perf["tokens_per_s_per_gpu"] < high
    fast, slow = perf["gpu_hours_range"]
    assert fast < perf["gpu_hours"] < slow
    goodput = perf["goodput"]
    assert 0.5 < goodput["factor"] < 1
    assert perf["time_to_train_hours"] == pytest.approx(
        goodput["compute_hours"] + sum(goodput["lost_hours"].values()), rel=1e-3
    )
    assert goodput["checkpoint_gib"] == pytest.approx(8.03e9 * 14 / 2**30, rel=0.01)  # bf16 + fp32 master, m, v
    assert goodput["storage_gib"] > 2 * goodput["checkpoint_gib"]
    assert any("goodput" in a for a in result["assumptions"])


def test_one_usual_server_brings_its_host_ram_so_the_search_can_offload(client: TestClient) -> None:
    """Before: 70B pretraining at 8k on one 8 × H100 server named by GPU type was a 422 ("no plan
    fits, offload included") although ZeRO-3 with full CPU offload and full recompute fits: the host
    RAM was unknown, so offload was never tried. The DGX H100's 2 TB (NVIDIA datasheet) is assumed."""
    result = _estimate(
        client,
        model={"preset": "llama-3.1-70b"},
        task="pretrain",
        seq_len=8192,
        hardware={"gpu": "h100-80g-sxm", "gpus_per_node": 8},
    )
    plan = result["plan"]
    # offload is what makes it fit: the optimizer states at least (the parameters stay on the GPUs where that is as
    # fast: memory relief, app/planner/search.py `relieved`)
    assert (plan["zero_stage"], plan["offload"] != "none", plan["recompute"]) == (3, True, "full")
    assert result["memory"]["fits"] is True
    assert any(a.startswith("host RAM: 2,048 GiB per node") for a in result["assumptions"])


def test_without_host_ram_the_refusal_says_offload_was_not_tried(client: TestClient) -> None:
    response = client.post(
        "/estimate",
        json={
            "model": {"preset": "llama-3.1-70b"},
            "task": "pretrain",
            "seq_len": 8192,
            "hardware": {"gpu": "h100-80g-pcie", "gpus_per_node": 8},
        },
    )
    assert response.status_code == 422
    assert "offload not tried: give hardware.host_ram_gib" in response.json()["detail"]


def test_three_cards_say_the_batch_does_not_split_not_that_nothing_fits(client: TestClient) -> None:
    """Before: "no parallel plan fits llama-2-7b on 3 × A100": 7B LoRA fits one card; it is the
    default global batch of 128 that no dp × micro-batch on 3 GPUs divides (and 3 divides neither
    the 32 heads nor the 32 layers)."""
    response = client.post(
        "/estimate",
        json={
            "model": {"preset": "llama-2-7b"},
            "task": "lora",
            "hardware": {"gpu": "a100-40g-pcie", "gpus_per_node": 3},
        },
    )
    assert response.status_code == 422
    problem = response.json()
    assert "global batch of 128 sequences does not split over 3 ×" in problem["detail"]
    assert "(e.g. 129)" in problem["detail"]
    assert (problem["errors"][0]["field"], problem["errors"][0]["type"]) == ("global_batch", "gpus_batch_split")
    fixed = _estimate(
        client,
        model={"preset": "llama-2-7b"},
        task="lora",
        global_batch=129,
        hardware={"gpu": "a100-40g-pcie", "gpus_per_node": 3},
    )
    assert fixed["plan"]["dp"] == 3


def test_a_global_batch_too_small_for_the_cluster_names_a_larger_one_and_its_mfu(client: TestClient) -> None:
    """Before: 2,048 H100 servers (16,384 GPUs) at a fixed global batch of 1,024 ran one micro-batch
    per rank through a 2-stage pipeline at 13.6 % MFU with no word on the batch."""
    result = _estimate(
        client,
        model={"preset": "llama-3.1-70b"},
        task="pretrain",
        tokens=1e12,
        seq_len=4096,
        global_batch=1024,
        hardware={"gpu": "h100-80g-sxm", "nodes": 2048},
    )
    warning = next(w for w in result["warnings"] if w["code"] == "global_batch_small")
    mfu = result["performance"]["mfu"]
    assert mfu < 0.2
    assert f"MFU {mfu:.1%}" in warning["message"]
    assert "A global batch of 8,192 (33.6M tokens, 8 micro-batches per rank) would reach" in warning["message"]
    larger = _estimate(
        client,
        model={"preset": "llama-3.1-70b"},
        task="pretrain",
        tokens=1e12,
        seq_len=4096,
        global_batch=8192,
        hardware={"gpu": "h100-80g-sxm", "nodes": 2048},
        plan={key: result["plan"][key] for key in ("dp", "tp", "pp", "zero_stage", "recompute", "micro_batch")},
    )
    assert f"would reach {larger['performance']['mfu']:.1%}" in warning["message"]
    assert "global_batch_small" not in {w["code"] for w in larger["warnings"]}


def test_a_named_stack_moves_the_speed_inside_its_range(client: TestClient) -> None:
    """plan.tuning: NeMo's recipes run 1.25x the median tuned run (performance.TUNING_SPEED), a typical stack at the
    range's low end; the range itself spans the stacks whichever is named. Unstated, the plan runs at the speed point
    of the stack that runs it: ZeRO-3 over data parallel is torchtitan's FSDP, 0.93 of the point (its own runs)."""
    body = dict(
        model=LLAMA_8B,
        task="pretrain",
        tokens=2e10,
        hardware={"gpu": "h100-80g-sxm", "nodes": 2},
        plan={"dp": 16, "zero_stage": 3, "recompute": "selective"},
    )
    plain = _estimate(client, **{**body, "plan": {**body["plan"], "tuning": "tuned"}})["performance"]
    torchtitan = _estimate(client, **body)["performance"]
    assert torchtitan["tokens_per_s_per_gpu"] == pytest.approx(0.93 * plain["tokens_per_s_per_gpu"], rel=1e-4)
    nemo = _estimate(client, **{**body, "plan": {**body["plan"], "tuning": "nemo"}})["performance"]
    typical = _estimate(client, **{**body, "plan": {**body["plan"], "tuning": "typical"}})["performance"]
    assert nemo["tokens_per_s_per_gpu"] == pytest.approx(1.25 * plain["tokens_per_s_per_gpu"], rel=1e-4)
    assert typical["tokens_per_s_per_gpu"] == pytest.approx(plain["tokens_per_s_per_gpu_range"][0], rel=1e-4)
    assert nemo["tokens_per_s_per_gpu_range"] == pytest.approx(plain["tokens_per_s_per_gpu_range"], rel=1e-4)
    assert nemo["gpu_hours_range"] == pytest.approx(plain["gpu_hours_range"], rel=1e-4)
    assert nemo["gpu_hours"] < plain["gpu_hours"] < typical["gpu_hours"]
    wrong = client.post("/estimate", json={**body, "plan": {**body["plan"], "tuning": "handwritten"}})
    assert wrong.status_code == 422
    assert "tuning" in wrong.text


def test_a_recommended_plan_estimates_to_the_options_figures_without_a_stated_batch(client: TestClient) -> None:
    """/estimate sized a stated plan at one sequence per data-parallel micro-batch while /recommend sizes every plan
    at the default global batch: the recommended plan read 30.3 h there against the option's 15.6 h."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9}
    option = next(o for o in client.post("/recommend", json=body).json()["options"] if o["plan"]["dp"] > 1)
    plan = {key: value for key, value in option["quote"]["plan"].items() if key not in ("global_batch", "summary")}
    plan.pop("time_to_train_hours", None)
    hardware = {"sku": option["sku"]["id"], "nodes": option["nodes"]}
    response = client.post("/estimate", json={**body, "hardware": hardware, "plan": plan})
    assert response.status_code == 200, response.text
    estimate = response.json()
    assert estimate["plan"]["global_batch"] == option["plan"]["global_batch"]
    assert estimate["performance"]["time_to_train_hours"] == pytest.approx(
        option["performance"]["time_to_train_hours"], rel=1e-6
    )
