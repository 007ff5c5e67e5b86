"""Shipped model presets (data/presets.json): popular open models with their HF config values,
published parameter counts and sources. Each preset is built through `model_from_hf_config`, so
the presets also exercise the config parser.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from app.estimator.models import APPROXIMATE_NOTES, model_from_hf_config
from app.estimator.specs import EstimatorError, ModelSpec


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    name: str
    hf_repo: str
    source: str  # URL of the config.json the values were taken from
    kind: str  # "dense" or "moe"
    published_params: int
    params_tolerance: float  # accepted relative gap between count_params and published_params
    model: ModelSpec
    note: str = ""  # why the tolerance is not zero, or what is approximated
    variants: tuple[tuple[str, str], ...] = ()  # (variant, repository): base / instruct where both ship

    def repo_for(self, variant: str | None) -> str:
        """The repository of `variant` (base / instruct); the preset's own for None. EstimatorError on
        `model.variant` for a variant this preset does not know."""
        if variant is None:
            return self.hf_repo
        known = dict(self.variants)
        if variant not in known:
            code, allowed = ("variant_unknown", list(known)) if known else ("variant_single", [])
            raise EstimatorError.of(code, field="model.variant", preset=self.id, variant=variant, allowed=allowed)
        return known[variant]


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    text = resources.files("app.estimator").joinpath("data", "presets.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _note(entry: dict[str, Any]) -> str:
    parts = [entry.get("tolerance_reason", ""), APPROXIMATE_NOTES.get(entry["config"]["model_type"], "")]
    return " ".join(part for part in parts if part)


def _to_preset(entry: dict[str, Any]) -> Preset:
    peak = entry.get("pretrain_peak_lr")
    model = replace(
        model_from_hf_config(entry["config"]),
        name=entry["id"],
        hf_repo=entry["hf_repo"],
        pretrain_peak_lr=float(peak) if peak is not None else None,
    )
    return Preset(
        id=entry["id"],
        name=entry["name"],
        hf_repo=entry["hf_repo"],
        source=entry["source"],
        kind=entry["kind"],
        published_params=int(entry["published_params"]),
        params_tolerance=float(entry["params_tolerance"]),
        model=model,
        note=_note(entry),
        variants=tuple(entry.get("variants", {}).items()),
    )


@lru_cache(maxsize=1)
def _presets() -> dict[str, Preset]:
    return {entry["id"]: _to_preset(entry) for entry in _raw()["presets"]}


def list_presets() -> list[Preset]:
    """All presets in file order (dense and MoE)."""
    return list(_presets().values())


def preset_config(preset_id: str, variant: str | None = None) -> dict[str, Any]:
    """The Hugging Face config.json values a preset was built from (for fields ModelSpec does not keep), with the
    keys `variant`'s repository states differently (presets.json `variant_config`: Qwen2.5-72B-Instruct's context)."""
    preset = get_preset(preset_id)
    entry = next(entry for entry in _raw()["presets"] if entry["id"] == preset.id)
    config: dict[str, Any] = entry["config"]
    changes = entry.get("variant_config", {}).get(variant) if variant is not None else None
    return {**config, **changes} if changes else config


def get_preset(preset_id: str) -> Preset:
    """One preset by id; unknown ids raise EstimatorError with the closest matches."""
    presets = _presets()
    key = preset_id.strip().lower() if isinstance(preset_id, str) else preset_id
    if key in presets:
        return presets[key]
    close = difflib.get_close_matches(str(key), list(presets), n=5, cutoff=0.5)
    if close:
        raise EstimatorError.of("preset_unknown_close", field="model.preset", preset=str(preset_id), close=close)
    raise EstimatorError.of("preset_unknown", field="model.preset", preset=str(preset_id), known=list(presets))


def model_title(model: Mapping[str, Any]) -> str | None:
    """The name people call a requested model by (a request's `model` object): the preset's name
    ("Llama 3 8B"), a Hugging Face id (`hf_id`, or a pasted config's `_name_or_path`), or the
    request's own `name`; None when it gave only a size (the caller words "a 7B model")."""
    preset = model.get("preset")
    if isinstance(preset, str):
        found = _presets().get(preset.strip().lower())
        return found.name if found else preset
    for key in ("hf_id", "name"):
        if isinstance(model.get(key), str) and model[key]:
            return str(model[key])
    config = model.get("hf_config")
    if isinstance(config, Mapping):
        named = config.get("_name_or_path")
        if isinstance(named, str) and named.strip():
            return named.strip()
        kind = config.get("model_type")
        return f"{kind} (config.json)" if isinstance(kind, str) else "config.json"
    return None
