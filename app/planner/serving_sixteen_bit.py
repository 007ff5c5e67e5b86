"""FP8 asked where a GPU has no FP8 kernels: the 16-bit deployment of that GPU, priced, as a near miss.

A request for FP8 (math, weights or KV cache) rejects the SKUs whose GPU or engine has no FP8 kernels
(`kernel_support`: an A100 under SGLang or TensorRT-LLM, for one). When one of them serves the model in bf16 within
the SLO for less than the cheapest FP8 option (or no FP8 option exists), the answer shows that deployment as a near
miss whose first reason is `bf16_for_fp8` (app/text/messages.py words it): the customer sees the cheaper way to meet the
targets instead of only a refusal. Only the rejected SKUs are searched again, and only when one was rejected for FP8
kernels, so a request without FP8, or one every SKU runs, costs nothing more. PURE.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any, Final

from app.estimator.serving import ServingConfig, simulations
from app.estimator.specs import ModelSpec
from app.planner.misses import MissCode
from app.planner.offers import Constraints, Offer
from app.planner.serving import offer_region, search_serving
from app.planner.serving_launch import Served
from app.planner.serving_option import Ask, ServingOption, ServingSearch
from app.planner.serving_shapes import offer_shapes  # the closed forms of one offer, as search_serving weighs them
from app.planner.serving_weight_only import CODE as WEIGHT_ONLY_CODE, weight_only

# kernel_support's gaps that FP8 alone opens: FP8 math, FP8 weights outside vLLM's and SGLang's Marlin path,
# TensorRT-LLM's FP8 KV cache before SM89 (app/estimator/serving/rules.py kernel_support cites each)
FP8_GAPS = frozenset({"fp8_math", "fp8_weights", "trt_fp8_kv"})
MISS_CODE: Final[MissCode] = "bf16_for_fp8"


def sixteen_bit(cfg: ServingConfig) -> ServingConfig:
    """The request in 16 bits: FP8 math in bf16, FP8 weights as bf16 weights (stated, so a checkpoint shipped in
    FP8 is served converted), an FP8 KV cache in the math's 16-bit type."""
    fp8_weights = cfg.weight_format == "fp8"
    return replace(
        cfg,
        precision="bf16" if cfg.precision == "fp8" else cfg.precision,
        weights="bf16" if fp8_weights else cfg.weights,
        group_size=None if fp8_weights else cfg.group_size,
        kv_cache_precision=None if cfg.kv_cache_precision == "fp8" else cfg.kv_cache_precision,
    )


def sixteen_bit_misses(
    model: ModelSpec,
    cfg: ServingConfig,
    offers: list[Offer],
    constraints: Constraints,
    search: ServingSearch,
    *,
    peak_factor: float,
    served: Served,
) -> list[ServingOption]:
    """The cheapest bf16 deployment among the SKUs `search` rejected for FP8 kernels, as a near miss, where it
    meets the SLO and costs less than every FP8 option shown; else none. The SKUs whose closed forms already cost
    at least the cheapest FP8 option are not searched (the simulation only adds replicas to the closed forms')."""
    refused = {sku for sku, code, params in search.rejected if code == "kernels" and params.get("gap") in FP8_GAPS}
    if not refused:
        return []
    cheapest = min((option.cost.compared_monthly for option in search.options), default=None)
    found: list[tuple[ServingOption, MissCode]] = []
    for code, alt in _alternatives(cfg):  # FP8 weights with 16-bit math first, then full bf16: the cheapest wins
        option = _cheapest(model, alt, offers, constraints, refused, cheapest, peak_factor=peak_factor, served=served)
        if option is not None:
            found.append((option, code))
    if not found:
        return []
    best, code = min(found, key=lambda pair: pair[0].cost.compared_monthly)  # a tie keeps the FP8 weights
    best.rank = None
    params: dict[str, Any] = {"gpu": best.offer.gpu.name, "engine": cfg.engine}
    if code == MISS_CODE and cfg.weight_format != "fp8":  # int4/int8 weights kept: the wording says what changed
        params |= _what_changed(cfg)
    best.misses.insert(0, (code, params))
    return [best]


def _what_changed(cfg: ServingConfig) -> dict[str, Any]:
    """A `bf16_for_fp8` near miss that keeps the int4/int8 weights asked: "math" where FP8 math became bf16 (an FP8
    KV cache with it), else "kv" where only the FP8 KV cache became the math's 16-bit type (messages `_miss_key`)."""
    changed = "math" if cfg.precision == "fp8" else "kv"
    math = sixteen_bit(cfg).precision
    return {"changed": changed, "weights": cfg.weight_format, "math": math, "kv": math}


def _alternatives(cfg: ServingConfig) -> list[tuple[MissCode, ServingConfig]]:
    """The configs a near miss may answer FP8 with, by code: FP8 weights with bf16 math where the engine runs FP8
    weights weight-only (app/planner/serving_weight_only.py), then the request in 16 bits."""
    kept = weight_only(cfg)
    return ([(WEIGHT_ONLY_CODE, kept)] if kept else []) + [(MISS_CODE, sixteen_bit(cfg))]


def _cheapest(
    model: ModelSpec,
    alt: ServingConfig,
    offers: list[Offer],
    constraints: Constraints,
    refused: set[str],
    cheapest: Decimal | None,
    *,
    peak_factor: float,
    served: Served,
) -> ServingOption | None:
    """The cheapest deployment of `alt` among the refused SKUs that meets the SLO for less than `cheapest`; else
    None. The SKUs whose closed forms already cost at least `cheapest` are not searched (the simulation only adds
    replicas to the closed forms')."""
    again = _below(Ask.at_peak(model, alt, constraints, peak_factor, served), offers, refused, cheapest)
    if not again:
        return None
    found = search_serving(model, alt, again, replace(constraints, limit=1), peak_factor=peak_factor, served=served)
    if not found.options or (cheapest is not None and found.options[0].cost.compared_monthly >= cheapest):
        return None
    return found.options[0]


def _below(ask: Ask, offers: list[Offer], refused: set[str], cheapest: Decimal | None) -> list[Offer]:
    """The refused offers whose cheapest deployment by the closed forms costs less than `cheapest` (any, without).
    Of offers alike but for price and region (GPU, rental unit, currency, fabric) only the lowest list price is
    weighed: a dearer twin rents the same shapes for more."""
    twins: dict[tuple[str, str, str, bool], tuple[Offer, str]] = {}
    for offer in offers:
        region = offer_region(offer, ask.constraints, ask.cfg, []) if offer.sku_id in refused else None
        alike = (offer.gpu.id, offer.rental_unit, offer.currency, offer.inter_node_fabric is not None)
        if region is not None and (alike not in twins or offer.unit_monthly_list < twins[alike][0].unit_monthly_list):
            twins[alike] = offer, region
    kept = []
    with simulations():
        for offer, region in twins.values():
            costs = [option.cost.compared_monthly for option in offer_shapes(ask, offer, region).candidates]
            if costs and (cheapest is None or min(costs) < cheapest):
                kept.append(offer)
    return kept


def served_as(option: ServingOption, cfg: ServingConfig, body: dict[str, Any]) -> tuple[ServingConfig, dict[str, Any]]:
    """The config and request body an option answers: a `bf16_for_fp8` near miss's are the request in 16 bits, a
    `fp8_weights_bf16_math` one's the request with FP8 weights and bf16 math (its quote states what it was sized
    on); any other option's, the request's own."""
    code = option.misses[0][0] if option.misses else None
    alt = weight_only(cfg) if code == WEIGHT_ONLY_CODE else sixteen_bit(cfg) if code == MISS_CODE else None
    if alt is None:
        return cfg, body
    stated = {key: value for key, value in body.items() if key != "kv_cache_precision" or alt.kv_cache_precision}
    return alt, stated | {"precision": alt.precision, "weights": alt.weight_format}
