"""The API's warning `message` is the catalog's English (app/text/messages.py WARNINGS), rendered from the code and
params the response carries, and it reads as it did when the estimator and the planner wrote their own English beside
the code, except where that English was wrong or said less than the catalog.

tests/api_warning_words.json holds, for every warning code the API returned over the requests of tests/api,
tests/planner and tests/mcp (284 distinct POST /estimate, /estimate/scaling and /recommend bodies, replayed on the
seeded catalog), up to three samples: the code, the params returned now, the message returned before the domain
stopped writing sentences (`before`) and the one returned now (`after`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.text import messages

SAMPLES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "api_warning_words.json").read_text())

# Codes whose English changed, and why: the estimator's and the planner's own sentences and the catalog's (which the
# pages showed) disagreed; the catalog's is the one text now, in both languages.
CHANGED = {
    "billing_within_range": "'instead of' both times, and 'time range' (the range is of time, not of cost)",
    "communication_bound": "a sentence (it was a lower-case fragment)",
    "deadline_within_range": "names the slow end of the range as the figure that misses",
    "ethernet_fabric": "it said only data parallelism tolerates Ethernet, the reverse of the truth: pipeline stages do",
    "fabric_priced_on_request": "'servers', and the fabric by its kind, not its internal id",
    "fp8_not_launched": "says it is priced in the 16-bit precision too",
    "global_batch_rounded": "a sentence; 'rounded to' (the API said 'estimated with', as if only the estimate used it)",
    "host_load_exceeded": "'server' for 'node', as every other host RAM text",
    "host_load_unknown": "'server' for 'node'",
    "host_ram_exceeded": "'server' for 'node'",
    "host_ram_unknown": "'server' for 'node'",
    "moe_experts_resident": "shorter; same meaning",
    "no_fit": "says first that the plan does not fit, then what would",
    "no_fit_zero3": "'in GPU memory', as no_fit",
    "offload_slowdown": "shorter; the same figures",
    "other_term_cheaper": "the currency after both totals (the API left it off the second)",
    "over_monthly_budget": "the currency after every amount (the API left it off the budgets)",
    "pipeline_bubble": "the idle share of the step instead of 'the bubble is large (want m ≥ 4p)'",
    "pipeline_few_microbatches": "plain words for 'pp=' and the 1F1B formula",
    "precision_unsupported": "a sentence that says the speed is estimated at the precision it runs at",
}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s["code"])
def test_the_api_message_is_the_catalogs_english_of_its_code_and_params(sample: dict[str, Any]) -> None:
    assert messages.warning(sample["code"], sample["params"]) == sample["after"]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s["code"])
def test_the_english_reads_as_before_unless_it_was_wrong(sample: dict[str, Any]) -> None:
    if sample["code"] in CHANGED:
        assert sample["after"] != sample["before"]  # else the entry in CHANGED is stale
    else:
        assert sample["after"] == sample["before"]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s["code"])
def test_the_chinese_of_every_sample_has_no_english_sentence(sample: dict[str, Any]) -> None:
    chinese = messages.warning(sample["code"], sample["params"], "zh")
    assert re.search(r"[\u4e00-\u9fff]", chinese)
    assert not re.search(r"\b(the|is|are|of|and|with|per)\b", chinese), chinese


def test_the_samples_cover_most_warning_codes() -> None:
    assert len({s["code"] for s in SAMPLES}) >= 30


@pytest.mark.parametrize("concurrency", [1.0, 0.2, 7.5, 64.0])
def test_the_fine_grained_moe_warning_words_the_estimators_figures(concurrency: float) -> None:
    """moe_low_concurrency_unvalidated: the estimator gives the code and figures, the catalog the one text (its
    sources), a sequence counted as `plurals` counts it."""
    from app.estimator.presets import get_preset
    from app.estimator.serving import MOE_VALIDATED_CONCURRENCY, moe_low_concurrency_warning

    model = get_preset("deepseek-v3").model
    warning = moe_low_concurrency_warning(model, concurrency)
    assert warning is not None and warning.code == "moe_low_concurrency_unvalidated"
    assert warning.params == {
        "model": model.name, "experts": model.experts, "concurrency": concurrency,
        "validated": MOE_VALIDATED_CONCURRENCY,
    }  # fmt: skip
    note = messages.warning(warning.code, warning.params)
    assert "(s)" not in note and ("at 1 sequence in flight" in note) == (concurrency == 1.0), note
