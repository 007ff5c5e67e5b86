"""estimate_memory: closed-form checks against the cited formulas, validation and named warnings."""

from dataclasses import replace

import pytest

from app.estimator.compute import NF4_BYTES_PER_PARAM
from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, validate_plan
from app.estimator.notes import note
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, EstimatorError, LoraSpec, Plan, Workload
from app.text import messages

LLAMA2_7B = get_preset("llama-2-7b").model
LLAMA2_70B = get_preset("llama-2-70b").model
LLAMA3_8B = get_preset("llama-3-8b").model
LLAMA2_13B = get_preset("llama-2-13b").model
P7 = count_params(LLAMA2_7B).total


def _cluster(gpu: str = "a100-80g-sxm", per_node: int = 8, nodes: int = 1, ram: float | None = None) -> Cluster:
    return Cluster(gpu=get_gpu(gpu), gpus_per_node=per_node, nodes=nodes, host_ram_gib=ram)


def _estimate(model=LLAMA2_7B, workload: Workload | None = None, plan: Plan | None = None, cluster=None):
    return estimate_memory(model, workload or Workload(), plan or Plan(), cluster or _cluster())


def _states(estimate) -> float:
    b = estimate.breakdown
    return b.weights + b.gradients + b.optimizer


def test_mixed_precision_adam_is_16_bytes_per_param_zero_paper() -> None:
    # Rajbhandari et al. 2020 §3.1: 2Ψ + 2Ψ + 12Ψ without ZeRO
    assert _states(_estimate()) == pytest.approx(16 * P7)


# ZeRO-1 as the paper counts it (§5.1, Fig. 1); ZeRO-2's gradient shards are fp32 in the frameworks that run it, not
# the paper's 16-bit ones: 2 + 16/N (FSDP2 `foreach_reduce` casts them to the fp32 parameter dtype; DeepSpeed builds an
# fp32 partition for the step: tests/estimator/test_memory_sharded_optimizer.py)
@pytest.mark.parametrize(("stage", "bytes_per_param"), [(1, 4 + 12 / 8), (2, 2 + 16 / 8)])
def test_zero_1_and_2_hold_their_states(stage: int, bytes_per_param: float) -> None:
    estimate = _estimate(plan=Plan(dp=8, zero_stage=stage))
    assert _states(estimate) == pytest.approx(bytes_per_param * P7)


def test_zero_3_is_16_over_n_plus_two_gathered_units() -> None:
    counts = count_params(LLAMA2_7B)
    estimate = _estimate(plan=Plan(dp=64, zero_stage=3), cluster=_cluster(nodes=8))
    layer = counts.attention_per_layer + counts.dense_mlp_per_layer + counts.norms_per_layer  # > the embedding
    assert _states(estimate) == pytest.approx(16 * P7 / 64 + 2 * 2 * layer)


def test_pure_bf16_adamw_is_8_bytes_per_param_torchtune() -> None:
    assert _states(_estimate(workload=Workload(mixed_precision=False))) == pytest.approx(8 * P7)


@pytest.mark.parametrize(
    ("optimizer", "per_param"), [("adamw_8bit", 2 + 2 + 4 + 2), ("sgd", 2 + 2 + 4 + 4), ("lion", 2 + 2 + 4 + 4)]
)
def test_optimizer_state_sizes(optimizer: str, per_param: float) -> None:
    assert _states(_estimate(workload=Workload(optimizer=optimizer))) == pytest.approx(per_param * P7)


def test_tp_and_pp_divide_model_states() -> None:
    whole = _states(_estimate())
    split = _states(_estimate(plan=Plan(tp=4, pp=2)))
    assert whole / 8 < split < whole / 8 * 1.2  # norms replicated, embedding and head on end stages


def test_kv_cache_formula() -> None:
    # 2 · layers · kv_heads · head_dim · context · batch · bytes
    estimate = _estimate(workload=Workload(task="inference", seq_len=4096), plan=Plan(micro_batch=1))
    assert estimate.breakdown.kv_cache == 2 * 32 * 32 * 128 * 4096 * 1 * 2
    assert estimate.breakdown.gradients == 0 and estimate.breakdown.optimizer == 0


def test_kv_cache_in_fp8_halves_and_gqa_shrinks_it() -> None:
    bf16 = _estimate(LLAMA3_8B, Workload(task="inference", seq_len=8192), Plan(micro_batch=4)).breakdown.kv_cache
    fp8 = _estimate(
        LLAMA3_8B, Workload(task="inference", seq_len=8192, kv_cache_precision="fp8"), Plan(micro_batch=4)
    ).breakdown.kv_cache
    assert fp8 == bf16 / 2 and bf16 == 2 * 32 * 8 * 128 * 8192 * 4 * 2


def test_qlora_base_is_nf4_with_double_quant_constants() -> None:
    counts = count_params(LLAMA2_7B)
    qlora = _estimate(workload=Workload(task="qlora", lora=LoraSpec(rank=8, targets=("q", "v"))))
    unquantised = counts.embedding + counts.lm_head + counts.final_norm + 32 * counts.norms_per_layer
    adapters = 8 * (4096 + 4096) * 2 * 32
    expected = (P7 - unquantised) * NF4_BYTES_PER_PARAM + unquantised * 2 + adapters * 2  # bf16 adapters (eq. 5)
    assert qlora.breakdown.weights == pytest.approx(expected)
    assert pytest.approx(4.127 / 8) == NF4_BYTES_PER_PARAM


def test_lora_trains_only_adapters() -> None:
    lora = _estimate(workload=Workload(task="lora", lora=LoraSpec(rank=16, targets=("q", "v"))))
    adapters = 16 * (4096 + 4096) * 2 * 32
    assert lora.breakdown.gradients == pytest.approx(adapters * 4)  # fp32 adapters under mixed precision
    assert lora.breakdown.optimizer == pytest.approx(adapters * 8)


def test_offload_moves_optimizer_to_host_and_checks_ram() -> None:
    estimate = _estimate(plan=Plan(dp=8, zero_stage=2, offload="optimizer"), cluster=_cluster(ram=64))
    assert estimate.breakdown.optimizer == 0
    # fp32 master, m, v and fp32 gradients, DeepSpeed's 16-bit partition for CPU Adam's result and its host gradient
    # buffer of the largest parameter, Llama 2's 32,000 x 4,096 embedding (test_memory_deepspeed_offload.py)
    assert estimate.breakdown.host_ram == pytest.approx(8 * ((12 + 4 + 2) * P7 / 8 + 32_000 * 4_096 * 2))
    codes = {w.code for w in estimate.warnings}
    assert {"offload_over_pcie", "host_ram_exceeded"} <= codes


def test_pipeline_first_stage_holds_in_flight_micro_batches() -> None:
    base = Plan(pp=4, recompute="none")
    few = _estimate(workload=Workload(global_batch=1), plan=base).breakdown.activations
    full = _estimate(workload=Workload(global_batch=64), plan=base).breakdown.activations
    interleaved = _estimate(workload=Workload(global_batch=64), plan=replace(base, virtual_stages=2)).breakdown
    assert few < full < interleaved.activations


def test_selective_recompute_removes_the_quadratic_term_without_flash() -> None:
    plain = _estimate(workload=Workload(seq_len=8192), plan=Plan(flash_attention=False)).breakdown.activations
    flash = _estimate(workload=Workload(seq_len=8192), plan=Plan(flash_attention=True)).breakdown.activations
    # eager attention keeps the fp32 softmax and its 16-bit copy: 6 bytes per a·s² score, 32 layers (transformers
    # eager_attention_forward; memory.EAGER_SCORE_ELEMENTS)
    quadratic = 32 * 32 * 8192 * 8192 * 6
    assert plain - flash == pytest.approx(quadratic, rel=1e-6)


def test_the_article_trap_70b_full_finetune_does_not_fit_8x80gb() -> None:
    estimate = _estimate(LLAMA2_70B, Workload(seq_len=4096), Plan(dp=8, zero_stage=3, recompute="full"))
    assert not estimate.breakdown.fits
    warning = next(w for w in estimate.warnings if w.code == "no_fit_zero3")
    text = messages.warning(warning.code, warning.params)  # the API's message
    assert warning.params["fit_gpus"] > 8 and "b200-180g-sxm" in warning.params["cards"]
    assert "GPUs" in text and "b200-180g-sxm" in text


def test_a_plan_that_fits_with_zero3_says_so() -> None:
    estimate = _estimate(plan=Plan(dp=8, zero_stage=0), cluster=_cluster("a100-40g-sxm"))
    assert [w.code for w in estimate.warnings if w.code.startswith("no_fit")] == ["no_fit"]


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (Plan(tp=3), "plan.tp"),
        (Plan(pp=40), "plan.pp"),
        (Plan(dp=0), "plan.dp"),
        (Plan(micro_batch=-1), "plan.micro_batch"),
        (Plan(zero_stage=4), "plan.zero_stage"),
        (Plan(ep=2), "plan.ep"),
        (Plan(offload="optimizer_and_params", zero_stage=2), "plan.offload"),
        (Plan(dp=16), "plan"),
    ],
)
def test_invalid_plans_name_the_field(plan: Plan, field: str) -> None:
    with pytest.raises(EstimatorError) as error:
        validate_plan(LLAMA2_7B, Workload(), plan, _cluster())
    assert error.value.field == field


def test_lora_rank_above_hidden_is_refused() -> None:
    with pytest.raises(EstimatorError) as error:
        _estimate(workload=Workload(task="lora", lora=LoraSpec(rank=8192)))
    assert error.value.field == "lora.rank"


@pytest.mark.parametrize("seq_len", [0, -5, 10**9])
def test_bad_sequence_lengths_are_refused(seq_len: int) -> None:
    with pytest.raises(EstimatorError) as error:
        _estimate(workload=Workload(seq_len=seq_len))
    assert error.value.field == "seq_len"


def test_traps_are_warnings_with_stable_codes() -> None:
    """The memory estimate's traps; those that cost speed (a pipeline short of micro-batches, tensor parallel across
    servers) the speed estimate warns, once (tests/api/test_warnings_said_once.py)."""
    from app.estimator.performance import estimate_performance

    model, workload, plan, cluster = (
        LLAMA3_8B,
        Workload(global_batch=8),
        Plan(tp=16, pp=3, micro_batch=1),
        _cluster(nodes=6),
    )
    codes = {w.code for w in _estimate(model, workload, plan, cluster).warnings}
    assert {"kv_heads_replicated", "pp_uneven_layers"} <= codes
    assert not {"tp_across_nodes", "pipeline_few_microbatches", "pipeline_bubble"} & codes
    networked = replace(cluster, inter_node_gbps=400.0)  # the speed estimate needs the fabric between the servers
    speed = {w.code for w in estimate_performance(model, workload, plan, networked).warnings}
    assert {"tp_across_nodes", "pipeline_few_microbatches"} <= speed and "pipeline_bubble" not in speed


def test_an_mla_model_has_no_kv_heads_to_replicate() -> None:
    """DeepSeek-V3 caches one compressed latent per token (DeepSeek-V2 paper, arXiv:2405.04434 §2.1.2, MLA), not
    K/V heads, so tensor parallelism replicates none: the warning would tell an engineer to fix what is not there.
    A GQA model at the same TP still gets it (Llama-3-8B's 8 KV heads at tp=16, above)."""
    model = get_preset("deepseek-v3").model
    assert model.mla is not None and model.kv_heads % 16  # its GQA-equivalent head count does not divide 16
    estimate = _estimate(model, Workload(global_batch=16, task="lora"), Plan(tp=16, micro_batch=1), _cluster(nodes=2))
    assert "kv_heads_replicated" not in {w.code for w in estimate.warnings}


def test_approximate_models_are_flagged() -> None:
    from app.estimator.models import model_from_params

    estimate = _estimate(model_from_params(7e9))
    assert "approximate_model" in {w.code for w in estimate.warnings}


def test_breakdown_is_bytes_and_capacity_is_usable_memory() -> None:
    breakdown = _estimate().breakdown
    assert breakdown.capacity == 79.0 * GIB
    assert estimate_memory(LLAMA2_7B, Workload(), Plan(), _cluster()).assumptions


def test_lora_dropout_outside_0_1_is_refused() -> None:
    with pytest.raises(EstimatorError) as error:
        _estimate(workload=Workload(task="lora", lora=LoraSpec(dropout=1.5)))
    assert error.value.field == "lora.dropout"


def test_lora_dropout_keeps_input_copies_unless_fully_recomputed() -> None:
    base = Workload(task="lora", lora=LoraSpec(rank=8, targets=("q", "v")))
    dropped = Workload(task="lora", lora=LoraSpec(rank=8, targets=("q", "v"), dropout=0.05))
    assert _estimate(workload=dropped).breakdown.activations > _estimate(workload=base).breakdown.activations
    full = Plan(recompute="full")
    assert _estimate(workload=dropped, plan=full).breakdown.activations == pytest.approx(
        _estimate(workload=base, plan=full).breakdown.activations
    )


def test_inference_warnings_skip_training_traps() -> None:
    estimate = _estimate(workload=Workload(task="inference", seq_len=4096), plan=Plan(micro_batch=1, pp=2))
    assert "pipeline_few_microbatches" not in {w.code for w in estimate.warnings}


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (Plan(tp=3), "plan.tp"),
        (Plan(pp=40), "plan.pp"),
        (Plan(dp=16), "plan"),
        (Plan(ep=2), "plan.ep"),
        (Plan(zero_stage=5), "plan.zero_stage"),
        (Plan(micro_batch=0), "plan.micro_batch"),
        (Plan(dp=4, dp_shard=3, zero_stage=3), "plan.dp_shard"),
        (Plan(cp=3), "plan.cp"),
    ],
)
def test_the_estimate_refuses_a_plan_as_validate_plan_does(plan: Plan, field: str) -> None:
    """The planner's hot path (estimate_memory) and validate_plan read one table of plan rules: same refusal."""
    with pytest.raises(EstimatorError) as validated:
        validate_plan(LLAMA2_7B, Workload(), plan, _cluster())
    with pytest.raises(EstimatorError) as estimated:
        _estimate(plan=plan)
    assert validated.value.field == estimated.value.field == field
    assert str(validated.value) == str(estimated.value)


def test_a_plan_keeping_every_rule_is_estimated() -> None:
    validate_plan(LLAMA2_7B, Workload(), Plan(dp=2, tp=2, pp=2), _cluster())
    assert _estimate(plan=Plan(dp=2, tp=2, pp=2)).breakdown.total > 0


def test_fsdp_under_a_pipeline_keeps_the_stage_gathered_with_fp32_gradients() -> None:
    """torchtitan: reshard_after_forward = False when PP is on (torchtitan `apply_fsdp`), and the pipeline
    schedule syncs gradients only on the last micro-batch, accumulating them in the fp32 reduce dtype.
    Llama 3.1 405B, tp 8 x pp 8 x FSDP 8 (torchtitan benchmarks/llama3_h100_202412_torchtitan.md Table 5):
    the first stage's 16 of 126 layers plus the embedding, 1/8 of each by TP."""
    model = get_preset("llama-3.1-405b").model
    workload = Workload(task="pretrain", seq_len=8192, global_batch=256)
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=64, inter_node_gbps=3200.0)
    plan = Plan(dp=8, tp=8, pp=8, zero_stage=3, recompute="full", sequence_parallel=True)
    piped = estimate_memory(model, workload, plan, cluster).breakdown
    assert piped.gradients == pytest.approx(2 * piped.weights)  # fp32 gradients, 16-bit weights, both whole
    flat = estimate_memory(model, workload, replace(plan, pp=1, dp=64), cluster).breakdown
    assert flat.gradients < piped.gradients / 10  # without a pipeline FSDP shards the whole model over 64


def test_zero_0_assumption_says_the_states_are_replicated_not_sharded() -> None:
    replicated = [
        n.text for n in estimate_memory(LLAMA2_7B, Workload(), Plan(dp=4, zero_stage=0), _cluster()).assumptions
    ]
    assert not any("shards over" in line for line in replicated)
    assert any("every data-parallel rank holds the whole" in line for line in replicated)
    sharded = estimate_memory(LLAMA2_7B, Workload(), Plan(dp=4, zero_stage=3), _cluster()).assumptions
    assert any("ZeRO stage 3 shards over dp × cp" in n.text for n in sharded)
    assert note("zero_sharded", zero=3, offload="none") in sharded


def test_mla_activations_count_per_head_queries_keys_and_values() -> None:
    # DeepSeek-V3 (config.json: 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128):
    # its GQA-equivalent shape (100-dim heads, 2 KV heads) matches MLA's parameters, not what attention keeps. Per
    # token and layer MLA keeps, after the up-projections (transformers DeepseekV3Attention.forward): query and key
    # of 192 dims and value, attention output and o_proj input of 128 dims per head; the two latent norms' fp32
    # inputs and the normed latents that q_b_proj and kv_b_proj keep.
    mla = get_preset("deepseek-v3").model
    gqa = replace(mla, mla=None)
    workload, plan = Workload(task="full_finetune", seq_len=1024), Plan(recompute="none")
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"))
    heads, qk, v, q_rank, kv_rank = 128, 192, 128, 1536, 512
    mla_elements = heads * (2 * qk + 3 * v) + 3 * (q_rank + kv_rank)
    gqa_elements = 3 * heads * mla.d_head + 2 * mla.kv_heads * mla.d_head
    expected = mla.layers * 1024 * 2 * (mla_elements - gqa_elements)  # bytes: 16-bit tensors, 1,024 tokens
    got = (
        estimate_memory(mla, workload, plan, cluster).breakdown.activations
        - estimate_memory(gqa, workload, plan, cluster).breakdown.activations
    )
    assert got == pytest.approx(expected, rel=1e-9)


def test_the_zero3_advice_follows_the_clusters_headroom() -> None:
    """The advice is cached per (model, workload): a second cluster with a larger headroom must not be told that
    ZeRO-3 fits because it fitted inside the first one's."""
    workload, plan = Workload(), Plan(dp=8, zero_stage=0)
    roomy = estimate_memory(LLAMA2_7B, workload, plan, _cluster("a100-40g-sxm"))
    assert [w.code for w in roomy.warnings if w.code.startswith("no_fit")] == ["no_fit"]
    tight = replace(_cluster("a100-40g-sxm"), memory_headroom=0.9)
    estimate = estimate_memory(LLAMA2_7B, workload, plan, tight)
    assert [w.code for w in estimate.warnings if w.code.startswith("no_fit")] == ["no_fit_zero3"]


def test_the_zero3_advice_shards_over_every_rank_of_a_hybrid_plan() -> None:
    """ "ZeRO-3 over dp=8" shards the states over all eight ranks, not over the hybrid plan's shard group of 2."""
    workload = Workload(seq_len=2048)
    hybrid = Plan(dp=8, zero_stage=3, dp_shard=2, recompute="full")
    cluster = _cluster("a100-40g-sxm")
    assert not estimate_memory(LLAMA2_13B, workload, hybrid, cluster).breakdown.fits
    assert estimate_memory(LLAMA2_13B, workload, Plan(dp=8, zero_stage=3, recompute="full"), cluster).breakdown.fits
    estimate = estimate_memory(LLAMA2_13B, workload, hybrid, cluster)
    assert [w.code for w in estimate.warnings if w.code.startswith("no_fit")] == ["no_fit"]


@pytest.mark.parametrize(
    ("per_node", "lever"),
    [(8, {"fsdp_torch_adamw": True}), (1, {"optimizer_in_backward": True})],
    ids=["fsdp_torch_adamw", "optimizer_in_backward"],
)
def test_the_zero3_advice_follows_the_plans_optimizer_step(per_node: int, lever: dict[str, bool]) -> None:
    """The advice's ZeRO-3 plan keeps how the plan steps its optimizer: the Trainer's AdamW under FSDP
    (Plan.fsdp_torch_adamw: its step's copy of v, memory.states ADAMW_STEP_V_SHARE) and the optimizer in the backward
    (one parameter's gradient at a time). Advice cached for the same plan without it must not be served to it. A model
    of its own name has a context of its own, where nothing was cached before."""
    workload, cluster = Workload(task="full_finetune", seq_len=512), _cluster("a100-40g-sxm", per_node=per_node)
    plain = Plan(dp=per_node)
    stepped = replace(plain, **lever)
    alone = estimate_memory(replace(LLAMA2_7B, name="Llama 2 7B, a context of its own"), workload, stepped, cluster)
    estimate_memory(LLAMA2_7B, workload, plain, cluster)  # the same plan without it, first
    after = estimate_memory(LLAMA2_7B, workload, stepped, cluster)
    advice = [w for w in after.warnings if w.code.startswith("no_fit")]
    assert advice
    assert advice == [w for w in alone.warnings if w.code.startswith("no_fit")]


def test_the_offload_warning_names_the_links_own_bandwidth() -> None:
    """Gen 5 hosts were told "~20-25 GB/s achieved per GPU on gen 4": the figure is the card's own generation's
    (data/interconnects.json pcie_host)."""
    from app.estimator.interconnects import host_pcie_bytes_per_s

    for gpu in ("a100-80g-sxm", "h100-80g-sxm"):
        cluster = _cluster(gpu, ram=2048)
        plan = Plan(dp=8, zero_stage=3, offload="optimizer")
        warning = next(w for w in _estimate(plan=plan, cluster=cluster).warnings if w.code == "offload_over_pcie")
        gen = cluster.gpu.pcie_gen
        assert warning.params["pcie_gbs"] == pytest.approx(host_pcie_bytes_per_s(gen) / 1e9)
        text = messages.warning(warning.code, warning.params)  # the API's message
        assert f"PCIe gen {gen} (~{host_pcie_bytes_per_s(gen) / 1e9:.0f} GB/s" in text
        assert "on gen 4" not in text
