"""The one en/zh catalog of text rendered from codes (app/text/messages.py): both languages word the same
codes with the same fields, every code the training planner emits is worded, and the API's English
reads as it did when the planner wrote the sentences itself (the strings below are that old output)."""

from __future__ import annotations

import ast
import itertools
import string
from pathlib import Path
from typing import get_args

import pytest

from app.estimator import performance
from app.estimator.checkpoints import checkpoint_from_config, scheme_params
from app.estimator.clusters import CatalogServer, HardwareAsked, gpu_cluster, server_cluster
from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.memory.assumptions import _assumptions
from app.estimator.notes import ENGLISH, Note, note
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, EstimatorError, Plan, WarningCode, Workload
from app.estimator.vocabulary import RequestTask
from app.hub.service import HubCode
from app.planner.misses import MissCode
from app.planner.option import RejectionCode
from app.planner.service import FUSED_LOSS_NOTE, SEQUENCE_PARALLEL_NOTE
from app.planner.serving_request import SERVING_ASSUMPTIONS, tail_notes
from app.planner.serving_schemas import ServingIn
from app.planner.serving_service import NO_FABRIC_NOTE
from app.text import messages, words
from tests import source_trees
from tests.api.test_serving_note_codes import SERVING_NOTES

# the fields messages._render derives from a parameter: a reached latency in its unit (`{ttft}` from ttft_ms)
DERIVED = {"ttft": "ttft_ms", "tpot": "tpot_ms"}


def fields(template: str) -> set[str]:
    return {DERIVED.get(name, name) for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize(
    "table",
    [
        messages.REJECTIONS,
        messages.KERNELS,
        messages.MISSES,
        messages.WARNINGS,
        messages.WHERE,
        messages.HUB,
        messages.ASSUMPTIONS,
        messages.QUOTE_CHECKS,
        messages.LAUNCH,
        messages.NOTES,
        messages.QUOTE_NOTES,
        messages.SCHEMES,
        messages.UNKNOWN,
        messages.BATCH_SPLITS,
        messages.ESTIMATOR_ERRORS,
        messages.REFUSALS,
        messages.PATTERNS,
        messages.BODY_REFUSALS,
        words.PLAN_WORDS,
        words.EXPLAIN_WORDS,
        words.DURATION_WORDS,
    ],
)
def test_both_languages_word_the_same_codes_with_the_same_fields(table: dict[str, dict[str, str]]) -> None:
    assert set(table["en"]) == set(table["zh"])
    assert {k: fields(v) for k, v in table["en"].items()} == {k: fields(v) for k, v in table["zh"].items()}


def test_every_task_has_its_label_title_and_words_in_both_languages() -> None:
    for form in messages.TASK_LABELS.values():
        assert set(form["en"]) == set(form["zh"]) == set(get_args(RequestTask))


def test_every_code_the_planner_emits_is_worded() -> None:
    assert set(get_args(RejectionCode)) <= set(messages.REJECTIONS["en"])
    assert set(get_args(MissCode)) == set(messages.MISSES["en"]) - {
        "budget_converted",
        "budget_job",
        "total_budget_converted",
        "deadline_hours",
        "slo_peak_percentile",
        "slo_one_request_percentile",
        "slo_peak_saturated",
        "peak_percentile",
        "peak_saturated",
        "capacity_never",
        "bf16_for_fp8_kv",
        "bf16_for_fp8_math",
        "max_nodes_cards",
    }


def test_every_warning_code_is_worded_in_both_languages() -> None:
    """WarningCode lists every code the estimator and the planner emit (mypy holds each Warning_ and
    WarningOut to it), so a Chinese page never falls back to the API's English for a warning."""
    for lang in ("en", "zh"):
        assert sorted(set(get_args(WarningCode)) - set(messages.WARNINGS[lang])) == [], lang
    # no text for a code nothing emits (`code.variant`: the same code worded by its parameters, messages._warning_key)
    assert {key.split(".")[0] for key in messages.WARNINGS["en"]} <= set(get_args(WarningCode))


def _every_note() -> set[Note]:
    """Every note the estimator states, over the choices its assumptions read (memory: the workload and plan kinds;
    speed: pipelines, goodput, stated stacks, the ways a plan differs from the calibration runs, inference)."""
    notes: set[Note] = set()
    workloads = itertools.product(
        ["lora", "qlora", "full_finetune", "pretrain", "inference"],
        ["bf16", "fp32"],
        [True, False],
        ["adamw", "adafactor"],
        [True, False],
        [0.5, 0.5625],
        [True, False],
    )
    for w in workloads:
        for zero, pipelined, fp32_grads, host_load, compiled, loss, fp32_params in itertools.product(
            [0, 2, 3],
            [True, False],
            [True, False],
            ["none", "every_rank", "local_rank_0"],
            [True, False],
            ["standard", "compiled", "fused", "megatron"],
            [False, True],
        ):
            plan = (
                zero,
                "optimizer",
                "selective",
                True,
                pipelined,
                compiled,
                fp32_grads,
                host_load,
                compiled,
                w[4],
                w[6],
                loss,
                fp32_params,
            )
            notes.update(_assumptions(w, plan))
    for pp, goodput in itertools.product([1, 4], [True, False]):
        notes.update(performance._training_assumptions(pp, 2, goodput))
    notes.update(performance.TUNING_NOTES.values())
    notes.update(performance._distance_notes(("moe", "offload", "gpu", "ampere_pretrain")))
    notes.add(performance.INFERENCE_NOTE)
    return notes | _cluster_notes() | _step_notes()


def _step_notes() -> set[Note]:
    """The notes on torch AdamW's step (app/estimator/memory/assumptions.py `with_step_notes`): one GPU, one
    micro-batch a step, where the backward's start (Llama 3.2 1B, micro-batch 8) or the step (3B, micro-batch 1) sets
    the peak."""
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=1)
    notes: set[Note] = set()
    for preset, micro_batch in (("llama-3.2-1b", 8), ("llama-3.2-3b", 1)):
        workload = Workload(task="full_finetune", tokens=1e8, global_batch=micro_batch)
        plan = Plan(recompute="none", micro_batch=micro_batch)
        notes.update(estimate_memory(get_preset(preset).model, workload, plan, cluster).assumptions)
    # DeepSpeed ZeRO-2's gradient buckets (`deepspeed_buckets`)
    two = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=2)
    zero2 = Plan(dp=2, zero_stage=2, recompute="full")
    notes.update(estimate_memory(get_preset("llama-3.2-1b").model, Workload(task="lora"), zero2, two).assumptions)
    # DeepSpeed ZeRO-3's sub-group gradient copies at the step (`zero3_step_other`): full fine-tuning at short sequences
    zero3 = Plan(dp=2, zero_stage=3, recompute="full")
    full = Workload(task="full_finetune", seq_len=128)
    notes.update(estimate_memory(get_preset("llama-3.2-3b").model, full, zero3, two).assumptions)
    return notes


def _cluster_notes() -> set[Note]:
    """What /estimate fills in of the hardware (app/estimator/clusters.py), over the ways a request leaves it out,
    and the notes the planner adds (sequence parallel on, a SKU rented one server per job)."""
    notes: set[Note] = {SEQUENCE_PARALLEL_NOTE, FUSED_LOSS_NOTE, note("one_server_per_job", sku="l40s-48g-pcie-card")}
    notes.add(note("hardware_largest_server", per_node=8, gpu="NVIDIA L40S"))  # a GPU with no usual server: none today
    notes.update([*SERVING_ASSUMPTIONS, NO_FABRIC_NOTE, note("serving_no_block", input_tokens=512, output_tokens=256)])
    notes.update(tail_notes(ServingIn(input_tokens=1000, input_tokens_p95=8000)))
    for gpu, asked in itertools.product(
        ["a100-80g-sxm", "h100-80g-sxm", "l40s-48g", "b200-180g-sxm"],
        [
            HardwareAsked(),
            HardwareAsked(nodes=2),
            HardwareAsked(nodes=2, inter_node_fabric="roce-200"),
            HardwareAsked(nodes=2, gpus_per_node=4, inter_node_gbps=800),
        ],
    ):
        try:
            notes.update(gpu_cluster(get_gpu(gpu), asked)[1])
        except EstimatorError:
            continue  # no usual fabric for this GPU
    for fabric, host in itertools.product([None, "ib-ndr-400"], [None, 1024.0]):
        server = CatalogServer("srv", 8, "nvlink4", fabric, "10 Gbps BGP", host, 3200.0 if fabric else None)
        notes.update(server_cluster(get_gpu("h100-80g-sxm"), server, HardwareAsked(nodes=2))[1])
    notes.update(SERVING_NOTES)  # one of each a serving estimate states (app/estimator/serving/estimate.py)
    return notes


def test_every_assumption_the_estimator_states_is_worded_in_both_languages() -> None:
    """The English is the estimator's own table (the API's `assumptions`), the catalog's `en` that very table; every
    code stated has a text in each language that renders with the note's parameters, and no text waits for a code
    nothing states."""
    assert messages.NOTES["en"] is ENGLISH
    notes = _every_note()
    assert {n.code for n in notes} == set(ENGLISH) == set(messages.NOTES["zh"])
    for n in notes:
        assert messages.note(n.code, dict(n.params), "en") == n.text
        zh = messages.note(n.code, dict(n.params), "zh")
        assert zh != n.text and "{" not in zh, n


CHECKPOINTS = [
    {"quant_method": "fp8", "weight_block_size": [128, 128]},
    {"quant_method": "fp8"},
    {"quant_method": "fbgemm_fp8"},
    {"quant_method": "awq", "bits": 4, "group_size": 128},
    {"quant_method": "gptq", "bits": 8, "group_size": -1},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int"}}}},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
    {"quant_method": "bitsandbytes", "load_in_8bit": True},
    {"quant_method": "modelopt", "quant_algo": "FP8"},
    {"quant_method": "mxfp4", "bits": 4},
    {"quant_method": "mxfp4"},
]


def test_every_checkpoint_format_is_worded_in_both_languages() -> None:
    """A quantised checkpoint's format is a code with parameters (`scheme_note`) beside its English (`scheme`): a
    Chinese warning about it names the format in Chinese, the English stays the checkpoint's own words."""
    shipped = [checkpoint_from_config({"quantization_config": quant}) for quant in CHECKPOINTS]
    assert {c.scheme_note.code for c in shipped if c.scheme_note} == set(messages.SCHEMES["en"])
    for checkpoint in shipped:
        params = {"repo": "org/model", "scheme": checkpoint.scheme, **scheme_params(checkpoint)}
        assert messages.scheme(params, "en") == checkpoint.scheme
        assert messages.warning("quantised_checkpoint", params, "en").startswith(
            f"org/model ships {checkpoint.scheme} "
        )
    fp8 = {"repo": "deepseek-ai/DeepSeek-V3", "scheme": shipped[0].scheme, **scheme_params(shipped[0])}
    assert shipped[0].scheme == "block FP8 (128 x 128 scales)"
    assert "分块 FP8（每 128 x 128 块一个缩放因子）" in messages.warning("quantised_checkpoint", fp8, "zh")
    assert "block" not in messages.launch("convert_bf16", fp8 | {"output": "/m", "gib": 1.0, "hours": 1.0}, "zh")


def test_every_hub_code_is_worded() -> None:
    assert set(get_args(HubCode)) == set(messages.HUB["en"]) == set(messages.HUB["zh"])


def test_the_english_is_the_planners_old_sentence() -> None:
    where = {"gpus": 4, "gpu_name": "NVIDIA A100 40GB PCIe", "nodes": 1}
    memory = where | {"needed_gib": 45.04, "limit_gib": 37.05, "usable_gib": 39.0, "headroom": 0.05}
    assert messages.rejection("gpu_memory", memory) == (
        "does not fit: the leanest plan on 4 × NVIDIA A100 40GB PCIe still needs 45.0 GiB per GPU, more than "
        "the 37.0 GiB left of 39.0 GiB usable after the 5% headroom"
    )
    ram = where | {"nodes": 2, "gpus": 16, "offload_gib": 1234.4, "host_ram_gib": 1024, "host_ram_limit_gib": 950.2}
    assert messages.rejection("host_ram", ram) == (
        "does not fit: the leanest plan on 16 × NVIDIA A100 40GB PCIe on 2 nodes offloads 1,234 GiB of host RAM "
        "per node; the node has 1,024 GiB, 950 GiB after the reserve for the OS, the training processes and their "
        "data loaders"
    )
    assert messages.rejection("gpu_type", {"gpu_type": "a10-24g", "requested": ["h100-80g-sxm", "a100-80g-sxm"]}) == (
        "GPU type a10-24g is not among the requested h100-80g-sxm, a100-80g-sxm"
    )
    assert messages.rejection("time_budget", {}) == "not searched: the time budget ran out"
    budget = {"monthly": "30000.00", "currency": "CNY", "budget": "20000", "compared_currency": "CNY"}
    assert messages.misses([("deadline", {"days": 41.2, "deadline_days": 30.0}), ("budget", budget)]) == (
        "fits, but needs 41.2 days (deadline 30); fits, but costs 30000.00 CNY a month (budget 20000 CNY)"
    )
    converted = budget | {"monthly": "4000.00", "currency": "USD", "converted_monthly": "28400.00"}
    assert messages.misses([("budget", converted)]) == (
        "fits, but costs 4000.00 USD (28400.00 CNY) a month (budget 20000 CNY)"
    )
    assert messages.misses([]) is None


@pytest.mark.parametrize(
    ("params", "english", "chinese"),
    [
        (
            {"days": 1.452, "hours": 34.85, "deadline_days": 1.0},
            "fits, but needs 1.5 days (deadline 1)",
            "放得下，但需要 1.5 天（截止期限 1 天）",
        ),
        (
            {"days": 7.37, "hours": 176.88, "deadline_days": 7.0},
            "fits, but needs 7.4 days (deadline 7)",
            "放得下，但需要 7.4 天（截止期限 7 天）",
        ),
        (  # 1.04 days: to the nearest tenth 1.0, which would meet the deadline
            {"days": 1.04, "hours": 24.96, "deadline_days": 1.0},
            "fits, but needs 1.1 days (deadline 1)",
            "放得下，但需要 1.1 天（截止期限 1 天）",
        ),
        (  # a miss the params round to the deadline itself (1.0001 days to 1.0) still reads above it
            {"days": 1.0, "hours": 24.0, "deadline_days": 1.0},
            "fits, but needs 1.1 days (deadline 1)",
            "放得下，但需要 1.1 天（截止期限 1 天）",
        ),
        (
            {"days": 0.502, "hours": 12.04, "deadline_days": 0.5},
            "fits, but needs 12.1 hours (deadline 0.5 days)",
            "放得下，但需要 12.1 小时（截止期限 0.5 天）",
        ),
    ],
)
def test_a_missed_deadline_never_reads_as_met(params: dict[str, float], english: str, chinese: str) -> None:
    """The days a deadline miss needs are shown to a tenth, rounded up: 1.452 days against a 1-day deadline
    once read "needs 1 days (deadline 1)", and 7.37 against 7 "needs 7 days (deadline 7)"."""
    assert messages.misses([("deadline", params)]) == english
    assert messages.misses([("deadline", params)], "zh") == chinese


def test_chinese_and_a_callers_money() -> None:
    budget = {"monthly": "30000.00", "currency": "CNY", "budget": "20000", "compared_currency": "CNY"}
    assert messages.misses([("budget", budget)], "zh", lambda amount, currency: f"¥{amount}") == (
        "放得下，但每月费用 ¥30000.00（预算 ¥20000）"
    )
    assert messages.rejection("region", {"regions": ["shenzhen", "singapore"], "requested": ["los-angeles"]}, "zh") == (
        "仅在 shenzhen、singapore 提供，不在所选地域（los-angeles）"
    )


def test_the_serving_rejections_read_as_the_search_wrote_them_and_in_chinese() -> None:
    """The serving search's `kernels`, `capacity` and `gpu_memory` rejections: the English is the search's old
    sentence, the Chinese is Chinese (no English sentence left in it)."""
    int4 = {"gap": "weights_volta", "gpu": "Tesla V100", "engine": "vllm", "weight_format": "int4"}
    nodes = {"replicas": 3, "replica_gpus": 1, "max_nodes": 2}
    cards = {"replicas": 9, "replica_gpus": 2}
    kv = {"gpu": "NVIDIA A10", "one_server": False}
    alone = kv | {"one_server": True}
    cases = [
        ("kernels", int4, "vllm has no int4 kernels for Tesla V100 (compute capability 7.0)"),
        ("max_nodes", nodes, "3 replicas of 1 GPU exceed the SKU's max_nodes 2"),
        ("max_nodes", cards, "9 replicas of 2 GPUs exceed the SKU's card counts"),
        ("gpu_memory", kv, "the weights leave no room for a KV cache at any tensor-parallel degree this SKU offers"),
        (
            "gpu_memory",
            alone,
            "the weights leave no room for a KV cache at any tensor-parallel degree this SKU offers; the SKU has no "
            "fabric to pipeline one replica across servers",
        ),
    ]
    for code, params, text in cases:
        assert messages.rejection(code, params) == text
        chinese = messages.rejection(code, params, "zh")
        assert not any(word in chinese for word in ("the ", "replica", "weights", "kernels")), chinese
    assert messages.rejection("max_nodes", nodes, "zh") == "3 个副本（每个 1 张 GPU）超出该 SKU 的节点上限 max_nodes 2"
    assert messages.rejection("kernels", int4, "zh") == "vllm 在 Tesla V100（计算能力 7.0）上没有 int4 内核"


@pytest.mark.parametrize("gap", sorted(messages.KERNELS["en"]))
def test_every_kernel_gap_is_worded_in_chinese(gap: str) -> None:
    params = {"gap": gap, "gpu": "Tesla V100", "engine": "sglang", "weight_format": "fp8"}
    english, chinese = messages.rejection("kernels", params), messages.rejection("kernels", params, "zh")
    assert english == messages.KERNELS["en"][gap].format(**params) and chinese != english


def test_the_serving_near_misses_read_as_the_search_wrote_them_and_in_chinese() -> None:
    """The serving search's near misses (latency targets, the peak load, the sequence length, the budget): the
    English is the search's old sentence, the Chinese is Chinese."""
    both = {"ttft_ms": 812.4, "tpot_ms": 61.25, "slo_ttft_ms": 500.0, "slo_tpot_ms": 50.0}
    cases = [
        (
            "slo_one_request",
            both,
            "even one request at a time misses TTFT ≤ 500 ms and TPOT ≤ 50 ms: TTFT 812 ms, TPOT 61.2 ms (a faster "
            "GPU, more tensor parallelism or a smaller weight format is needed)",
        ),
        (
            "slo_peak",
            {"ttft_ms": 240.0, "tpot_ms": 75.04, "slo_tpot_ms": 60.0},
            "at the peak load TTFT is 240 ms and TPOT 75.0 ms, missing TPOT ≤ 60 ms",
        ),
        (
            "slo_peak",
            {"ttft_ms": 2400.0, "tpot_ms": 30.0, "slo_ttft_ms": 2000.0, "percentile": "p90", "saturated": False},
            "at the peak load the p90 TTFT is 2,400 ms and the p90 TPOT 30.0 ms with as many replicas as the SKU "
            "rents, missing TTFT ≤ 2000 ms",
        ),
        (
            "slo_peak",
            {"ttft_ms": None, "tpot_ms": 30.0, "slo_ttft_ms": 2000.0, "percentile": "p90", "saturated": True},
            "at the peak load the replicas the SKU rents cannot keep up: the queue grows without bound (the p90 TTFT "
            "has no bound), missing TTFT ≤ 2000 ms",
        ),
        (
            "peak_load",
            {"replicas": 4, "carried": 11.234, "offered": 15.0},
            "4 replicas carry 11.2 of the 15 requests/s peak",
        ),
        (
            "sequence_too_long",
            {"context_len": 121000, "kv_cache_tokens": 45312, "tp": 2},
            "one sequence of 121,000 tokens does not fit: the KV cache holds 45,312 tokens at TP 2; shorten "
            "input_tokens + output_tokens (or max_model_len), or use more or larger GPUs",
        ),
    ]
    for code, params, text in cases:
        assert messages.misses([(code, params)]) == text
        chinese = messages.misses([(code, params)], "zh") or ""
        assert not any(word in chinese for word in ("the ", "missing", "replicas", "sequence")), chinese
    assert messages.misses([("slo_one_request", both)], "zh") == (
        "即使一次只处理一个请求也达不到 TTFT ≤ 500 毫秒 且 TPOT ≤ 50 毫秒：TTFT 812 毫秒，TPOT 61.2 毫秒"
        "（需要更快的 GPU、更高的张量并行度或更小的权重格式）"
    )
    assert set(messages.SLO["en"]) == set(messages.SLO["zh"])


def _warning_calls() -> list[tuple[str, str, set[str]]]:
    """(file:line, code, the parameter names it passes) of every `Warning_(code, params)` in app/, read
    from the source: a dict literal, `a | b` of them, a name assigned one in the same function, or a call of a
    function of the same file that returns one (`slo_params(...)` stands for the latency targets)."""
    root = source_trees.APP
    found = []
    for path in source_trees.trees():
        functions = {f.name: f for f in source_trees.nodes(path) if isinstance(f, ast.FunctionDef)}
        constants = {
            t.id: n.value.value
            for n in source_trees.nodes(path)
            if isinstance(n, ast.Assign | ast.AnnAssign) and isinstance(n.value, ast.Constant)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }
        constants |= {"MOE_LOW_CONCURRENCY_WARNING": "moe_low_concurrency_unvalidated"}  # from the estimator
        for function in functions.values():
            for call in ast.walk(function):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Warning_"):
                    continue
                first = call.args[0]
                code = first.value if isinstance(first, ast.Constant) else constants[ast.unparse(first)]
                given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords), None)
                names = _keys(given, function, functions) if given is not None else set()
                found.append((f"{path.relative_to(root)}:{call.lineno}", code, names))
    return found


def _keys(node: ast.expr, scope: ast.FunctionDef, functions: dict[str, ast.FunctionDef]) -> set[str]:
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant)}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _keys(node.left, scope, functions) | _keys(node.right, scope, functions)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "slo_params":
            return {"slo"}
        returned = next(n.value for n in ast.walk(functions[node.func.id]) if isinstance(n, ast.Return) and n.value)
        return _keys(returned, functions[node.func.id], functions)
    if isinstance(node, ast.Name):
        assigned = [
            n.value
            for n in ast.walk(scope)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)
        ]
        return _keys(assigned[-1], scope, functions)
    raise AssertionError(f"cannot read the parameters of {ast.unparse(node)}")


def test_every_warning_carries_the_figures_its_text_names() -> None:
    """Each Warning_ the estimator and the planner build passes every field its catalog text names, so the
    web page words it from code and params (in both languages: the fields are the same)."""
    calls = _warning_calls()
    assert len({code for _, code, _ in calls}) >= 25
    for where, code, names in calls:
        assert fields(messages.WARNINGS["en"][code]) <= names, (where, code)


def test_a_warning_reads_in_both_languages_with_its_figures() -> None:
    bubble = {"micro_batches": 3, "pp": 4, "virtual_stages": 1, "bubble": 0.5, "wanted": 16}
    assert messages.warning("pipeline_few_microbatches", bubble) == (
        "3 micro-batches for 4 pipeline stages idle 50% of each step; use at least 16 (4 × pp ÷ virtual stages)."
    )
    assert messages.warning("pipeline_few_microbatches", bubble, "zh") == (
        "4 级流水线只有 3 个微批，每步 50% 的时间空闲；至少使用 16 个微批（4 × pp ÷ 虚拟阶段数）。"
    )
    slo = {"concurrency": 12.0, "ttft_ms": 950.2, "tpot_ms": 48.04, "slo_ttft_ms": 500.0}
    assert messages.warning("slo_missed", slo) == (
        "At concurrency 12.0 TTFT is 950 ms and TPOT 48.0 ms, missing TTFT ≤ 500 ms: add replicas or GPUs per "
        "replica, or relax the targets."
    )


def test_capacity_near_miss_names_what_is_free_and_from_when_in_both_languages() -> None:
    params = {
        "sku": "h100",
        "region": "shenzhen",
        "units": 4,
        "unit": "node",
        "free_units": 1,
        "start_date": "2027-01-04",
    }
    later = {**params, "free_from": "2027-03-05"}
    assert messages.misses([("capacity", later)]) == (
        "fits, but needs 4 servers of h100 in Shenzhen; 1 server free from 2027-01-04, all 4 servers from 2027-03-05"
    )
    assert messages.misses([("capacity", later)], "zh") == (
        "放得下，但需要深圳的 4 台服务器（h100），自 2027-01-04 起只有 1 台服务器空闲；4 台服务器自 2027-03-05 起空闲"
    )
    never = messages.misses([("capacity", {**params, "free_from": None})])
    assert never is not None and never.endswith("the region does not have 4 servers")
    cards = messages.misses([("capacity", {**later, "unit": "card", "region": "singapore"})], "zh")
    assert cards is not None and cards.startswith("放得下，但需要新加坡的 4 张卡（h100）")


def test_max_nodes_rejection_is_no_longer_called_capacity() -> None:
    assert "capacity" not in messages.REJECTIONS["en"] and "max_nodes" in messages.REJECTIONS["zh"]


def test_the_replicas_no_fabric_note_is_one_text_with_the_launchs() -> None:
    """/estimate's assumption and the serving launch's note say the same: the English twice (the estimator imports
    nothing of the app), held equal here; the Chinese once (app/text/note_words.py reads the launch's)."""
    assert ENGLISH["replicas_share_nothing"] == messages.LAUNCH["en"]["no_fabric"]
    assert messages.NOTES["zh"]["replicas_share_nothing"] == messages.LAUNCH["zh"]["no_fabric"]


def test_english_counts_agree_with_their_nouns() -> None:
    """Review R16: "4 independent replica(s)" and "1 unit(s)": the English catalogs' "(s)" follows its count."""
    assert words.plurals("4 replica(s) of 8 GPU(s): 1 per server") == "4 replicas of 8 GPUs: 1 per server"
    assert words.plurals("10 prefill replica(s) of TP 4 and 1 decode replica(s)") == (
        "10 prefill replicas of TP 4 and 1 decode replica"
    )
    assert messages.launch("layout_replicas", {"replicas": 1, "gpus": 8, "per_node": 1}).startswith(
        "1 replica of 8 GPUs: 1 per server"
    )
    assert "(s)" not in messages.launch("layout_replicas", {"replicas": 1, "gpus": 8, "per_node": 1}, "zh")


def test_a_capacity_refusal_agrees_with_its_count() -> None:
    """Review R6-7: "1 server of … are not free"; the verb agrees with the count (en), and the Chinese is unchanged."""
    params = {"sku": "a100-80g-sxm-8x", "region": "shenzhen", "start_date": "2026-12-08", "unit": "node"}
    params |= {"free_units": 0, "next_free_date": "2027-01-08"}
    one = messages.quote_check("capacity_taken", params | {"units": 1})
    two = messages.quote_check("capacity_taken", params | {"units": 2})
    assert one.startswith("1 server of a100-80g-sxm-8x is not free in Shenzhen from 2026-12-08: 0 servers free")
    assert two.startswith("2 servers of a100-80g-sxm-8x are not free in Shenzhen")
    assert messages.quote_check("capacity_taken_never", params | {"units": 1}, "zh").startswith(
        "深圳自 2026-12-08 起没有 1 台"
    )


# --- the domain's refusals: codes with parameters, worded in both languages (app/text/refusal_words.py) -----------

APP = Path(__file__).resolve().parents[1] / "app"
# The packages below the delivery layer whose refusals reach people (the API's problem, the pages, the CLI).
DOMAIN = (
    "estimator",
    "planner",
    "catalog",
    "quotes",
    "capacity",
    "reference",
    "hub",
    "webhooks",
    "apikeys",
    "ratelimit",
)
# How a domain module raises a refusal of app/text/refusal_words.py: the call and where its code is.
REFUSAL_CALLS = {"refused": 1, "_refused": 1, "AddressRefused": 0, "coded_error": 0}
# (module, function) -> why an exception there may carry an English sentence: it is never shown to people. A new
# English raise in the domain fails below until it is given a code (`app.common.errors.refused`, a request model's
# `app.common.schemas.coded_error`) or is named here with why.
ENGLISH_ALLOWED = {
    ("planner/mappers.py", "availability_out"): "an assertion: the mapper is only given options with availability",
    ("planner/stacks.py", "_names"): "data/stacks.json checked at import: a broken shipped file, not a request",
    ("planner/stacks.py", "_row"): "data/stacks.json checked at import: a broken shipped file, not a request",
    ("planner/stacks.py", "_matrix"): "data/stacks.json checked at import: a broken shipped file, not a request",
    ("quotes/search.py", "decode_cursor"): "caught at once in the same function and answered as cursor_invalid",
    ("quotes/service.py", "line_amounts"): "an assertion: money arithmetic is only given integer minor units",
    ("capacity/ledger.py", "add_months"): "an assertion: callers stay within the ledger's calendar",
    ("reference/service.py", "set_exchange_rate"): "the operator's CLI argument (python -m app set-exchange-rate)",
    ("hub/service.py", "_capped_body"): "an httpx timeout raised to be caught and answered as hub_timeout",
}


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [f for f in source_trees.nodes(path) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]


def _refusal_codes() -> dict[str, set[str]]:
    """code -> the places (file:line) of the domain packages that raise it through REFUSAL_CALLS (the admin's own
    refusals are worded by app/text/i18n_admin.py); a name passed for the code is
    read from the module's constants (`NOT_VALID`); one read from a caught refusal (`exc.code`) is no new code."""
    found: dict[str, set[str]] = {}
    for path, tree in source_trees.package_trees(DOMAIN).items():
        constants = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            at = REFUSAL_CALLS.get(call.func.id)
            if at is None or len(call.args) <= at:
                continue
            arg = call.args[at]
            code = arg.value if isinstance(arg, ast.Constant) else constants.get(getattr(arg, "id", ""))
            if isinstance(code, str):
                found.setdefault(code, set()).add(f"{path.relative_to(APP)}:{call.lineno}")
    return found


def test_every_refusal_the_domain_raises_is_worded_in_both_languages() -> None:
    """Each code a `refused(...)` (or a search's `_refused`, a webhook's AddressRefused) names has its text in English
    and Chinese, and the catalog words no code nothing raises; no code is also another catalog's (the error
    handler words a code by the first catalog that holds it)."""
    raised = _refusal_codes()
    assert {"quote_unknown", "key_not_valid", "host_private", "start_outside_window"} <= raised.keys()
    for lang in ("en", "zh"):
        assert {c: sorted(p) for c, p in raised.items() if c not in messages.REFUSALS[lang]} == {}, lang
    assert set(messages.REFUSALS["en"]) - raised.keys() == set()
    others = (messages.QUOTE_CHECKS, messages.ESTIMATOR_ERRORS, messages.UNKNOWN, messages.HUB)
    assert [set(messages.REFUSALS["en"]) & set(table["en"]) for table in others] == [set()] * len(others)


# Calls that raise a code with its parameters (the English rendered from the catalog): never an English raise.
CODED_CALLS = {"of", "refused", "_refused", "refusal", "_quote_conflict", "coded_error"}


def _english(node: ast.expr) -> bool:
    """A string with a space in it, or an f-string whose text has one: a sentence, not a code or a field path."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and " " in node.value
    if isinstance(node, ast.JoinedStr):
        return any(_english(part) for part in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
        return any(_english(arg) for arg in node.args)  # "; ".join(...): a separator, not a sentence
    return any(_english(child) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))


def _bound(node: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """`node` and what the function assigns to each name in it (`message = f"..."`, `error = {...}`)."""
    named = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    assigned = [
        a.value
        for a in ast.walk(function)
        if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id in named for t in a.targets)
    ]
    return [node, *assigned]


def _coded(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A call through a coded constructor (its code's text rendered from the catalog), or given `errors=[{...,
    "type": code, "params": ...}]` whose type is a code (pydantic's generic `value_error` is none); a list built of
    other refusals' `errors` is coded as they are."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    errors = next((k.value for k in call.keywords if k.arg == "errors"), None)
    if name in CODED_CALLS or errors is None:
        return name in CODED_CALLS
    if any(isinstance(n, ast.Attribute) and n.attr == "errors" for n in ast.walk(errors)):
        return True
    dicts = [d for node in _bound(errors, function) for d in ast.walk(node) if isinstance(d, ast.Dict)]
    types = [v for d in dicts for k, v in zip(d.keys, d.values, strict=True) if getattr(k, "value", None) == "type"]
    keys = {k.value for d in dicts for k in d.keys if isinstance(k, ast.Constant)}
    return "params" in keys and not any(getattr(t, "value", None) == "value_error" for t in types)


def _english_raises() -> set[tuple[str, str]]:
    """(module, function) of each raise in the domain packages whose exception is given an English sentence (or a
    name the function binds to one) and no code."""
    found = set()
    for path in source_trees.package_trees(DOMAIN):
        for function in _functions(path):
            for node in ast.walk(function):
                if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                    continue
                given = [*node.exc.args, *(k.value for k in node.exc.keywords)]
                if not _coded(node.exc, function) and any(_english(b) for a in given for b in _bound(a, function)):
                    found.add((str(path.relative_to(APP)), function.name))
    return found


def test_the_domain_raises_codes_not_english_sentences() -> None:
    """Issue 34: the domain emits codes with parameters only. A raise in the domain packages that is given an
    English sentence is named in ENGLISH_ALLOWED with why (it never reaches a person), and the list names no raise
    that is gone."""
    found = _english_raises()
    assert sorted(found - ENGLISH_ALLOWED.keys()) == []
    assert sorted(ENGLISH_ALLOWED.keys() - found) == []
