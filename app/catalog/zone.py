"""The catalog's timezone (CATALOG_TIMEZONE): the days a rental's `start_date` and a price's date are days of.

A rental starting on a day starts at midnight there (app.capacity.service.priced_at), so a price an admin dates by
that day, or by a wall-clock time without an offset, is that moment there too (`catalog_moment`): a price for a day
applies to a rental starting that day (review R7-4: a bare date was read as midnight UTC, 08:00 in Asia/Shanghai,
and a rental starting that day was priced at the old price)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from app.common.settings import Settings, get_settings
from app.db.engine import SETTINGS


def catalog_zone(session: Session | None = None) -> ZoneInfo:
    """The catalog's timezone: the request's settings (app.delivery.deps puts them on its session), else the
    process's."""
    settings = session.info.get(SETTINGS) if session is not None else None
    if not isinstance(settings, Settings):
        settings = get_settings()
    return ZoneInfo(settings.catalog_timezone)


def catalog_moment(moment: datetime, session: Session | None = None) -> datetime:
    """A moment an admin gives: one with an offset is that instant; one without (a bare date is read as its
    midnight) is that wall-clock time in the catalog's timezone, never UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=catalog_zone(session))
