"""The label each field an audit entry records is shown under on GET /admin/audit (app/templates/admin/audit.html):
keys of app/text/i18n_admin.py, worded in English and Chinese.

A field is looked up by its entity type first, then among the fields any entity records, then among the refusals'
labels (app.admin.pages.FIELD_LABELS, the forms' words). The entity comes first because one name means different
things: a SKU's `id` is its lower-case slug, an API key's is a number. tests/admin/test_audit_labels.py fails on a
field an entity's snapshot records that has no label."""

from __future__ import annotations

_TIMES = {"expires_at": "admin_audit_f_expires_at", "revoked_at": "admin_audit_f_revoked_at"}

# app.apikeys.service.snapshot, app.admin.service.token_snapshot, app.admin.service.cancel_quote,
# app.webhooks.service.endpoint_snapshot, app.admin.webhooks (a replayed delivery), app.admin.catalog_transfer
ENTITY_FIELD_LABELS: dict[str, dict[str, str]] = {
    "api_key": {
        "id": "admin_audit_f_key_id",
        "organisation": "admin_key_organisation",
        "prefix": "admin_audit_f_prefix",
        "rate_limit_per_minute": "admin_key_per_minute",
        "created_by": "admin_audit_f_created_by",
        **_TIMES,
    },
    "api_token": {"prefix": "admin_audit_f_prefix", "user": "admin_audit_f_user", **_TIMES},
    "quote": {"id": "admin_audit_f_quote_id"},
    "webhook": {
        "url_origin": "admin_audit_f_url_origin",
        "description": "admin_webhook_description",
        "active": "admin_audit_f_active",
    },
    "webhook_delivery": {"replay_of": "admin_audit_f_replay_of", "endpoint_id": "admin_audit_f_endpoint_id"},
    "catalog": {
        name: f"admin_audit_f_{name}"
        for name in ("gpu_types_created", "skus_created", "skus_updated", "skus_unchanged", "prices_added")
    },
}

# fields several entities record under the same meaning (a SKU's, an add-on's or a quote's status; a SKU's import)
COMMON_FIELD_LABELS: dict[str, str] = {
    "status": "admin_audit_f_status",
    "prices": "admin_audit_f_prices",
    "availability": "admin_audit_f_availability",
    "addons": "admin_audit_f_addons",
}


def audit_label_key(entity_type: str, field: str) -> str | None:
    """The i18n key of `field` as `entity_type`'s audit entries record it; None: the refusals' labels decide."""
    return ENTITY_FIELD_LABELS.get(entity_type, {}).get(field) or COMMON_FIELD_LABELS.get(field)
