"""A memory lever never lengthens the time on a configuration where the plan without it fits, and a configuration
that fits only with the fused loss is offered with it (search.py `_lever_floor`, `_fused_fit`).

Review R4-1: Llama 3.1 8B full fine-tune, 2e9 tokens at 8k, on one 8 x A100 80G server: Megatron-LM TP 2 x DP 4,
ZeRO-1, selective recompute, 3299 tok/s a GPU, 21.5 h. With `plan.loss: fused` the answer took ZeRO-3 over 8 GPUs
with full recompute, 2669 tok/s, 26.6 h: the lever let ZeRO-3 without recompute fit at its estimate, its high end
crossed the card, and memory relief slowed it with its own twins, while the Megatron-LM plan fits with the fused loss
(`--cross-entropy-loss-fusion`, which keeps the logits as the plain loss does: the same GiB). Review R4-2: the same
job on 4 x A100 40G PCIe was rejected as "the leanest plan still needs 38.4 GiB" where ZeRO-3 with the fused loss
holds 36.6 GiB (37.05 GiB limit)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Workload
from app.planner.levers import Levers
from app.planner.search import cached_search_plans

BODY = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 2e9, "seq_len": 8192}
A100_SERVER = "a100-80g-sxm-8x"
A100_CARDS = "a100-40g-pcie-card"


def _by_sku(client: TestClient, body: dict) -> dict[str, dict]:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    return {option["sku"]["id"]: option for option in result["options"] + result["near_misses"]}


def test_the_fused_loss_keeps_the_megatron_plan_and_its_time(client: TestClient) -> None:
    plain = _by_sku(client, BODY)[A100_SERVER]
    fused = _by_sku(client, BODY | {"plan": {"loss": "fused"}})[A100_SERVER]
    assert plain["stack"] == "megatron" and plain["plan"]["loss"] == "standard"
    # the lever saves memory only: the time on the same server may not grow (it was 26.6 h against 21.5 h)
    assert fused["performance"]["time_to_train_hours"] <= plain["performance"]["time_to_train_hours"] * (1 + 1e-9)
    assert fused["stack"] == "megatron" and fused["plan"]["loss"] == "fused"
    launch = fused["launch"]["megatron"]  # a fine-tune launches through Megatron Bridge: the same fusion, its override
    assert {"model.cross_entropy_loss_fusion=true", "model.cross_entropy_fusion_impl=native"} <= set(
        launch["overrides"]
    )
    # Megatron-LM's fused cross-entropy keeps the 16-bit logits and their fp32 softmax as its unfused one does
    # (megatron/core/fusions/fused_cross_entropy.py at d98e8a64d): it read 55.35 against 51.6 GiB, sized as Liger's
    assert fused["memory"]["per_gpu_gib"]["total"] == plain["memory"]["per_gpu_gib"]["total"]


def test_a_memory_lever_never_lengthens_the_search_where_the_plain_plan_fits() -> None:
    """The invariant on the search itself, over the fused loss on configurations where the standard loss fits."""
    model = get_preset("llama-3.1-8b").model
    clusters = [
        Cluster(get_gpu("a100-80g-sxm"), 8, 1, "nvlink3", host_ram_gib=1024),
        Cluster(get_gpu("h100-80g-sxm"), 8, 1, "nvlink4", host_ram_gib=2048),
    ]
    for seq_len in (4096, 8192):
        workload = Workload(task="full_finetune", seq_len=seq_len, tokens=2e9)
        for cluster in clusters:
            plain = cached_search_plans(model, workload, cluster)[0].best
            fused = cached_search_plans(model, workload, cluster, levers=Levers(loss="fused"))[0].best
            assert plain is not None and fused is not None
            assert fused.throughput >= plain.throughput * (1 - 1e-9), (seq_len, cluster.gpu.id)


def test_a_configuration_that_fits_only_with_the_fused_loss_is_offered_with_it(client: TestClient) -> None:
    """Gemma 2 2B (256,000-token vocabulary) at 8k on 4 x A100 40G: the standard loss's logits do not fit, ZeRO-2
    with Liger's fused loss through the Trainer does (the Llama 3.1 8B at 12,288 tokens this test read before fits
    no plan once Megatron-LM's fused loss is counted with its logits: the test below)."""
    found = _by_sku(
        client, {"model": {"preset": "gemma-2-2b"}, "task": "full_finetune", "tokens": 2e9, "seq_len": 8192}
    )
    assert A100_CARDS in found, "4 x A100 40G was rejected though the fused loss fits"
    option = found[A100_CARDS]
    assert option["plan"]["loss"] == "fused"
    assert option["memory"]["per_gpu_gib"]["total"] <= option["memory"]["limit_gib"]
    assert option["stack"] == "deepspeed" and option["launch"]["deepspeed"]["trainer"]["use_liger_kernel"] is True


def test_the_megatron_fused_loss_is_not_offered_where_it_saves_nothing(client: TestClient) -> None:
    """Llama 3.1 8B at 12,288 tokens on 4 x A100 40G: Megatron-LM TP 2 x PP 2 with --cross-entropy-loss-fusion was
    offered at 36.77 of 37.05 GiB, sized without the logits its fused cross-entropy keeps (6 bytes a logit: memory.
    activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT); counted, no plan fits (the leanest needs 37.9 GiB) and
    Liger's (ZeRO-3) does not either."""
    response = client.post("/recommend", json=BODY | {"seq_len": 12288})
    assert response.status_code == 200, response.text
    result = response.json()
    assert A100_CARDS not in {option["sku"]["id"] for option in result["options"] + result["near_misses"]}
    rejected = {row["sku"]: row for row in result["rejected"]}
    assert rejected[A100_CARDS]["code"] == "gpu_memory"
    assert rejected[A100_CARDS]["params"]["needed_gib"] > rejected[A100_CARDS]["params"]["limit_gib"]


def test_the_fused_loss_is_not_taken_unasked_where_the_standard_loss_fits(client: TestClient) -> None:
    """Only a configuration with no standard-loss plan takes it (the A100 80G server keeps the standard loss)."""
    assert _by_sku(client, BODY)[A100_SERVER]["plan"]["loss"] == "standard"
