"""What one answer computes once (`simulations`): the simulated runs and the replicas' constants with their memos
(`_hardware`), scoped to the answer so every request starts cold."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from app.estimator.serving.config import ServingConfig
from app.estimator.serving.scope import _MEMO, _Memo
from app.estimator.serving.step import _Hardware, _new_hardware
from app.estimator.specs import Cluster, ModelSpec


@contextmanager
def simulations() -> Iterator[None]:
    """Share the simulations and replica constants computed inside the block (nested blocks share the outer one's)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set(_Memo())
    try:
        yield
    finally:
        _MEMO.reset(token)


def _where(cluster: Cluster, tp: int, pp: int) -> tuple[object, ...]:
    """What a replica's step depends on of its servers (the GPU type by its id), and its split."""
    return (cluster.gpu.id, cluster.gpus_per_node, cluster.nodes, cluster.intra_node_link, cluster.inter_node_gbps,
            cluster.inter_node_fabric, tp, pp)  # fmt: skip


def _hardware(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, pp: int) -> _Hardware:
    """The replica's constants; within a `simulations` block, one object per replica and traffic (the offered rate
    aside, which none of them reads), so its memos serve every estimate of the answer."""
    memo = _MEMO.get()
    if memo is None:
        return _new_hardware(model, cfg, cluster, tp, pp)
    exact = (model, cfg, _where(cluster, tp, pp))  # (first by the traffic as given: no copy of it to hash)
    found = memo.hardware_of.get(exact)
    if found is None:
        key = (model, replace(cfg, requests_per_s=None), exact[2])
        found = memo.hardware.get(key)
        if found is None:
            found = memo.hardware[key] = _new_hardware(model, cfg, cluster, tp, pp)
            found.key = key
        memo.hardware_of[exact] = found
    return found
