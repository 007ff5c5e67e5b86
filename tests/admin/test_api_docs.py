"""The API documents itself, admin included: every JSON request body (POST, PUT, PATCH) ships an example
and every field of every request schema says what it is (units, currency, defaults). The admin examples
are posted to a freshly seeded app with an admin's token and succeed as shipped (on a catalog edited
since, a version that moved on makes "Try it out" answer 409 with the current values, never 422)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.admin.conftest import Admin
from tests.api.test_openapi_docs import reachable_schemas
from tests.openapi import openapi_document

SPEC = openapi_document()
BODY_METHODS = ("post", "put", "patch")


def _bodies() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, operations in SPEC["paths"].items()
        for method, operation in operations.items()
        if method in BODY_METHODS and "application/json" in operation.get("requestBody", {}).get("content", {})
    ]


def _media(operation: dict[str, Any]) -> dict[str, Any]:
    return operation["requestBody"]["content"]["application/json"]


def test_the_walk_covers_the_admin_and_public_bodies() -> None:
    walked = {f"{m.upper()} {p}" for m, p, _ in _bodies()}
    assert {"POST /recommend", "POST /quotes", "POST /admin/api/skus", "PATCH /admin/api/skus/{sku_id}"} <= walked
    assert {"PUT /admin/api/skus/{sku_id}/availability/{region}", "POST /admin/api/catalog/import"} <= walked


@pytest.mark.parametrize(("method", "path", "operation"), _bodies(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_body_has_an_example_and_every_field_a_description(
    method: str, path: str, operation: dict[str, Any]
) -> None:
    media = _media(operation)
    assert media.get("examples"), f"{method.upper()} {path} ships no example"
    schemas = SPEC["components"]["schemas"]
    missing = [
        f"{name}.{field}"
        for name in sorted(reachable_schemas(SPEC, [media["schema"]]))
        for field, definition in schemas[name].get("properties", {}).items()
        if not definition.get("description")
    ]
    assert missing == [], f"{method.upper()} {path}"


def _concrete(path: str, operation: dict[str, Any]) -> str:
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            examples = parameter.get("examples") or parameter["schema"].get("examples")
            assert examples, f"path parameter {parameter['name']} of {path} has no example"
            value = examples[0] if isinstance(examples, list) else next(iter(examples.values()))["value"]
            path = path.replace("{" + parameter["name"] + "}", str(value))
    assert not re.search(r"\{[^}]+\}", path), path
    return path


ADMIN_EXAMPLES = [
    (method, path, name, example["value"], operation)
    for method, path, operation in _bodies()
    if path.startswith("/admin/api")
    for name, example in _media(operation)["examples"].items()
]


@pytest.mark.parametrize(
    ("method", "path", "name", "body", "operation"),
    ADMIN_EXAMPLES,
    ids=[f"{m} {p} {n}" for m, p, n, *_ in ADMIN_EXAMPLES],
)
def test_every_admin_example_is_valid_input(
    client: TestClient, alice: Admin, method: str, path: str, name: str, body: Any, operation: dict[str, Any]
) -> None:
    response = client.request(method.upper(), _concrete(path, operation), json=body, headers=alice.headers)
    assert response.status_code in (200, 201), (name, response.text[:500])
