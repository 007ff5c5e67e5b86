"""add-on bandwidth: a fabric add-on states its ports per server and Gbit/s per port (and the source)

The seeded InfiniBand add-on of the 8x H100 server gets 8 x 400 Gb/s where it still has no figure: one
ConnectX-7 NDR port per GPU, as the NVIDIA DGX H100 / DGX BasePOD reference architecture builds an 8-GPU HGX
H100 server (app/catalog/seed_data.py cites it). Before, the planner assumed one 400 Gb/s port per server.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 22:00:00
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the seed's add-on (app/catalog/seed_data.py ADDONS): SKU slug, code, ports, Gb/s per port, source
SEEDED = (
    "h100-80g-sxm-8x",
    "infiniband-400g",
    8,
    400,
    "NVIDIA DGX H100 / DGX BasePOD reference architecture: eight single-port ConnectX-7 NICs, up to 400 Gb/s "
    "NDR InfiniBand each, one per GPU, for the compute fabric of an 8-GPU HGX H100 server (docs.nvidia.com/"
    "dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html). "
    "The company's article says only 'InfiniBand 400G optional': the port count is the reference design's, "
    "to confirm with the data centre.",
)
SKUS = sa.table("skus", sa.column("id", sa.Integer), sa.column("slug", sa.String))
ADDONS = sa.table(
    "sku_addons",
    sa.column("sku_id", sa.Integer),
    sa.column("code", sa.String),
    sa.column("ports_per_server", sa.Integer),
    sa.column("port_gbps", sa.Integer),
    sa.column("bandwidth_source", sa.Text),
)
REVISION = sa.table("catalog_revision", sa.column("id", sa.Integer), sa.column("token", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("sku_addons", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ports_per_server", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("port_gbps", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("bandwidth_source", sa.Text(), nullable=False, server_default=""))
        batch_op.create_check_constraint(
            op.f("ck_sku_addons_bandwidth_both_or_none"),
            "(ports_per_server IS NULL AND port_gbps IS NULL) OR (ports_per_server > 0 AND port_gbps > 0)",
        )
    with op.batch_alter_table("sku_addons", schema=None) as batch_op:
        batch_op.alter_column("bandwidth_source", server_default=None)
    slug, code, ports, gbps, source = SEEDED
    sku_id = sa.select(SKUS.c.id).where(SKUS.c.slug == slug).scalar_subquery()
    op.execute(
        ADDONS.update()
        .where(ADDONS.c.sku_id == sku_id, ADDONS.c.code == code, ADDONS.c.ports_per_server.is_(None))
        .values(ports_per_server=ports, port_gbps=gbps, bandwidth_source=source)
    )
    op.execute(REVISION.update().where(REVISION.c.id == 1).values(token=uuid.uuid4().hex))


def downgrade() -> None:
    with op.batch_alter_table("sku_addons", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_sku_addons_bandwidth_both_or_none"), type_="check")
        batch_op.drop_column("bandwidth_source")
        batch_op.drop_column("port_gbps")
        batch_op.drop_column("ports_per_server")
    op.execute(REVISION.update().where(REVISION.c.id == 1).values(token=uuid.uuid4().hex))
