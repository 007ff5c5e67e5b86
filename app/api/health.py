from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.db.engine import DatabaseUnavailable, check_connection
from app.deps import UnitOfWorkRoute
from app.errors import problem

router = APIRouter(tags=["health"], route_class=UnitOfWorkRoute)


@router.get("/healthz", summary="The process is alive")
async def healthz() -> dict[str, str]:
    # On the event loop, not a worker thread: it answers while every thread is busy.
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="The database answers",
    responses={503: {"description": "The database is unreachable", "content": {"application/problem+json": {}}}},
)
def readyz(request: Request) -> JSONResponse:
    try:
        check_connection(request.app.state.engine)
    except DatabaseUnavailable:
        return problem(503, "service-unavailable", "Not ready", "The database is unreachable.")
    return JSONResponse({"status": "ready", "database": "ok"})
