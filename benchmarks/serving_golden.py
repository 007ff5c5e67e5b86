"""Golden responses of POST /recommend for task serving: benchmarks/recommend.py's serving mix and a varied set of
serving requests (presets, engines, SLO percentiles, speculative decoding, prefix caching, disaggregated "auto",
FP8 checkpoints, pipelines across servers), on the seeded catalog and on recommend.py's synthetic 40-SKU catalog; and
a few serving splits through POST /estimate.

A change meant to make the serving search faster must leave every response byte-identical (volatile fields aside:
none so far, VOLATILE names them). Each tree serves its own database on a real server (one uvicorn worker, plan cache
off), and every request is sent twice, in order and then in reverse order with every per-process cache warm: the two
passes must agree too (a cache keyed on too few fields shows up there).

Run (the baseline is main's tree, `git archive main | tar -x -C /tmp/base`):
  .venv/bin/python benchmarks/serving_golden.py --baseline-tree /tmp/base      # both trees served, compared live
  .venv/bin/python benchmarks/serving_golden.py --tree /tmp/base --write /tmp/serving_golden.json   # once, before
  .venv/bin/python benchmarks/serving_golden.py --check /tmp/serving_golden.json                    # this tree, after
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import httpx
from recommend import ROOT, SERVING_MIX, _free_port, _start_server

VOLATILE: frozenset[str] = frozenset()  # response keys whose values change from run to run
QWEN3_8B_FP8 = {  # huggingface.co/Qwen/Qwen3-8B-FP8/blob/main/config.json (as tests/api/test_serving_checkpoints.py)
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
    "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "vocab_size": 151936, "max_position_embeddings": 40960, "rope_theta": 1000000, "rms_norm_eps": 1e-06,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
}  # fmt: skip
CHAT = {"input_tokens": 1000, "output_tokens": 250}
RAG = {"input_tokens": 8000, "output_tokens": 300}


def _serving(model: dict[str, Any], serving: dict[str, Any], **rest: Any) -> dict[str, Any]:
    return {"model": model, "task": "serving", "serving": serving, **rest}


VARIED = [
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 40, "slo": {"ttft_ms": 500, "percentile": "p99"}}),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 40, "slo": {"tpot_ms": 30, "percentile": "p50"}}),
    _serving({"preset": "qwen2.5-7b"}, CHAT | {"requests_per_s": 8, "engine": "trt-llm", "slo": {"tpot_ms": 50}}),
    _serving({"preset": "qwen2.5-7b"}, CHAT | {"requests_per_s": 8, "engine": "sglang", "slo": {"ttft_ms": 800}}),
    _serving({"preset": "llama-3.1-70b"}, RAG | {"requests_per_s": 5, "slo": {"ttft_ms": 2000}}),
    _serving({"preset": "llama-3.1-70b"}, RAG | {"requests_per_s": 5, "prefix_cache_hit_rate": 0.6,
                                                 "slo": {"ttft_ms": 2000, "tpot_ms": 60}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 4, "slo": {"tpot_ms": 40},
             "speculative": {"method": "eagle3", "num_speculative_tokens": 3, "acceptance_rate": 0.7}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 4, "engine": "sglang",
             "speculative": {"method": "draft_model", "num_speculative_tokens": 4, "acceptance_rate": 0.6,
                             "draft_model": "llama-3.2-1b"}}),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 20, "speculative": {
        "method": "ngram", "num_speculative_tokens": 2, "acceptance_rate": 0.5}, "slo": {"tpot_ms": 25}}),
    _serving({"preset": "qwen2.5-72b"}, {"input_tokens": 4000, "output_tokens": 300, "requests_per_s": 6,
             "engine": "sglang", "disaggregated": "auto", "slo": {"ttft_ms": 3000, "tpot_ms": 50}}),
    _serving({"preset": "llama-3.1-70b"}, {"input_tokens": 6000, "output_tokens": 400, "requests_per_s": 10,
             "engine": "sglang", "disaggregated": True, "slo": {"ttft_ms": 2500, "tpot_ms": 60}}),
    _serving({"hf_config": QWEN3_8B_FP8}, CHAT | {"requests_per_s": 15, "slo": {"tpot_ms": 40}}),
    _serving({"preset": "deepseek-v3"}, {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10,
             "slo": {"ttft_ms": 2000, "tpot_ms": 100}}),
    _serving({"preset": "deepseek-v3"}, {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10},
             weights="bf16"),
    _serving({"preset": "llama-3.1-405b"}, CHAT | {"requests_per_s": 3, "slo": {"ttft_ms": 5000, "tpot_ms": 80}},
             weights="fp8", precision="fp8"),
    _serving({"preset": "mixtral-8x7b"}, {"input_tokens": 2000, "output_tokens": 300, "concurrency": 16,
             "batching": "static"}),
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 1000, "output_tokens": 300, "requests_per_s": 0.01}),
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 120000, "output_tokens": 1000, "requests_per_s": 2,
             "slo": {"ttft_ms": 10000}}),
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 2000, "output_tokens": 500, "input_tokens_p95": 6000,
             "output_tokens_p95": 1500, "requests_per_s": 12, "slo": {"ttft_ms": 1500, "tpot_ms": 40}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 30, "peak_factor": 2.0, "slo": {"tpot_ms": 50}},
             constraints={"objective": "fastest"}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 10, "slo": {"tpot_ms": 50}},
             constraints={"max_monthly_budget": "50000.00", "currency": "CNY"}),
    _serving({"preset": "qwen2.5-7b"}, CHAT | {"concurrency": 256, "slo": {"ttft_ms": 1000, "tpot_ms": 50}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 100, "slo": {"ttft_ms": 1000, "tpot_ms": 30,
                                                                                  "percentile": "p99"}}),
    # more shapes of load: small and MoE models, each engine, each percentile, tails, levers, pools
    _serving({"preset": "llama-3.2-1b"}, CHAT | {"requests_per_s": 60, "slo": {"ttft_ms": 300, "tpot_ms": 20}}),
    _serving({"preset": "llama-3.2-3b"}, CHAT | {"requests_per_s": 25, "engine": "sglang", "slo": {"tpot_ms": 25,
                                                                                                 "percentile": "p99"}}),
    _serving({"preset": "qwen3-8b"}, RAG | {"requests_per_s": 6, "engine": "trt-llm", "slo": {"ttft_ms": 1500,
                                                                                              "percentile": "p50"}}),
    _serving({"preset": "qwen3-30b-a3b"}, CHAT | {"requests_per_s": 12, "slo": {"tpot_ms": 40}}),
    _serving({"preset": "qwen3-30b-a3b"}, CHAT | {"requests_per_s": 12, "engine": "sglang", "slo": {"ttft_ms": 1000}}),
    _serving({"preset": "qwen3-32b"}, CHAT | {"requests_per_s": 8, "slo": {"ttft_ms": 1500, "tpot_ms": 45}},
             weights="fp8", precision="fp8"),
    _serving({"preset": "mistral-7b"}, {"input_tokens": 3000, "output_tokens": 200, "input_tokens_p95": 9000,
             "requests_per_s": 10, "slo": {"ttft_ms": 1200}}),
    _serving({"preset": "mixtral-8x22b"}, CHAT | {"requests_per_s": 4, "slo": {"tpot_ms": 60}}, weights="fp8",
             precision="fp8"),
    _serving({"preset": "gemma-2-27b"}, CHAT | {"requests_per_s": 5, "engine": "trt-llm",
                                                "slo": {"tpot_ms": 50, "percentile": "p90"}}),
    _serving({"preset": "gemma-2-9b"}, {"input_tokens": 500, "output_tokens": 800, "output_tokens_p95": 2000,
             "requests_per_s": 15, "slo": {"tpot_ms": 35}}),
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 2000, "output_tokens": 400, "input_tokens_p95": 7000,
             "requests_per_s": 20, "engine": "sglang", "slo": {"ttft_ms": 2000, "tpot_ms": 50, "percentile": "p99"}}),
    _serving({"preset": "llama-3.1-8b"}, RAG | {"requests_per_s": 15, "prefix_cache_hit_rate": 0.8,
             "engine": "sglang", "slo": {"ttft_ms": 800}}),
    _serving({"preset": "llama-3.1-8b"}, RAG | {"requests_per_s": 15, "prefix_cache_hit_rate": 0.3,
             "engine": "trt-llm", "slo": {"ttft_ms": 1500, "tpot_ms": 40}}),
    _serving({"preset": "llama-3.1-70b"}, RAG | {"requests_per_s": 3, "input_tokens_p95": 20000,
             "prefix_cache_hit_rate": 0.5, "slo": {"ttft_ms": 4000, "percentile": "p90"}}, weights="fp8",
             precision="fp8"),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 30, "engine": "sglang", "speculative": {
        "method": "eagle3", "num_speculative_tokens": 2, "acceptance_rate": 0.6}, "slo": {"tpot_ms": 15}}),
    _serving({"preset": "qwen2.5-72b"}, CHAT | {"requests_per_s": 5, "engine": "trt-llm", "speculative": {
        "method": "eagle3", "num_speculative_tokens": 3, "acceptance_rate": 0.65},
        "slo": {"tpot_ms": 40}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 6, "speculative": {
        "method": "ngram", "num_speculative_tokens": 3, "acceptance_rate": 0.4}, "slo": {"ttft_ms": 1500,
                                                                                         "percentile": "p50"}}),
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 4000, "output_tokens": 300, "requests_per_s": 30,
             "engine": "sglang", "disaggregated": True, "slo": {"ttft_ms": 1500, "tpot_ms": 30}}),
    _serving({"preset": "qwen3-32b"}, {"input_tokens": 6000, "output_tokens": 500, "requests_per_s": 8,
             "engine": "sglang", "disaggregated": "auto",
             "slo": {"ttft_ms": 3000, "tpot_ms": 40, "percentile": "p99"}}),
    _serving({"preset": "deepseek-v3"}, {"input_tokens": 3000, "output_tokens": 600, "requests_per_s": 20,
             "engine": "sglang", "disaggregated": "auto", "slo": {"ttft_ms": 3000, "tpot_ms": 80}}),
    _serving({"preset": "deepseek-v2-lite"}, CHAT | {"requests_per_s": 10, "engine": "sglang",
                                                     "slo": {"tpot_ms": 30}}),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 5, "peak_factor": 3.0, "slo": {"ttft_ms": 400}}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 2, "max_request_tokens": 16384,
             "slo": {"tpot_ms": 45}}),
    _serving({"preset": "qwen2.5-14b"}, CHAT | {"requests_per_s": 10, "gpu_memory_utilization": 0.8,
             "slo": {"tpot_ms": 40}}, kv_cache_precision="fp8"),
    _serving({"preset": "qwen2.5-32b"}, CHAT | {"requests_per_s": 8, "slo": {"tpot_ms": 50}}, weights="int4",
             constraints={"objective": "fastest"}),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"concurrency": 32, "engine": "trt-llm", "slo": {"tpot_ms": 30}}),
    _serving({"preset": "llama-3.1-8b"}, CHAT | {"requests_per_s": 200, "slo": {"ttft_ms": 1000, "tpot_ms": 50}}),
]  # fmt: skip
H100_NODE = {"gpu": "h100-80g-sxm", "gpus_per_node": 8}
# POST /estimate of a serving split on given hardware (the estimator alone, outside a search)
ESTIMATES = [
    _serving({"preset": "llama-3.1-8b"}, {"input_tokens": 1024, "output_tokens": 256, "concurrency": 32,
             "slo": {"tpot_ms": 50}}, hardware=H100_NODE, plan={"tp": 2, "dp": 4}),
    _serving({"preset": "llama-3.1-70b"}, {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 2.0},
             hardware=H100_NODE, precision="bf16", weights="int4"),
    _serving({"preset": "mixtral-8x7b"}, RAG | {"requests_per_s": 3, "slo": {"ttft_ms": 3000}}, hardware=H100_NODE,
             plan={"tp": 4, "dp": 2}),
    _serving({"preset": "llama-3.1-70b"}, CHAT | {"requests_per_s": 4, "engine": "sglang", "speculative": {
        "method": "eagle3", "num_speculative_tokens": 3, "acceptance_rate": 0.7}}, hardware=H100_NODE),
]  # fmt: skip
BODIES = [("/recommend", body) for body in SERVING_MIX + VARIED] + [("/estimate", body) for body in ESTIMATES]


def _canonical(response: httpx.Response) -> str:
    """The response's status and JSON, volatile keys dropped, keys sorted (floats as json writes them: exact)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps([response.status_code, strip(response.json())], sort_keys=True, ensure_ascii=False)


def responses(root: Path, large_skus: int) -> tuple[list[str], list[str]]:
    """Every body's canonical response from a server of `root`, in order and then in reverse order."""
    bodies = BODIES
    if large_skus:
        wide = {"max_nodes": 64}
        bodies = [
            (p, b | {"constraints": b.get("constraints", {}) | wide} if p == "/recommend" else b) for p, b in BODIES
        ]
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        server = _start_server(Path(tmp) / "golden.db", port, 0, large_skus, root=root)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                forward = [_canonical(client.post(path, json=body)) for path, body in bodies]
                backward = [_canonical(client.post(path, json=body)) for path, body in reversed(bodies)]
        finally:
            server.terminate()
            server.wait(timeout=10)
    return forward, backward[::-1]


def collect(root: Path) -> dict[str, list[str]]:
    """Both catalogs' responses; fails where the two passes of one tree disagree."""
    out: dict[str, list[str]] = {}
    for name, skus in (("seeded", 0), ("large", 40)):
        forward, backward = responses(root, skus)
        moved = [i for i, (a, b) in enumerate(zip(forward, backward, strict=True)) if a != b]
        if moved:
            raise SystemExit(f"{root}: {name} catalog, bodies {moved} answer differently once caches are warm")
        out[name] = forward
    return out


def differences(golden: dict[str, list[str]], found: dict[str, list[str]]) -> list[str]:
    lines = []
    for name, expected in golden.items():
        for index, (want, got) in enumerate(zip(expected, found[name], strict=True)):
            if want != got:
                at = next(i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b)
                lines.append(f"{name} body {index}: differs at char {at}: {want[at - 80 : at + 80]!r} vs "
                             f"{got[at - 80 : at + 80]!r}")  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the tree to serve (default: this one)")
    parser.add_argument("--baseline-tree", type=Path, help="serve this tree too and compare live")
    parser.add_argument("--write", type=Path, help="store --tree's responses here")
    parser.add_argument("--check", type=Path, help="compare --tree's responses with these")
    args = parser.parse_args()
    found = collect(args.tree.resolve())
    if args.write:
        args.write.write_text(json.dumps(found, indent=0, ensure_ascii=False))
    golden = None
    if args.check:
        golden = json.loads(args.check.read_text())
    elif args.baseline_tree:
        golden = collect(args.baseline_tree.resolve())
    total = sum(len(v) for v in found.values())
    if golden is None:
        print(f"{total} responses ({len(BODIES)} bodies x 2 catalogs), each the same in both orders")
        return
    lines = differences(golden, found)
    print("\n".join(lines) or f"identical: {total} responses ({len(BODIES)} bodies x 2 catalogs), both orders")
    if lines:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
