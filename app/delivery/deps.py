"""Request-scoped dependencies and the unit of work that ends each request's transaction.

One unit of work per request: commit on success, roll back on error, in the thread that ran the
endpoint and as soon as it returns, so the connection goes back to the pool (and its row locks are
released) before the response is serialised. FastAPI ends a yield dependency only after serialising
the response, and for a synchronous route that serialisation waits for one of the WORKER_THREADS:
a transaction ended there held its locks and its connection while the other threads sat in routes
waiting on those very locks, and nothing was left to commit it. `UnitOfWorkRoute` (the route class of
every router) ends the sessions an endpoint receives; the dependency's own exit then finds nothing
left to commit, and closes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from anyio import CapacityLimiter, to_thread
from fastapi import Depends, Request, Security
from fastapi.security import HTTPBearer
from sqlalchemy.orm import Session

from app.apikeys import service as apikeys_service
from app.apikeys.service import Principal
from app.common.settings import Settings
from app.db.engine import CLIENT, LOCK_DEADLINE, SETTINGS
from app.delivery.bodies import CheckedBodyRoute
from app.estimator.vocabulary import ApiScope

REQUEST_SESSION = "request_session"  # marks (in Session.info) the sessions the unit of work ends


ARRIVED_AT = "arrived_at"  # request.state: time.monotonic() when the request arrived (app.http.observability)


def get_session(request: Request) -> Iterator[Session]:
    session: Session = request.app.state.sessionmaker()
    session.info[REQUEST_SESSION] = True
    session.info[CLIENT] = request.client.host if request.client else "unknown"
    session.info[SETTINGS] = request.app.state.settings
    arrived_at = getattr(request.state, ARRIVED_AT, None)
    lock_timeout_ms = request.app.state.settings.db_lock_timeout_ms
    if arrived_at is not None and lock_timeout_ms > 0:  # app.db.engine bounds the request's lock waits by it
        session.info[LOCK_DEADLINE] = arrived_at + lock_timeout_ms / 1000
    try:
        yield session
        session.commit()  # a no-op once the route has ended its unit of work
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings  # set by create_app (app.entry.main)
    return settings


SessionDep = Annotated[Session, Depends(get_session, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def end_unit_of_work(sessions: list[Session], *, ok: bool) -> None:
    """Commit (or roll back) each session; either way its connection goes back to the pool."""
    try:
        for session in sessions:
            session.commit() if ok else session.rollback()
    except BaseException:
        for session in sessions:
            session.rollback()
        raise


def _sessions(arguments: dict[str, Any]) -> list[Session]:
    return [value for value in arguments.values() if isinstance(value, Session) and value.info.get(REQUEST_SESSION)]


def unit_of_work(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """`endpoint` ending the transactions of the sessions it receives before it returns."""
    if getattr(endpoint, "__unit_of_work__", False):
        return endpoint
    if inspect.iscoroutinefunction(endpoint):

        @functools.wraps(endpoint)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            sessions = _sessions(kwargs)
            try:
                result = await endpoint(*args, **kwargs)
            except BaseException:
                await _off_the_loop(end_unit_of_work, sessions, ok=False)
                raise
            await _off_the_loop(end_unit_of_work, sessions, ok=True)
            return result

        run_async.__unit_of_work__ = True  # type: ignore[attr-defined]
        return run_async

    @functools.wraps(endpoint)
    def run(*args: Any, **kwargs: Any) -> Any:
        sessions = _sessions(kwargs)
        try:
            result = endpoint(*args, **kwargs)
        except BaseException:
            end_unit_of_work(sessions, ok=False)
            raise
        end_unit_of_work(sessions, ok=True)
        return result

    run.__unit_of_work__ = True  # type: ignore[attr-defined]
    return run


async def _off_the_loop(function: Callable[..., None], sessions: list[Session], *, ok: bool) -> None:
    """Commit from a thread of its own: not the event loop, and not a WORKER_THREADS token (which may all
    be taken by routes waiting on this very transaction's locks)."""
    if sessions:
        await to_thread.run_sync(functools.partial(function, sessions, ok=ok), limiter=CapacityLimiter(1))


class UnitOfWorkRoute(CheckedBodyRoute):
    """The route class of every router: the endpoint's sessions commit in the endpoint's own thread, and
    its body is parsed and checked off the event loop (app.delivery.bodies)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, unit_of_work(endpoint), **kwargs)


# --- API keys (app.apikeys): the sales tools' credential on the public API ----------------------

# Documents the key in OpenAPI (the "Authorize" button of /docs); a missing header is decided below.
api_key_scheme = HTTPBearer(
    auto_error=False, scheme_name="ApiKey", description="An API key (gsk_…) an admin issued at /admin/keys"
)


def _authorization(request: Request) -> str | None:
    return request.headers.get("authorization")


def require_scope(scope: ApiScope) -> Callable[..., Principal]:
    """A dependency: the request's API key, which must be live and hold `scope` (401 / 403 otherwise).
    It ends its own transaction (the key's last-used touch), so no key row stays locked through the route."""

    def dependency(
        request: Request, session: SessionDep, _: Annotated[object, Security(api_key_scheme)] = None
    ) -> Principal:
        principal = apikeys_service.authenticate(session, _authorization(request), scope)
        session.commit()
        return principal

    return dependency


def optional_scope(scope: ApiScope) -> Callable[..., Principal | None]:
    """A dependency for routes anyone may call: None without an API key, else as `require_scope`. An API key
    is an `Authorization: Bearer gsk_…` header: one that is not live or lacks `scope` is refused (401 / 403),
    never taken as anonymous; any other `Authorization` header (a gateway's, an admin API token) is ignored,
    as it was before keys existed, and the request counts per address (app.http.ratelimit)."""
    required = require_scope(scope)

    def dependency(
        request: Request, session: SessionDep, _: Annotated[object, Security(api_key_scheme)] = None
    ) -> Principal | None:
        if apikeys_service.bearer_key(_authorization(request)) is None:
            return None
        return required(request, session)

    return dependency


# Set by app.admin (install_admin), which this layer may not import: whether a request carries an active
# admin's API token or browser session. GET /quotes lets admins search every organisation's quotes with it.
ADMIN_CHECK = "admin_check"


def admin_signed_in(request: Request, session: Session) -> bool:
    check: Callable[[Request, Session], bool] | None = getattr(request.app.state, ADMIN_CHECK, None)
    signed_in = check is not None and check(request, session)
    session.commit()  # the credential's last-used touch, as require_admin does
    return signed_in
