"""HF_ENDPOINT may name an internal mirror and carry its credentials: an unreachable Hub is reported
without it, in the API's words and on the serving page."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.common.settings import Settings
from tests.conftest import client_for
from tests.servers import free_port

SECRET = "S3cretMirrorPass"


def test_an_unreachable_hub_is_reported_without_its_endpoint(app_settings: Settings, db: Session) -> None:
    endpoint = f"http://mirroruser:{SECRET}@127.0.0.1:{free_port()}"  # nothing listens there
    settings = app_settings.model_copy(update={"hf_endpoint": endpoint})
    body = {"model": {"hf_id": "org/unreachable-x"}, "task": "lora", "hardware": {"gpu": "a100-40g-pcie"}}
    with client_for(settings, db) as client:
        api = client.post("/estimate", json=body)
        page = client.get(
            "/serve/results?source=hub&hf_id=org/unreachable-y&requests_per_s=5", headers={"accept": "text/html"}
        )
    assert api.status_code == 503, api.text
    problem = api.json()
    assert problem["errors"][0]["type"] == "hub_unreachable"
    for text in (problem["detail"], problem["errors"][0]["message"], page.text):
        assert "model hub" in text or "模型仓库" in text, text[:300]
        assert SECRET not in text and "mirroruser" not in text and "127.0.0.1" not in text
    assert SECRET not in api.text and "127.0.0.1" not in api.text, api.text  # the params a sales tool reads too
