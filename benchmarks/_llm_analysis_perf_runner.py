"""Runs inside .peers-venv (never imports the product): llm-analysis training speed for the published runs.

Reads one JSON request on stdin, prints one JSON line.

Request: {"efficiencies": [float | null, ...], "cases": [case, ...]}
  null = llm-analysis's own default flops_efficiency (llm_analysis.constant.FLOPS_EFFICIENCY).
case: {"id", "gpu": llm-analysis GPU config name ("a100-sxm-80gb"), "layers", "heads", "kv_heads", "hidden",
       "ffn", "vocab", "gated", "tp", "pp", "dp", "micro_batch", "global_batch", "seq", "recompute": 0|1|2,
       "zero": 0..3, "flash": bool}
Answer: {"results": {id: {str(efficiency): summary subset | "error: ..."}}}, where the subset holds what the
caller needs to derive tokens/s: latency_per_iter (s), global_batch_size, seq_len, total_num_gpus, and, for the
record, flops_efficiency, num_flops_total_per_micro_batch, gradient_accumulation_steps.
"""

import json
import logging
import sys

from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
from llm_analysis.config import DtypeConfig, ModelConfig, ParallelismConfig, get_gpu_config_by_name

logging.disable(logging.CRITICAL)

KEEP = (
    "latency_per_iter",
    "global_batch_size",
    "seq_len",
    "total_num_gpus",
    "flops_efficiency",
    "num_flops_total_per_micro_batch",
    "gradient_accumulation_steps",
    "batch_size_per_gpu",
)


def _training(case: dict, efficiency) -> dict:
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
    )
    gpu = get_gpu_config_by_name(case["gpu"])
    gpu.mem_per_GPU_in_GB = 10_000  # speed only: keep llm-analysis from refusing plans its memory model rejects
    parallel = ParallelismConfig(tp_size=case["tp"], pp_size=case["pp"], dp_size=case["dp"])
    analysis = LLMAnalysis(model, gpu, DtypeConfig(), parallel, flops_efficiency=efficiency)
    summary = analysis.training(
        batch_size_per_gpu=case["micro_batch"],
        global_batch_size=case["global_batch"],
        seq_len=case["seq"],
        activation_recomputation=ActivationRecomputation(case["recompute"]),
        ds_zero=DSZeRO(case["zero"]),
        flash_attn=case["flash"],
        mlp_gated_linear_units=case["gated"],
    )
    return {key: summary[key] for key in KEEP}


def main() -> None:
    request = json.loads(sys.stdin.read())
    results = {}
    for case in request["cases"]:
        row = {}
        for efficiency in request["efficiencies"]:
            try:
                row[str(efficiency)] = _training(case, efficiency)
            except Exception as exc:  # report the peer's failure in the table instead of aborting it
                row[str(efficiency)] = f"error: {type(exc).__name__}: {exc}"[:160]
        results[case["id"]] = row
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
