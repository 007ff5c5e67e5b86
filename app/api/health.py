from __future__ import annotations

import anyio
from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.common.errors import problem
from app.db.engine import DatabaseUnavailable, check_connection
from app.delivery.deps import UnitOfWorkRoute

router = APIRouter(tags=["health"], route_class=UnitOfWorkRoute)
# A database that has not answered by then is as good as down to a load balancer: the connect timeout
# (app.db.engine, 2 s) plus a second for the query.
READY_TIMEOUT_S = 3


@router.get("/healthz", summary="The process is alive")
async def healthz() -> dict[str, str]:
    # On the event loop, not a worker thread: it answers while every thread is busy.
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="The database answers",
    responses={503: {"description": "The database is unreachable", "content": {"application/problem+json": {}}}},
)
async def readyz(request: Request) -> JSONResponse:
    # Not on the WORKER_THREADS: a probe must not queue behind requests that hold them all (a search,
    # a lock wait), or the instance reads as down exactly when it is busy. The check runs on a thread
    # of its own, one at a time per process, and answers within READY_TIMEOUT_S either way.
    try:
        with anyio.fail_after(READY_TIMEOUT_S):
            await to_thread.run_sync(
                check_connection,
                request.app.state.engine,
                limiter=request.app.state.ready_limiter,
                abandon_on_cancel=True,
            )
    except (DatabaseUnavailable, TimeoutError):
        return problem(503, "service-unavailable", "Not ready", "The database is unreachable.")
    return JSONResponse({"status": "ready", "database": "ok"})
