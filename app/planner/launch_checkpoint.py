"""The step a training launch runs first when the repository ships quantised weights: training is sized on 16-bit
weights (the estimator), so a block-FP8 checkpoint (DeepSeek-V3's: config.json quantization_config `fp8` with
`weight_block_size` [128, 128]) is dequantised to bf16 before the launch loads it. PURE.

The tool is DeepSeek's own, deepseek-ai/DeepSeek-V3 inference/fp8_cast_bf16.py (`--input-fp8-hf-path`,
`--output-bf16-hf-path`): it loads each safetensors file onto the GPU, dequantises every FP8 weight with its
`_scale_inv` block scales (inference/kernel.py `weight_dequant`, 128 x 128 blocks), saves the file as bf16 and writes
the index without the scales. It writes only the weights: config.json (without quantization_config) and the
tokenizer files are copied beside them. Other quantised formats (AWQ, GPTQ, per-channel FP8) get no step here; the
`quantised_checkpoint` warning still says a 16-bit copy is needed.

Its time is bound by the disk: every byte of the FP8 checkpoint is read and every byte of the bf16 copy written, at
`DISK_MIB_PER_S` (an assumption: the GPU's dequantisation of a file takes far less than reading and writing it).
"""

from __future__ import annotations

import re
from typing import Any

from app.estimator.checkpoints import Checkpoint, scheme_params
from app.estimator.params import count_params
from app.estimator.specs import ModelSpec
from app.estimator.vocabulary import BYTES_PER_ELEMENT
from app.text.messages import launch as launch_text

GIB = 1024**3
MIB = 1024**2
# Sequential throughput of the volume that holds the checkpoints: a network block volume at its ceiling, AWS EBS gp3's
# 1,000 MiB/s maximum (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html, "gp3 volumes": "maximum
# throughput of 1,000 MiB/s"); reads and writes share it. A local NVMe array is several times faster.
DISK_MIB_PER_S = 1000.0
BLOCK_FP8 = 128 * 128  # weights per scale of the format fp8_cast_bf16.py reads (kernel.py weight_dequant block_size)
SCRIPT = "https://github.com/deepseek-ai/DeepSeek-V3/blob/main/inference/fp8_cast_bf16.py"


def converts(shipped: Checkpoint) -> bool:
    """Whether the checkpoint is the block FP8 that fp8_cast_bf16.py dequantises."""
    return shipped.method == "fp8" and shipped.group_size == BLOCK_FP8


def conversion_step(model: ModelSpec, shipped: Checkpoint) -> dict[str, Any]:
    """The conversion block of a launch: the commands, the bf16 copy's directory, the storage it takes (the bf16 size
    of the weights the estimate counts) and the hours the disk needs to read the FP8 checkpoint and write the copy."""
    params = count_params(model).total
    read = params * BYTES_PER_ELEMENT["fp8"]
    write = params * BYTES_PER_ELEMENT["bf16"]
    hours = (read + write) / (DISK_MIB_PER_S * MIB) / 3600.0
    repo = model.hf_repo or model.name
    name = re.sub(r"[^a-z0-9._-]+", "-", repo.rsplit("/", 1)[-1].lower()).strip("-") or "model"
    source, output = f"/models/{name}-fp8", f"/models/{name}-bf16"
    # a config.json without a repository: the FP8 checkpoint is wherever the customer holds it (`source`)
    download = [f"huggingface-cli download {repo} --local-dir {source}"] if model.hf_repo else []
    words = {"repo": repo, "scheme": shipped.scheme, "output": output, "gib": write / GIB, "hours": hours}
    words |= scheme_params(shipped)
    return {
        "tool": f"deepseek-ai/DeepSeek-V3 inference/fp8_cast_bf16.py ({SCRIPT})",
        "commands": [
            *download,
            # its requirements.txt pins torch 2.5.1, triton 3.0.0, transformers 4.46.3: a venv of its own keeps
            # them out of the training environment (launch.<stack>.versions)
            "git clone https://github.com/deepseek-ai/DeepSeek-V3 && python -m venv /opt/fp8-cast && "
            "/opt/fp8-cast/bin/pip install -r DeepSeek-V3/inference/requirements.txt",
            f"cd DeepSeek-V3/inference && /opt/fp8-cast/bin/python fp8_cast_bf16.py --input-fp8-hf-path {source} "
            f"--output-bf16-hf-path {output}",
            f"cp {source}/tokenizer*.json {source}/generation_config.json {output}/",
            f"python -c \"import json; c = json.load(open('{source}/config.json')); c.pop('quantization_config'); "
            f"json.dump(c, open('{output}/config.json', 'w'), indent=2)\"",
        ],
        "output": output,
        "storage_gib": round(write / GIB, 1),
        "reads_gib": round(read / GIB, 1),
        "hours": round(hours, 2),
        "disk_mib_per_s": DISK_MIB_PER_S,
        "note": launch_text("convert_bf16", words),
    }


def with_conversion(launch: dict[str, Any], model: ModelSpec, shipped: Checkpoint) -> dict[str, Any]:
    """The launch ({stack: block}) with the conversion step, and the DeepSpeed Trainer loading the bf16 copy."""
    if not launch or not converts(shipped):
        return launch
    repo = model.hf_repo or model.name
    out: dict[str, Any] = {}
    for stack, block in launch.items():
        step = conversion_step(model, shipped)
        block = {**block, "convert_checkpoint": step}
        trainer_model = block.get("model")
        if isinstance(trainer_model, dict) and trainer_model.get("pretrained_model_name_or_path") == repo:
            block["model"] = {**trainer_model, "pretrained_model_name_or_path": step["output"]}
        out[stack] = block
    return out
