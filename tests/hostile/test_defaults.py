"""What the public port shows by default (real server): no Prometheus metrics."""

from __future__ import annotations

import httpx


def test_metrics_are_off_on_the_public_port_by_default(http: httpx.Client) -> None:
    assert http.get("/metrics").status_code == 404
    assert "/metrics" not in http.get("/openapi.json").json()["paths"]
    assert http.get("/healthz").status_code == 200


def test_there_is_no_secret_key_to_set_or_leak(monkeypatch) -> None:
    # Nothing is signed statelessly (sessions, API and CSRF tokens are random and kept in the database), so
    # production needs no SECRET_KEY, and one left in the environment configures nothing.
    from app.common.settings import Settings

    monkeypatch.setenv("SECRET_KEY", "left-over")
    settings = Settings(env="prod")
    assert not hasattr(settings, "secret_key")
    assert "left-over" not in settings.model_dump_json()
