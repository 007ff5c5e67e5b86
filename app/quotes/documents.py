"""Quote PDFs: rendered once per document, off the request threads, within a time limit.

WeasyPrint lays a page out in Python: on a request thread it would hold the interpreter lock for the
whole rendering and every other request of the worker (`/healthz` included) would wait on it. So PDFs
are rendered in a small pool of processes of their own (pebble's ProcessPool: a rendering past its
time limit has its process killed, and the pool starts a fresh one), the request waits without holding
a thread, and at most `max_waiting` renderings per worker process are in flight or queued; more is a
503 with Retry-After, as is a rendering that times out.

A rendered PDF is kept in the database (`quote_documents`), one per quote and language, with the SHA-256
of the HTML it was made from: while the HTML is the same the PDF is served as stored, by every worker
process and app server; a change (a new status, template or address) renders it again and replaces it.
All stored PDFs together stay under PDF_STORE_MAX_BYTES, the least recently used deleted first.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import threading
from concurrent.futures import TimeoutError as FutureTimeout

from pebble import ProcessPool

from app.common.errors import ServiceUnavailable, refused
from app.quotes.pdf_render import write_pdf

RETRY_AFTER_S = "10"


def html_digest(html: str) -> str:
    return hashlib.sha256(html.encode("utf-8")).hexdigest()


class PdfRenderer:
    def __init__(self, *, workers: int, timeout_s: float, max_waiting: int) -> None:
        self.workers = workers
        self.timeout_s = timeout_s
        self.max_waiting = max_waiting
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()
        self._in_flight = 0

    def _get_pool(self) -> ProcessPool:
        with self._lock:
            if self._pool is None or not self._pool.active:
                # spawn, not fork: a forked copy of a threaded server process can inherit a held lock
                self._pool = ProcessPool(max_workers=self.workers, context=multiprocessing.get_context("spawn"))
            return self._pool

    async def render(self, html: str) -> bytes:
        with self._lock:
            if self._in_flight >= self.max_waiting:
                raise refused(ServiceUnavailable, "pdf_busy", field="pdf", headers={"Retry-After": RETRY_AFTER_S})
            self._in_flight += 1
        try:
            future = self._get_pool().schedule(write_pdf, args=(html,), timeout=self.timeout_s)
            return await asyncio.wrap_future(future)
        except FutureTimeout as exc:
            retry = {"Retry-After": RETRY_AFTER_S}
            raise refused(ServiceUnavailable, "pdf_slow", field="pdf", headers=retry, seconds=self.timeout_s) from exc
        except OSError as exc:  # Pango missing in the pool process: say so instead of a bare 500
            raise refused(ServiceUnavailable, "pdf_unavailable", field="pdf", reason=str(exc)) from exc
        finally:
            with self._lock:
                self._in_flight -= 1

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.stop()
                self._pool.join(timeout=5)
                self._pool = None
