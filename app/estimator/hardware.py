"""The built-in GPU table, loaded from `data/gpus.json` (every figure cited there, per GPU).

Only the standard library is used, so the planner and the API can share one cached table.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from app.estimator.specs import EstimatorError, GpuSpec

_DATA_FILE = "gpus.json"


@lru_cache(maxsize=1)
def _raw_table() -> dict[str, Any]:
    text = resources.files("app.estimator").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def data_version() -> str:
    """Version string of the GPU data file, so responses can say which table they used."""
    return str(_raw_table()["version"])


def _source_text(sources: dict[str, str]) -> str:
    # GpuSpec carries one string; the per-field citations stay available through gpu_sources().
    return "; ".join(f"{key}: {value}" for key, value in sources.items())


def _to_spec(row: dict[str, Any]) -> GpuSpec:
    return GpuSpec(
        id=row["id"],
        name=row["name"],
        memory_gib=float(row["memory_gib"]),
        usable_memory_gib=float(row["usable_memory_gib"]),
        hbm_bytes_per_s=float(row["hbm_bytes_per_s"]),
        peak_flops={key: float(value) for key, value in row["peak_flops"].items()},
        intra_node_link=row["intra_node_link"],
        nvlink_bytes_per_s=float(row["nvlink_bytes_per_s"]),
        pcie_gen=int(row["pcie_gen"]),
        max_gpus_per_node=int(row.get("max_gpus_per_node", 8)),
        sustained_fraction=float(row.get("sustained_fraction", 1.0)),
        sm_count=int(row.get("sm_count", 0)),
        stream_hbm_bytes_per_s=float(row.get("stream_hbm_bytes_per_s", 0.0)),
        source=_source_text(row["sources"]),
    )


@lru_cache(maxsize=1)
def load_gpus() -> dict[str, GpuSpec]:
    """All built-in GPU types by stable id (cached; treat the dict as read-only)."""
    return {row["id"]: _to_spec(row) for row in _raw_table()["gpus"]}


def gpu_sources(gpu_id: str) -> dict[str, str]:
    """Per-field citations of one built-in GPU."""
    get_gpu(gpu_id)
    return next(dict(row["sources"]) for row in _raw_table()["gpus"] if row["id"] == gpu_id)


def get_gpu(gpu_id: str) -> GpuSpec:
    """One GPU type by id; an unknown id raises EstimatorError listing the allowed ids."""
    gpus = load_gpus()
    if gpu_id in gpus:
        return gpus[gpu_id]
    close = difflib.get_close_matches(gpu_id, list(gpus), n=3, cutoff=0.4)
    code = "gpu_unknown_close" if close else "gpu_unknown"
    raise EstimatorError.of(code, field="hardware.gpu", gpu=str(gpu_id), close=close, allowed=sorted(gpus))
