"""Full recompute keeps one input per checkpointed region of a layer (Plan.checkpoint_regions; memory.activations
`_stage_elements`). NeMo AutoModel's FSDP2 parallelizer checkpoints a decoder layer's attention, MLP and both norms
apart (NVIDIA-NeMo/Automodel nemo_automodel/components/distributed/parallelizer.py at b4733bdc18cc,
DefaultParallelizationStrategy), so each layer keeps four hidden states, not one. Its gradient-checkpointing guide
(tests/estimator/memory_first_contact_automodel_ac.py [automodel-ac]) read, at first contact, -7.8 % with
checkpointing and -31.5 % with checkpointing and the fused loss, the rows whose regions were stated as one layer.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB, Plan
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT

AUTOMODEL_CHECKPOINTED = [c for c in MEMORY_FIRST_CONTACT if c.source == "automodel-ac" and c.plan.recompute == "full"]


def test_one_region_a_layer_by_default() -> None:
    assert Plan().checkpoint_regions == 1


def test_each_region_keeps_its_own_hidden_state() -> None:
    case = AUTOMODEL_CHECKPOINTED[0]
    one = estimate_memory(case.model, case.workload, replace(case.plan, checkpoint_regions=1), case.cluster)
    four = estimate_memory(case.model, case.workload, replace(case.plan, checkpoint_regions=4), case.cluster)
    tokens = case.plan.micro_batch * case.workload.seq_len
    # three more bf16 hidden states a layer, 3 x 16 layers x 16,384 tokens x 2,048 x 2 bytes = 3.0 GiB, less the three
    # the layer being recomputed no longer adds to its checkpoints (its working set beyond them: `_stage_elements`)
    extra = 3 * (case.model.layers - 1) * tokens * case.model.hidden * 2
    assert four.breakdown.activations - one.breakdown.activations == pytest.approx(extra, rel=1e-6)


def test_regions_change_nothing_without_full_recompute() -> None:
    case = next(c for c in MEMORY_FIRST_CONTACT if c.source == "automodel-ac" and c.plan.recompute == "none")
    one = estimate_memory(case.model, case.workload, replace(case.plan, checkpoint_regions=1), case.cluster)
    four = estimate_memory(case.model, case.workload, replace(case.plan, checkpoint_regions=4), case.cluster)
    assert four.breakdown.total == one.breakdown.total


def test_automodel_checkpointed_rows_read_within_ten_percent() -> None:
    # fitted: both rows motivated the change (first contact -7.8 % and -31.5 %, recorded)
    assert len(AUTOMODEL_CHECKPOINTED) == 2
    for case in AUTOMODEL_CHECKPOINTED:
        assert case.plan.checkpoint_regions == 4
        breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
        ours = measured_bytes(breakdown, case.plan, case.cluster, case.measured) / GIB
        assert ours / case.published_gib - 1.0 == pytest.approx(0.0, abs=0.10), case.label
