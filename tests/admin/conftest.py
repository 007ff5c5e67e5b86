"""Admin fixtures: users, API tokens and a signed-in browser, on both databases (tests/conftest.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from argon2 import PasswordHasher, profiles
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.admin import service
from app.admin.models import AdminUser

PASSWORD = "correct horse battery staple"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id with argon2-cffi's CHEAPEST profile (meant for tests): same code path, milliseconds
    instead of ~0.1-0.5 s a hash. test_passwords_use_the_rfc_9106_parameters checks the real ones."""
    monkeypatch.setattr(service, "_hasher", PasswordHasher.from_parameters(profiles.CHEAPEST))


@dataclass
class Admin:
    user: AdminUser
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def make_admin(db: Session, email: str, role: str = "admin") -> Admin:
    user = service.create_user(db, email=email, password=PASSWORD, role=role)
    token, _row = service.create_token(db, user=user, name="tests", actor=service.Actor(user.id, email, "cli"))
    return Admin(user, token)


@pytest.fixture()
def alice(db: Session) -> Admin:
    return make_admin(db, "alice@example.com")


@pytest.fixture()
def bob(db: Session) -> Admin:
    return make_admin(db, "bob@example.com")


@pytest.fixture()
def viewer(db: Session) -> Admin:
    return make_admin(db, "viewer@example.com", role="viewer")


def csrf_of(html: str) -> str:
    match = CSRF_FIELD.search(html)
    assert match, "no CSRF field on the page"
    return match.group(1)


def sign_in(client: TestClient, email: str, password: str = PASSWORD, base: str = "") -> str:
    """Signs in through the login form; returns the session's CSRF token (from the next page)."""
    page = client.get(f"{base}/admin/login")
    response = client.post(
        f"{base}/admin/login",
        data={"email": email, "password": password, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return csrf_of(client.get(f"{base}/admin/skus").text)
