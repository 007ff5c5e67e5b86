"""A local HTTP server standing in for the Hugging Face Hub (never the internet in tests).

It answers `GET /{hf_id}/resolve/{revision}/config.json` as huggingface.co does: the configs of the
shipped presets under their Hub ids (app/estimator/data/presets.json, `hf_repo`), and for an unknown
model 401 with `X-Error-Code: RepoNotFound` (the Hub will not tell an anonymous caller whether a
private repository exists). A test adds its own answers (gated, slow, huge…) with `answer` and reads
the paths asked for in `hits`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app.estimator.presets import list_presets, preset_config

SHUTDOWN_POLL_S = 0.02  # how often the stand-in server looks for shutdown()

GATED_TOKEN = "hf_stand_in_token_with_access"


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # before the status line: a Hub that does not answer in time
    needs_token: str | None = None  # a gated model: 401 GatedRepo without this Bearer token


@dataclass
class StandInHub:
    url: str = ""
    answers: dict[str, Answer] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)

    def answer(self, hf_id: str, answer: Answer, revision: str = "main") -> None:
        self.answers[f"/{hf_id}/resolve/{revision}/config.json"] = answer

    def reset(self) -> None:
        self.answers = shipped_configs()
        self.hits.clear()
        self.headers_seen.clear()


def shipped_configs() -> dict[str, Answer]:
    return {
        f"/{p.hf_repo}/resolve/main/config.json": Answer(body=json.dumps(preset_config(p.id)).encode())
        for p in list_presets()
    }


def _handler(hub: StandInHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hub.hits.append(self.path)
            hub.headers_seen.append(dict(self.headers.items()))
            answer = hub.answers.get(self.path)
            if answer is None:
                answer = Answer(401, b'{"error":"Repository not found"}', {"X-Error-Code": "RepoNotFound"})
            elif answer.needs_token and self.headers.get("Authorization") != f"Bearer {answer.needs_token}":
                answer = Answer(401, b'{"error":"Access restricted"}', {"X-Error-Code": "GatedRepo"})
            time.sleep(answer.delay_s)
            try:
                self.send_response(answer.status)
                for name, value in {"Content-Type": "application/json", **answer.headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (a timeout or a size limit): what those tests expect

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def stand_in_hub() -> Iterator[StandInHub]:
    hub = StandInHub(answers=shipped_configs())
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    # shutdown() waits for serve_forever's next poll: at its default 0.5 s that was half a second a test
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
