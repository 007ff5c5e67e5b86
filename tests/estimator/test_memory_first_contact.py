"""First-contact memory rows (tests/estimator/memory_first_contact.py) and their recorded errors.

Every row must have been recorded (benchmarks/memory_first_contact.py --record) with the estimator's figure at the
commit that added its source, and the row may not change after it was recorded: the published figure and the
reading it was compared on are checked against the record, so a row cannot be quietly re-read after the model moved.
The record itself is the out-of-sample figure docs/validation.md reports; nothing here asserts accuracy (rows that
motivated a change are fitted from then on, and their current error is reported beside the first-contact one).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT

RECORD = Path(__file__).parent / "data" / "memory_first_contact.json"


def _record() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_every_row_was_recorded_at_first_contact() -> None:
    recorded = {row["label"]: row for row in _record()["rows"]}
    missing = [c.label for c in MEMORY_FIRST_CONTACT if c.label not in recorded]
    assert not missing, f"record these rows before changing anything: {missing}"


def test_rows_are_unchanged_since_first_contact() -> None:
    recorded = {row["label"]: row for row in _record()["rows"]}
    for case in MEMORY_FIRST_CONTACT:
        row = recorded[case.label]
        assert (row["source"], row["reading"], row["published_gib"]) == (
            case.source,
            case.measured,
            case.published_gib,
        ), case.label


def test_each_source_names_the_commit_that_added_it() -> None:
    data = _record()
    for case in MEMORY_FIRST_CONTACT:
        source = data["sources"][case.source]
        assert len(source["added_in"]) == 40 and int(source["added_in"], 16) >= 0


def test_at_least_three_sources_and_forty_rows() -> None:
    # issue #28: at least three memory sources new to the repository, at least 40 rows, each with a stated reading
    assert len({c.source for c in MEMORY_FIRST_CONTACT}) >= 3
    assert len(MEMORY_FIRST_CONTACT) >= 40
    assert {c.measured for c in MEMORY_FIRST_CONTACT} <= {"allocated", "reserved", "device"}
