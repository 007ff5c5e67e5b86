"""Swagger UI at /docs served from our own origin, so it runs under the strict CSP.

FastAPI's default /docs page loads Swagger UI from a CDN and starts it with an inline script; both
are refused by `script-src 'self'`. Here the Swagger UI files come from the swagger-ui-bundle-v2
package (mounted at /docs/assets) and the start-up code is a file, app/static/js/swagger-init.js.
"""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{title} - API docs</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/static/js/swagger-init.js"></script>
</body>
</html>
"""


def install_docs(app: FastAPI) -> None:
    """Call on an app built with `docs_url=None`."""
    page = DOCS_PAGE.format(title=app.title, openapi_url=app.openapi_url)

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return HTMLResponse(page)

    app.mount("/docs/assets", StaticFiles(directory=Path(str(swagger_ui_bundle.swagger_ui_path))), name="docs-assets")
