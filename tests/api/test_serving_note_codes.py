"""A serving estimate's notes as codes with parameters, as an estimate's assumptions are: the API's `notes` in English
and `note_codes` one for one, which app/text/note_words.py words in English and Chinese (the pages' language)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.notes import Note, note
from app.text import messages

# 2,000 sequences of 2,000 + 500 tokens a replica, 8 replicas of one H100 (an 8-GPU server): its KV cache holds fewer
BODY = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 1},
    "plan": {"tp": 1, "dp": 8},
    "serving": {"input_tokens": 2000, "output_tokens": 500, "concurrency": 2000},
}


@pytest.mark.parametrize("headers", [{}, {"Accept-Language": "zh"}], ids=["en", "zh"])
def test_concurrency_beyond_a_replica_is_a_coded_note(client: TestClient, headers: dict[str, str]) -> None:
    response = client.post("/estimate", json=BODY, headers=headers)
    assert response.status_code == 200, response.text
    serving = response.json()["serving"]
    limit = serving["max_concurrency"]
    assert 1 <= limit < 2000
    english = (
        f"concurrency 2000 exceeds the {limit} sequences a replica runs (what its KV cache holds at these lengths): "
        f"{limit} run and the others wait for a slot before their prefill"
    )  # the sentence the API read before the notes were codes
    assert serving["notes"] == [english]  # the API's English, whatever the request's language (as `assumptions`)
    assert serving["note_codes"] == [
        {"code": "serving_concurrency_over_kv", "params": {"wanted": 2000, "limit": limit}}
    ]
    code = serving["note_codes"][0]
    assert messages.note(code["code"], code["params"]) == english
    assert messages.note(code["code"], code["params"], "zh") == (
        f"并发 2000 超过一个副本同时运行的 {limit} 个序列（在这些长度下其 KV 缓存能容纳的数量）：{limit} 个运行，"
        "其余在预填充前等待空位"
    )


RPS = 12.3456
# One of each note a serving estimate states, with the sentence app/estimator/serving/estimate.py built inline before
# (tests/test_messages.py words each in both languages)
SERVING_NOTES: dict[Note, str] = {
    note("serving_max_model_len_over", context_len=10_000_000, tokens=431_872): "max_model_len 10000000 exceeds "
    "the 431872 tokens the KV cache holds: the engine refuses to start; lower max_model_len or add GPUs",
    note("serving_max_model_len_over_dp", context_len=200_000, tokens=90_000): "max_model_len 200000 exceeds the "
    "90000 tokens one rank's KV cache holds (DP attention): the engine refuses to start; lower max_model_len or "
    "add GPUs",
    note("serving_concurrency_over_seqs", wanted=5000, limit=1024, engine="vllm", seqs=1024, gpu="H100"): "concurrency "
    "5000 exceeds the 1024 sequences a replica runs (vllm's max_num_seqs default of 1024 on H100): 1024 run and the "
    "others wait for a slot before their prefill",
    note("serving_concurrency_over_kv", wanted=2000, limit=195): "concurrency 2000 exceeds the 195 sequences a replica "
    "runs (what its KV cache holds at these lengths): 195 run and the others wait for a slot before their prefill",
    note("serving_no_kv_room"): "the weights leave no room for one sequence's KV cache",
    note("serving_sequence_too_long", context_len=131_072, tokens=65_536, tp=2): "one sequence of 131,072 tokens "
    "does not fit: the KV cache holds 65,536 tokens at TP 2; shorten input_tokens + output_tokens (or "
    "max_model_len), or use more or larger GPUs",
    note("serving_sequence_too_long_dp", context_len=131_072, tokens=65_536, tp=8): "one sequence of 131,072 "
    "tokens does not fit: the KV cache holds 65,536 tokens at one rank of DP attention / EP 8; shorten "
    "input_tokens + output_tokens (or max_model_len), or use more or larger GPUs",
    note("serving_rate_over_capacity", replicas=2, carried=RPS, offered=500.0): f"2 replica(s) carry at most "
    f"{RPS:.3g} requests/s of the {500.0:g} offered",
    note("serving_rate_saturated", replicas=8, carried=RPS, offered=10.0): f"8 replica(s) carry about {RPS:.3g} "
    f"requests/s of the {10.0:g} offered (saturated)",
}


def test_the_serving_notes_read_as_the_sentences_they_replaced() -> None:
    for coded, sentence in SERVING_NOTES.items():
        assert coded.text == sentence
