"""Small valid request bodies for the hardening tests, the fuzzing seeds and the load benchmark."""

from __future__ import annotations

# A built-in GPU type (no SKU): /estimate then needs no database at all.
ESTIMATE_BODY = {
    "model": {"preset": "llama-2-7b"},
    "task": "lora",
    "seq_len": 2048,
    "micro_batch": 1,
    "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 1},
    "plan": {"dp": 1},
}
