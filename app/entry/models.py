"""Imports every ORM module so that `target_metadata` knows all tables (Alembic autogenerate, tests)."""

from app.admin import models as _admin  # noqa: F401
from app.apikeys import models as _apikeys  # noqa: F401
from app.capacity import models as _capacity  # noqa: F401
from app.catalog import (
    models as _catalog,  # noqa: F401
    revision as _revision,  # noqa: F401
)
from app.db.base import Base
from app.hub import models as _hub  # noqa: F401
from app.quotes import models as _quotes  # noqa: F401
from app.ratelimit import models as _ratelimit  # noqa: F401
from app.reference import models as _reference  # noqa: F401
from app.webhooks import models as _webhooks  # noqa: F401

target_metadata = Base.metadata
