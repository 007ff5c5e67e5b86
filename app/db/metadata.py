"""Imports every ORM module so that `target_metadata` knows all tables (Alembic autogenerate, tests)."""

from app.catalog import models as _catalog  # noqa: F401
from app.db.base import Base

target_metadata = Base.metadata
