"""The words of a Hub model refusal, in English and Chinese (one catalog per language; app/text/messages.py renders
them)."""

from __future__ import annotations

# Why a model named by its Hugging Face id (`model.hf_id`) could not be read or sized (app/hub/service.py):
# the API's `errors[].type` is the code and `errors[].params` its parameters; the wizard words them here.
HUB: dict[str, dict[str, str]] = {
    "en": {
        # HF_ENDPOINT is not shown: it may name an internal mirror, or carry its credentials
        "hub_unreachable": "the model hub this server reads is unreachable: {error}",
        "hub_timeout": "the Hugging Face Hub did not answer within {seconds:g} s",
        "hub_rate_limited": "the Hugging Face Hub is rate-limiting this server; try again shortly",
        "hub_busy": "this server is already waiting on the Hugging Face Hub for other models; try again in {seconds} s",
        "hub_gated": "{hf_id} is gated or private on the Hugging Face Hub: set HF_TOKEN to a token with access "
        "(huggingface.co/{hf_id})",
        "hub_gated_token": "{hf_id} is gated or private on the Hugging Face Hub: HF_TOKEN's account has not been "
        "granted access (huggingface.co/{hf_id})",
        "hub_no_config": "{hf_id} has no config.json on the Hugging Face Hub; paste its config as model.hf_config",
        "hub_not_found": "no model {hf_id} on the Hugging Face Hub (a private one needs HF_TOKEN); ids look like "
        "Qwen/Qwen2.5-7B-Instruct",
        "hub_redirects": "the Hugging Face Hub redirected config.json of {hf_id} too many times",
        "hub_status": "the Hugging Face Hub answered {status} for config.json of {hf_id}",
        "hub_too_large": "config.json of {hf_id} is larger than {limit} bytes (MAX_BODY_BYTES); not a model config",
        "hub_not_json": "config.json of {hf_id} is not JSON",
        "hub_json_bounds": "config.json of {hf_id}: {where}: {problem}",
        "hub_not_object": "config.json of {hf_id} is not a JSON object, so not a model config",
        "hub_not_sizeable": "{hf_id} cannot be sized as a decoder language model: {reason}",
        "hub_number_absurd": "{hf_id} cannot be sized as a decoder language model: {where} is out of range (at most "
        "{most_integer} for an integer, {most_number:g} for a number)",
        "hub_new_ids": "this address has asked the Hugging Face Hub for {limit} models not sized here before in "
        "the last minute; try again in {seconds} s, or name a model already sized",
    },
    "zh": {
        "hub_unreachable": "无法连接本服务器读取的模型仓库：{error}",
        "hub_timeout": "Hugging Face Hub 在 {seconds:g} 秒内没有响应",
        "hub_rate_limited": "Hugging Face Hub 正在限制本服务器的请求频率，请稍后再试",
        "hub_busy": "本服务器正在等待 Hugging Face Hub 返回其他模型的配置；请 {seconds} 秒后再试",
        "hub_gated": "{hf_id} 在 Hugging Face Hub 上需申请访问或为私有模型：请将 HF_TOKEN 设为有权限的令牌"
        "（huggingface.co/{hf_id}）",
        "hub_gated_token": "{hf_id} 在 Hugging Face Hub 上需申请访问或为私有模型：HF_TOKEN 所属账号尚未获得访问权限"
        "（huggingface.co/{hf_id}）",
        "hub_no_config": "{hf_id} 在 Hugging Face Hub 上没有 config.json；请粘贴其配置（model.hf_config）",
        "hub_not_found": "Hugging Face Hub 上没有模型 {hf_id}（私有模型需要 HF_TOKEN）；ID 形如 "
        "Qwen/Qwen2.5-7B-Instruct",
        "hub_redirects": "Hugging Face Hub 对 {hf_id} 的 config.json 重定向次数过多",
        "hub_status": "Hugging Face Hub 对 {hf_id} 的 config.json 返回了 {status}",
        "hub_too_large": "{hf_id} 的 config.json 超过 {limit} 字节（MAX_BODY_BYTES），不是模型配置",
        "hub_not_json": "{hf_id} 的 config.json 不是 JSON",
        "hub_json_bounds": "{hf_id} 的 config.json：{where}：{problem}",
        "hub_not_object": "{hf_id} 的 config.json 不是 JSON 对象，因此不是模型配置",
        "hub_not_sizeable": "{hf_id} 无法按解码器语言模型估算：{reason}",
        "hub_number_absurd": "{hf_id} 无法按解码器语言模型估算：{where} 超出范围（整数至多 {most_integer}，数值至多 "
        "{most_number:g}）",
        "hub_new_ids": "此地址在过去一分钟内已向 Hugging Face Hub 查询了 {limit} 个此前未估算过的模型；"
        "请 {seconds} 秒后再试，或选择已估算过的模型",
    },
}
