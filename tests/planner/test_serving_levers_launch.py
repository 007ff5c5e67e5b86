"""The launches of the prefix cache and speculative decoding: every flag one the engine's own parser declares
(tests/planner/data/serving_engine_flags.json), each method under the engine's own name, and the notes that say what
the sizing assumes."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from app.estimator.presets import get_preset
from app.estimator.serving_levers import ENGINE_SPECULATION, Speculation
from app.planner.serving_launch import Served
from tests.planner.test_serving_launch import LLAMA_8B, OFFERS, _cfg, _check, _launch

DRAFT = Speculation(
    "draft_model", 4, 0.6, draft=get_preset("llama-3.2-1b").model, draft_repo="meta-llama/Llama-3.2-1B-Instruct"
)
SPECULATIONS = {"eagle3": Speculation("eagle3", 3, 0.7), "ngram": Speculation("ngram", 4, 0.5), "draft_model": DRAFT}
SERVED = Served("meta-llama/Llama-3.1-8B-Instruct", context=131072)


def _levered(engine: str, method: str, **changes: Any) -> dict:
    cfg = _cfg(engine, prefix_cache_hit_rate=0.5, speculative=SPECULATIONS[method], **changes)
    return _launch(LLAMA_8B, cfg, OFFERS[:1], SERVED)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
@pytest.mark.parametrize("method", list(SPECULATIONS))
def test_every_lever_flag_is_one_the_engine_declares(engine: str, method: str) -> None:
    launch = _levered(engine, method)
    _check(engine, launch)
    notes = " ".join(launch["notes"])
    assert "50% of prompt tokens" in notes and "tokens a step on average" in notes


def test_vllm_speculative_config_is_json_with_speculative_configs_keys() -> None:
    for method, spec in SPECULATIONS.items():
        command = _levered("vllm", method)["command"]
        words = shlex.split(command)
        config = json.loads(words[words.index("--speculative-config") + 1])
        assert config["method"] == ENGINE_SPECULATION["vllm"][method]
        assert config["num_speculative_tokens"] == spec.num_speculative_tokens
        assert ("model" in config) == (method != "ngram")
        assert "--enable-prefix-caching" in words


def test_sglang_runs_a_chain_of_k_drafts_and_verifies_k_plus_one() -> None:
    words = shlex.split(_levered("sglang", "eagle3")["command"])
    value = {flag: words[i + 1] for i, flag in enumerate(words[:-1]) if flag.startswith("--speculative")}
    assert value["--speculative-algorithm"] == "EAGLE3"
    assert (value["--speculative-num-steps"], value["--speculative-eagle-topk"]) == ("3", "1")
    assert value["--speculative-num-draft-tokens"] == "4"
    standalone = _levered("sglang", "draft_model")["command"]
    assert "--speculative-algorithm STANDALONE --speculative-draft-model-path meta-llama/Llama-3.2-1B-Instruct" in (
        standalone
    )


def test_trtllm_names_the_options_file_once_and_says_what_it_holds() -> None:
    launch = _levered("trt-llm", "eagle3", kv_cache_precision="fp8")
    assert launch["command"].count("--extra_llm_api_options") == 1
    notes = " ".join(launch["notes"])
    assert "speculative_config: {decoding_type: Eagle3, max_draft_len: 3" in notes
    assert "kv_cache_config: {dtype: fp8}" in notes


def test_mtp_runs_the_checkpoints_own_layers_without_a_draft() -> None:
    for engine, name in (("vllm", '"method": "mtp"'), ("sglang", "NEXTN"), ("trt-llm", "MTP")):
        cfg = _cfg(engine, speculative=Speculation("mtp", 1, 0.8))
        launch = _launch(LLAMA_8B, cfg, OFFERS[:1], SERVED)  # the launch does not judge the model; the API does
        text = launch["command"] + " ".join(launch["notes"])
        assert name in text and "draft-model-path" not in text and '"model"' not in launch["command"]


def test_one_drafted_token_reads_singular_and_its_figures_carry_no_float_noise() -> None:
    """Review R16: "1 drafted tokens a step", and params.tokens 1.7999999999999998 (1 + 0.8) in launch.texts."""
    launch = _launch(LLAMA_8B, _cfg("vllm", speculative=Speculation("mtp", 1, 0.8)), OFFERS[:1], SERVED)
    (note,) = [t for t in launch["texts"]["notes"] if t["code"] == "speculative"]
    assert note["params"]["tokens"] == 1.8
    assert any("1 drafted token a step" in text for text in launch["notes"])
    assert not any("(s)" in text for text in [launch["layout"], *launch["notes"]])
