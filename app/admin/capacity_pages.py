"""The admin's capacity pages: maintenance holds on a SKU's edit page, and the capacity chart (units held by
accepted and by issued quotes, and free, per SKU, region and month), in English or Chinese (`?lang=zh`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from app.admin import capacity_editing
from app.admin.capacity_schemas import HoldIn, MonthUseOut, RegionUseOut
from app.admin.deps import AdminDep, require_admin
from app.admin.pages import SkuEditDep, _page
from app.delivery.deps import SessionDep, UnitOfWorkRoute
from app.text.i18n import Translator, negotiate

router = APIRouter(
    prefix="/admin", include_in_schema=False, dependencies=[Depends(require_admin)], route_class=UnitOfWorkRoute
)
BAR_WIDTH = 240  # px of one month's bar: the region's whole inventory


def _day(form: dict[str, str], field: str) -> date:
    try:
        return date.fromisoformat(form.get(field, "").strip())
    except ValueError:
        raise capacity_editing.refused(field, "date") from None


def _hold(form: dict[str, str]) -> HoldIn:
    version = form.get("version") or None
    return HoldIn(
        ends_on=_day(form, "ends_on"),
        units=int(form.get("units", "0") or 0),
        note=form.get("note", ""),
        version=int(version) if version else None,
    )


@router.post("/skus/{slug}/holds", response_class=HTMLResponse)
def sku_hold(edit: SkuEditDep) -> Response:
    """A new hold (no version), or an edit of the one of its region and first day."""
    session, slug, actor, form = edit.session, edit.slug, edit.admin.actor, edit.form

    def save() -> None:
        region, starts_on = form.get("region", ""), _day(form, "starts_on")
        capacity_editing.set_hold(session, slug=slug, region=region, starts_on=starts_on, data=_hold(form), actor=actor)

    return edit.apply(save, done="hold")


@router.post("/skus/{slug}/holds/delete", response_class=HTMLResponse)
def sku_hold_delete(edit: SkuEditDep) -> Response:
    session, slug, actor, form = edit.session, edit.slug, edit.admin.actor, edit.form

    def end() -> None:
        region, starts_on, version = form.get("region", ""), _day(form, "starts_on"), int(form.get("version") or 0)
        capacity_editing.delete_hold(
            session, slug=slug, region=region, starts_on=starts_on, version=version, actor=actor
        )

    return edit.apply(end, done="hold-deleted")


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str  # accepted, issued, maintenance, free, overbooked
    units: int
    x: float
    width: float


def segments(month: MonthUseOut, total: int) -> list[Segment]:
    """One month's bar: accepted, issued and maintenance units, then free, each as wide as its share of the
    inventory and the units overbooked (a bar is BAR_WIDTH px for the whole of them), and the overbooked units at its
    end."""
    scale = BAR_WIDTH / (total + month.overbooked) if total + month.overbooked else 0.0
    out, x = [], 0.0
    for kind, units in (
        ("accepted", month.accepted),
        ("issued", month.issued),
        ("maintenance", month.maintenance),
        ("free", month.free),
    ):
        width = round(min(units * scale, BAR_WIDTH - x), 1)
        out.append(Segment(kind, units, round(x, 1), width))
        x += width
    if month.overbooked:  # units held beyond the inventory: the bar's end, in their own colour, never hidden
        width = round(month.overbooked * scale, 1)
        out.append(Segment("overbooked", month.overbooked, round(BAR_WIDTH - width, 1), width))
    return out


@router.get("/capacity", response_class=HTMLResponse)
def capacity_page(request: Request, session: SessionDep, admin: AdminDep) -> HTMLResponse:
    t = Translator(negotiate(request))
    rows: list[RegionUseOut] = capacity_editing.capacity(session)
    bars = {(r.sku_id, r.region): [segments(m, r.total) for m in r.months] for r in rows}
    context = {"admin": admin, "rows": rows, "bars": bars, "t": t, "bar_width": BAR_WIDTH}
    return _page(request, "capacity.html", context)
