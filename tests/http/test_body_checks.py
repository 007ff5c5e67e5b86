"""Request bodies are checked after the route is matched, off the event loop, within a bounded cost, and
within a per-client budget of bytes (app.delivery.bodies, app.common.jsonguard, app.http.body_limit)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from app.common import jsonguard
from app.common.jsonguard import MAX_JSON_CONTAINERS, MAX_JSON_VALUES, Refusal, parse_body
from app.common.settings import Settings
from app.delivery.deps import UnitOfWorkRoute
from app.http import body_limit
from app.http.body_limit import BodyBudget
from tests.http.conftest import probe_app

JSON = {"content-type": "application/json"}
DEEP = b"[" * 40 + b"]" * 40  # within every size bound, deeper than MAX_JSON_DEPTH

# The bodies the security review timed at 0.1 to 0.5 s each in the old on-the-loop check (about 1 MiB each).
REVIEW_BODIES = {
    "bracket-towers": ("[" + ("[" * 30 + "]" * 30 + ",") * 17000 + "0]").encode(),
    "objects-and-a-300-digit-integer": ("[" + "{}," * 340_000 + "1" + "0" * 300 + "]").encode(),
    "a-1-MiB-string": json.dumps({"x": "a" * 1_000_000}).encode(),
    "half-a-million-zeros-and-NaN": ("[" + "0," * 500_000 + "NaN]").encode(),
}
CPU_BOUND_S = 0.1  # the old check took 0.13 to 0.5 s of CPU on these; the bounded one takes a few ms

threads = APIRouter(prefix="/threads", route_class=UnitOfWorkRoute)


@threads.post("/echo")
async def echo(body: dict[str, object]) -> dict[str, int]:
    return {"loop_thread": threading.get_ident(), "keys": len(body)}


@pytest.fixture()
def client(sqlite_settings: Settings) -> Iterator[TestClient]:
    app = probe_app(sqlite_settings)
    app.include_router(threads)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_an_unknown_path_or_method_never_has_its_body_checked(client: TestClient) -> None:
    assert client.post("/no-such-path", content=DEEP, headers=JSON).status_code == 404
    assert client.put("/probe/echo", content=DEEP, headers=JSON).status_code == 405
    assert client.post("/probe/echo", content=DEEP, headers=JSON).status_code == 422  # a route that reads it


def test_the_json_body_is_parsed_and_checked_off_the_event_loop(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked_on: list[int] = []
    walk = jsonguard.check_json

    def recording_walk(value: object) -> None:
        checked_on.append(threading.get_ident())
        walk(value)

    monkeypatch.setattr(jsonguard, "check_json", recording_walk)
    response = client.post("/threads/echo", json={"a": 1, "b": [1.5]})
    assert response.status_code == 200, response.text
    assert checked_on and checked_on[0] != response.json()["loop_thread"]


@pytest.mark.parametrize("name", sorted(REVIEW_BODIES))
def test_each_review_body_costs_a_bounded_cpu_time(name: str) -> None:
    started = time.thread_time()
    with pytest.raises(Refusal):
        parse_body(REVIEW_BODIES[name]) if name != "a-1-MiB-string" else _refuse_after(REVIEW_BODIES[name])
    assert time.thread_time() - started < CPU_BOUND_S


def _refuse_after(body: bytes) -> None:
    assert parse_body(body) == {"x": "a" * 1_000_000}  # valid and within bounds: parsed, linear time
    raise Refusal("body", "parsed", "test")


def test_counts_over_the_bounds_are_refused_unparsed() -> None:
    with pytest.raises(Refusal) as containers:
        parse_body(b"[" + b"{}," * MAX_JSON_CONTAINERS + b"{}]")
    assert containers.value.type == "json_too_large"
    with pytest.raises(Refusal) as values:
        parse_body(b"[" + b"0," * MAX_JSON_VALUES + b"0]")
    assert "values" in values.value.message


def test_a_400_digit_integer_is_a_422_naming_the_field(client: TestClient) -> None:
    response = client.post("/probe/echo", content=b'{"x": 1' + b"0" * 400 + b"}", headers=JSON)
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"field": "x", "message": jsonguard.TOO_LARGE_NUMBER, "type": "number_too_large"}
    ]


@pytest.mark.parametrize(
    ("body", "message", "type_"),
    [
        # more digits than Python's int() converts (4,300): before, FastAPI's bare 400 "There was an error parsing
        # the body", no field named
        (b'{"x": ' + b"1" * 5000 + b"}", jsonguard.TOO_LARGE_NUMBER, "number_too_large"),
        (b'{"x": "\xff\xfe"}', jsonguard.NOT_UTF, "json_encoding"),  # invalid UTF-8: the same bare 400
    ],
)
def test_a_body_python_cannot_read_is_a_422_naming_the_body(
    client: TestClient, body: bytes, message: str, type_: str
) -> None:
    response = client.post("/probe/echo", content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"] == [{"field": "body", "message": message, "type": type_}]


def test_a_body_that_is_not_json_stays_the_readers_to_report() -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_body(b'{"x": ')
    jsonguard.check_body(b'{"x": "\xff"}')  # a Hub config.json in no UTF: app.hub reports it as not JSON


def test_a_client_over_its_body_budget_gets_429_before_the_body_is_read(
    sqlite_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = sqlite_settings.model_copy(update={"body_budget_bytes_per_minute": 3000})
    parsed: list[int] = []
    monkeypatch.setattr(jsonguard, "check_json", lambda value: parsed.append(1))
    # the budget's window is a fixed minute: the four requests must fall in one (a minute's end between them
    # renewed the budget, and the third was not refused); the clock stands 30 s into a window
    monkeypatch.setattr(body_limit, "time", SimpleNamespace(time=lambda: 1_800_000_030.0))
    body = b'{"x": 1, "pad": "' + b"p" * 1000 + b'"}'
    with TestClient(probe_app(settings), raise_server_exceptions=False) as client:
        answers = [client.post("/probe/echo", content=body, headers=JSON) for _ in range(3)]
        chunked = client.post("/probe/echo", content=iter([body]), headers=JSON)
    assert [a.status_code for a in answers] == [422, 422, 429]  # 422: `pad` is not a field of the probe
    assert 1 <= int(answers[2].headers["Retry-After"]) <= 60
    assert "more than 3000 bytes" in answers[2].json()["detail"]
    assert chunked.status_code == 429
    assert len(parsed) == 2


def test_the_budget_renews_each_window_and_counts_each_client_apart() -> None:
    budget = BodyBudget(max_bytes=100, window_s=60)
    assert budget.charge("a", 100, now=120.0) == 0
    assert budget.charge("a", 1, now=130.0) == 50
    assert budget.charge("b", 100, now=130.0) == 0
    assert budget.charge("a", 100, now=180.0) == 0


def test_every_route_of_the_app_reads_its_body_through_the_checks() -> None:
    from app.delivery.bodies import CheckedBodyRoute
    from app.entry.main import create_app
    from tests.http.test_rate_limited_routes import _endpoints

    app = create_app(Settings(database_url="sqlite://", env="test", metrics_enabled=True))
    routes = [getattr(r, "original_route", r) for r in _endpoints(app.routes)]
    taking_bodies = [route for route in routes if set(route.methods) & {"POST", "PUT", "PATCH", "DELETE"}]
    assert len(taking_bodies) > 25
    assert [route.path for route in taking_bodies if not isinstance(route, CheckedBodyRoute)] == []
