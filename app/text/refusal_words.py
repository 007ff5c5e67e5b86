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
    },
}
