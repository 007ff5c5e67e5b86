"""What a checkpoint holds: the weight format its config.json's `quantization_config` states. PURE.

An engine serves a checkpoint as it ships: `vllm serve deepseek-ai/DeepSeek-V3` loads block-FP8 weights because
config.json says `{"quant_method": "fp8", "weight_block_size": [128, 128]}`, whatever the request's precision. So
serving sizes a quantised checkpoint in its own format unless the request states another (`weights`).

The `quantization_config` schemas read here, each as the library that writes it defines it:

- `fp8`: transformers FineGrainedFP8Config / vLLM `Fp8Config.from_config` (DeepSeek-V3, Qwen3-*-FP8): FP8 E4M3
  weights; `weight_block_size` [128, 128] gives one float32 scale per 128 × 128 block, without it one per channel.
- `fbgemm_fp8`: transformers FbgemmFp8Config (Meta's Llama-3.1-405B-Instruct-FP8): FP8 weights, a scale per channel.
- `awq`: AutoAWQ (`bits` 4, `group_size`, `zero_point`); `gptq`: AutoGPTQ / GPTQModel (`bits` 4 or 8, `group_size`,
  -1 for one group per output channel).
- `compressed-tensors`: llm-compressor's `config_groups.*.weights` {`num_bits`, `type` int | float, `strategy`,
  `group_size`, `block_structure`}.
- `bitsandbytes`: transformers BitsAndBytesConfig (`load_in_4bit` NF4/FP4 in blocks of 64 with an absmax each,
  `load_in_8bit` LLM.int8() with a scale per row).
- `modelopt`: TensorRT Model Optimizer's exported `quant_algo` (FP8, W4A16_AWQ).

A format serving does not size (NVFP4, MXFP4, 2/3-bit…) is kept as `weights None` with `readable False`; the
caller refuses to guess unless the request states `weights`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.estimator.notes import Note, note
from app.estimator.vocabulary import WeightFormat

# quant_method values read here; others are named in `Checkpoint.method` and left unsized.
METHODS = ("fp8", "fbgemm_fp8", "awq", "gptq", "compressed-tensors", "bitsandbytes", "modelopt")
# bitsandbytes quantises 4-bit weights in blocks of 64 (bitsandbytes functional.py quantize_4bit blocksize=64);
# its 8-bit LLM.int8() keeps one scale per row, as int8 weight-only does (the int8 default group).
BNB_4BIT_BLOCK = 64
# ModelOpt quant_algo values that are one of the formats serving sizes (modelopt/torch/export/quant_utils.py).
MODELOPT_ALGOS: dict[str, WeightFormat] = {"FP8": "fp8", "FP8_BLOCK_SCALES": "fp8", "W4A16_AWQ": "int4"}
MODELOPT_GROUP = 128  # ModelOpt INT4 AWQ's block size (the `--awq_block_size` default of hf_ptq.py)
# torch_dtype of an unquantised checkpoint as our 16-bit formats (float32 checkpoints are served in 16 bits).
TORCH_DTYPES: dict[str, WeightFormat] = {"bfloat16": "bf16", "float16": "fp16"}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The stored weights of a checkpoint: `weights` in a format serving sizes (None: 16-bit, or unreadable)."""

    method: str | None = None  # quantization_config.quant_method; None: an unquantised checkpoint
    weights: WeightFormat | None = None  # what the quantised weights are sized as
    group_size: int | None = None  # weights per stored scale; None: the format's default
    scheme: str = ""  # the checkpoint's format in words, for notes ("block FP8 (128 x 128 scales)")
    scheme_note: Note | None = None  # the same as a code with parameters, for other languages (app/text/note_words.py)
    readable: bool = True  # False: a quantization_config whose format serving does not size
    dtype: WeightFormat | None = None  # torch_dtype of an unquantised checkpoint (bf16 / fp16), if stated

    @property
    def quantised(self) -> bool:
        return self.method is not None


def checkpoint_from_config(hf_config: Mapping[str, Any] | None) -> Checkpoint:
    """The checkpoint a config.json describes; an unquantised one when it has no quantization_config."""
    if not hf_config:
        return Checkpoint()
    quant = hf_config.get("quantization_config")
    dtype = TORCH_DTYPES.get(str(hf_config.get("torch_dtype", hf_config.get("dtype", ""))))
    if not isinstance(quant, Mapping):
        return Checkpoint(dtype=dtype)
    method = str(quant.get("quant_method", "")).strip().lower() or "unknown"
    reader = _READERS.get(method)
    found = reader(quant) if reader is not None else None
    if found is None:
        unread = _unread(method, quant)
        return Checkpoint(method=method, scheme=unread.text, scheme_note=unread, readable=False)
    weights, group, scheme = found
    return Checkpoint(method=method, weights=weights, group_size=group, scheme=scheme.text, scheme_note=scheme)


Read = tuple[WeightFormat, int | None, Note] | None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _fp8(quant: Mapping[str, Any]) -> Read:
    block = quant.get("weight_block_size")
    if isinstance(block, list | tuple) and len(block) == 2 and all(_int(b) for b in block):
        rows, cols = int(block[0]), int(block[1])
        return "fp8", rows * cols, note("scheme_fp8_block", rows=rows, cols=cols)
    return "fp8", None, Note("scheme_fp8_channel")


def _fbgemm_fp8(quant: Mapping[str, Any]) -> Read:
    return "fp8", None, Note("scheme_fp8_fbgemm")


def _integer(bits: int | None, group: int | None, name: str) -> Read:
    if bits in (4, 8):
        return (
            "int4" if bits == 4 else "int8",
            group if group and group > 0 else None,
            note("scheme_int", bits=bits, name=name),
        )
    return None


def _grouped(found: Read, group: int | None) -> Read:
    """An AWQ or GPTQ format with its group size, where it states one."""
    if found is None or not group or group <= 0:
        return found
    return found[0], found[1], note("scheme_int_group", **dict(found[2].params), group=group)


def _awq(quant: Mapping[str, Any]) -> Read:
    group = _int(quant.get("group_size"))
    return _grouped(_integer(_int(quant.get("bits", quant.get("w_bit"))), group, "AWQ"), group)


def _gptq(quant: Mapping[str, Any]) -> Read:
    group = _int(quant.get("group_size"))
    return _grouped(_integer(_int(quant.get("bits")), group, "GPTQ"), group)


def _compressed_tensors(quant: Mapping[str, Any]) -> Read:
    groups = quant.get("config_groups")
    if not isinstance(groups, Mapping):
        return None
    formats: set[tuple[WeightFormat, int | None, Note]] = set()
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping):
            return None
        bits, kind = _int(weights.get("num_bits")), str(weights.get("type", "int"))
        size = _int(weights.get("group_size"))
        block = weights.get("block_structure")
        if isinstance(block, list | tuple) and len(block) == 2 and all(_int(b) for b in block):
            size = int(block[0]) * int(block[1])
        fmt: WeightFormat
        if kind == "float" and bits == 8:
            formats.add(("fp8", size, note("scheme_ct_fp8", strategy=str(weights.get("strategy", "channel")))))
        elif kind == "int" and bits in (4, 8):
            fmt = "int4" if bits == 4 else "int8"
            formats.add((fmt, size, note("scheme_ct_int", bits=bits, strategy=str(weights.get("strategy", "channel")))))
        else:
            return None  # e.g. NVFP4 (num_bits 4, type float)
    return next(iter(formats)) if len(formats) == 1 else None


def _bitsandbytes(quant: Mapping[str, Any]) -> Read:
    if quant.get("load_in_4bit"):
        kind = str(quant.get("bnb_4bit_quant_type", "fp4")).upper()
        return "int4", BNB_4BIT_BLOCK, note("scheme_bnb_4bit", kind=kind)
    if quant.get("load_in_8bit"):
        return "int8", None, Note("scheme_bnb_8bit")
    return None


def _modelopt(quant: Mapping[str, Any]) -> Read:
    nested = quant.get("quantization")
    inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else quant
    algo = str(inner.get("quant_algo", "")).upper()
    fmt = MODELOPT_ALGOS.get(algo)
    if fmt is None:
        return None
    return fmt, MODELOPT_GROUP if fmt == "int4" else None, note("scheme_modelopt", algo=algo)


_READERS = {
    "fp8": _fp8,
    "fbgemm_fp8": _fbgemm_fp8,
    "awq": _awq,
    "gptq": _gptq,
    "compressed-tensors": _compressed_tensors,
    "bitsandbytes": _bitsandbytes,
    "modelopt": _modelopt,
}


def _unread(method: str, quant: Mapping[str, Any]) -> Note:
    """The unsized format in words: its method and, where stated, its algorithm or bits."""
    detail = quant.get("quant_algo") or quant.get("bits") or quant.get("format")
    return note("scheme_unread", method=method, detail=str(detail)) if detail else note("scheme_method", method=method)


def scheme_params(shipped: Checkpoint) -> dict[str, Any]:
    """`scheme_note` for the parameters of a text that names the format: its code and parameters, JSON-ready."""
    found = shipped.scheme_note
    return {"scheme_note": {"code": found.code, "params": dict(found.params)}} if found is not None else {}
