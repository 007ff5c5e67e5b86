"""A model named by its Hugging Face id (`model.hf_id`, e.g. Qwen/Qwen2.5-7B-Instruct): its config.json
read from the Hub once, kept in the database, and put in the request as if it had been pasted.

    {HF_ENDPOINT}/{hf_id}/resolve/main/config.json      (the URL huggingface_hub's hf_hub_download reads)

What can go wrong, and what the caller gets (every error names the field):

    the Hub is unreachable, too slow (HF_TIMEOUT_S) or busy (429)  503 with Retry-After
    HF_MAX_FETCHES fetches (or one of this id) already waiting      503 with Retry-After (HF_TIMEOUT_S)
    no such model, or no config.json in it                          422
    a gated or private model (401/403)                              422: needs HF_TOKEN with access
    a Hub error (5xx), a body over MAX_BODY_BYTES, not JSON          502
    a config the estimator cannot size (not a decoder LLM), or with  422 with the parser's reason
    a number no model has (a 400-digit integer, 1e308)
    this client asked for HF_NEW_IDS_PER_MINUTE new ids already     429 with Retry-After

No database transaction stays open while the Hub is asked: the cache is read, the transaction ended (its
connection back in the pool), the Hub asked, and the config kept in a short transaction of its own. So
`with_hub_config` runs before the route writes anything.

A fetched config passes the same bounds as a pasted one: the size of a request body (MAX_BODY_BYTES),
the JSON bounds of app.common.jsonguard, then the estimator's own checks (app.estimator.models).

The cache is bounded whatever clients send (app.hub.models): keyed by the id case-folded, it keeps only
configs that pass those checks (compact, at most HF_CONFIG_MAX_BYTES), remembers refusals for
HF_MISS_TTL_S, and stays under HF_CACHE_MAX_BYTES by evicting the rows used least recently.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Literal, TypeVar, get_args

import httpx
from sqlalchemy.orm import Session

from app.common.errors import AppError, BadGateway, InvalidInput, ServiceUnavailable, TooManyRequests
from app.common.jsonguard import Refusal, check_body
from app.common.settings import Settings
from app.common.tls import client_context
from app.db.engine import CLIENT
from app.estimator.models import model_from_hf_config
from app.estimator.specs import EstimatorError
from app.hub import repository
from app.planner.schemas import WorkloadIn
from app.ratelimit.service import RateLimiter
from app.text import messages

REVISION = "main"
FIELD = "model.hf_id"
HUB_RETRY_AFTER_S = "30"
MISS_MAX_CHARS = 2000  # a remembered refusal's code and parameters (the estimator's reason is one sentence)
W = TypeVar("W", bound=WorkloadIn)
# Refusals that stay true for a while, so they are remembered (HF_MISS_TTL_S); an unreachable, slow,
# busy or failing Hub is not remembered: the next request asks again.
RememberedCode = Literal[
    "hub_gated",
    "hub_gated_token",
    "hub_no_config",
    "hub_not_found",
    "hub_too_large",
    "hub_not_json",
    "hub_json_bounds",
    "hub_not_object",
    "hub_not_sizeable",
    "hub_number_absurd",
]
HubCode = Literal[
    "hub_unreachable",
    "hub_timeout",
    "hub_rate_limited",
    "hub_busy",
    "hub_redirects",
    "hub_status",
    "hub_new_ids",
    RememberedCode,
]


def with_hub_config(session: Session, request: W, *, settings: Settings, field: str = FIELD) -> W:
    """The request with `model.hf_config` filled from the Hub when it names a model by `hf_id` alone."""
    model = request.model
    if model.hf_id is None or model.hf_config is not None:
        return request
    config = hub_config(session, model.hf_id, settings=settings, field=field)
    return request.model_copy(update={"model": model.model_copy(update={"hf_config": config})})


def hub_config(session: Session, hf_id: str, *, settings: Settings, field: str = FIELD) -> dict[str, Any]:
    """config.json of `hf_id` at REVISION: from the database, else from the Hub (then kept when sizeable).

    The cache key is the id case-folded (the Hub matches ids without regard to case, so one repository
    must not give a row per spelling). A refusal the Hub or the estimator gave is remembered for
    HF_MISS_TTL_S and answered again without asking the Hub; a stored row that no longer passes the
    checks (written by an older release, edited by hand) is deleted and read as a miss."""
    key = cache_key(hf_id)
    now = datetime.now(UTC)
    row = repository.get_row(session, key, REVISION)
    if row is not None:
        if row.config_json is None:
            if row.expires_at is not None and _aware(row.expires_at) > now:
                remembered = _remembered(row.miss or "", hf_id, field, has_token=settings.hf_token is not None)
                if remembered is not None:
                    raise remembered
        else:
            try:
                config = _sizeable(json.loads(row.config_json), hf_id, field)
            except (AppError, ValueError):
                config = None
            if config is not None:
                repository.touch(session, row, now)
                return config
        repository.forget(session, row.id)
    session.commit()  # end the read: no connection or transaction is held while the Hub is waited on
    try:
        with _fetching(hf_id, settings=settings, field=field):
            _count_new_id(session, settings, field)  # a request that got no fetch place spent none
            raw = fetch_config(hf_id, settings=settings, field=field)
        config = _sizeable(_parsed(raw, hf_id, field), hf_id, field)
    except AppError as refusal:
        _remember(session, key, refusal, settings)
        raise
    text = json.dumps(config, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode("utf-8")) <= settings.hf_config_max_bytes:
        repository.keep(
            session,
            hf_key=key,
            revision=REVISION,
            now=now,
            config_json=text,
            max_total_bytes=settings.hf_cache_max_bytes,
        )
        session.commit()
    return config


def cache_key(hf_id: str) -> str:
    """The id as the cache knows it: Hub ids are case-insensitive (huggingface_hub issues 1453, 2090)."""
    return hf_id.casefold()


REMEMBERED: frozenset[HubCode] = frozenset(get_args(RememberedCode))  # the refusals remembered (RememberedCode)


def _remember(session: Session, key: str, refusal: AppError, settings: Settings) -> None:
    error = (refusal.errors or [{}])[0]
    code = error.get("type")
    if code not in REMEMBERED or settings.hf_miss_ttl_s == 0:
        return
    now = datetime.now(UTC)
    params, token = error.get("params", {}), settings.hf_token is not None
    # default=str: an estimator's figure JSON cannot hold (none today) is kept as its text, never a 500
    miss = json.dumps({"code": code, "status": refusal.status, "params": params, "token": token}, default=str)
    repository.keep(
        session,
        hf_key=key,
        revision=REVISION,
        now=now,
        miss=miss[:MISS_MAX_CHARS],
        expires_at=now + timedelta(seconds=settings.hf_miss_ttl_s),
        max_total_bytes=settings.hf_cache_max_bytes,
    )
    session.commit()


def _remembered(miss: str, hf_id: str, field: str, *, has_token: bool) -> AppError | None:
    """The refusal a miss row holds, worded for the id as this request spells it; None when it was
    answered with HF_TOKEN set and now it is not, or the other way round (a gated model may open)."""
    try:
        stored = json.loads(miss)
        if stored.get("token", False) != has_token:
            return None
        code, params = stored["code"], dict(stored["params"])
        if "hf_id" in params:
            params["hf_id"] = hf_id
        make = _bad_gateway if stored["status"] == BadGateway.status else _invalid
        return make(field, code, **params)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # not a miss this release wrote: read as no row


def _count_new_id(session: Session, settings: Settings, field: str) -> None:
    """One Hub request for an id not in the cache, counted against the client's HF_NEW_IDS_PER_MINUTE."""
    if settings.hf_new_ids_per_minute == 0:
        return
    client = str(session.info.get(CLIENT, "unknown"))
    limiter = _new_ids_limiter(settings.hf_new_ids_per_minute)
    decision = limiter.hit(session.get_bind().engine, f"hub-new-id|{client}")
    if not decision.allowed:
        seconds = str(decision.retry_after_s)
        params = {"limit": settings.hf_new_ids_per_minute, "seconds": seconds}
        detail, errors = _errors(field, "hub_new_ids", params)
        raise TooManyRequests(detail, errors=errors, headers={"Retry-After": seconds})


@cache
def _new_ids_limiter(per_minute: int) -> RateLimiter:
    return RateLimiter(limit=per_minute)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
            httpx.Client(
                timeout=settings.hf_timeout_s, follow_redirects=True, max_redirects=5, verify=client_context()
            ) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            _check_status(response, hf_id, field, has_token=bool(token))
            return _capped_body(response, settings.max_body_bytes, deadline, hf_id, field)
    except httpx.TimeoutException as exc:
        raise _unavailable(field, "hub_timeout", seconds=settings.hf_timeout_s) from exc
    except httpx.TooManyRedirects as exc:
        raise _bad_gateway(field, "hub_redirects", hf_id=hf_id) from exc
    except httpx.TransportError as exc:
        raise _unavailable(field, "hub_unreachable", error=type(exc).__name__) from exc


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


def _parsed(raw: bytes, hf_id: str, field: str) -> Any:
    try:
        check_body(raw)
        config = json.loads(raw.decode("utf-8"))
    except Refusal as refusal:
        raise _bad_gateway(
            field, "hub_json_bounds", hf_id=hf_id, where=refusal.field, problem=refusal.message
        ) from refusal
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad_gateway(field, "hub_not_json", hf_id=hf_id) from exc
    return config


def _sizeable(config: dict[str, Any], hf_id: str, field: str) -> dict[str, Any]:
    """The config, or refused now, naming the id, when the estimator cannot size it (an encoder, a vision
    model…) or it holds a number no model has (a 400-digit integer, a float past MAX_NUMBER: they would
    overflow in the estimator's arithmetic later in the request)."""
    if not isinstance(config, dict):
        raise _invalid(field, "hub_not_object", hf_id=hf_id)
    where = _absurd_number(config, "")
    if where is not None:
        bounds = {"most_integer": MAX_INTEGER, "most_number": MAX_NUMBER}
        raise _invalid(field, "hub_number_absurd", hf_id=hf_id, where=where, **bounds)
    try:
        model_from_hf_config(config, name=hf_id)
    except EstimatorError as exc:  # the estimator's code and figures, worded in each language (messages.hub)
        why = {"code": exc.code, "params": exc.params} if exc.code else {"message": str(exc)}
        raise _invalid(field, "hub_not_sizeable", hf_id=hf_id, reason=why) from exc
    except (ArithmeticError, ValueError, TypeError) as exc:  # a shape the estimator's own checks did not foresee
        raise _invalid(field, "hub_not_sizeable", hf_id=hf_id, reason=type(exc).__name__) from exc
    return config


# Bounds on every number of a Hub config: far above any real one (the largest counts are vocabularies
# of ~10^6, context lengths of ~10^7, rope_theta of ~10^9), and small enough that the estimator's
# products of a few of them stay finite floats and exact integers below 2^63.
MAX_INTEGER = 2**53
MAX_NUMBER = 1e15


def _absurd_number(value: Any, path: str) -> str | None:
    """The path of the first number out of bounds, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return path or "the config" if abs(value) > MAX_INTEGER else None
    if isinstance(value, float):
        return path or "the config" if not math.isfinite(value) or abs(value) > MAX_NUMBER else None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for name, item in items:
        found = _absurd_number(item, f"{path}.{name}" if path else str(name))
        if found is not None:
            return found
    return None


def _errors(field: str, code: HubCode, params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The English detail, and the error naming the field with its code and parameters (the wizard words
    them in the page's language: app.text.messages.HUB)."""
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
