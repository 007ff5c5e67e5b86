"""First-contact serving rows (tests/estimator/serving_first_contact.py) and their recorded errors.

Every row must have been recorded (benchmarks/serving_first_contact.py --record) with the estimator's figure at the
commit that added its source, and may not change after it was recorded: the published figure and the metric are
checked against the record, so a row cannot be quietly re-read after the model moved. The record is the out-of-sample
figure docs/validation-serving.md reports; nothing here asserts accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT

RECORD = Path(__file__).parent / "data" / "serving_first_contact.json"


def _record() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_every_row_was_recorded_at_first_contact() -> None:
    recorded = {row["label"] for row in _record()["rows"]}
    missing = [c.label for c in SERVING_FIRST_CONTACT if c.label not in recorded]
    assert not missing, f"record these rows before changing anything: {missing}"


def test_rows_are_unchanged_since_first_contact() -> None:
    recorded = {row["label"]: row for row in _record()["rows"]}
    for case in SERVING_FIRST_CONTACT:
        row = recorded[case.label]
        assert (row["source"], row["metric"], row["published"]) == (case.source, case.metric, case.published)


def test_each_source_names_the_commit_that_added_it() -> None:
    data = _record()
    for case in SERVING_FIRST_CONTACT:
        assert len(data["sources"][case.source]["added_in"]) == 40


def test_at_least_ten_rows_with_latency_and_throughput() -> None:
    assert len(SERVING_FIRST_CONTACT) >= 10
    assert {"ttft_ms", "tpot_ms", "output_tokens_per_s"} <= {c.metric for c in SERVING_FIRST_CONTACT}
