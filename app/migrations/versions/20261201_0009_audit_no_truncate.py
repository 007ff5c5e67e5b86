"""audit log: TRUNCATE refused too

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 03:20:00.000000

The append-only guard of 0003 fires on UPDATE and DELETE of each row; PostgreSQL's TRUNCATE deletes no
rows one by one and passed it. A statement-level BEFORE TRUNCATE trigger with the same function refuses
it. SQLite has no TRUNCATE: its "truncate optimisation" of an unqualified DELETE is not used on a table
with triggers (sqlite.org/lang_delete.html), so the row guard of 0003 already covers `DELETE FROM audit_log`.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log")
