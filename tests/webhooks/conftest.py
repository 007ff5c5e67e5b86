"""Webhook fixtures: an admin with an API token (tests/admin/conftest.py's), an endpoint registered through the
admin API."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from tests.admin.conftest import (
    Admin,
    cheap_password_hashing as cheap_password_hashing,  # autouse here too
    make_admin,
)


@pytest.fixture()
def alice(db: Session) -> Admin:
    return make_admin(db, "alice@example.com")
