"""BodyTimeoutMiddleware on its own, in process: the clock covers the whole body, a body read outside the routes is
answered 408 by the middleware itself, and nothing is timed once the body is in or the answer has started
(tests/hostile/test_stalled_bodies.py drives a real server)."""

from __future__ import annotations

import json

import anyio
from starlette.types import Message, Receive, Scope, Send

from app.http.body_timeout import BodyTimeoutMiddleware

TIMEOUT_S = 0.2
SCOPE: Scope = {"type": "http", "method": "POST", "path": "/x", "headers": []}


def _client(chunks: list[bytes], *, then_stall: bool):
    """A receive() giving `chunks` (more to come after each) a few ms apart, then stalling or ending the body."""
    sent = iter(chunks)

    async def receive() -> Message:
        await anyio.sleep(0.01)
        chunk = next(sent, None)
        if chunk is not None:
            return {"type": "http.request", "body": chunk, "more_body": True}
        if then_stall:
            await anyio.sleep(60)
        return {"type": "http.request", "body": b"", "more_body": False}

    return receive


async def _run(app, receive: Receive) -> list[Message]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        await BodyTimeoutMiddleware(app, timeout_s=TIMEOUT_S)(SCOPE, receive, send)
    return sent


async def _reads_the_body(scope: Scope, receive: Receive, send: Send) -> None:
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_a_trickle_is_timed_out_over_the_whole_body_and_answered_408() -> None:
    trickle = [b"x"] * 100  # 10 ms apart: every gap far under the limit, the whole far over it
    sent = anyio.run(_run, _reads_the_body, _client(trickle, then_stall=False))
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert json.loads(sent[1]["body"])["type"].endswith("/request-timeout")


def test_a_body_in_time_passes_and_a_wait_after_it_is_not_timed() -> None:
    async def waits_after_the_body(scope: Scope, receive: Receive, send: Send) -> None:
        await _reads_the_body(scope, receive, send)
        with anyio.move_on_after(TIMEOUT_S * 2):  # a streaming answer listening for a disconnect
            await receive()

    async def body_then_silence() -> Message:
        body = {"type": "http.request", "body": b"{}", "more_body": False}
        if not received:
            received.append(1)
            return body
        await anyio.sleep(60)
        return body

    received: list[int] = []
    sent = anyio.run(_run, waits_after_the_body, body_then_silence)
    assert [m.get("status") for m in sent] == [200, None]


def test_an_answer_started_before_the_body_is_in_is_not_cut() -> None:
    async def answers_first(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        with anyio.move_on_after(TIMEOUT_S * 2):
            await receive()
        await send({"type": "http.response.body", "body": b"ok"})

    sent = anyio.run(_run, answers_first, _client([], then_stall=True))
    assert [m.get("status") for m in sent] == [200, None]
