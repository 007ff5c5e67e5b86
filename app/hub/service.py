"""A model named by its Hugging Face id (`model.hf_id`, e.g. Qwen/Qwen2.5-7B-Instruct): its config.json
read from the Hub once, kept in the database, and put in the request as if it had been pasted.

    {HF_ENDPOINT}/{hf_id}/resolve/main/config.json      (the URL huggingface_hub's hf_hub_download reads)

What can go wrong, and what the caller gets (every error names the field):

    the Hub is unreachable, too slow (HF_TIMEOUT_S) or busy (429)  503 with Retry-After
    HF_MAX_FETCHES fetches (or one of this id) already waiting      503 with Retry-After (HF_TIMEOUT_S)
    no such model, or no config.json in it                          422
    a gated or private model (401/403)                              422: needs HF_TOKEN with access
    a Hub error (5xx), a body over MAX_BODY_BYTES, not JSON          502
    a config the estimator cannot size (not a decoder LLM)           422 with the parser's reason

No database transaction stays open while the Hub is asked: the cache is read, the transaction ended (its
connection back in the pool), the Hub asked, and the config kept in a short transaction of its own. So
`with_hub_config` runs before the route writes anything.

A fetched config passes the same bounds as a pasted one: the size of a request body (MAX_BODY_BYTES),
the JSON bounds of app.jsonguard, then the estimator's own checks (app.estimator.models).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import httpx
from sqlalchemy.orm import Session

from app import messages
from app.errors import AppError, BadGateway, InvalidInput, ServiceUnavailable
from app.estimator.models import model_from_hf_config
from app.estimator.specs import EstimatorError
from app.hub import repository
from app.jsonguard import Refusal, check_body
from app.planner.schemas import WorkloadIn
from app.settings import Settings

REVISION = "main"
FIELD = "model.hf_id"
HUB_RETRY_AFTER_S = "30"
W = TypeVar("W", bound=WorkloadIn)
HubCode = Literal[
    "hub_unreachable",
    "hub_timeout",
    "hub_rate_limited",
    "hub_busy",
    "hub_gated",
    "hub_gated_token",
    "hub_no_config",
    "hub_not_found",
    "hub_redirects",
    "hub_status",
    "hub_too_large",
    "hub_not_json",
    "hub_json_bounds",
    "hub_not_object",
    "hub_not_sizeable",
]


def with_hub_config(session: Session, request: W, *, settings: Settings, field: str = FIELD) -> W:
    """The request with `model.hf_config` filled from the Hub when it names a model by `hf_id` alone."""
    model = request.model
    if model.hf_id is None or model.hf_config is not None:
        return request
    config = hub_config(session, model.hf_id, settings=settings, field=field)
    return request.model_copy(update={"model": model.model_copy(update={"hf_config": config})})


def hub_config(session: Session, hf_id: str, *, settings: Settings, field: str = FIELD) -> dict[str, Any]:
    """config.json of `hf_id` at REVISION: from the database, else from the Hub (then kept)."""
    text = repository.get_config(session, hf_id, REVISION)
    if text is None:
        session.commit()  # end the read: no connection or transaction is held while the Hub is waited on
        with _fetching(hf_id, settings=settings, field=field):
            raw = fetch_config(hf_id, settings=settings, field=field)
        config = _parsed(raw, hf_id, field)
        repository.keep_config(session, hf_id, REVISION, raw.decode("utf-8"))
        session.commit()
    else:
        config = json.loads(text)
    _check_sizeable(config, hf_id, field)
    return config


class _Fetches:
    """The Hub fetches waiting in this process: at most `limit` at once, and one per id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids: set[str] = set()


_FETCHES = _Fetches()


@contextmanager
def _fetching(hf_id: str, *, settings: Settings, field: str) -> Iterator[None]:
    """A place among the HF_MAX_FETCHES fetches of this process, else 503 at once (a thread that waited
    here would be a thread taken from everyone else by a slow Hub)."""
    with _FETCHES.lock:
        busy = hf_id in _FETCHES.ids or len(_FETCHES.ids) >= settings.hf_max_fetches
        if not busy:
            _FETCHES.ids.add(hf_id)
    if busy:
        seconds = str(math.ceil(settings.hf_timeout_s))  # the longest a fetch in flight can take
        detail, errors = _errors(field, "hub_busy", {"seconds": seconds})
        raise ServiceUnavailable(detail, errors=errors, headers={"Retry-After": seconds})
    try:
        yield
    finally:
        with _FETCHES.lock:
            _FETCHES.ids.discard(hf_id)


def fetch_config(hf_id: str, *, settings: Settings, field: str = FIELD) -> bytes:
    """The bytes of config.json as the Hub serves them, at most MAX_BODY_BYTES, within HF_TIMEOUT_S."""
    url = f"{settings.hf_endpoint}/{hf_id}/resolve/{REVISION}/config.json"
    token = settings.hf_token.get_secret_value() if settings.hf_token else ""
    headers = {"Accept": "application/json", "User-Agent": "gpu-sizer"}
    if token:
        headers["Authorization"] = f"Bearer {token}"  # httpx drops it on a redirect to another host
    deadline = time.monotonic() + settings.hf_timeout_s
    try:
        with (
            httpx.Client(timeout=settings.hf_timeout_s, follow_redirects=True, max_redirects=5) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            _check_status(response, hf_id, field, has_token=bool(token))
            return _capped_body(response, settings.max_body_bytes, deadline, hf_id, field)
    except httpx.TimeoutException as exc:
        raise _unavailable(field, "hub_timeout", seconds=settings.hf_timeout_s) from exc
    except httpx.TooManyRedirects as exc:
        raise _bad_gateway(field, "hub_redirects", hf_id=hf_id) from exc
    except httpx.TransportError as exc:
        raise _unavailable(field, "hub_unreachable", endpoint=settings.hf_endpoint, error=type(exc).__name__) from exc


def _check_status(response: httpx.Response, hf_id: str, field: str, *, has_token: bool) -> None:
    if response.status_code == 200:
        return
    # The Hub names the reason in X-Error-Code (RepoNotFound, GatedRepo, EntryNotFound, RevisionNotFound);
    # it answers 401 for a repository it will not show an anonymous caller, whether private or absent.
    code = response.headers.get("x-error-code", "")
    status = response.status_code
    if code == "GatedRepo" or (status in (401, 403) and code != "RepoNotFound"):
        raise _invalid(field, "hub_gated_token" if has_token else "hub_gated", hf_id=hf_id)
    if code == "EntryNotFound":
        raise _invalid(field, "hub_no_config", hf_id=hf_id)
    if status in (401, 404) or code in ("RepoNotFound", "RevisionNotFound"):
        raise _invalid(field, "hub_not_found", hf_id=hf_id)
    if status == 429:
        raise _unavailable(field, "hub_rate_limited")
    raise _bad_gateway(field, "hub_status", hf_id=hf_id, status=status)


def _capped_body(response: httpx.Response, limit: int, deadline: float, hf_id: str, field: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _bad_gateway(field, "hub_too_large", hf_id=hf_id, limit=limit)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise _bad_gateway(field, "hub_too_large", hf_id=hf_id, limit=limit)
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("config.json arrived too slowly")
        chunks.append(chunk)
    return b"".join(chunks)


def _parsed(raw: bytes, hf_id: str, field: str) -> dict[str, Any]:
    try:
        check_body(raw)
        config = json.loads(raw.decode("utf-8"))
    except Refusal as refusal:
        raise _bad_gateway(
            field, "hub_json_bounds", hf_id=hf_id, where=refusal.field, problem=refusal.message
        ) from refusal
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad_gateway(field, "hub_not_json", hf_id=hf_id) from exc
    if not isinstance(config, dict):
        raise _invalid(field, "hub_not_object", hf_id=hf_id)
    return config


def _check_sizeable(config: dict[str, Any], hf_id: str, field: str) -> None:
    """Refuse now, naming the id, a config the estimator cannot size (an encoder, a vision model…)."""
    try:
        model_from_hf_config(config, name=hf_id)
    except EstimatorError as exc:
        raise _invalid(field, "hub_not_sizeable", hf_id=hf_id, reason=str(exc)) from exc


def _errors(field: str, code: HubCode, params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The English detail, and the error naming the field with its code and parameters (the wizard words
    them in the page's language: app.messages.HUB)."""
    message = messages.hub(code, params)
    return f"{field}: {message}", [{"field": field, "message": message, "type": code, "params": params}]


def _invalid(field: str, code: HubCode, **params: Any) -> AppError:
    detail, errors = _errors(field, code, params)
    return InvalidInput(detail, errors=errors)


def _bad_gateway(field: str, code: HubCode, **params: Any) -> AppError:
    detail, errors = _errors(field, code, params)
    return BadGateway(detail, errors=errors)


def _unavailable(field: str, code: HubCode, **params: Any) -> AppError:
    detail, errors = _errors(field, code, params)
    return ServiceUnavailable(detail, errors=errors, headers={"Retry-After": HUB_RETRY_AFTER_S})
