"""Columns, constraints and tables that several revisions declare the same way, declared once.

FROZEN: the revisions in versions/ build their schema from these functions, so changing one would change what an old
revision builds, on databases already past it or not. Never edit a function here once a revision calls it; a new
declaration gets a new function. tests/test_migrations_sql.py holds the SQL of the whole upgrade chain as the
revisions first wrote it (before any of them used this module) and fails on any difference.

They mirror the ORM's shared pieces (app/db/base.py: TimestampMixin, VersionedMixin) and the naming convention
there (`pk_<table>`, `fk_<table>_<column>_<referred table>`), which the revisions spell out as final names (op.f).
"""

from __future__ import annotations

from datetime import date, datetime

import sqlalchemy as sa
from alembic import op


def key() -> sa.Column[int]:
    """The surrogate primary key column `id` (its constraint: `primary_key`)."""
    return sa.Column("id", sa.Integer(), nullable=False)


def moment(name: str, *, nullable: bool = False) -> sa.Column[datetime]:
    """A point in time, stored with its time zone (the app writes UTC)."""
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def timestamps() -> list[sa.Column[datetime]]:
    """`created_at` and `updated_at` (TimestampMixin)."""
    return [moment("created_at"), moment("updated_at")]


def version() -> sa.Column[int]:
    """The optimistic-locking counter (VersionedMixin)."""
    return sa.Column("version", sa.Integer(), nullable=False)


def primary_key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    """The primary key `pk_<table>`, on `id` unless columns are named."""
    return sa.PrimaryKeyConstraint(*(columns or ("id",)), name=op.f(f"pk_{table}"))


def cascade(table: str, column: str, referred: str) -> sa.ForeignKeyConstraint:
    """`table.column` refers to `referred.id`; deleting the referred row deletes this one."""
    return sa.ForeignKeyConstraint(
        [column], [f"{referred}.id"], name=op.f(f"fk_{table}_{column}_{referred}"), ondelete="CASCADE"
    )


def units_in_region_over_dates() -> list[sa.Column[int] | sa.Column[str] | sa.Column[date]]:
    """Units of a SKU in a region from `starts_on` up to (not including) `ends_on` (maintenance holds and
    reservations, revision 0012)."""
    return [
        sa.Column("sku_id", sa.Integer(), nullable=False),
        sa.Column("region", sa.String(length=64), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("ends_on", sa.Date(), nullable=False),
        sa.Column("units", sa.Integer(), nullable=False),
    ]


def hub_configs_0010() -> None:
    """`hub_configs` as revision 0010 created it (0011 recreates it so on downgrade)."""
    op.create_table(
        "hub_configs",
        key(),
        sa.Column("hf_id", sa.String(length=193), nullable=False),
        sa.Column("revision", sa.String(length=100), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=False),
        moment("fetched_at"),
        primary_key("hub_configs"),
        sa.UniqueConstraint("hf_id", "revision", name=op.f("uq_hub_configs_hf_id")),
    )


def quote_documents_0007() -> None:
    """`quote_documents` and its index as revision 0007 created them (0011 recreates them so on downgrade)."""
    op.create_table(
        "quote_documents",
        sa.Column("html_sha256", sa.String(length=64), nullable=False),
        sa.Column("quote_id", sa.Integer(), nullable=False),
        sa.Column("pdf", sa.LargeBinary(), nullable=False),
        moment("created_at"),
        cascade("quote_documents", "quote_id", "quotes"),
        primary_key("quote_documents", "html_sha256"),
    )
    op.create_index(op.f("ix_quote_documents_quote_id"), "quote_documents", ["quote_id"], unique=False)


def index_columns(table: str, *names: str) -> None:
    """An index `ix_<table>_<column>` on each of these columns, one column each (in Alembic's batch form)."""
    with op.batch_alter_table(table, schema=None) as batch_op:
        for name in names:
            batch_op.create_index(batch_op.f(f"ix_{table}_{name}"), [name], unique=False)


def drop_indexed_table(table: str, *indexes: str) -> None:
    """Drop these indexes of `table` (in Alembic's batch form), then the table."""
    with op.batch_alter_table(table, schema=None) as batch_op:
        for index in indexes:
            batch_op.drop_index(index)
    op.drop_table(table)


def owned_table(
    table: str, column: str, owner: str, *elements: sa.schema.SchemaItem, unique: tuple[str, ...] = ()
) -> None:
    """A table whose rows belong to a row of `owner` through `column` (deleted with it, indexed by it): `id`, the
    `elements` (its other columns, `column` among them, then its checks), the cascading foreign key, `pk_<table>`,
    and a unique constraint over the columns `unique` where it names any (`uq_<table>_<first of them>`)."""
    # in this order: SQLAlchemy writes a table's constraints in the order they were made
    constraints: list[sa.Constraint] = [cascade(table, column, owner), primary_key(table)]
    if unique:
        constraints.append(sa.UniqueConstraint(*unique, name=op.f(f"uq_{table}_{unique[0]}")))
    op.create_table(table, key(), *elements, *constraints)
    index_columns(table, column)


def drop_owned_table(table: str, column: str) -> None:
    """Drop a table `owned_table` made: its index on `column`, then the table."""
    drop_indexed_table(table, op.f(f"ix_{table}_{column}"))
