"""The FP8 weight-only launch on an A100 (no FP8 tensor cores) starts: its flags are ones the engine's argument parser
declares (tests/planner/data/serving_engine_flags.json, checked as tests/planner/test_serving_launch.py does), and
the launch serves the FP8 weights, which vLLM and SGLang run weight-only through FP8 Marlin on SM80
(app/planner/serving_weight_only.py cites both engines' sources)."""

from __future__ import annotations

import pytest

from app.planner.serving_weight_only import weight_only
from tests.planner.test_serving_launch import LLAMA_8B, _cfg, _check, _launch
from tests.planner.test_serving_search import OFFERS

A100 = [o for o in OFFERS if o.gpu.id == "a100-80g-sxm"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_fp8_weight_only_a100_launch_starts_and_serves_fp8_weights(engine: str) -> None:
    kept = weight_only(_cfg(engine, precision="fp8"))
    assert kept is not None
    launch = _launch(LLAMA_8B, kept, A100)
    _check(engine, launch)
    assert "--quantization fp8" in launch["command"], launch["command"]
