"""The one Jinja2Templates instance of the app (HTML pages extend and reuse it)."""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"  # app/templates

templates = Jinja2Templates(directory=TEMPLATES_DIR)
