"""Why the domain refuses a request outside the estimator's and the quote checks' own catalogs, in English and
Chinese: a thing not found, a key without the scope, a search parameter given twice, a webhook URL, a PDF that
cannot be rendered now. One text per code, its figures as {fields}; `app.common.errors.refused(...)` raises the
code with its parameters, the English as the problem's `detail`, and app.common.errors words it in the request's
language (app/text/messages.py `refusal`). tests/test_messages.py checks both languages carry the same codes and
fields, and that every code a `refused(...)` call in app/ names is worded here.
"""

from __future__ import annotations

REFUSALS: dict[str, dict[str, str]] = {
    "en": {
        # things a path names that are not there (404)
        "quote_unknown": "no quote with this id",
        "api_key_unknown": "no API key {key_id}",
        "webhook_endpoint_unknown": "no webhook endpoint {endpoint_id}",
        "webhook_delivery_unknown": "no webhook delivery {delivery_id}",
        # API keys (app/apikeys/service.py)
        "key_not_valid": "a valid API key is required: Authorization: Bearer <key>",
        "key_scope_missing": "this API key does not have the scope {scope!r} this request needs",
        "expires_in_past": "must be in the future",
        # a rental's first day (app/capacity/service.py)
        "start_outside_window": "must be from today ({today} in the catalog's timezone) to {latest} (a year ahead)",
        # a SKU named by /estimate's hardware.sku (app/planner/workload.py)
        "sku_card_count": "{sku} is rented with {card_counts} cards, not {per_node}",
        "sku_cards_one_server": "{sku} is rented by the card, {most} at most in one server, not over {nodes} "
        "servers: quote a server SKU for more",
        # quotes (app/quotes/)
        "quotes_per_minute": "This address has issued {limit} quotes in the last minute (QUOTES_PER_MINUTE); try "
        "again in {seconds} s.",
        "idempotency_key_reused": "Idempotency-Key {key!r} was already used with a different request body; send the "
        "original body to get that quote again, or use a new key for a new quote",
        "query_repeated": "given more than once; send it once (one value per search)",
        "query_organisation": "admins only: an API key searches its own organisation's quotes; leave it out",
        "cursor_invalid": "not a cursor this API returned; pass `next_cursor` from the previous page as it is",
        "pdf_busy": "Too many PDFs are being rendered; try again shortly, or use the printable page.",
        "pdf_slow": "The PDF took longer than {seconds:g} s to render; try again later, or use the printable page.",
        "pdf_unavailable": "PDF rendering is unavailable on this server ({reason}); run `make system-deps`, or use "
        "the printable page",
        # a webhook's URL (app/webhooks/addresses.py)
        "url_characters": "the URL must not contain spaces or control characters",
        "url_invalid": "the URL is not a valid http(s) URL",
        "url_scheme": "the URL must be http:// or https:// with a host name",
        "url_credentials": "the URL must not carry a user name or password",
        "url_port": "the URL's port is not a number from 1 to 65535",
        "host_unresolved": "the host name does not resolve",
        "host_private": "the host resolves to a private, loopback, link-local or otherwise non-public address "
        "(WEBHOOKS_ALLOW_PRIVATE=true allows it)",
        # a request model's own checks (app/planner/*schemas.py, app/quotes/schemas.py): pydantic's 422, by code
        "loss_compiled_needs_compile": "loss=compiled needs compile: true (the loss is compiled with the model)",
        "hf_id_pattern": "hf_id must be a Hugging Face model id: [namespace/]name of letters, digits, '-', '_' and "
        "'.', e.g. Qwen/Qwen2.5-7B-Instruct",
        "model_one_source": "give exactly one of preset, hf_id (or hf_config) or an explicit architecture (layers, "
        "hidden, …)",
        "model_params_beside_source": "params sizes a model by its count alone or checks an explicit architecture; a "
        "preset, hf_id or hf_config states its own: leave params out",
        "model_variant_without_preset": "variant picks one of a preset's repositories; with hf_id or hf_config name "
        "the repository itself",
        "model_undescribed": "describe the model: preset, hf_id, hf_config, params, or layers/hidden/heads/ffn/vocab",
        "model_architecture_incomplete": "an explicit architecture needs {missing}",
        "lora_targets_unknown": "unknown LoRA targets {unknown}; allowed: {allowed} or 'all-linear'",
        "zero_stage_range": "zero_stage must be 0, 1, 2 or 3 (or an FSDP name: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD)",
        "attention_contradicts": "attention={attention} contradicts flash_attention={flash_attention}: give one of "
        "them (eager is flash_attention false; flash and sdpa are true)",
        "loss_contradicts": "loss={loss} contradicts chunked_loss={chunked_loss}: give one of them (standard, "
        "compiled and no_upcast are chunked_loss false; chunked and fused are true)",
        "compile_contradicts": "compile and compiled say different things: give one of them",
        "dp_shard_divides": "dp_shard={dp_shard} must divide dp={dp}; allowed dp_shard: {allowed}",
        "hardware_one_of": "give exactly one of hardware.gpu (a GPU type id) or hardware.sku (a SKU id)",
        "serving_fields_task": 'weights and serving apply to task "serving" only',
        "draft_model_method": "serving.speculative.draft_model names the draft model when method is draft_model, "
        "and only then",
        "serving_one_load": "give serving.concurrency or serving.requests_per_s, not both",
        "serving_one_length": "serving.max_model_len and max_request_tokens name the same length: give one",
        "p95_below_mean": "serving.{name}_p95 must be at least {name} ({mean}): a p95 below the mean",
        "p95_above_markov": "serving.{name}_p95 must be at most {most} (20 × {name} {mean}): if 5 % of requests were "
        "longer, the mean would be larger",
        "pool_gpus": "gpus must be tp × replicas = {expected}, got {gpus}",
        "pools_or_degrees": "pools replace the colocated degrees of a disaggregated plan: give pools or {stated}",
        "hours_range": "both ends must be more than 0 and at most 10,000,000 hours",
        "workload_too_large": "the workload is larger than {limit} bytes as JSON",
        "workload_too_deep": "the workload is nested deeper than {limit} levels",
    },
    "zh": {
        "quote_unknown": "没有这个编号的报价",
        "api_key_unknown": "没有编号为 {key_id} 的 API 密钥",
        "webhook_endpoint_unknown": "没有编号为 {endpoint_id} 的 Webhook 端点",
        "webhook_delivery_unknown": "没有编号为 {delivery_id} 的 Webhook 投递",
        "key_not_valid": "需要有效的 API 密钥：Authorization: Bearer <key>",
        "key_scope_missing": "此 API 密钥没有本请求所需的权限范围 {scope!r}",
        "expires_in_past": "必须是将来的时间",
        "start_outside_window": "须在今天（目录时区的 {today}）到 {latest}（一年之内）之间",
        "sku_card_count": "{sku} 按 {card_counts} 张卡出租，不能是 {per_node} 张",
        "sku_cards_one_server": "{sku} 按卡出租，一台服务器内最多 {most} 张，不能跨 {nodes} 台服务器："
        "需要更多请报价整机 SKU",
        "quotes_per_minute": "该地址在过去一分钟内已生成 {limit} 份报价（QUOTES_PER_MINUTE）；"
        "请在 {seconds} 秒后重试。",
        "idempotency_key_reused": "Idempotency-Key {key!r} 已用于另一个不同的请求体；发送原来的请求体可再次取得该报价，"
        "新的报价请使用新的键",
        "query_repeated": "给出了不止一次；每次搜索只发送一个值",
        "query_organisation": "仅限管理员：API 密钥只能搜索其所属组织的报价；请去掉此参数",
        "cursor_invalid": "不是本 API 返回的游标；请原样传入上一页的 `next_cursor`",
        "pdf_busy": "正在生成的 PDF 过多；请稍后重试，或使用可打印页面。",
        "pdf_slow": "PDF 生成超过 {seconds:g} 秒；请稍后重试，或使用可打印页面。",
        "pdf_unavailable": "本服务器无法生成 PDF（{reason}）；请运行 `make system-deps`，或使用可打印页面",
        "url_characters": "URL 不能包含空格或控制字符",
        "url_invalid": "URL 不是有效的 http(s) URL",
        "url_scheme": "URL 必须以 http:// 或 https:// 开头并带有主机名",
        "url_credentials": "URL 不能包含用户名或密码",
        "url_port": "URL 的端口不是 1 到 65535 之间的数字",
        "host_unresolved": "主机名无法解析",
        "host_private": "主机名解析到私有、回环、链路本地或其他非公网地址（WEBHOOKS_ALLOW_PRIVATE=true 时允许）",
        "loss_compiled_needs_compile": "loss=compiled 需要 compile: true（损失函数随模型一起编译）",
        "hf_id_pattern": "hf_id 必须是 Hugging Face 模型 ID：[命名空间/]名称，由字母、数字、'-'、'_' 和 '.' 组成，"
        "例如 Qwen/Qwen2.5-7B-Instruct",
        "model_one_source": "preset、hf_id（或 hf_config）与显式架构（layers、hidden 等）只能给出其中一种",
        "model_params_beside_source": "params 只用于仅按参数量估算模型或校验显式架构；preset、hf_id 或 hf_config "
        "已给出自己的参数量：请去掉 params",
        "model_variant_without_preset": "variant 用于选择预设的某个仓库；使用 hf_id 或 hf_config 时请直接指定仓库",
        "model_undescribed": "请描述模型：preset、hf_id、hf_config、params，或 layers/hidden/heads/ffn/vocab",
        "model_architecture_incomplete": "显式架构还需要 {missing}",
        "lora_targets_unknown": "未知的 LoRA 目标 {unknown}；可选：{allowed} 或 'all-linear'",
        "zero_stage_range": "zero_stage 必须是 0、1、2 或 3（或 FSDP 名称：NO_SHARD、SHARD_GRAD_OP、FULL_SHARD）",
        "attention_contradicts": "attention={attention} 与 flash_attention={flash_attention} 矛盾：只给出其中一个"
        "（eager 即 flash_attention 为 false；flash 与 sdpa 即为 true）",
        "loss_contradicts": "loss={loss} 与 chunked_loss={chunked_loss} 矛盾：只给出其中一个（standard、compiled 与 "
        "no_upcast 即 chunked_loss 为 false；chunked 与 fused 即为 true）",
        "compile_contradicts": "compile 与 compiled 不一致：只给出其中一个",
        "dp_shard_divides": "dp_shard={dp_shard} 必须整除 dp={dp}；可选的 dp_shard：{allowed}",
        "hardware_one_of": "hardware.gpu（GPU 类型 ID）与 hardware.sku（SKU ID）须给出且只能给出一个",
        "serving_fields_task": 'weights 与 serving 仅适用于 task "serving"',
        "draft_model_method": "仅当 method 为 draft_model 时才用 serving.speculative.draft_model 指定草稿模型",
        "serving_one_load": "serving.concurrency 与 serving.requests_per_s 只能给出一个",
        "serving_one_length": "serving.max_model_len 与 max_request_tokens 表示同一长度：只给出一个",
        "p95_below_mean": "serving.{name}_p95 不能小于 {name}（{mean}）：p95 低于均值",
        "p95_above_markov": "serving.{name}_p95 不能超过 {most}（{name} {mean} 的 20 倍）："
        "若 5% 的请求更长，均值就会更大",
        "pool_gpus": "gpus 必须等于 tp × replicas = {expected}，实际为 {gpus}",
        "pools_or_degrees": "分离式方案以 pools 取代共置的并行度：只给出 pools 或 {stated}",
        "hours_range": "两端都必须大于 0 且不超过 10,000,000 小时",
        "workload_too_large": "workload 的 JSON 超过 {limit} 字节",
        "workload_too_deep": "workload 的嵌套超过 {limit} 层",
    },
}
