"""The label each field an audit entry records is shown under on GET /admin/audit (app/templates/admin/audit.html):
keys of app/text/i18n_admin.py, worded in English and Chinese.

A field is looked up by its entity type first, then among the fields any entity records, then among the refusals'
labels (app.admin.pages.FIELD_LABELS, the forms' words). The entity comes first because one name means different
things: a SKU's `id` is its lower-case slug, an API key's is a number. tests/admin/test_audit_labels.py fails on a
field an entity's snapshot records that has no label."""

from __future__ import annotations


def _own(*fields: str) -> dict[str, str]:
    """Fields each shown under its own label, `admin_audit_f_<field>`."""
    return {name: f"admin_audit_f_{name}" for name in fields}


# app.apikeys.service.snapshot, app.admin.service.token_snapshot, app.admin.service.cancel_quote,
# app.webhooks.service.endpoint_snapshot, app.admin.webhooks (a replayed delivery), app.admin.catalog_transfer
ENTITY_FIELD_LABELS: dict[str, dict[str, str]] = {
    "api_key": {
        "id": "admin_audit_f_key_id",
        "organisation": "admin_key_organisation",
        "rate_limit_per_minute": "admin_key_per_minute",
        **_own("prefix", "created_by", "expires_at", "revoked_at"),
    },
    "api_token": _own("prefix", "user", "expires_at", "revoked_at"),
    "quote": {"id": "admin_audit_f_quote_id"},
    "webhook": {"description": "admin_webhook_description", **_own("url_origin", "active")},
    "webhook_delivery": _own("replay_of", "endpoint_id"),
    "catalog": _own("gpu_types_created", "skus_created", "skus_updated", "skus_unchanged", "prices_added"),
}

# fields several entities record under the same meaning (a SKU's, an add-on's or a quote's status; a SKU's import)
COMMON_FIELD_LABELS: dict[str, str] = _own("status", "prices", "availability", "addons")


def audit_label_key(entity_type: str, field: str) -> str | None:
    """The i18n key of `field` as `entity_type`'s audit entries record it; None: the refusals' labels decide."""
    return ENTITY_FIELD_LABELS.get(entity_type, {}).get(field) or COMMON_FIELD_LABELS.get(field)
