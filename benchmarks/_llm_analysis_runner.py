"""Runs inside .peers-venv (never imports the product). Reads one JSON request on stdin, prints one JSON line.

Request: {"mode": "memory", "cases": [case, ...]}, or {"mode": "slices", "cases"} on its own line followed by
one line per timed slice, each the seconds to run (`_slices`)
case: {"id", "kind": "training" | "inference", "layers", "heads", "kv_heads", "hidden", "ffn", "vocab", "gated",
       "experts", "top_k", "gpu_mem_gb", "tp", "pp", "dp", "batch", "seq", "recompute": 0|1|2, "zero": 0..3,
       "flash": bool, "generate": int}
"""

import json
import logging
import sys
import time

from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
from llm_analysis.config import DtypeConfig, GPUConfig, ModelConfig, ParallelismConfig

logging.disable(logging.CRITICAL)


def _analysis(case: dict) -> LLMAnalysis:
    model = ModelConfig(
        name=case["id"],
        num_layers=case["layers"],
        n_head=case["heads"],
        hidden_dim=case["hidden"],
        vocab_size=case["vocab"],
        max_seq_len=max(case["seq"], 2048),
        num_key_value_heads=case["kv_heads"],
        ffn_embed_dim=case["ffn"],
        expansion_ratio=case["ffn"] / case["hidden"],
        moe_num_experts=max(1, case["experts"]),
        moe_top_k=max(1, case["top_k"]),
    )
    gpu = GPUConfig(
        name="gpu",
        mem_per_GPU_in_GB=case["gpu_mem_gb"],
        hbm_bandwidth_in_GB_per_sec=2000,
        intra_node_bandwidth_in_GB_per_sec=300,
        intra_node_min_message_latency=8e-6,
        peak_fp16_TFLOPS=312,
    )
    parallel = ParallelismConfig(tp_size=case["tp"], pp_size=case["pp"], dp_size=case["dp"])
    bits = case.get("weight_bits", 16)
    dtype = DtypeConfig(name=f"w{bits}a16e16", weight_bits=bits)
    return LLMAnalysis(model, gpu, dtype, parallel, flops_efficiency=0.5, hbm_memory_efficiency=0.9)


def _training_total(case: dict) -> float:
    summary = _analysis(case).training(
        batch_size_per_gpu=case["batch"],
        seq_len=case["seq"],
        total_num_tokens=None,
        activation_recomputation=ActivationRecomputation(case["recompute"]),
        ds_zero=DSZeRO(case["zero"]),
        flash_attn=case["flash"],
        mlp_gated_linear_units=case["gated"],
    )
    return summary["(weight+op_state+grad+act)_memory_per_gpu"]


def _inference_total(case: dict) -> float:
    summary = _analysis(case).inference(
        batch_size_per_gpu=case["batch"], seq_len=case["seq"], num_tokens_to_generate=case["generate"]
    )
    activations = max(summary["prefill_activation_memory_per_gpu"], summary["decode_activation_memory_per_gpu"])
    return summary["weight_memory_per_gpu"] + summary["kv_cache_memory_per_gpu"] + activations


def _total(case: dict) -> float:
    return _training_total(case) if case["kind"] == "training" else _inference_total(case)


def _memory(cases: list) -> dict:
    out = {}
    for case in cases:
        try:
            out[case["id"]] = _total(case)
        except Exception as exc:  # report the peer's failure in the table instead of aborting it
            out[case["id"]] = f"error: {type(exc).__name__}: {exc}"[:120]
    return {"totals_bytes": out}


def _runs(case: dict) -> bool:
    try:
        _training_total(case)
        return True
    except Exception:  # llm-analysis asserts on some plans (e.g. dp not dividing the batch); time only valid ones
        return False


def _timed(cases: list, seconds: float) -> dict:
    """Evaluations of `cases` (all valid), cycled for `seconds`, the clock read after each."""
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _training_total(cases[count % len(cases)])
        count += 1
    elapsed = time.perf_counter() - start
    return {"evaluations": count, "seconds": elapsed, "per_second": count / elapsed}


def _slices(cases: list) -> None:
    """Timed slices on demand: one line with the seconds in, one JSON line out, until end of input (the caller
    alternates them with its own, so both sides meet the same moments of a shared machine)."""
    cases = [case for case in cases if _runs(case)]
    print(json.dumps({"cases": len(cases)}), flush=True)
    for line in sys.stdin:
        print(json.dumps(_timed(cases, float(line))), flush=True)


def main() -> None:
    request = json.loads(sys.stdin.readline())
    if request["mode"] == "slices":
        _slices(request["cases"])
        return
    print(json.dumps(_memory(request["cases"])))


if __name__ == "__main__":
    main()
