"""The webhook admin API's request and response models. An endpoint's secret appears in one response
only, the one that creates it (`EndpointCreated`); its URL in full only there too (a URL may carry a
token of the receiver's), afterwards its origin alone."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from app.webhooks.models import EVENT_TYPES, DeliveryStatus, EventType


class EndpointIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        min_length=1,
        max_length=2000,
        description="http(s) URL that receives the events; its host must resolve to public addresses only "
        "(unless the server allows private ones: WEBHOOKS_ALLOW_PRIVATE)",
        examples=["https://crm.example.com/hooks/gpu-sizer"],
    )
    events: list[EventType] = Field(
        min_length=1, max_length=4, description="The events sent to it", examples=[list(EVENT_TYPES[:2])]
    )
    description: str = Field(default="", max_length=200, description="For people: what receives them")
    active: bool = Field(default=True, description="false: registered, but sent nothing until resumed")


class EndpointPatch(BaseModel):
    """Fields set change; a new `url` is checked as a new one is (the pages' pause and resume use it)."""

    url: str | None = None
    events: list[EventType] | None = None
    description: str | None = None
    active: bool | None = None


class EndpointOut(BaseModel):
    id: int
    url_origin: str = Field(description="Scheme, host and port of the URL; the full URL was shown once")
    events: list[EventType]
    description: str
    active: bool
    created_at: datetime
    updated_at: datetime


class EndpointCreated(EndpointOut):
    url: str
    secret: str = Field(description="whsec_…: verify signatures with it. Shown once, never again")


class AttemptOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: datetime
    status_code: int | None
    duration_ms: int
    error: str
    response_body: str


class DeliveryOut(BaseModel):
    id: int
    endpoint_id: int
    event_type: EventType
    message_id: str = Field(description="The webhook-id header: the same on every retry and replay")
    quote_number: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None
    last_status_code: int | None
    delivered_at: datetime | None
    created_at: datetime
    replay_of: int | None


class DeliveryDetail(DeliveryOut):
    body: str
    log: list[AttemptOut]


class DeliveryPage(BaseModel):
    items: list[DeliveryOut]
    total: int
    limit: int
    offset: int


def url_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
