# gpu-sizer: slim Python base, non-root user, migrations and seed on start.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HOST=0.0.0.0 PORT=8000
WORKDIR /srv/gpu-sizer

# WeasyPrint renders quote PDFs with Pango and HarfBuzz; Noto CJK draws the Chinese text.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-noto-cjk \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 app
# The wheel carries everything it runs with (templates, CSS and JavaScript, migrations, data files: package
# data under app/), so the source is installed and removed: `gpu-sizer` works from any directory, as
# tests/test_wheel.py checks on a wheel installed the same way.
COPY pyproject.toml README.md /tmp/src/
COPY app /tmp/src/app
RUN pip install /tmp/src && rm -rf /tmp/src && mkdir -p data && chown app:app data

USER app
EXPOSE 8000
# The app's own health check: /readyz on this port with a Host header TRUSTED_HOSTS allows (app/entry/healthcheck.py).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["python", "-m", "app.entry.healthcheck"]
CMD ["sh", "-c", "gpu-sizer migrate && gpu-sizer seed && gpu-sizer serve --workers 2"]
