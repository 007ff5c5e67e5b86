# gpu-sizer: slim Python base, non-root user, migrations and seed on start.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HOST=0.0.0.0 PORT=8000
WORKDIR /srv/gpu-sizer

# WeasyPrint renders quote PDFs with Pango and HarfBuzz; Noto CJK draws the Chinese text.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-noto-cjk \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 app
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
COPY static ./static
RUN pip install . && mkdir -p data && chown app:app data

USER app
EXPOSE 8000
CMD ["sh", "-c", "python -m app migrate && python -m app seed && python -m app serve --workers 2"]
