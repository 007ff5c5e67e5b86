"""A refused admin form names each field by its label from the admin catalog (app/text/i18n_admin.py), in the page's
language: before, the refusal listed raw field ids (`<code>intra_node_link</code>`, `<code>discounts.monthly</code>`)
on the English and the Chinese page alike."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.admin.conftest import Admin, sign_in
from tests.admin.test_admin_chinese import _refused_sku_forms

LABELS = {
    "en": {
        "edit": ["GPUs per server"],
        "price": ["Price / month"],
        "catalog": ["Intra-node link", "Monthly term discount, % (0–90)"],
    },
    "zh": {
        "edit": ["每台服务器 GPU 数"],
        "price": ["每月价格"],
        "catalog": ["服务器内互联", "月付折扣，%（0–90）"],
    },
}


def test_refusals_name_the_fields_by_their_labels(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, alice.user.email)
    for lang, pages in LABELS.items():
        refused = _refused_sku_forms(client, lang, csrf)
        for page, labels in pages.items():
            items = re.findall(r'<div class="notice error".*?</div>', refused[page], re.S)
            assert items, refused[page][:2000]
            shown = re.findall(r"<li>(.*?):", items[0])
            assert shown == labels, (lang, page, shown)


def test_every_field_label_is_worded_in_both_languages() -> None:
    from app.admin.pages import FIELD_LABELS
    from app.text.i18n import EN, ZH

    for field, key in FIELD_LABELS.items():
        assert key in EN and key in ZH, (field, key)
