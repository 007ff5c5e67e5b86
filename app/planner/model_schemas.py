"""The model part of a request: a preset, a Hub id or an explicit architecture (ModelIn), with the Hub id's
shape. Kept apart so app/planner/schemas.py stays within the module size."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from app.common.schemas import RequestModel, coded_error
from app.estimator.vocabulary import (
    Mlp,
    Variant,
)
from app.planner.memory_schemas import MemoryOut as MemoryOut  # re-exported: the responses import it from here

PositiveInt = Annotated[int, Field(ge=1)]
ShortId = Annotated[str, Field(min_length=1, max_length=64)]
# A Hub repository id (huggingface_hub's validate_repo_id): an optional namespace, then the name, each of
# letters, digits, '-', '_', '.', at most 96 characters, starting and ending with a letter or digit.
_HF_PART = r"[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?"
HF_ID_PATTERN = re.compile(rf"(?:{_HF_PART}/)?{_HF_PART}", re.ASCII)
HF_ID_MAX_CHARS = 96 * 2 + 1
MAX_PARAMS = 1e13  # 10 T parameters: larger than any model trained to date (Switch-C 1.6T, 2021)


class ModelIn(RequestModel):
    """One of: `preset`; `hf_id` (its config.json read from the Hugging Face Hub: app.hub); `hf_config`;
    an explicit architecture (`layers`…`vocab`, `params` checked against it); or `params` alone
    (architecture derived, flagged approximate). `hf_id` with `hf_config` names a pasted config."""

    preset: str | None = Field(
        default=None,
        max_length=100,
        description="A shipped model's id (GET /models), e.g. llama-2-7b. Give one of preset, hf_id, hf_config, "
        "params or an architecture.",
    )
    variant: Variant | None = Field(
        default=None,
        description="With a preset: which of its published repositories a launch names, base (pretrained) or "
        "instruct (the chat model), where the preset knows both (GET /models `variants`). Default: the instruct "
        "model for task serving, the preset's own repository otherwise.",
    )
    hf_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=HF_ID_MAX_CHARS,
        description="A Hugging Face model id, e.g. Qwen/Qwen2.5-7B-Instruct: the server reads its config.json from "
        "the Hub (revision main; gated models need the server's HF_TOKEN) and keeps it. With hf_config, the id "
        "only names that config.",
        examples=["Qwen/Qwen2.5-7B-Instruct"],
    )
    hf_config: dict[str, Any] | None = Field(
        default=None, description="A pasted Hugging Face config.json (the JSON object, not its text)"
    )
    params: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PARAMS,
        description="Parameter count as a raw number (7e9 for a 7B model). Alone, the architecture is derived from "
        "it and memory is approximate; with an architecture it is checked against it.",
    )
    name: str | None = Field(
        default=None,
        max_length=200,
        description="A label for the model in the answer; default: the preset's id or the config's model_type.",
    )
    layers: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Transformer layers (num_hidden_layers). An explicit architecture needs layers, hidden, heads, "
        "ffn and vocab.",
    )
    hidden: int | None = Field(default=None, ge=1, le=131072, description="Hidden size (hidden_size).")
    heads: int | None = Field(default=None, ge=1, le=1024, description="Attention heads (num_attention_heads).")
    kv_heads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="Key/value heads for grouped-query attention (num_key_value_heads); default: heads.",
    )
    ffn: int | None = Field(default=None, ge=1, le=1048576, description="Feed-forward inner size (intermediate_size).")
    vocab: int | None = Field(default=None, ge=1, le=4194304, description="Vocabulary size (vocab_size).")
    head_dim: int | None = Field(
        default=None, ge=1, le=4096, description="Per-head dimension; default: hidden / heads."
    )
    mlp: Mlp = Field(
        default="swiglu",
        description="Feed-forward kind: swiglu (three matrices, Llama) or gelu (two, GPT-2); default swiglu.",
    )
    tied_embeddings: bool = Field(
        default=False, description="Input and output embeddings share one matrix; default false."
    )
    experts: int = Field(
        default=0, ge=0, le=4096, description="Routed experts per MoE layer; 0 (default) for a dense model."
    )
    experts_per_token: int = Field(
        default=0, ge=0, le=4096, description="Experts each token is routed to (top-k); 0 for a dense model."
    )
    expert_ffn: int | None = Field(
        default=None, ge=1, le=1048576, description="Feed-forward size of one expert; default: ffn."
    )
    shared_experts: int = Field(
        default=0, ge=0, le=64, description="Always-active shared experts per MoE layer; default 0."
    )
    moe_layers: int | None = Field(
        default=None, ge=0, le=1000, description="How many layers are MoE; default: all of them when experts > 0."
    )

    @field_validator("hf_id")
    @classmethod
    def _hub_id(cls, value: str | None) -> str | None:
        if value is not None and (not HF_ID_PATTERN.fullmatch(value) or ".." in value or "--" in value):
            raise coded_error("hf_id_pattern")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> ModelIn:
        explicit = self.layers is not None or self.hidden is not None
        hub = self.hf_id is not None or self.hf_config is not None
        sources = [self.preset is not None, hub, explicit]
        if sum(sources) > 1:
            raise coded_error("model_one_source")
        if self.params is not None and (self.preset is not None or hub):
            # review R10: a count beside a preset was silently dropped; the model's own count is the one sized
            raise coded_error("model_params_beside_source")
        if self.variant is not None and self.preset is None:
            raise coded_error("model_variant_without_preset")
        if not any(sources) and self.params is None:
            raise coded_error("model_undescribed")
        if explicit:
            missing = [k for k in ("layers", "hidden", "heads", "ffn", "vocab") if getattr(self, k) is None]
            if missing:
                raise coded_error("model_architecture_incomplete", missing=missing)
        return self
