"""TensorRT-LLM's v0.5-v0.6.1 static-batch runs hold a contiguous KV cache (ENGINE_RELEASES "trt-llm-0.6"), which
decode attention reads as a stream, at the weights' streaming efficiency rather than the paged gather's.

Published: NVIDIA/TensorRT-LLM @77d24b5fa178, docs/source/performance.md, "Peak Throughput" (source
`trtllm-v061-peak`, tests/estimator/serving_first_contact_trtllm_static.py): gptSessionBenchmark static batches of
Llama-2-7B engines built without `--paged_kv_cache`. The rows read here are the 7B's with a 2,048-token prompt or
output on H100 (FP8), L40S (FP8) and A100 (fp16): nine rows whose decode steps are bound by reading the KV cache
(Llama-2-7B has as many KV heads as query heads, so each cached byte is read once whatever the kernel's grid). At
first contact (tests/estimator/data/serving_first_contact.json) they read 17-29 % low, every one of them, on all three
GPUs. These rows motivated the change, so they are fitted: the tolerance (each within 15 %, median within 10 %) guards
the mechanism, and 15 % is what is left by one published figure per configuration (no spread stated).
"""

from __future__ import annotations

import statistics

from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT, predict


def _long_context_7b_rows():
    return [
        row
        for row in SERVING_FIRST_CONTACT
        if row.source == "trtllm-v061-peak"
        and "llama-2-7b" in row.label
        and 2048 in (row.cfg.input_tokens, row.cfg.output_tokens)
    ]


def test_the_page_s_runs_state_the_contiguous_kv_release() -> None:
    peak = [row for row in SERVING_FIRST_CONTACT if row.source == "trtllm-v061-peak"]
    blogs = [row for row in SERVING_FIRST_CONTACT if row.source == "trtllm-h200-blogs"]
    assert len(peak) == 19 and all(row.cfg.release == "trt-llm-0.6" for row in peak)
    assert blogs and all(row.cfg.release is None for row in blogs)  # the blogs do not state their build


def test_kv_bound_static_batches_read_within_15_percent() -> None:
    rows = _long_context_7b_rows()
    assert len(rows) == 9
    errors = {row.label: predict(row) / row.published - 1.0 for row in rows}
    assert all(abs(error) <= 0.15 for error in errors.values()), errors
    assert statistics.median(abs(error) for error in errors.values()) <= 0.10, errors
