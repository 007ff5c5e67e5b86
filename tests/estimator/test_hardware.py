"""The built-in GPU table: required ids, cited figures, sane values."""

import pytest

from app.estimator.hardware import data_version, get_gpu, gpu_sources, load_gpus
from app.estimator.specs import EstimatorError

REQUIRED = (
    "v100-32g-sxm",
    "a10-24g",
    "rtx4090-24g",
    "rtxa6000-48g",
    "l40s-48g",
    "a100-40g-pcie",
    "a100-40g-sxm",
    "a100-80g-pcie",
    "a100-80g-sxm",
    "h100-80g-pcie",
    "h100-80g-sxm",
    "h200-141g-sxm",
    "b200-180g-sxm",
)
CITED_FIELDS = ("memory_gib", "usable_memory_gib", "hbm_bytes_per_s", "peak_flops", "nvlink_bytes_per_s", "pcie_gen")


def test_every_required_gpu_is_built_in() -> None:
    assert set(REQUIRED) <= set(load_gpus())


@pytest.mark.parametrize("gpu_id", REQUIRED)
def test_every_figure_is_cited(gpu_id: str) -> None:
    sources = gpu_sources(gpu_id)
    for name in CITED_FIELDS:
        assert sources.get(name), f"{gpu_id}.{name} has no source"


@pytest.mark.parametrize("gpu_id", REQUIRED)
def test_usable_memory_is_below_the_total(gpu_id: str) -> None:
    gpu = get_gpu(gpu_id)
    assert 0.9 * gpu.memory_gib < gpu.usable_memory_gib < gpu.memory_gib


def test_dense_peaks_are_not_the_sparse_headline_numbers() -> None:
    assert get_gpu("h100-80g-sxm").peak_flops["bf16"] == pytest.approx(989.4e12)
    assert get_gpu("a100-80g-sxm").peak_flops["bf16"] == pytest.approx(312e12)
    assert get_gpu("a100-80g-sxm").peak_flops["fp8"] == 0  # Ampere has no FP8


def test_nvlink_is_per_direction() -> None:
    assert get_gpu("a100-80g-sxm").nvlink_bytes_per_s == 300e9
    assert get_gpu("h100-80g-sxm").nvlink_bytes_per_s == 450e9
    assert get_gpu("l40s-48g").nvlink_bytes_per_s == 0


def test_unknown_gpu_lists_the_allowed_ids() -> None:
    with pytest.raises(EstimatorError) as error:
        get_gpu("h100")
    assert error.value.field == "hardware.gpu"
    assert "h100-80g-sxm" in str(error.value) and "v100-32g-sxm" in str(error.value)


def test_the_table_is_versioned_and_cached() -> None:
    assert data_version()
    assert load_gpus() is load_gpus()
