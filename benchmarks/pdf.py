"""Time to render a quote's PDF (WeasyPrint, in this process), English and Chinese, with the shipped print.css and,
as the baseline measured in the same run, with the label columns sized to their content (`max-content 1fr`, the
rule print.css had before its label columns were given fixed widths).

    .venv/bin/python benchmarks/pdf.py [--rounds 5]

Migrates and seeds a SQLite file of its own, asks POST /recommend for a serving deployment of DeepSeek-V3 (the
quote with the most rows: latency caveats, speculative decoding, prefix cache, a fabric on consultation), issues its
quote, and renders the HTML the PDF route renders (app.quotes.service.pdf_source), --rounds times each way after
one warm-up. Prints the best and the median of each, and the PDF's page count.
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402
from pypdf import PdfReader  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from app.common.settings import Settings  # noqa: E402
from app.db.engine import build_engine  # noqa: E402
from app.entry.main import create_app  # noqa: E402
from app.quotes import service  # noqa: E402
from app.quotes.pdf_render import write_pdf  # noqa: E402
from tests.quotes.test_serving_caveats import CUSTOMER, REVIEWED  # noqa: E402 (the quote that test freezes)

FIXED_COLUMNS = re.compile(r"grid-template-columns: \d+mm minmax\(0, 1fr\)")  # app/static/css/print.css
CONTENT_SIZED_RULE = "grid-template-columns: max-content 1fr"  # the baseline


def _quote_html(database_url: str) -> dict[str, str]:
    for command in ("migrate", "seed"):
        env = {"DATABASE_URL": database_url, "LOG_LEVEL": "warning", "PATH": "/usr/bin:/bin"}
        subprocess.run([sys.executable, "-m", "app", command], cwd=ROOT, env=env, check=True, capture_output=True)
    settings = Settings(database_url=database_url, rate_limit_per_minute=0)
    with TestClient(create_app(settings)) as client:
        answer = client.post("/recommend", json=REVIEWED)
        answer.raise_for_status()
        option = answer.json()["options"][0]
        quote = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
        quote.raise_for_status()
        public_id = quote.json()["id"]
    with Session(build_engine(database_url)) as session:
        return {lang: service.pdf_source(session, public_id=public_id, lang=lang)[1] for lang in ("en", "zh")}


def _times(html: str, rounds: int) -> tuple[list[float], int]:
    pages = len(PdfReader(io.BytesIO(write_pdf(html))).pages)  # the warm-up: fonts and WeasyPrint's imports
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        write_pdf(html)
        times.append(time.perf_counter() - started)
    return times, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        sources = _quote_html(f"sqlite:///{Path(scratch) / 'pdf.db'}")
    print(f"quote PDF rendering, {args.rounds} rounds each after a warm-up (seconds)")
    for lang, html in sources.items():
        baseline = FIXED_COLUMNS.sub(CONTENT_SIZED_RULE, html)
        if baseline == html:
            raise SystemExit("print.css no longer gives its label columns fixed widths: update this benchmark")
        for name, source in (("shipped", html), ("baseline", baseline)):
            times, pages = _times(source, args.rounds)
            print(f"  {lang} {name:8}  best {min(times):.3f}  median {statistics.median(times):.3f}  ({pages} pages)")


if __name__ == "__main__":
    main()
