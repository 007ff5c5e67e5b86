"""`specs.plan_with`, the plan search's fast `dataclasses.replace` of a Plan: the same plan, equal and hashed alike,
still frozen, and no field it does not know."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, strategies as st

from app.estimator.specs import Plan, plan_with
from app.estimator.vocabulary import OFFLOADS, RECOMPUTES


@given(
    tp=st.sampled_from((1, 2, 4, 8)),
    zero=st.integers(0, 3),
    offload=st.sampled_from(OFFLOADS),
    recompute=st.sampled_from(RECOMPUTES),
    micro_batch=st.integers(1, 64),
    fp8_params=st.booleans(),
    expert_tp=st.none() | st.sampled_from((1, 2)),
)
def test_plan_with_is_replace(
    tp: int, zero: int, offload: str, recompute: str, micro_batch: int, fp8_params: bool, expert_tp: int | None
) -> None:
    base = Plan(dp=8, tp=2, pp=2, micro_batch=4, fused_loss=True, expert_tp=expert_tp)
    changes = {
        "tp": tp,
        "zero_stage": zero,
        "offload": offload,
        "recompute": recompute,
        "micro_batch": micro_batch,
        "fp8_params": fp8_params,
    }
    fast, slow = plan_with(base, **changes), dataclasses.replace(base, **changes)  # type: ignore[arg-type]
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert [getattr(fast, f.name) for f in dataclasses.fields(Plan)] == [
        getattr(slow, f.name) for f in dataclasses.fields(Plan)
    ]
    assert base.tp == 2 and base.micro_batch == 4  # the original is untouched


def test_plan_with_keeps_the_plan_frozen_and_refuses_unknown_fields() -> None:
    plan = plan_with(Plan(), tp=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tp = 4  # type: ignore[misc]
    with pytest.raises(KeyError):
        plan_with(plan, tensor_parallel=2)
