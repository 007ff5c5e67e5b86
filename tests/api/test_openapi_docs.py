"""The sales API documents itself: every POST body of the public API ships an example that works as
is (Swagger's "Try it out" posts it unchanged) and every request field says what it is (units,
currency, defaults). The issue it fixes: Try it out on POST /recommend answered 422, because the
example Swagger composed from per-field examples sent a preset, params and an architecture at once."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

SALES_POSTS = ("/recommend", "/estimate", "/estimate/scaling", "/quotes")


def _spec(client: TestClient) -> dict[str, Any]:
    return client.get("/openapi.json").json()


def _examples(operation: dict[str, Any]) -> list[tuple[str, Any]]:
    media = operation["requestBody"]["content"]["application/json"]
    return [(name, example["value"]) for name, example in media.get("examples", {}).items()]


@pytest.mark.parametrize("path", SALES_POSTS)
def test_every_shipped_example_succeeds_as_is(client: TestClient, path: str) -> None:
    examples = _examples(_spec(client)["paths"][path]["post"])
    assert examples, f"POST {path} ships no example"
    for name, body in examples:
        response = client.post(path, json=body)
        assert 200 <= response.status_code < 300, (path, name, response.text[:500])


def _request_schemas(spec: dict[str, Any]) -> set[str]:
    """Every component schema reachable from the sales POST bodies."""
    return reachable_schemas(
        spec, [spec["paths"][p]["post"]["requestBody"]["content"]["application/json"]["schema"] for p in SALES_POSTS]
    )


def reachable_schemas(spec: dict[str, Any], todo: list[Any]) -> set[str]:
    """The component schemas that the schema nodes in `todo` reach, through every $ref."""
    schemas = spec["components"]["schemas"]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref:
                name = ref.rsplit("/", 1)[-1]
                if name not in seen:
                    seen.add(name)
                    todo.append(schemas[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return seen


def test_every_request_field_has_a_description(client: TestClient) -> None:
    spec = _spec(client)
    schemas = spec["components"]["schemas"]
    missing = [
        f"{name}.{field}"
        for name in sorted(_request_schemas(spec))
        for field, definition in schemas[name].get("properties", {}).items()
        if not definition.get("description")
    ]
    assert missing == []


def test_units_and_words_are_stated(client: TestClient) -> None:
    schemas = _spec(client)["components"]["schemas"]
    tokens = schemas["RecommendIn"]["properties"]["tokens"]["description"]
    assert "raw count" in tokens and "billions" in tokens  # the wizard's field is in billions
    constraints = schemas["ConstraintsIn"]["properties"]
    assert "CNY" in constraints["max_monthly_budget"]["description"]
    assert "default" in constraints["limit"]["description"] and "default" in constraints["max_nodes"]["description"]
    # The same words for the same things: a quote's term and months are the recommendation's.
    quote = schemas["QuoteCreate"]["properties"]
    assert constraints["term"]["description"] == quote["term"]["description"]
