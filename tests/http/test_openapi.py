"""The OpenAPI schema documents the shared error responses as problem+json on every operation."""

from __future__ import annotations

from tests.openapi import openapi_document

PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _schema(rate_limit_per_minute: int | None = None) -> dict:
    """The app's OpenAPI document (tests/openapi.py: generated once a setting): the tests only read it."""
    overrides = {} if rate_limit_per_minute is None else {"rate_limit_per_minute": rate_limit_per_minute}
    return openapi_document(**overrides)


def test_every_error_response_is_a_problem() -> None:
    schema = _schema()
    assert schema["components"]["schemas"]["Problem"]["required"] == ["type", "title", "status", "detail"]
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if status[0] in "45":
                    assert response["content"] == PROBLEM, (method, path, status)
            assert "503" in operation["responses"], (method, path)


def test_body_operations_document_body_errors_and_rate_limited_ones_429() -> None:
    estimate = _schema()["paths"]["/estimate"]["post"]["responses"]
    assert {"400", "408", "413", "415", "422", "429", "503"} <= set(estimate)
    assert "429" not in _schema(rate_limit_per_minute=0)["paths"]["/estimate"]["post"]["responses"]
    assert "429" not in _schema()["paths"]["/catalog/skus"]["get"]["responses"]


def test_path_parameters_document_404_and_idempotency_keys_409() -> None:
    paths = _schema()["paths"]
    assert "404" in paths["/quotes/{public_id}"]["get"]["responses"]
    assert "409" in paths["/quotes"]["post"]["responses"]


def test_only_operations_with_path_parameters_document_404() -> None:
    """Review R7-5: a value in a body that names nothing (an unknown `hardware.sku` on POST /estimate) is a 422 on
    its field; 404 is documented only where the path names what may not exist."""
    listed = {
        f"{method} {path}"
        for path, item in _schema()["paths"].items()
        for method, operation in item.items()
        if "404" in operation["responses"] and "{" not in path
    }
    assert listed == set()
