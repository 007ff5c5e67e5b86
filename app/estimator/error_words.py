"""Why the estimator refuses an input, in English and Chinese: one text per code, its figures as {fields}.

`EstimatorError.of(code, field=..., **params)` raises with the English text as its message (the API's `message`,
the command line's); `app.messages.estimator_error` words the same code in the page's language. A list or tuple
among the params is joined with the language's separator before the text is formatted (`words`). Data only: the
estimator reads it, and a test (tests/test_messages.py) checks both languages carry the same codes and fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LIST_SEPARATORS = {"en": ", ", "zh": "、"}

ESTIMATOR_ERRORS: dict[str, dict[str, str]] = {
    "en": {
        # an explicit architecture (app/estimator/models.py)
        "model_dim_positive": "{name} must be a positive integer, got {value}.",
        "model_dim_absurd": "{name}={value} is absurd (at most {most}).",
        "model_heads_divide": "hidden ({hidden}) must be divisible by heads ({heads}) unless head_dim is given.",
        "model_head_dim_positive": "head_dim must be positive, got {head_dim}.",
        "model_kv_heads_divide": "kv_heads ({kv_heads}) must divide heads ({heads}) (1 = MQA, heads = MHA, else GQA).",
        "model_moe_negative": "MoE counts must not be negative.",
        "model_experts_per_token": "experts_per_token must be between 1 and experts ({experts}), got "
        "{experts_per_token}.",
        "model_moe_layers": "moe_layers ({moe_layers}) cannot exceed layers ({layers}).",
        "model_expert_ffn": "expert_ffn must be in 1..{most}.",
        "model_params_positive": "params must be a positive number, got {params}.",
        "model_params_mismatch": "params={params:,.0f} disagrees with the architecture, which has exactly "
        "{exact:,} parameters ({relative:+.1%}); fix the architecture or omit params.",
        "model_tied_embeddings": "tied_embeddings must be true or false.",
        "model_too_large": "The architecture has {total:,.0f} parameters; at most {most:,.0f} are supported.",
        "model_params_finite": "params must be a finite number, got {params}.",
        "model_params_range": "params={params:,.0f} is outside the supported range {least:,.0f} to {most:,.0f}.",
        # a Hugging Face config.json (app/estimator/models.py)
        "hf_config_missing": "hf_config for model_type {model_type} is missing required keys: {missing}.",
        "hf_config_count": "hf_config.{key} must be an integer from {least} to {most}, got {value}.",
        "hf_config_number": "hf_config.{key} must be a finite number of at most {most} in size, got {value}.",
        "hf_config_mlp_only_layers": "hf_config.mlp_only_layers must be a list of layer indices.",
        "hf_config_object": "hf_config must be a JSON object (the contents of config.json).",
        "hf_config_model_type": "Unknown hf_config model_type {model_type}; supported: {supported}.",
        "hf_config_malformed": "hf_config has a malformed value: {detail}.",
        # presets and GPUs (app/estimator/presets.py, hardware.py)
        "preset_unknown_close": "Unknown model preset {preset}; closest: {close}.",
        "preset_unknown": "Unknown model preset {preset}; known: {known}.",
        "variant_unknown": "{preset} has no {variant} variant (one of {allowed}); name another repository with "
        "model.hf_id",
        "variant_single": "{preset} has no {variant} variant (none: it ships one repository); name another "
        "repository with model.hf_id",
        "gpu_unknown_close": "Unknown GPU type {gpu}. Did you mean {close}? Allowed: {allowed}.",
        "gpu_unknown": "Unknown GPU type {gpu}. Allowed: {allowed}.",
        # fabrics (app/estimator/clusters.py, interconnects.py)
        "fabric_usual_unknown": "no usual fabric is known for {gpu}: give hardware.inter_node_gbps or "
        "inter_node_fabric",
        "server_rate_unknown": "the catalog states no network rate for {server}: give hardware.inter_node_gbps",
        "intra_link_unknown": "unknown intra-node link {link}; known: {known}",
        "fabric_unknown": "unknown fabric {fabric}; known: {known}",
        "multi_node_rate": "a multi-node group needs hardware.inter_node_gbps",
        # a choice among named values (app/estimator/specs.py require_choice)
        "choice": "{name} must be one of {allowed}",
    },
    "zh": {
        "model_dim_positive": "{name} 必须是正整数，收到 {value}。",
        "model_dim_absurd": "{name}={value} 不合理（最多 {most}）。",
        "model_heads_divide": "未给出 head_dim 时，hidden（{hidden}）必须能被 heads（{heads}）整除。",
        "model_head_dim_positive": "head_dim 必须为正数，收到 {head_dim}。",
        "model_kv_heads_divide": "kv_heads（{kv_heads}）必须整除 heads（{heads}）"
        "（1 为 MQA，等于 heads 为 MHA，其余为 GQA）。",
        "model_moe_negative": "MoE 的各项数量不能为负。",
        "model_experts_per_token": "experts_per_token 必须在 1 到 experts（{experts}）之间，收到 {experts_per_token}。",
        "model_moe_layers": "moe_layers（{moe_layers}）不能超过 layers（{layers}）。",
        "model_expert_ffn": "expert_ffn 必须在 1..{most} 之间。",
        "model_params_positive": "params 必须是正数，收到 {params}。",
        "model_params_mismatch": "params={params:,.0f} 与架构不符：该架构恰有 {exact:,} 个参数（{relative:+.1%}）；"
        "请修正架构或不填 params。",
        "model_tied_embeddings": "tied_embeddings 必须为 true 或 false。",
        "model_too_large": "该架构有 {total:,.0f} 个参数；最多支持 {most:,.0f} 个。",
        "model_params_finite": "params 必须是有限数，收到 {params}。",
        "model_params_range": "params={params:,.0f} 超出支持范围 {least:,.0f} 至 {most:,.0f}。",
        "hf_config_missing": "model_type 为 {model_type} 的 hf_config 缺少必需的键：{missing}。",
        "hf_config_count": "hf_config.{key} 必须是 {least} 到 {most} 之间的整数，收到 {value}。",
        "hf_config_number": "hf_config.{key} 必须是绝对值不超过 {most} 的有限数，收到 {value}。",
        "hf_config_mlp_only_layers": "hf_config.mlp_only_layers 必须是层序号的列表。",
        "hf_config_object": "hf_config 必须是 JSON 对象（config.json 的内容）。",
        "hf_config_model_type": "不支持的 hf_config model_type {model_type}；支持：{supported}。",
        "hf_config_malformed": "hf_config 中有格式错误的值：{detail}。",
        "preset_unknown_close": "未知的模型预设 {preset}；最接近的：{close}。",
        "preset_unknown": "未知的模型预设 {preset}；可选：{known}。",
        "variant_unknown": "{preset} 没有 {variant} 版本（可选：{allowed}）；请用 model.hf_id 指定其他仓库",
        "variant_single": "{preset} 没有 {variant} 版本（它只发布一个仓库）；请用 model.hf_id 指定其他仓库",
        "gpu_unknown_close": "未知的 GPU 型号 {gpu}。是否指 {close}？可选：{allowed}。",
        "gpu_unknown": "未知的 GPU 型号 {gpu}。可选：{allowed}。",
        "fabric_usual_unknown": "{gpu} 没有已知的常用网络：请给出 hardware.inter_node_gbps 或 inter_node_fabric",
        "server_rate_unknown": "目录未写明 {server} 的网络速率：请给出 hardware.inter_node_gbps",
        "intra_link_unknown": "未知的节点内互联 {link}；可选：{known}",
        "fabric_unknown": "未知的网络 {fabric}；可选：{known}",
        "multi_node_rate": "多节点组需要 hardware.inter_node_gbps",
        "choice": "{name} 必须是以下之一：{allowed}",
    },
}


def render(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """The text of `code` in `lang` ("en" or "zh"), its lists joined with the language's separator."""
    sep = LIST_SEPARATORS[lang]
    values = {k: sep.join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()}
    return ESTIMATOR_ERRORS[lang][code].format(**values)
