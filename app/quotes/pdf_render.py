"""The work of the PDF pool's processes (app.quotes.documents): a quote's HTML, its CSS inlined, to PDF bytes.

A module of its own that imports nothing of the app: a pool process imports the module of the function it runs, and
app.quotes.documents brought FastAPI, SQLAlchemy and the request models with it, 0.8 s of CPU in every pool process
started (and again after each rendering killed at its time limit) before WeasyPrint's own 0.4 s.
"""

from __future__ import annotations

from pathlib import Path

CSS_DIR = Path(__file__).resolve().parents[1] / "static" / "css"  # package data: print.css, relative URLs' base


def write_pdf(html: str) -> bytes:
    """Runs in a pool process: the HTML (with its CSS inlined) to PDF bytes."""
    from weasyprint import HTML  # noqa: PLC0415 (a heavy import, paid once per pool process, never by the server)

    pdf: bytes = HTML(string=html, base_url=str(CSS_DIR)).write_pdf()  # WeasyPrint has no type hints
    return pdf
