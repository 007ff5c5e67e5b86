"""Request examples for /docs: each works as shipped (Swagger's "Try it out" posts it unchanged;
tests/api/test_openapi_docs.py posts every one to the app). Ids are the seeded catalog's."""

from __future__ import annotations

from typing import Any

from fastapi.openapi.models import Example

CUSTOMER = {"name": "Li Wei", "company": "Shenzhen Compute", "email": "li.wei@example.com"}


def _examples(**bodies: tuple[str, dict[str, Any]]) -> dict[str, Example]:
    return {name: Example(summary=summary, value=value) for name, (summary, value) in bodies.items()}


def _serve_70b_fp8(**serving: Any) -> dict[str, Any]:
    """A request to serve Llama 3.1 70B with FP8 weights and compute, with the traffic given."""
    return {
        "model": {"preset": "llama-3.1-70b"},
        "task": "serving",
        "precision": "fp8",
        "weights": "fp8",
        "serving": serving,
    }


RECOMMEND = _examples(
    lora_7b=(
        "LoRA of Llama 2 7B on 100M tokens",
        {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 100_000_000},
    ),
    full_finetune_13b=(
        "Full fine-tune of Llama 2 13B on 2B tokens within a budget and a deadline",
        {
            "model": {"preset": "llama-2-13b"},
            "task": "full_finetune",
            "tokens": 2_000_000_000,
            "constraints": {"term": "monthly", "max_monthly_budget": "300000.00", "deadline_days": 14, "limit": 3},
        },
    ),
    hugging_face_id=(
        "LoRA of a model named by its Hugging Face id (config.json read from the Hub)",
        {"model": {"hf_id": "Qwen/Qwen2.5-7B"}, "task": "lora", "tokens": 100_000_000},
    ),
    parameter_count=(
        "QLoRA of a 7B model known only by its size",
        {"model": {"params": 7_000_000_000}, "task": "qlora", "tokens": 500_000_000},
    ),
    serving_levers=(
        "Serve Llama 3.1 8B for chat with a shared system prompt (60 % of prompt tokens cached) and EAGLE-3",
        {
            "model": {"preset": "llama-3.1-8b"},
            "task": "serving",
            "serving": {
                "input_tokens": 2000,
                "output_tokens": 300,
                "requests_per_s": 10,
                "prefix_cache_hit_rate": 0.6,
                "speculative": {"method": "eagle3", "num_speculative_tokens": 3, "acceptance_rate": 0.7},
                "slo": {"ttft_ms": 1000, "tpot_ms": 30},
            },
        },
    ),
    serving_disaggregated=(
        "Serve Llama 3.1 70B for RAG (8,000-token prompts) with prefill and decode on separate SGLang pools",
        _serve_70b_fp8(
            input_tokens=8000,
            output_tokens=300,
            requests_per_s=5,
            engine="sglang",
            disaggregated="auto",
            slo={"ttft_ms": 2000, "tpot_ms": 50},
        ),
    ),
    serving_70b=(
        "Serve Llama 3.1 70B in FP8 at 20 requests/s within 2 s to first token and 50 ms per token",
        _serve_70b_fp8(input_tokens=2000, output_tokens=500, requests_per_s=20, slo={"ttft_ms": 2000, "tpot_ms": 50}),
    ),
)

ESTIMATE = _examples(
    one_gpu=(
        "LoRA of Llama 2 7B on one A100 40GB",
        {
            "model": {"preset": "llama-2-7b"},
            "task": "lora",
            "tokens": 100_000_000,
            "hardware": {"gpu": "a100-40g-pcie"},
        },
    ),
    two_servers=(
        "Full fine-tune of Llama 2 70B on two 8× H100 servers with a given plan",
        {
            "model": {"preset": "llama-2-70b"},
            "task": "full_finetune",
            "tokens": 1_000_000_000,
            "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 2},
            "plan": {"tp": 8, "pp": 2, "zero_stage": 1},
        },
    ),
    serving_replicas=(
        "Serve Llama 3.1 8B on an 8× H100 server as four TP-2 replicas at 32 sequences each",
        {
            "model": {"preset": "llama-3.1-8b"},
            "task": "serving",
            "hardware": {"sku": "h100-80g-sxm-8x"},
            "plan": {"tp": 2, "dp": 4},
            "serving": {"input_tokens": 1024, "output_tokens": 256, "concurrency": 32, "slo": {"tpot_ms": 50}},
        },
    ),
)

SCALING = _examples(
    h100=(
        "How a 13B full fine-tune scales on H100s",
        {"model": {"preset": "llama-2-13b"}, "task": "full_finetune", "tokens": 2_000_000_000, "gpu": "h100-80g-sxm"},
    ),
)

QUOTE = _examples(
    lora_card=(
        "One A100 card for a month, for a LoRA job sized by POST /recommend",
        {
            "sku_id": "a100-40g-pcie-card",
            "quantity": 1,
            "term": "monthly",
            "months": 1,
            "workload": {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 100_000_000},
            "plan": {"dp": 1, "micro_batch": 2, "recompute": "full", "time_to_train_hours": 4.9},
            "customer": CUSTOMER,
        },
    ),
    annual_h100=(
        "Two 8× H100 servers for a year with InfiniBand, for a 70B full fine-tune",
        {
            "sku_id": "h100-80g-sxm-8x",
            "quantity": 2,
            "term": "annual",
            "months": 12,
            "addons": ["infiniband-400g"],
            "workload": {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 2_000_000_000},
            "plan": {"tp": 8, "dp": 2, "zero_stage": 3, "recompute": "selective"},
            "customer": CUSTOMER,
        },
    ),
)
