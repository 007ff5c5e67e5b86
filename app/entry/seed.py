"""`python -m app seed`: the shipped catalog, then the reference cloud prices that cite its GPU types.

Idempotent: rows an admin changed are kept, missing ones are added.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.catalog.seed import SeedReport, seed_catalog
from app.reference.service import seed_reference_prices


def seed_database(session: Session) -> SeedReport:
    report = seed_catalog(session)
    references = seed_reference_prices(session)
    if references:
        report.created.append(f"{references} reference cloud prices")
    return report
