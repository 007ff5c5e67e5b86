"""Runs inside .peers-venv (never imports the product): llm-analysis inference figures for the serving cases.

Reads one JSON request on stdin, prints one JSON line.

Request: {"flops_efficiency": float, "hbm_efficiency": float, "cases": [case, ...]}
case: {"id", "layers", "heads", "kv_heads", "hidden", "ffn", "vocab", "experts", "top_k", "gpu_mem_gb", "hbm_gbs",
       "peak_tflops", "peak_i8_tflops", "link_gbs", "tp", "weight_bits", "kv_bytes", "batch": int | null,
       "max_batch": int, "input", "output"}
batch null: llm-analysis's own decode_max_batch_size_per_gpu (what its memory model fits), capped at max_batch.
Answer: {"results": {id: {"batch", "prefill_latency", "decode_latency", "total_latency", "max_batch"} | "error: ..."}}
"""

import json
import logging
import sys

from llm_analysis.analysis import LLMAnalysis
from llm_analysis.config import DtypeConfig, GPUConfig, ModelConfig, ParallelismConfig

logging.disable(logging.CRITICAL)


def _analysis(case: dict, request: dict) -> LLMAnalysis:
    model = ModelConfig(
        name=case["id"],
        num_layers=case["layers"],
        n_head=case["heads"],
        hidden_dim=case["hidden"],
        vocab_size=case["vocab"],
        max_seq_len=max(case["input"] + case["output"], 2048),
        num_key_value_heads=case["kv_heads"],
        ffn_embed_dim=case["ffn"],
        expansion_ratio=case["ffn"] / case["hidden"],
        moe_num_experts=max(1, case["experts"]),
        moe_top_k=max(1, case["top_k"]),
    )
    gpu = GPUConfig(
        name="gpu",
        mem_per_GPU_in_GB=case["gpu_mem_gb"],
        hbm_bandwidth_in_GB_per_sec=case["hbm_gbs"],
        intra_node_bandwidth_in_GB_per_sec=case["link_gbs"],
        intra_node_min_message_latency=8e-6,
        peak_fp16_TFLOPS=case["peak_tflops"],
        peak_i8_TFLOPS=case["peak_i8_tflops"] or None,
        peak_i4_TFLOPS=None,
    )
    bits = case["weight_bits"]
    activation_bits = 8 if case.get("fp8_math") else 16
    dtype = DtypeConfig(name=f"w{bits}a{activation_bits}e16", weight_bits=bits, activation_bits=activation_bits)
    return LLMAnalysis(
        model,
        gpu,
        dtype,
        ParallelismConfig(tp_size=case["tp"]),
        flops_efficiency=request["flops_efficiency"],
        hbm_memory_efficiency=request["hbm_efficiency"],
    )


def _run(case: dict, request: dict) -> dict:
    analysis = _analysis(case, request)
    kwargs = {
        "seq_len": case["input"],
        "num_tokens_to_generate": case["output"],
        "kv_cache_dtype_bytes": case["kv_bytes"],
    }
    probe = analysis.inference(batch_size_per_gpu=1, **kwargs)
    fits = int(probe["decode_max_batch_size_per_gpu"])
    batch = case["batch"] or max(1, min(fits, case["max_batch"]))
    summary = _analysis(case, request).inference(batch_size_per_gpu=batch, **kwargs)
    return {
        "batch": batch,
        "max_batch": fits,
        "prefill_latency": summary["prefill_latency"],
        "decode_latency": summary["decode_latency"],
        "total_latency": summary["total_latency"],
    }


def main() -> None:
    request = json.loads(sys.stdin.read())
    results = {}
    for case in request["cases"]:
        try:
            results[case["id"]] = _run(case, request)
        except Exception as exc:  # report the peer's failure in the table instead of aborting it
            results[case["id"]] = f"error: {type(exc).__name__}: {exc}"[:160]
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
