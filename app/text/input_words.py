"""Words of a refused input, in English and Simplified Chinese (re-exported by app/text/messages.py).

PATTERNS: what a pattern-constrained string allows: a 422 on such a field (pydantic's `string_pattern_mismatch`)
says this instead of the regular expression. Keyed by the pattern exactly as the schema declares it (pydantic's
`ctx.pattern`, the OpenAPI document's `pattern`); tests/http/test_errors.py checks every pattern of the OpenAPI
document is worded here in both languages. Rendered by app/text/field_words.py.

BODY_REFUSALS: a request body refused before its fields are read (app/common/jsonguard.py), by the code its 422 carries
as `errors[].type`, with `errors[].params`.
"""

from __future__ import annotations

PATTERNS: dict[str, dict[str, str]] = {
    "en": {
        # app/admin/schemas.py Slug: a SKU, GPU type, region or organisation id
        r"^[a-z0-9][a-z0-9-]{0,63}$": "an id of lowercase letters, digits and hyphens, starting with a letter or "
        "digit, at most 64 characters (such as h100-80g-sxm)",
        # app/admin/schemas.py LinkSlug: an add-on code, a link or fabric kind
        r"^[a-z0-9][a-z0-9-]{0,31}$": "an id of lowercase letters, digits and hyphens, starting with a letter or "
        "digit, at most 32 characters (such as infiniband-400g)",
        # app/admin/schemas.py Percent
        r"^\d{1,2}(\.\d{1,2})?$": 'a percentage string from 0 to 90 with at most two decimals, such as "15" or "12.5"',
        # app/admin/schemas.py Amount
        r"^\d{1,12}(\.\d{1,4})?$": 'a positive decimal string of at most 12 digits and 4 decimals, such as "2800.00"',
        # app/catalog/schemas.py MoneyStr (answers only)
        r"^-?\d+(\.\d+)?$": 'a decimal string such as "2240.00"',
        # app/common/schemas.py Currency
        r"^[A-Za-z]{3}$": "a three-letter ISO 4217 currency code such as CNY or USD",
        # app/api/quotes.py Idempotency-Key
        r"^[\x21-\x7e]+$": "printable ASCII characters without spaces",
    },
    "zh": {
        r"^[a-z0-9][a-z0-9-]{0,63}$": "由小写字母、数字和连字符组成、以字母或数字开头、"
        "最多 64 个字符的标识（如 h100-80g-sxm）",
        r"^[a-z0-9][a-z0-9-]{0,31}$": "由小写字母、数字和连字符组成、以字母或数字开头、"
        "最多 32 个字符的标识（如 infiniband-400g）",
        r"^\d{1,2}(\.\d{1,2})?$": '0 到 90 之间、最多两位小数的百分比字符串，如 "15" 或 "12.5"',
        r"^\d{1,12}(\.\d{1,4})?$": '最多 12 位整数和 4 位小数的正数字符串，如 "2800.00"',
        r"^-?\d+(\.\d+)?$": '十进制数字符串，如 "2240.00"',
        r"^[A-Za-z]{3}$": "三个字母的 ISO 4217 货币代码，如 CNY 或 USD",
        r"^[\x21-\x7e]+$": "不含空格的可打印 ASCII 字符",
    },
}

# How a pattern's words read as the message of a 422, in each language.
SHOULD_BE: dict[str, str] = {"en": "Input should be {allowed}", "zh": "应为{allowed}"}

BODY_REFUSALS: dict[str, dict[str, str]] = {
    "en": {
        "duplicate_key": "the key {key!r} appears twice in one object: send each key once (a JSON parser keeps only "
        "one of them, silently)",
    },
    "zh": {
        "duplicate_key": "键 {key!r} 在同一对象中出现了两次：每个键只能发送一次（JSON 解析器会静默地只保留其中一个）",
    },
}
