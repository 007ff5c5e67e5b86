"""The PDF is the printed page rendered by WeasyPrint: it opens, and its text (pypdf) holds the
quote number, the total and the Chinese customer name, drawn with an embedded CJK font."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from fastapi.testclient import TestClient
from pypdf import PdfReader

from app.quotes import documents, pdf_render
from tests.quotes.helpers import h100_body


def _pdf(response_content: bytes) -> tuple[str, set[str]]:
    reader = PdfReader(io.BytesIO(response_content))
    text = "\n".join(page.extract_text() for page in reader.pages)
    fonts = {
        str(font.get_object()["/BaseFont"]) for page in reader.pages for font in page["/Resources"]["/Font"].values()
    }
    return text, fonts


def test_pdf_holds_number_total_and_chinese(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    response = client.get(quote["links"]["pdf"] + "?lang=zh")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"] == f'inline; filename="{quote["number"]}.pdf"'
    assert response.content.startswith(b"%PDF-")
    text, fonts = _pdf(response.content)
    assert quote["number"] in text
    assert "CNY 2,040,000.00" in text and quote["total"] == "2040000.00"
    assert "深圳算力科技" in text and "报价单" in text and "面议" in text
    assert any("CJK" in font or "WenQuanYi" in font for font in fonts), fonts


def test_pdf_alias_and_english_labels(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    response = client.get(f"/quotes/{quote['id']}/pdf")
    assert (response.status_code, response.headers["content-type"]) == (200, "application/pdf")
    text, _fonts = _pdf(response.content)
    assert f"Quote {quote['number']}" in text
    assert "Indicative price" in text and "on consultation" in text and "深圳算力科技" in text


def test_the_pool_processes_import_nothing_of_the_app() -> None:
    """A pool process imports the module of the function it runs: app.quotes.pdf_render, on the standard library and
    WeasyPrint alone (app.quotes.documents cost each pool process started 0.8 s of CPU in FastAPI, SQLAlchemy and the
    request models)."""
    tree = ast.parse(Path(pdf_render.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"__future__", "pathlib", "weasyprint"}
    assert documents.write_pdf is pdf_render.write_pdf
