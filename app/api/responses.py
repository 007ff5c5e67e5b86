"""Error responses the JSON routers document beside the ones app.http.openapi adds to every operation."""

from __future__ import annotations

from typing import Any

PROBLEM: dict[str, Any] = {"content": {"application/problem+json": {}}}
# Routes that read a model named by `model.hf_id` from the Hugging Face Hub (app.hub); its 503 (the Hub
# unreachable or too slow) is the one every operation documents.
HUB: dict[int | str, dict[str, Any]] = {
    502: {"description": "model.hf_id: the Hugging Face Hub answered wrongly (an error, or no JSON config)", **PROBLEM}
}
# Routes that take an API key (`Authorization: Bearer gsk_…`, app.apikeys); the same 401 whether the key is
# missing, unknown, revoked or expired, so an answer never tells whether a key exists.
KEY_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "An `Authorization` header that is not a live API key", **PROBLEM},
    403: {"description": "The API key lacks the scope this route needs", **PROBLEM},
}
